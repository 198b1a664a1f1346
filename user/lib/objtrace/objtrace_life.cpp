// Rebuilding each tracked object's life from KTRACK_REC_OBJ_* records, and
// printing it as text or JSON.  See objtrace/objtrace.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "format/format.hpp"
#include "format/trace_file.hpp"
#include "host/kallsyms.hpp"
#include "objtrace/objtrace.hpp"

namespace ktrack {

namespace {

template <typename T>
bool read_payload(std::span<const uint8_t> rec, T &out) {
  if (rec.size() < sizeof(ktrack_rec_hdr) + sizeof(T)) return false;
  std::memcpy(&out, rec.data() + sizeof(ktrack_rec_hdr), sizeof(T));
  return true;
}

std::vector<uint64_t> values_of(const __u64 *v, unsigned n) {
  n = std::min<unsigned>(n, KTRACK_OBJ_MAX_WATCH);
  return {v, v + n};
}

}  // namespace

ObjLife &ObjLifeBuilder::life(uint64_t id, uint64_t obj) {
  for (auto it = index_.rbegin(); it != index_.rend(); ++it)
    if (it->first == id) return lives_[it->second];
  index_.emplace_back(id, lives_.size());
  ObjLife &l = lives_.emplace_back();
  l.life = id;
  l.obj = obj;
  return l;
}

bool ObjLifeBuilder::add(const Event &ev) {
  return add_raw({reinterpret_cast<const uint8_t *>(ev.raw.data()), ev.raw.size()});
}

bool ObjLifeBuilder::add_raw(std::span<const uint8_t> rec) {
  if (rec.size() < sizeof(ktrack_rec_hdr)) return false;
  ktrack_rec_hdr h;
  std::memcpy(&h, rec.data(), sizeof(h));
  rec = rec.first(std::min<size_t>(rec.size(), h.len));
  switch (h.type) {
    case KTRACK_REC_OBJ_TRACK: {
      ktrack_rec_obj_track r;
      if (!read_payload(rec, r)) return false;
      ObjLife &l = life(r.life, r.obj);
      l.tracked = true;
      std::tie(l.track_ts, l.track_cpu, l.track_pid) = std::tuple(h.ts, h.cpu, h.pid);
      l.source = r.source;
      l.source_ip = r.ip;
      l.parent_life = r.parent_life;
      l.track_fault_mask = r.fault_mask;
      l.track_values = values_of(r.values, r.nr_values);
      break;
    }
    case KTRACK_REC_OBJ_HIT: {
      ktrack_rec_obj_hit r;
      if (!read_payload(rec, r)) return false;
      life(r.life, r.obj)
          .hits.push_back({.ts = h.ts,
                           .cpu = h.cpu,
                           .pid = h.pid,
                           .ip = r.ip,
                           .parent_ip = r.parent_ip,
                           .arg = r.arg,
                           .hit = r.hit,
                           .flags = r.flags,
                           .fault_mask = r.fault_mask,
                           .values = values_of(r.values, r.nr_values),
                           .prev_cpu = r.prev_cpu,
                           .prev_ts = r.prev_ts,
                           .prev_ip = r.prev_ip});
      break;
    }
    case KTRACK_REC_OBJ_UNTRACK: {
      ktrack_rec_obj_untrack r;
      if (!read_payload(rec, r)) return false;
      ObjLife &l = life(r.life, r.obj);
      l.ended = true;
      std::tie(l.end_ts, l.end_reason, l.end_ip, l.end_parent_ip, l.end_hits) =
          std::tuple(h.ts, r.reason, r.ip, r.parent_ip, r.hits);
      break;
    }
    default:
      return false;
  }
  records_++;
  return true;
}

std::vector<ObjLife> ObjLifeBuilder::lives() const {
  std::vector<ObjLife> out = lives_;
  std::sort(out.begin(), out.end(), [](const ObjLife &a, const ObjLife &b) { return a.life < b.life; });
  // The hit number orders hits of one life even across CPUs whose clocks
  // (local clock) may disagree slightly.
  for (auto &l : out)
    std::stable_sort(l.hits.begin(), l.hits.end(), [](const ObjHit &a, const ObjHit &b) {
      return a.hit != b.hit ? a.hit < b.hit : a.ts < b.ts;
    });
  return out;
}

namespace {

// Named as at 'ts' (a module may come and go during the capture).
std::string fn_name(const Symbolizer &syms, uint64_t ip, uint64_t ts) {
  if (!ip) return "-";
  // Hook ips are the function's ftrace site (its start, or just after an
  // endbr64): print the function alone.
  uint64_t off = 0;
  if (auto *s = syms.lookup(ip, ts, &off); s && off <= 8) return std::string(s->name);
  fmt::memory_buffer b;
  syms.format_to(b, ip, ts);
  return fmt::to_string(b);
}

std::string sym_at(const Symbolizer &syms, uint64_t ip, uint64_t ts) {
  fmt::memory_buffer b;
  syms.format_to(b, ip, ts);
  return fmt::to_string(b);
}

std::string value_text(uint64_t v, const ObjWatchLabel *l, bool faulted) {
  if (faulted) return "<fault>";
  if (l && l->is_signed) {
    int shift = 64 - 8 * l->size;
    return fmt::format("{}", static_cast<int64_t>(v << shift) >> shift);
  }
  return fmt::format("{:#x}", v);
}

void values_text(fmt::memory_buffer &out, const std::vector<uint64_t> &vals, uint8_t fault,
                 const std::vector<ObjWatchLabel> &labels) {
  for (size_t i = 0; i < vals.size(); i++) {
    const ObjWatchLabel *l = i < labels.size() ? &labels[i] : nullptr;
    fmt::format_to(std::back_inserter(out), "  {}={}", l ? l->label : fmt::format("value{}", i),
                   value_text(vals[i], l, fault & (1u << i)));
  }
}

void values_json(fmt::memory_buffer &out, const std::vector<uint64_t> &vals, uint8_t fault,
                 const std::vector<ObjWatchLabel> &labels) {
  out.push_back('{');
  for (size_t i = 0; i < vals.size(); i++) {
    const ObjWatchLabel *l = i < labels.size() ? &labels[i] : nullptr;
    if (i) out.push_back(',');
    json_escape(out, l ? l->label : fmt::format("value{}", i));
    out.push_back(':');
    if (fault & (1u << i))
      fmt::format_to(std::back_inserter(out), "null");
    else if (l && l->is_signed)
      fmt::format_to(std::back_inserter(out), "{}",
                     static_cast<int64_t>(vals[i] << (64 - 8 * l->size)) >> (64 - 8 * l->size));
    else
      fmt::format_to(std::back_inserter(out), "{}", vals[i]);
  }
  out.push_back('}');
}

std::string secs(uint64_t ns) { return fmt::format("{}.{:09}", ns / 1000000000, ns % 1000000000); }

}  // namespace

std::string format_lives_text(const std::vector<ObjLife> &lives, const std::vector<ObjWatchLabel> &labels,
                              const Symbolizer &syms) {
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  for (auto &l : lives) {
    fmt::format_to(o, "life {} obj {:#x}", l.life, l.obj);
    uint64_t t0 = l.tracked ? l.track_ts : (l.hits.empty() ? l.end_ts : l.hits.front().ts);
    if (l.tracked) {
      fmt::format_to(o, " tracked by {}", obj_source_name(l.source));
      if (l.source_ip) fmt::format_to(o, " {}", fn_name(syms, l.source_ip, l.track_ts));
      if (l.parent_life) fmt::format_to(o, " from life {}", l.parent_life);
      fmt::format_to(o, " at {} cpu{} pid {}", secs(l.track_ts), l.track_cpu, l.track_pid);
      values_text(out, l.track_values, l.track_fault_mask, labels);
    } else {
      fmt::format_to(o, " (tracked before the recording started)");
    }
    out.push_back('\n');
    for (auto &h : l.hits) {
      fmt::format_to(o, "  +{} cpu{} {} <- {}  arg{}", secs(h.ts - std::min(h.ts, t0)), h.cpu,
                     fn_name(syms, h.ip, h.ts), sym_at(syms, h.parent_ip, h.ts), h.arg + 1);
      values_text(out, h.values, h.fault_mask, labels);
      if (h.flags & KTRACK_OBJ_HITF_CHANGED) fmt::format_to(o, "  changed");
      if (h.flags & KTRACK_OBJ_HITF_PREV)
        fmt::format_to(o, " (last seen unchanged: {} cpu{} at +{})", fn_name(syms, h.prev_ip, h.prev_ts),
                       h.prev_cpu, secs(h.prev_ts - std::min(h.prev_ts, t0)));
      out.push_back('\n');
    }
    if (l.ended) {
      fmt::format_to(o, "  end: {}", obj_end_name(l.end_reason));
      if (l.end_ip)
        fmt::format_to(o, " by {} <- {}", fn_name(syms, l.end_ip, l.end_ts),
                       sym_at(syms, l.end_parent_ip, l.end_ts));
      fmt::format_to(o, " at +{} after {} hits\n", secs(l.end_ts - std::min(l.end_ts, t0)), l.end_hits);
    } else {
      fmt::format_to(o, "  (still tracked at the end of the recording)\n");
    }
  }
  return fmt::to_string(out);
}

std::string format_lives_json(const std::vector<ObjLife> &lives, const std::vector<ObjWatchLabel> &labels,
                              const Symbolizer &syms) {
  fmt::memory_buffer out;
  auto o = std::back_inserter(out);
  auto str = [&](std::string_view s) { json_escape(out, s); };
  fmt::format_to(o, "{{\"lives\":[");
  bool first = true;
  for (auto &l : lives) {
    if (!first) out.push_back(',');
    first = false;
    fmt::format_to(o, "\n{{\"life\":{},\"obj\":\"{:#x}\",\"tracked\":{}", l.life, l.obj, l.tracked);
    if (l.tracked) {
      fmt::format_to(o, ",\"source\":");
      str(obj_source_name(l.source));
      fmt::format_to(o, ",\"source_function\":");
      str(fn_name(syms, l.source_ip, l.track_ts));
      fmt::format_to(o, ",\"parent_life\":{},\"ts\":{},\"cpu\":{},\"pid\":{},\"values\":", l.parent_life,
                     l.track_ts, l.track_cpu, l.track_pid);
      values_json(out, l.track_values, l.track_fault_mask, labels);
    }
    fmt::format_to(o, ",\"hits\":[");
    for (size_t i = 0; i < l.hits.size(); i++) {
      auto &h = l.hits[i];
      if (i) out.push_back(',');
      fmt::format_to(o, "{{\"hit\":{},\"ts\":{},\"cpu\":{},\"pid\":{},\"function\":", h.hit, h.ts, h.cpu,
                     h.pid);
      str(fn_name(syms, h.ip, h.ts));
      fmt::format_to(o, ",\"caller\":");
      str(sym_at(syms, h.parent_ip, h.ts));
      fmt::format_to(o, ",\"arg\":{},\"changed\":{},\"values\":", h.arg + 1,
                     (h.flags & KTRACK_OBJ_HITF_CHANGED) != 0);
      values_json(out, h.values, h.fault_mask, labels);
      if (h.flags & KTRACK_OBJ_HITF_PREV) {
        fmt::format_to(o, ",\"last_unchanged\":{{\"function\":");
        str(fn_name(syms, h.prev_ip, h.prev_ts));
        fmt::format_to(o, ",\"cpu\":{},\"ts\":{}}}", h.prev_cpu, h.prev_ts);
      }
      out.push_back('}');
    }
    out.push_back(']');
    if (l.ended) {
      fmt::format_to(o, ",\"end\":{{\"reason\":");
      str(obj_end_name(l.end_reason));
      fmt::format_to(o, ",\"function\":");
      str(fn_name(syms, l.end_ip, l.end_ts));
      fmt::format_to(o, ",\"caller\":");
      str(l.end_parent_ip ? sym_at(syms, l.end_parent_ip, l.end_ts) : "-");
      fmt::format_to(o, ",\"ts\":{},\"hits\":{}}}", l.end_ts, l.end_hits);
    } else {
      fmt::format_to(o, ",\"end\":null");
    }
    out.push_back('}');
  }
  fmt::format_to(o, "\n]}}\n");
  return fmt::to_string(out);
}

std::vector<Schema> objtrace_schemas() {
  using F = FieldType;
  auto f = [](const char *name, F t, uint32_t off, uint32_t size, std::string len = {},
              std::vector<EnumName> enums = {}) {
    FieldDesc d = make_field(name, t, off, size, std::move(len));
    d.enums = std::move(enums);
    return d;
  };
  auto schema = [](uint16_t type, const char *name, std::vector<FieldDesc> fields) {
    Schema s;
    s.rec_type = type;
    s.name = name;
    s.fields = std::move(fields);
    return s;
  };
  std::vector<Schema> v;
  v.push_back(
      schema(KTRACK_REC_OBJ_HIT, "obj_hit",
             {f("obj", F::X64, 0, 8), f("life", F::U64, 8, 8), f("ip", F::Symbol, 16, 8),
              f("parent_ip", F::Symbol, 24, 8), f("hit", F::U32, 32, 4), f("arg", F::U16, 36, 2),
              f("nr_values", F::U8, 38, 1), f("fault_mask", F::X8, 39, 1), f("flags", F::X32, 40, 4),
              f("prev_cpu", F::U32, 44, 4), f("prev_ts", F::U64, 48, 8), f("prev_ip", F::Symbol, 56, 8),
              f("values", F::X64, 64, 8 * KTRACK_OBJ_MAX_WATCH, "nr_values")}));
  std::vector<EnumName> sources, ends;
  for (uint32_t i = KTRACK_OBJ_SRC_EXPLICIT; i <= KTRACK_OBJ_SRC_DERIVED; i++)
    sources.push_back({i, obj_source_name(i)});
  for (uint32_t i = KTRACK_OBJ_END_FREE; i <= KTRACK_OBJ_END_REUSE; i++) ends.push_back({i, obj_end_name(i)});
  v.push_back(schema(
      KTRACK_REC_OBJ_TRACK, "obj_track",
      {f("obj", F::X64, 0, 8), f("life", F::U64, 8, 8), f("ip", F::Symbol, 16, 8),
       f("parent_life", F::U64, 24, 8), f("source", F::U32, 32, 4, {}, sources), f("nr_values", F::U8, 36, 1),
       f("fault_mask", F::X8, 37, 1), f("values", F::X64, 40, 8 * KTRACK_OBJ_MAX_WATCH, "nr_values")}));
  v.push_back(schema(
      KTRACK_REC_OBJ_UNTRACK, "obj_untrack",
      {f("obj", F::X64, 0, 8), f("life", F::U64, 8, 8), f("ip", F::Symbol, 16, 8),
       f("parent_ip", F::Symbol, 24, 8), f("hits", F::U64, 32, 8), f("reason", F::U32, 40, 4, {}, ends)}));
  return v;
}

std::string report_objects(const std::string &path, bool json) {
  TraceReader r(path);
  // A raw 'cat /dev/ktrack' stream has no symbol map: use this machine's.
  if (r.info().raw_stream) r.symbols().load(read_kallsyms());
  ObjLifeBuilder b;
  Event ev;
  while (r.next(ev)) b.add(ev);
  std::vector<ObjWatchLabel> labels;
  if (auto it = r.info().meta.extra.find("objtrace.watch"); it != r.info().meta.extra.end())
    labels = parse_watch_labels(it->second);
  auto lives = b.lives();
  return json ? format_lives_json(lives, labels, r.symbols()) : format_lives_text(lives, labels, r.symbols());
}

}  // namespace ktrack
