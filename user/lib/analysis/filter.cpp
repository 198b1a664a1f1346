#include "analysis/filter.hpp"

#include "util/glob.hpp"
#include "util/predicate.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cerrno>
#include <charconv>

#include "util/error.hpp"

namespace ktrack::analysis {

namespace {

struct BuiltinName {
  const char *name;
  FieldRef::Builtin b;
};
constexpr BuiltinName kBuiltins[] = {
    {"pid", FieldRef::Pid},
    {"tid", FieldRef::Pid},
    {"tgid", FieldRef::Tgid},
    {"cpu", FieldRef::Cpu},
    {"ts", FieldRef::Ts},
    {"ip", FieldRef::Ip},
    {"parent_ip", FieldRef::ParentIp},
    {"probe_id", FieldRef::ProbeId},
    {"func", FieldRef::Func},
    {"function", FieldRef::Func},
    {"caller", FieldRef::Caller},
    {"comm", FieldRef::Comm},
    {"probe", FieldRef::Probe},
    {"event", FieldRef::Probe},
    {"$duration", FieldRef::Duration},
    {"duration", FieldRef::Duration},
};

}  // namespace

FieldRef resolve_field(const Names &names, std::string_view name) {
  FieldRef f;
  f.name = std::string(name);
  // Payload fields win over built-ins of the same name, except $-names.
  if (name.empty() || name[0] != '$') {
    int id = names.field_id(name);
    if (id >= 0) {
      f.id = id;
      f.builtin = FieldRef::Payload;
      return f;
    }
  }
  for (const auto &b : kBuiltins) {
    if (name == b.name) {
      f.builtin = b.b;
      if (b.b == FieldRef::Duration) f.id = names.field_id("duration");
      return f;
    }
  }
  if (name.size() > 1 && name[0] == '$') {
    int id = names.field_id(name.substr(1));
    if (id >= 0) {
      f.id = id;
      return f;
    }
  }
  throw UsageError(fmt::format(
      "no field named '{}': use a field of the recorded probes or one of pid, tgid, cpu, ts, ip, parent_ip, "
      "probe_id, func, caller, comm, probe, $duration",
      name));
}

bool field_number(const FieldRef &f, const Sample &s, const Names &names, int64_t &out) {
  switch (f.builtin) {
    case FieldRef::Payload:
      return names.field_value(s, f.id, out);
    case FieldRef::Pid:
      out = s.pid;
      return true;
    case FieldRef::Tgid:
      out = s.tgid;
      return true;
    case FieldRef::Cpu:
      out = s.cpu;
      return true;
    case FieldRef::Ts:
      out = static_cast<int64_t>(s.ts);
      return true;
    // ip/parent_ip compare as addresses; func/caller are keys that views
    // name later, so they keep the time a pinned address carries.
    case FieldRef::Ip:
    case FieldRef::Func:
      out = static_cast<int64_t>(f.builtin == FieldRef::Ip ? names.address(s.ip) : s.ip);
      return s.kind == Kind::Entry || s.kind == Kind::Exit || s.kind == Kind::Point;
    case FieldRef::ParentIp:
    case FieldRef::Caller:
      out = static_cast<int64_t>(f.builtin == FieldRef::ParentIp ? names.address(s.parent_ip) : s.parent_ip);
      return s.kind == Kind::Entry || s.kind == Kind::Exit || s.kind == Kind::Point;
    case FieldRef::ProbeId:
      out = s.probe_id;
      return s.kind == Kind::Entry || s.kind == Kind::Exit || s.kind == Kind::Point || s.kind == Kind::Stack;
    case FieldRef::Duration:
      return f.id >= 0 && names.field_value(s, f.id, out);
    case FieldRef::Comm:
    case FieldRef::Probe:
      return false;
  }
  return false;
}

bool field_text(const FieldRef &f, const Sample &s, const Names &names, std::string &out) {
  switch (f.builtin) {
    case FieldRef::Comm:
      out = s.comm.empty() ? names.comm(s.pid) : std::string(s.comm);
      return true;
    case FieldRef::Probe:
      if (s.kind == Kind::Lost) {
        out = "lost";
        return true;
      }
      if (s.kind == Kind::Marker) {
        out = "marker";
        return true;
      }
      if (s.kind == Kind::Other) return false;
      out = names.probe_name(s.probe_id);
      return true;
    case FieldRef::Func:
      if (s.kind != Kind::Entry && s.kind != Kind::Exit && s.kind != Kind::Point) return false;
      out = names.func_name(s.ip);
      return true;
    case FieldRef::Caller:
      if (s.kind != Kind::Entry && s.kind != Kind::Exit && s.kind != Kind::Point) return false;
      out = names.func_name(s.parent_ip);
      return true;
    case FieldRef::Payload:
      if (names.field_string(s, f.id, out)) return true;
      [[fallthrough]];
    default: {
      int64_t v;
      if (!field_number(f, s, names, v)) return false;
      out = std::to_string(v);
      return true;
    }
  }
}

namespace {

// Time bound: "1.5s"/"200ms"/... relative to the first record, or
// "@SECONDS.FRACTION" absolute (as the views print timestamps).
void parse_bound(const std::string &text, const char *what, bool &set, bool &absolute, uint64_t &ns) {
  if (text.empty()) return;
  set = true;
  if (text[0] == '@') {
    absolute = true;
    std::string v = text.substr(1);
    auto dot = v.find('.');
    std::string sec = v.substr(0, dot), frac = dot == std::string::npos ? "" : v.substr(dot + 1);
    if (sec.empty() || frac.size() > 9 || sec.find_first_not_of("0123456789") != std::string::npos ||
        frac.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(
          fmt::format("{} '{}': an absolute time is @SECONDS[.FRACTION] as printed by the views, "
                      "e.g. @1234.567890",
                      what, text));
    frac.resize(9, '0');
    ns = std::stoull(sec) * 1000000000ULL + std::stoull(frac);
    return;
  }
  ns = parse_duration_ns(text, what);
}

[[noreturn]] void where_error(std::string_view where, size_t pos, const std::string &msg) {
  throw UsageError(
      fmt::format("--where: {} at column {}:\n  {}\n  {}^", msg, pos + 1, where, std::string(pos, ' ')));
}

}  // namespace

Filter::Term Filter::make_term(std::string_view where, const predicate::Comparison &c, const Names &names) {
  Term t;
  try {
    t.field = resolve_field(names, c.field);
  } catch (const UsageError &e) {
    where_error(where, c.field_pos, e.what());
  }
  static const std::pair<const char *, Term::Op> ops[] = {
      {"==", Term::Eq}, {"!=", Term::Ne}, {"<", Term::Lt},  {"<=", Term::Le},
      {">", Term::Gt},  {">=", Term::Ge}, {"&", Term::And}, {"~", Term::Glob}};
  for (const auto &[text, op] : ops)
    if (c.op == text) t.op = op;
  // A quoted value, or a word compared with a name (comm, probe, func and
  // caller unless the word is an address), is a glob over the field's text.
  const bool digit = !c.value.empty() && std::isdigit(static_cast<unsigned char>(c.value[0]));
  if (c.quoted || c.op == "~" ||
      (t.field.is_string() &&
       !(digit && t.field.builtin != FieldRef::Comm && t.field.builtin != FieldRef::Probe))) {
    if (t.op != Term::Eq && t.op != Term::Ne && t.op != Term::Glob)
      where_error(where, c.op_pos, "strings compare with ==, != or ~ (glob)");
    t.text = c.value;
    t.op = t.op == Term::Ne ? Term::NotGlob : Term::Glob;
    t.string_cmp = true;
    return t;
  }
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(c.value.c_str(), &end, 0);
  if (errno || *end) {
    if (t.field.builtin != FieldRef::Duration)
      where_error(where, c.value_pos, fmt::format("'{}' is not a number", c.value));
    try {
      n = static_cast<long long>(parse_duration_ns(c.value, "--where"));
    } catch (const UsageError &e) {
      where_error(where, c.value_pos, e.what());
    }
  }
  t.num = n;
  return t;
}

Filter::Filter(const FilterSpec &spec, const Names &names) : names_(&names) {
  pids_ = spec.pids;
  for (uint32_t c : spec.cpus) {
    if (c < 64)
      cpu_mask_lo_ |= 1ULL << c;
    else
      cpus_.push_back(c);
  }
  comms_ = spec.comms;
  events_ = spec.events;
  // SYSTEM/EVENT names an e or U probe's event: such probes are named
  // EVENT by default (p:GROUP/NAME is ftrace's spelling of the same)
  for (auto &g : events_)
    if (size_t slash = g.rfind('/'); slash != std::string::npos) g = g.substr(slash + 1);
  parse_bound(spec.since, "--since", since_.set, since_.absolute, since_.ns);
  parse_bound(spec.until, "--until", until_.set, until_.absolute, until_.ns);
  if (!spec.where.empty()) {
    try {
      where_ = predicate::parse(spec.where, "a field of the recorded probes, pid, comm, func, $duration...");
    } catch (const predicate::Error &e) {
      where_error(spec.where, e.pos, e.what());
    }
    for (const auto &c : where_.comparisons) terms_.push_back(make_term(spec.where, c, names));
  }
  active_ = !pids_.empty() || cpu_mask_lo_ || !cpus_.empty() || !comms_.empty() || !events_.empty() ||
            since_.set || until_.set || !where_.empty();
}

bool Filter::comm_ok(const Sample &s) {
  if (comms_.empty()) return true;
  if (!s.comm.empty()) {
    for (const auto &g : comms_)
      if (glob_match(g, s.comm)) return true;
    return false;
  }
  uint8_t &memo = pid_comm_ok_[s.pid];
  if (!memo) {
    std::string c = names_->comm(s.pid);
    memo = 2;
    for (const auto &g : comms_)
      if (glob_match(g, c)) memo = 1;
  }
  return memo == 1;
}

bool Filter::event_ok(const Sample &s) {
  if (events_.empty()) return true;
  uint64_t key;
  std::string name;
  switch (s.kind) {
    case Kind::Entry:
    case Kind::Exit:
    case Kind::Point:
    case Kind::Stack:
      key = s.probe_id;
      break;
    case Kind::Marker:
      key = 1ULL << 40;
      name = "marker";
      break;
    default:
      key = (2ULL << 40) | s.type;
      name = fmt::format("type{}", s.type);
      break;
  }
  uint8_t &memo = probe_ok_[key];
  if (!memo) {
    if (name.empty()) name = names_->probe_name(s.probe_id);
    memo = 2;
    for (const auto &g : events_)
      if (glob_match(g, name)) memo = 1;
  }
  return memo == 1;
}

bool Filter::term(const Term &t, const Sample &s) {
  if (t.string_cmp) {
    if (!field_text(t.field, s, *names_, scratch_)) return false;
    bool m = glob_match(t.text, scratch_);
    return t.op == Term::Glob ? m : !m;
  }
  int64_t v;
  if (!field_number(t.field, s, *names_, v)) return false;
  switch (t.op) {
    case Term::Eq:
      return v == t.num;
    case Term::Ne:
      return v != t.num;
    case Term::Lt:
      return v < t.num;
    case Term::Le:
      return v <= t.num;
    case Term::Gt:
      return v > t.num;
    case Term::Ge:
      return v >= t.num;
    case Term::And:
      return (v & t.num) != 0;
    default:
      return false;
  }
}

bool Filter::matches(const Sample &s) {
  if (!active_) return true;
  if (!have_first_) {
    have_first_ = true;
    first_ts_ = s.ts;
  }
  if (cpu_mask_lo_ || !cpus_.empty()) {
    bool ok = s.cpu < 64 ? (cpu_mask_lo_ >> s.cpu) & 1 : false;
    for (uint32_t c : cpus_) ok |= c == s.cpu;
    if (!ok) return false;
  }
  if (since_.set) {
    uint64_t b = since_.absolute ? since_.ns : first_ts_ + since_.ns;
    uint64_t t = s.kind == Kind::Lost ? s.lost_last : s.ts;
    if (t < b) return false;
  }
  if (until_.set) {
    uint64_t b = until_.absolute ? until_.ns : first_ts_ + until_.ns;
    uint64_t t = s.kind == Kind::Lost ? s.lost_first : s.ts;
    if (t > b) return false;
  }
  if (s.kind == Kind::Lost) return true;
  // A stack belongs to the probe record before it on the same CPU.
  if (s.kind == Kind::Stack) return s.cpu < last_probe_ok_.size() ? last_probe_ok_[s.cpu] != 0 : true;
  bool ok = record_ok(s);
  if (s.kind == Kind::Entry || s.kind == Kind::Exit || s.kind == Kind::Point) {
    if (s.cpu >= last_probe_ok_.size()) last_probe_ok_.resize(s.cpu + 1u, 1);
    last_probe_ok_[s.cpu] = ok;
  }
  return ok;
}

bool Filter::record_ok(const Sample &s) {
  if (!pids_.empty()) {
    bool ok = false;
    for (uint32_t p : pids_) ok |= p == s.pid || p == s.tgid;
    if (!ok) return false;
  }
  if (!comm_ok(s) || !event_ok(s)) return false;
  return where_.empty() || eval(where_.root(), s);
}

bool Filter::eval(int node, const Sample &s) {
  const predicate::Node &n = where_.nodes[node];
  switch (n.kind) {
    case predicate::Node::Compare:
      return term(terms_[n.comparison], s);
    case predicate::Node::And:
      return eval(n.left, s) && eval(n.right, s);
    case predicate::Node::Or:
      return eval(n.left, s) || eval(n.right, s);
    case predicate::Node::Not:
      return !eval(n.left, s);
  }
  return false;
}

}  // namespace ktrack::analysis
