// Record filters shared by every analysis view: pid, CPU, comm, event
// (probe name), time window and field predicates (--where 'len > 10 &&
// comm == "bash*"', in the grammar of a probe's 'if': util/predicate.hpp).  Lost-record markers pass the
// pid/comm/event/field filters (a gap concerns everyone on that CPU) but obey CPU and time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.hpp"
#include "util/predicate.hpp"

namespace ktrack::analysis {

// A field a view can read: a built-in of every record or a payload field.
struct FieldRef {
  enum Builtin : uint8_t {
    Payload,  // decoder field 'id'
    Pid,
    Tgid,
    Cpu,
    Ts,
    Ip,        // function address
    ParentIp,  // caller address
    ProbeId,
    Func,      // function (numeric: ip; string: name)
    Caller,    // calling function (numeric: parent_ip; string: name)
    Comm,      // task name (string)
    Probe,     // probe name (string)
    Duration,  // $duration: payload field 'duration' or entry/exit pairs
  };
  Builtin builtin = Payload;
  int id = -1;
  std::string name;
  bool is_string() const {
    return builtin == Comm || builtin == Probe || builtin == Func || builtin == Caller;
  }
};

// Resolves a field name ("pid", "$duration", "comm", "count", ...);
// throws UsageError listing the built-ins when nothing has that name.
FieldRef resolve_field(const Names &names, std::string_view name);

// Numeric value of 'f' for 's' (false when the record has no such field).
// Duration is not handled here (it needs pairing, see hist.hpp).
bool field_number(const FieldRef &f, const Sample &s, const Names &names, int64_t &out);
// String value of 'f' for 's' (comm, probe, func, caller, string fields).
bool field_text(const FieldRef &f, const Sample &s, const Names &names, std::string &out);

struct FilterSpec {
  std::vector<uint32_t> pids;  // pid or tgid
  std::vector<uint32_t> cpus;
  std::vector<std::string> comms;  // globs
  // globs over probe names (and "lost", "marker", "stack"); SYSTEM/EVENT
  // matches the probe named EVENT (e and U probes' default name)
  std::vector<std::string> events;
  std::string since, until;  // see parse_time_bound()
  std::string where;         // predicate expression
};

class Filter {
 public:
  Filter() = default;
  // Throws UsageError on a malformed --where or time bound.
  Filter(const FilterSpec &spec, const Names &names);

  // 'first_ts' of the stream is needed for relative time bounds; call
  // matches() on every record in order (the first call sets it).
  bool matches(const Sample &s);
  bool active() const { return active_; }

 private:
  struct Term {
    FieldRef field;
    enum Op : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, And, Glob, NotGlob } op = Eq;
    int64_t num = 0;
    std::string text;
    bool string_cmp = false;
  };
  static Term make_term(std::string_view where, const predicate::Comparison &c, const Names &names);
  bool term(const Term &t, const Sample &s);
  bool eval(int node, const Sample &s);
  bool comm_ok(const Sample &s);
  bool event_ok(const Sample &s);
  bool record_ok(const Sample &s);

  const Names *names_ = nullptr;
  bool active_ = false;
  std::vector<uint32_t> pids_;
  uint64_t cpu_mask_lo_ = 0;
  std::vector<uint32_t> cpus_;
  std::vector<std::string> comms_, events_;
  struct Bound {
    bool set = false, absolute = false;
    uint64_t ns = 0;
  } since_, until_;
  bool have_first_ = false;
  uint64_t first_ts_ = 0;
  predicate::Expr where_;    // --where, parsed (util/predicate.hpp)
  std::vector<Term> terms_;  // its comparisons, typed
  // Per-probe/per-pid memo of name matches (integers only on the hot path).
  FlatMap<uint8_t> probe_ok_, pid_comm_ok_;
  std::string scratch_;
  std::vector<uint8_t> last_probe_ok_;  // per CPU
};

}  // namespace ktrack::analysis
