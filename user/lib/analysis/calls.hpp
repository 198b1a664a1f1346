// Entry/exit pairing per task: the common ground of profile, graph,
// $duration histograms and the Perfetto export.
//
// Each task (pid; the idle task per CPU) has a stack of open calls.  An
// exit pops up to the innermost open call of the same function; frames
// above it never saw their exit (lost or not recorded) and are dropped and
// counted.  An exit with no open call of its function is an orphan (its
// entry predates the recording or was lost).  Lost-record markers do not
// clear stacks: matching by function keeps pairs that survived correct.
// Two probes at one function's entry (an f probe pairing it and a p probe
// taking its stack) open one call, not two: a second entry of the open
// innermost function from another probe is the same call (a recursion
// would fire the same probe again), unless both probes have been seen
// recording exits (two f probes over one function pair a call each, as
// before; only their first call, before any exit, is one call).  The call is timed from the entry of the
// probe whose exit closes it.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/analysis.hpp"

namespace ktrack::analysis {

struct Call {
  uint64_t ip = 0;         // function
  uint64_t parent_ip = 0;  // caller address from the entry record
  uint64_t caller = 0;     // function of the enclosing open call (0 if none)
  uint64_t entry_ts = 0, exit_ts = 0;
  uint64_t child_ns = 0;  // time spent in completed callees
  uint32_t depth = 0;     // 0 = outermost open call of the task
  uint32_t pid = 0, tgid = 0;
  uint32_t probe_id = 0;  // the probe whose entry opened the call
  uint32_t probe2 = 0;    // a second probe's entry merged into it, at entry2_ts
  uint64_t entry2_ts = 0;
  uint16_t cpu = 0;  // CPU of the entry
  uint64_t duration() const { return exit_ts >= entry_ts ? exit_ts - entry_ts : 0; }
  uint64_t self_ns() const { return duration() > child_ns ? duration() - child_ns : 0; }
};

class CallTracker {
 public:
  // Deepest stack kept per task; deeper entries (exits all lost) evict the
  // oldest half, counted as unmatched.
  static constexpr size_t kMaxDepth = 512;

  // An entry: pushes an open call; returns its depth.  'merged' (when
  // given) tells an entry that joined the open call of another probe.
  uint32_t entry(const Sample &s, bool *merged = nullptr);
  // An exit: true and 'out' filled when it closes an open call.
  bool exit(const Sample &s, Call &out);
  // Open calls of the task of 's' (innermost last), for leaf detection and
  // for exports that close what is still open at the end.
  const std::vector<Call> *open_calls(const Sample &s) const;
  template <typename F>
  void for_each_open(F &&f) const {
    for (const auto &[key, stack] : tasks_)
      for (const Call &c : stack) f(c);
  }
  uint32_t depth(const Sample &s) const;

  uint64_t unmatched_entries() const { return unmatched_entries_; }
  uint64_t orphan_exits() const { return orphan_exits_; }
  // Closed calls whose exit timestamp precedes the entry's: the per-CPU
  // local clock of the exit's CPU read behind the entry's (the task moved).
  // Their duration() is 0; views should not count it as a time.
  uint64_t backwards() const { return backwards_; }

 private:
  FlatMap<std::vector<Call>> tasks_{256};
  FlatMap<uint8_t> exit_probes_{16};  // probe ids seen recording exits
  uint64_t unmatched_entries_ = 0;
  uint64_t orphan_exits_ = 0;
  uint64_t backwards_ = 0;
};

}  // namespace ktrack::analysis
