// The probe description compiler: a resolved ProbeSpec to the blob of
// struct ktrack_probe_desc and its sections (include/uapi/ktrack.h).
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "probes/probe_spec.hpp"

namespace ktrack {

// ---- compiler -----------------------------------------------------------------

namespace {

void put(std::vector<uint8_t> &b, const void *p, size_t n) {
  const auto *c = static_cast<const uint8_t *>(p);
  b.insert(b.end(), c, c + n);
}

void align8(std::vector<uint8_t> &b) {
  while (b.size() % 8) b.push_back(0);
}

}  // namespace

std::vector<uint8_t> compile_probe(const ProbeSpec &spec) {
  ktrack_probe_desc d{};
  d.version = KTRACK_PROBE_DESC_VERSION;
  d.hdr_size = sizeof(d);
  switch (spec.kind) {
    case ProbeKind::kKprobe:
      d.kind = KTRACK_PROBE_KPROBE;
      d.flags = spec.kernel_glob ? KTRACK_PROBE_F_KERNEL_GLOB : 0;  // at entry, by name
      break;
    case ProbeKind::kKretprobe:
      d.kind = KTRACK_PROBE_KRETPROBE;
      break;
    case ProbeKind::kFuncs:
      d.kind = KTRACK_PROBE_FUNCS;
      d.flags = (spec.entry ? KTRACK_PROBE_F_ENTRY : 0) | (spec.exit ? KTRACK_PROBE_F_EXIT : 0) |
                spec.graph_flags | (spec.kernel_glob ? KTRACK_PROBE_F_KERNEL_GLOB : 0);
      d.graph_depth = spec.graph_depth;
      break;
    case ProbeKind::kTracepoint:
      d.kind = KTRACK_PROBE_TRACEPOINT;
      break;
    case ProbeKind::kEvent:
      d.kind = KTRACK_PROBE_EVENT;
      break;
    case ProbeKind::kUprobe:
      d.kind = KTRACK_PROBE_UPROBE;
      break;
    case ProbeKind::kUretprobe:
      d.kind = KTRACK_PROBE_URETPROBE;
      break;
    case ProbeKind::kUserEvent:
      d.kind = KTRACK_PROBE_UEVENT;
      break;
  }
  std::snprintf(d.name, sizeof(d.name), "%s", spec.name.c_str());
  std::snprintf(d.module, sizeof(d.module), "%s", spec.module.c_str());
  const std::string sym = spec.kind == ProbeKind::kTracepoint  ? spec.event
                          : spec.kind == ProbeKind::kEvent     ? spec.subsys + "/" + spec.event
                          : spec.kind == ProbeKind::kUserEvent ? spec.user_event()
                                                               : spec.symbol;
  std::snprintf(d.symbol, sizeof(d.symbol), "%s", sym.c_str());
  // u, ur: the instruction's offset in the file (its path is in funcs)
  d.addr = spec.is_user() ? 0 : spec.addr;
  d.offset = spec.is_user() ? spec.file_offset : spec.offset;
  d.hit_limit = spec.hit_limit;
  d.maxactive = spec.maxactive;
  d.stack_depth = spec.stack_depth;
  d.nr_fetch = (uint16_t)spec.args.size();
  d.nr_insns = (uint16_t)spec.program.size();

  std::vector<uint8_t> b(sizeof(d));
  // The string table: e fields sent by name first, then filter strings.
  std::string strtab;
  std::vector<uint32_t> name_off(spec.args.size());
  for (size_t i = 0; i < spec.args.size(); i++) {
    if (!(spec.args[i].flags & KTRACK_FETCH_F_BY_NAME)) continue;
    name_off[i] = (uint32_t)strtab.size();
    strtab += spec.args[i].field;
    strtab.push_back('\0');
  }
  // fetches
  if (!spec.args.empty()) {
    d.fetch_off = (uint32_t)b.size();
    for (size_t i = 0; i < spec.args.size(); i++) {
      const FetchArg &a = spec.args[i];
      if (a.all_args || !a.btf_expr.empty())
        throw Error(
            fmt::format("argument '{}' needs BTF to resolve: this kernel or build has no BTF", a.name));
      ktrack_probe_fetch f{};
      std::snprintf(f.name, sizeof(f.name), "%s", a.name.c_str());
      f.src = a.src;
      f.type = a.type;
      f.size = a.size;
      f.nderef = (uint8_t)a.deref.size();
      f.count = a.count;
      f.flags = a.flags;
      f.param = (a.flags & KTRACK_FETCH_F_BY_NAME) ? name_off[i] : a.param;
      for (size_t j = 0; j < a.deref.size(); j++) f.deref[j] = a.deref[j];
      put(b, &f, sizeof(f));
    }
  }
  // filter: strings go to the string table
  if (!spec.program.empty()) {
    d.insns_off = (uint32_t)b.size();
    for (const auto &fi : spec.program) {
      ktrack_probe_insn in = fi.insn;
      if (in.op == KTRACK_FLT_CMP &&
          (in.cmp == KTRACK_FLT_GLOB || !fi.str.empty() || in.field_kind == KTRACK_FLD_COMM ||
           (in.field_kind == KTRACK_FLD_FETCH && (spec.args[in.field].type == KTRACK_FETCH_T_STRING ||
                                                  spec.args[in.field].type == KTRACK_FETCH_T_USTRING)))) {
        in.str_off = (uint32_t)strtab.size();
        strtab += fi.str;
        strtab.push_back('\0');
      }
      put(b, &in, sizeof(in));
    }
  }
  // actions (triggers), 8-aligned
  if (!spec.actions.empty()) {
    align8(b);
    d.nr_actions = (uint16_t)spec.actions.size();
    d.actions_off = (uint32_t)b.size();
    for (const auto &a : spec.actions) {
      ktrack_probe_action pa{};
      pa.type = a.type;
      pa.count = a.count;
      put(b, &pa, sizeof(pa));
    }
  }
  if (spec.kind == ProbeKind::kFuncs) {
    // MOD:GLOB: the globs themselves, matched by the kernel in the module
    const auto &names = spec.module.empty() ? spec.funcs : spec.patterns;
    d.nr_funcs = (uint16_t)names.size();
    d.funcs_off = (uint32_t)b.size();
    for (const auto &f : names) {
      b.insert(b.end(), f.begin(), f.end());
      b.push_back(0);
    }
    d.funcs_len = (uint32_t)(b.size() - d.funcs_off);
  }
  if (spec.is_user()) {  // the file's absolute path, NUL-terminated
    if (spec.path.empty() || spec.path[0] != '/')
      throw Error(fmt::format("probe '{}': its file is not resolved to an absolute path", spec.name));
    d.nr_funcs = 1;
    d.funcs_off = (uint32_t)b.size();
    b.insert(b.end(), spec.path.begin(), spec.path.end());
    b.push_back(0);
    d.funcs_len = (uint32_t)(b.size() - d.funcs_off);
  }
  if (!strtab.empty()) {
    d.strtab_off = (uint32_t)b.size();
    d.strtab_len = (uint32_t)strtab.size();
    put(b, strtab.data(), strtab.size());
  }
  d.spec_off = (uint32_t)b.size();
  d.spec_len = (uint32_t)spec.text.size() + 1;
  put(b, spec.text.c_str(), spec.text.size() + 1);
  align8(b);
  if (b.size() > KTRACK_PROBE_DESC_MAX)
    throw UsageError("the probe description is too large: use fewer functions");
  d.size = (uint32_t)b.size();
  std::memcpy(b.data(), &d, sizeof(d));
  return b;
}

}  // namespace ktrack
