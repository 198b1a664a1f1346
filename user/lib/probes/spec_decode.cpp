// The decoding side of probe descriptions: field layout, schemas, and the
// names of kinds, mechanisms and states.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "probes/probe_spec.hpp"

namespace ktrack {

// ---- decoding -----------------------------------------------------------------

uint32_t layout_fields(std::vector<ProbeField> &fields) {
  uint32_t off = 0;
  for (auto &f : fields) {
    bool str = f.type == KTRACK_FETCH_T_STRING || f.type == KTRACK_FETCH_T_USTRING;
    uint32_t align = str ? 4 : std::min<uint32_t>(f.size, 8);
    uint32_t len = str ? 4 : (uint32_t)f.size * f.count;
    off = (off + align - 1) / align * align;
    f.slot = (uint16_t)off;
    off += len;
  }
  return off;
}

ProbeSchema schema_from_desc(const std::vector<uint8_t> &blob) {
  ktrack_probe_desc d{};
  if (blob.size() < sizeof(d)) throw Error("probe description is truncated");
  std::memcpy(&d, blob.data(), sizeof(d));
  if (d.size != blob.size() || d.hdr_size != sizeof(d) || d.version != KTRACK_PROBE_DESC_VERSION)
    throw Error("probe description has an unknown version or size");
  if ((uint64_t)d.fetch_off + (uint64_t)d.nr_fetch * sizeof(ktrack_probe_fetch) > blob.size())
    throw Error("probe description is truncated");
  ProbeSchema s;
  s.name.assign(d.name, strnlen(d.name, sizeof(d.name)));
  s.kind = d.kind;
  if (d.spec_len && (uint64_t)d.spec_off + d.spec_len <= blob.size())
    s.spec.assign(reinterpret_cast<const char *>(blob.data()) + d.spec_off,
                  strnlen(reinterpret_cast<const char *>(blob.data()) + d.spec_off, d.spec_len));
  for (uint16_t i = 0; i < d.nr_fetch; i++) {
    ktrack_probe_fetch f;
    std::memcpy(&f, blob.data() + d.fetch_off + i * sizeof(f), sizeof(f));
    ProbeField pf;
    pf.name.assign(f.name, strnlen(f.name, sizeof(f.name)));
    pf.type = f.type;
    pf.size = f.size;
    pf.count = f.count;
    s.fields.push_back(pf);
  }
  layout_fields(s.fields);
  return s;
}

namespace {

std::string format_scalar(const ProbeField &f, const uint8_t *p) {
  uint64_t u = 0;
  std::memcpy(&u, p, f.size);
  switch (f.type) {
    case KTRACK_FETCH_T_S: {
      int64_t v = f.size == 1 ? (int8_t)u : f.size == 2 ? (int16_t)u : f.size == 4 ? (int32_t)u : (int64_t)u;
      return fmt::format("{}", v);
    }
    case KTRACK_FETCH_T_U:
      return fmt::format("{}", u);
    default:
      return fmt::format("0x{:x}", u);
  }
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += fmt::format("\\{}", c);
    else if (std::isprint((unsigned char)c))
      out += c;
    else
      out += fmt::format("\\x{:02x}", (unsigned char)c);
  }
  return out + "\"";
}

}  // namespace

std::string format_probe_fields(const ProbeSchema &schema, const uint8_t *data, size_t len,
                                uint32_t fault_mask) {
  std::string out;
  for (size_t i = 0; i < schema.fields.size(); i++) {
    const auto &f = schema.fields[i];
    if (!out.empty()) out += ' ';
    out += f.name + "=";
    bool str = f.type == KTRACK_FETCH_T_STRING || f.type == KTRACK_FETCH_T_USTRING;
    size_t need = str ? 4 : (size_t)f.size * f.count;
    if (f.slot + need > len) {
      out += "(truncated)";
      continue;
    }
    if (i < 32 && (fault_mask & (1u << i))) {
      out += "(fault)";
      continue;
    }
    const uint8_t *p = data + f.slot;
    if (str) {
      uint32_t loc;
      std::memcpy(&loc, p, 4);
      size_t off = loc >> 16, n = loc & 0xffff;
      if (off + n > len) {
        out += "(truncated)";
        continue;
      }
      out += quote(std::string(reinterpret_cast<const char *>(data) + off, n));
      continue;
    }
    if (f.count > 1) {
      out += '{';
      for (uint16_t k = 0; k < f.count; k++) {
        if (k) out += ',';
        out += format_scalar(f, p + k * f.size);
      }
      out += '}';
      continue;
    }
    out += format_scalar(f, p);
  }
  return out;
}

const char *mechanism_name(uint32_t m) {
  switch (m) {
    case KTRACK_MECH_KPROBE:
      return "kprobe";
    case KTRACK_MECH_KRETPROBE:
      return "kretprobe";
    case KTRACK_MECH_FPROBE:
      return "fprobe";
    case KTRACK_MECH_KPROBE_FTRACE:
      return "kprobe+kretprobe (ftrace)";
    case KTRACK_MECH_TRACEPOINT:
      return "tracepoint";
    case KTRACK_MECH_PERF_EVENT:
      return "perf event";
    case KTRACK_MECH_UPROBE:
      return "uprobe";
    case KTRACK_MECH_UEVENT:
      return "user event";
    case KTRACK_MECH_FTRACE_OPS:
      return "ftrace_ops";
    default:
      return "unknown";
  }
}

const char *probe_state_name(uint32_t s) {
  switch (s) {
    case KTRACK_PROBE_ST_PENDING:
      return "pending";
    case KTRACK_PROBE_ST_ARMED:
      return "armed";
    case KTRACK_PROBE_ST_DISARMED:
      return "disarmed";
    default:
      return "unknown";
  }
}

const char *probe_kind_name(uint32_t k) {
  switch (k) {
    case KTRACK_PROBE_KPROBE:
      return "p";
    case KTRACK_PROBE_KRETPROBE:
      return "r";
    case KTRACK_PROBE_FUNCS:
      return "f";
    case KTRACK_PROBE_TRACEPOINT:
      return "t";
    case KTRACK_PROBE_EVENT:
      return "e";
    case KTRACK_PROBE_UPROBE:
      return "u";
    case KTRACK_PROBE_URETPROBE:
      return "ur";
    case KTRACK_PROBE_UEVENT:
      return "U";
    default:
      return "?";
  }
}

}  // namespace ktrack
