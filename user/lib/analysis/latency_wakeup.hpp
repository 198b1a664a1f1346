// latency wakeup: ftrace's wakeup / wakeup_rt tracers in userspace, from the
// scheduler's trace events captured by ktrack e probes (sched_waking,
// sched_wakeup_new, sched_switch).  The wake-up latency of a task is the
// time from its waking to the sched_switch that switches it in; kept per
// task (pid, comm) as count/min/avg/max and a log2 histogram in
// microseconds, with the largest one and the scheduler records on its CPU
// that led to it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/hist.hpp"
#include "analysis/output.hpp"
#include "format/event.hpp"

namespace ktrack::analysis {

// One scheduler record as the latency computation reads it.
struct SchedRecord {
  enum Type : uint8_t { Waking, WakeupNew, Switch, Lost };
  Type type = Waking;
  uint64_t ts = 0;
  uint16_t cpu = 0;  // the CPU the record was written on
  // Waking / WakeupNew: the task woken.
  int32_t pid = 0, prio = 0, target_cpu = 0;
  std::string comm;  // empty from the probes (see latency_wakeup_specs)
  // Switch.
  int32_t prev_pid = 0, prev_prio = 0, next_pid = 0, next_prio = 0;
  int64_t prev_state = 0;
  std::string prev_comm, next_comm;
};

// The probe specs a live run attaches (e probes named lat_waking,
// lat_wakeup_new and lat_switch).
std::vector<std::string> latency_wakeup_specs();
// The SchedRecord of a record those probes wrote (or of a lost-records
// marker); false for any other record.
bool sched_record_from_event(const Event &ev, SchedRecord &out);

// Puts records back in time order.  A live capture delivers them merged
// by time within one drain sweep, so a record of one CPU may come after a
// later one of another CPU; a record is passed on once one 'window_ns'
// newer has been seen (or at flush()).  Each CPU's own order is kept.
class SchedReorder {
 public:
  explicit SchedReorder(uint64_t window_ns) : window_(window_ns) {}
  template <typename F>
  void push(SchedRecord r, F &&out) {
    newest_ = std::max(newest_, r.ts);
    q_.push(Item{r.ts, seq_++, std::move(r)});
    while (!q_.empty() && q_.top().ts + window_ <= newest_) pop(out);
  }
  template <typename F>
  void flush(F &&out) {
    while (!q_.empty()) pop(out);
  }

 private:
  struct Item {
    uint64_t ts, seq;
    SchedRecord r;
    bool operator>(const Item &o) const { return ts != o.ts ? ts > o.ts : seq > o.seq; }
  };
  template <typename F>
  void pop(F &out) {
    SchedRecord r = std::move(const_cast<Item &>(q_.top()).r);
    q_.pop();
    out(r);
  }
  uint64_t window_, newest_ = 0, seq_ = 0;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q_;
};

struct LatencyWakeupOptions {
  bool rt = false;             // only tasks with an RT priority (prio < 100)
  uint64_t threshold_ns = 0;   // 0: none; else only latencies above it are reported
  std::vector<uint32_t> cpus;  // only switch-ins on these CPUs (empty: all)
  size_t trace_len = 20;       // records kept before the maximum's switch-in
  bool json = false;
  Colors colors;
};

// One measured wake-up latency.
struct WakeupLatency {
  int32_t pid = 0, prio = 0;
  std::string comm;
  uint16_t cpu = 0;      // where it was switched in
  uint64_t wake_ts = 0;  // its waking
  uint64_t ts = 0;       // its switch-in
  uint64_t latency_ns() const { return ts - wake_ts; }
};

class LatencyWakeup {
 public:
  struct TaskStats {
    int32_t pid = 0, prio = 0;
    std::string comm;
    Distribution ns;  // exact min/avg/max
    Distribution us;  // the log2 histogram
  };

  explicit LatencyWakeup(LatencyWakeupOptions opt) : opt_(std::move(opt)) {}
  // Returns the latency this record completes, when it is one that counts
  // (the task selected, above the threshold if any).
  std::optional<WakeupLatency> add(const SchedRecord &r);

  // Per task, keyed by (pid, comm): a reused pid under another name is
  // another task.
  const std::map<std::pair<int32_t, std::string>, TaskStats> &tasks() const { return tasks_; }
  const std::optional<WakeupLatency> &max() const { return max_; }
  // The records before the maximum's switch-in on its CPU (oldest first;
  // its waking first when it came earlier or on another CPU).
  const std::vector<SchedRecord> &max_trace() const { return max_trace_; }
  uint64_t latencies() const { return latencies_; }
  uint64_t lost_records() const { return lost_; }
  size_t pending() const { return pending_.size(); }

  // The summary: text (per task count/min/avg/max and bars, then the
  // maximum with its trace) or one JSON object.
  void print(Out &out) const;
  // One live line: "TIME pid PID comm COMM latency N us cpu C".
  static std::string live_line(const WakeupLatency &l);
  // ftrace-like text of one record.
  static std::string record_line(const SchedRecord &r, uint64_t base_ts);

 private:
  struct Pending {
    uint64_t ts = 0;
    int32_t prio = 0;
    std::string comm;
    SchedRecord rec;  // the waking itself (the maximum's trace)
  };
  bool cpu_selected(uint16_t cpu) const;

  LatencyWakeupOptions opt_;
  std::unordered_map<int32_t, Pending> pending_;
  std::unordered_map<uint16_t, std::deque<SchedRecord>> recent_;  // per CPU
  std::map<std::pair<int32_t, std::string>, TaskStats> tasks_;
  std::optional<WakeupLatency> max_;
  std::vector<SchedRecord> max_trace_;
  uint64_t latencies_ = 0, lost_ = 0;
};

}  // namespace ktrack::analysis
