// latency wakeup: see latency_wakeup.hpp.
#include "analysis/latency_wakeup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "util/json.hpp"

namespace ktrack::analysis {

namespace {

constexpr std::string_view kWaking = "lat_waking";
constexpr std::string_view kWakeupNew = "lat_wakeup_new";
constexpr std::string_view kSwitch = "lat_switch";

int64_t int_field(const Event &ev, std::string_view name, bool &ok) {
  uint64_t v = 0;
  ok = integer_field(ev, name, v) && ok;
  return static_cast<int64_t>(v);
}

std::string str_field(const Event &ev, std::string_view name) {
  const FieldValue *f = ev.field(name);
  if (!f || !f->valid) return {};
  return std::string(f->str());
}

// ftrace's letters for a sched_switch prev_state (TASK_REPORT bits; the
// preempted-while-runnable bit, TASK_REPORT_MAX, prints as R+).
std::string state_letters(int64_t state) {
  static const char letters[] = "SDTtXZPI";
  unsigned s = static_cast<unsigned>(state) & 0xff;
  if (!s) return (state & 0x100) ? "R+" : "R";
  std::string out;
  for (int i = 0; i < 8; i++)
    if (s & (1u << i)) {
      if (!out.empty()) out += '|';
      out += letters[i];
    }
  return out;
}

}  // namespace

// The wakings carry no comm: in an e probe $comm is the current task's
// name (the waker's), as in ftrace's probes, not the event's comm field.
// The woken task's name comes from its switch-in (next_comm).
std::vector<std::string> latency_wakeup_specs() {
  return {
      std::string("e:") + std::string(kWaking) +
          " sched/sched_waking pid=$pid prio=$prio target_cpu=$target_cpu",
      std::string("e:") + std::string(kWakeupNew) +
          " sched/sched_wakeup_new pid=$pid prio=$prio target_cpu=$target_cpu",
      std::string("e:") + std::string(kSwitch) +
          " sched/sched_switch prev_pid=$prev_pid prev_prio=$prev_prio prev_state=$prev_state "
          "next_pid=$next_pid next_prio=$next_prio prev_comm=$prev_comm next_comm=$next_comm",
  };
}

bool sched_record_from_event(const Event &ev, SchedRecord &r) {
  r = SchedRecord{};
  r.ts = ev.ts;
  r.cpu = ev.cpu;
  if (ev.type == KTRACK_REC_LOST) {
    r.type = SchedRecord::Lost;
    return true;
  }
  if (ev.type != KTRACK_REC_PROBE) return false;
  bool ok = true;
  if (ev.name == kWaking || ev.name == kWakeupNew) {
    r.type = ev.name == kWaking ? SchedRecord::Waking : SchedRecord::WakeupNew;
    r.pid = static_cast<int32_t>(int_field(ev, "pid", ok));
    r.prio = static_cast<int32_t>(int_field(ev, "prio", ok));
    r.target_cpu = static_cast<int32_t>(int_field(ev, "target_cpu", ok));
    r.comm = str_field(ev, "comm");
    return ok;
  }
  if (ev.name == kSwitch) {
    r.type = SchedRecord::Switch;
    r.prev_pid = static_cast<int32_t>(int_field(ev, "prev_pid", ok));
    r.prev_prio = static_cast<int32_t>(int_field(ev, "prev_prio", ok));
    r.prev_state = int_field(ev, "prev_state", ok);
    r.next_pid = static_cast<int32_t>(int_field(ev, "next_pid", ok));
    r.next_prio = static_cast<int32_t>(int_field(ev, "next_prio", ok));
    r.prev_comm = str_field(ev, "prev_comm");
    r.next_comm = str_field(ev, "next_comm");
    return ok;
  }
  return false;
}

bool LatencyWakeup::cpu_selected(uint16_t cpu) const {
  return opt_.cpus.empty() || std::find(opt_.cpus.begin(), opt_.cpus.end(), cpu) != opt_.cpus.end();
}

std::optional<WakeupLatency> LatencyWakeup::add(const SchedRecord &r) {
  if (r.type == SchedRecord::Lost) {
    // Switches may be missing: no pending waking can be trusted any more.
    ++lost_;
    pending_.clear();
    recent_[r.cpu].clear();
    return std::nullopt;
  }
  auto &recent = recent_[r.cpu];
  recent.push_back(r);
  while (recent.size() > std::max<size_t>(opt_.trace_len, 1)) recent.pop_front();

  if (r.type == SchedRecord::Waking || r.type == SchedRecord::WakeupNew) {
    if (r.pid <= 0) return std::nullopt;
    // A second waking before the switch-in replaces the first: a task
    // waits from one waking only (state WAKING/RUNNING stops another), so
    // the first came while it still ran and its switch-out was not seen
    // (lost, or recorded out of order); a new task is a new life of its pid.
    pending_[r.pid] = Pending{r.ts, r.prio, r.comm, r};
    return std::nullopt;
  }

  // A task switched out was running: a waking of it still pending came
  // while it ran (it never waited).
  if (r.prev_pid > 0) pending_.erase(r.prev_pid);
  if (r.next_pid <= 0) return std::nullopt;
  auto it = pending_.find(r.next_pid);
  if (it == pending_.end()) return std::nullopt;
  Pending p = std::move(it->second);
  pending_.erase(it);
  if (r.ts < p.ts) return std::nullopt;
  const int32_t prio = p.prio;
  if (opt_.rt && prio >= 100) return std::nullopt;
  if (!cpu_selected(r.cpu)) return std::nullopt;
  WakeupLatency l;
  l.pid = r.next_pid;
  l.prio = prio;
  l.comm = r.next_comm.empty() ? p.comm : r.next_comm;
  l.cpu = r.cpu;
  l.wake_ts = p.ts;
  l.ts = r.ts;
  const uint64_t ns = l.latency_ns();
  ++latencies_;
  TaskStats &t = tasks_[{l.pid, l.comm}];
  t.pid = l.pid;
  t.prio = prio;
  t.comm = l.comm;
  t.ns.add(static_cast<int64_t>(ns));
  t.us.add(static_cast<int64_t>(ns / 1000));
  if (opt_.threshold_ns && ns <= opt_.threshold_ns) return std::nullopt;
  if (!max_ || ns > max_->latency_ns()) {
    max_ = l;
    max_trace_.assign(recent.begin(), recent.end());
    // Its waking first, when it is not among the records kept.
    bool have_waking = false;
    for (const auto &x : max_trace_)
      if ((x.type == SchedRecord::Waking || x.type == SchedRecord::WakeupNew) && x.pid == l.pid &&
          x.ts == p.ts)
        have_waking = true;
    if (!have_waking) max_trace_.insert(max_trace_.begin(), p.rec);
  }
  return l;
}

std::string LatencyWakeup::live_line(const WakeupLatency &l) {
  return fmt::format("{:>17}  pid {:<7} comm {:<16} latency {:>10.1f} us  cpu {}", format_ts(l.ts), l.pid,
                     l.comm, static_cast<double>(l.latency_ns()) / 1000.0, l.cpu);
}

std::string LatencyWakeup::record_line(const SchedRecord &r, uint64_t base_ts) {
  std::string rel = r.ts >= base_ts ? fmt::format("+{:.3f}us", static_cast<double>(r.ts - base_ts) / 1000.0)
                                    : fmt::format("-{:.3f}us", static_cast<double>(base_ts - r.ts) / 1000.0);
  std::string head = fmt::format("{:>17} [{:03}] {:>14}  ", format_ts(r.ts), r.cpu, rel);
  switch (r.type) {
    case SchedRecord::Waking:
    case SchedRecord::WakeupNew:
      return head + fmt::format("{}: {}pid={} prio={} target_cpu={:03}",
                                r.type == SchedRecord::Waking ? "sched_waking" : "sched_wakeup_new",
                                r.comm.empty() ? std::string() : "comm=" + r.comm + " ", r.pid, r.prio,
                                r.target_cpu);
    case SchedRecord::Switch:
      return head + fmt::format(
                        "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> next_comm={} "
                        "next_pid={} next_prio={}",
                        r.prev_comm, r.prev_pid, r.prev_prio, state_letters(r.prev_state), r.next_comm,
                        r.next_pid, r.next_prio);
    case SchedRecord::Lost:
      break;
  }
  return head + "lost records";
}

void LatencyWakeup::print(Out &out) const {
  std::vector<const TaskStats *> order;
  for (const auto &[k, t] : tasks_) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(),
                   [](const TaskStats *a, const TaskStats *b) { return a->ns.max() > b->ns.max(); });
  const Colors &c = opt_.colors;
  if (opt_.json) {
    auto &buf = out.buf();
    auto app = std::back_inserter(buf);
    fmt::format_to(app, "{{\"tracer\":\"{}\",\"threshold_us\":{},\"latencies\":{},\"lost\":{},\"tasks\":[",
                   opt_.rt ? "wakeup_rt" : "wakeup", opt_.threshold_ns / 1000, latencies_, lost_);
    bool first = true;
    for (const TaskStats *t : order) {
      fmt::format_to(app, "{}{{\"pid\":{},\"comm\":", first ? "" : ",", t->pid);
      json_escape(buf, t->comm);
      fmt::format_to(app,
                     ",\"prio\":{},\"count\":{},\"min_us\":{:.3f},\"avg_us\":{:.3f},\"max_us\":{:.3f},"
                     "\"buckets\":",
                     t->prio, t->ns.count(), static_cast<double>(t->ns.min()) / 1000.0, t->ns.avg() / 1000.0,
                     static_cast<double>(t->ns.max()) / 1000.0);
      json_log2_buckets(buf, t->us);
      buf.push_back('}');
      first = false;
    }
    buf.append(std::string_view("],\"max\":"));
    if (max_) {
      fmt::format_to(app, "{{\"pid\":{},\"comm\":", max_->pid);
      json_escape(buf, max_->comm);
      fmt::format_to(
          app, ",\"prio\":{},\"cpu\":{},\"wake_ts\":{},\"ts\":{},\"latency_us\":{:.3f},\"trace\":[",
          max_->prio, max_->cpu, max_->wake_ts, max_->ts, static_cast<double>(max_->latency_ns()) / 1000.0);
      for (size_t i = 0; i < max_trace_.size(); ++i) {
        if (i) buf.push_back(',');
        json_escape(buf, record_line(max_trace_[i], max_->wake_ts));
      }
      buf.append(std::string_view("]}"));
    } else {
      buf.append(std::string_view("null"));
    }
    buf.append(std::string_view("}\n"));
    out.flush();
    return;
  }
  out.print("# tracer: {}{}\n", opt_.rt ? "wakeup_rt" : "wakeup",
            opt_.threshold_ns ? fmt::format(" (threshold {} us)", opt_.threshold_ns / 1000) : std::string());
  if (order.empty()) out.print("no wake-up latencies measured\n");
  for (const TaskStats *t : order) {
    const Distribution &d = t->ns;
    out.print("{}{} pid {} prio {}{}: count {}, min {:.1f} us, avg {:.1f} us, max {:.1f} us\n", c.bold,
              t->comm, t->pid, t->prio, c.reset, d.count(), static_cast<double>(d.min()) / 1000.0,
              d.avg() / 1000.0, static_cast<double>(d.max()) / 1000.0);
    print_log2_bars(out, c, t->us, "latency (us)");
    out.print("\n");
  }
  if (max_) {
    out.print("{}max latency: {:.1f} us{}, {} pid {} prio {}, woken at {}, switched in at {} on cpu {}\n",
              c.alert, static_cast<double>(max_->latency_ns()) / 1000.0, c.reset, max_->comm, max_->pid,
              max_->prio, format_ts(max_->wake_ts), format_ts(max_->ts), max_->cpu);
    out.print("#       timestamp  cpu   since waking  event\n");
    for (const auto &r : max_trace_) out.print("{}\n", record_line(r, max_->wake_ts));
  }
  if (lost_)
    out.print("{}{} lost-record markers: the wakings pending then were dropped{}\n", c.warn, lost_, c.reset);
  out.flush();
}

}  // namespace ktrack::analysis
