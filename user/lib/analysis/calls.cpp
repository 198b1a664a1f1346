#include "analysis/calls.hpp"

namespace ktrack::analysis {

uint32_t CallTracker::entry(const Sample &s, bool *merged) {
  auto &stack = tasks_[task_key(s)];
  if (merged) *merged = false;
  if (!stack.empty()) {
    Call &open = stack.back();
    // The cheap comparisons first: this runs for every entry record.
    if (open.ip == s.ip && open.probe_id != s.probe_id && !open.probe2 &&
        !(exit_probes_.find(s.probe_id) && exit_probes_.find(open.probe_id))) {
      open.probe2 = s.probe_id;
      open.entry2_ts = s.ts;
      if (merged) *merged = true;
      return open.depth;
    }
  }
  if (stack.size() >= kMaxDepth) {
    size_t drop = kMaxDepth / 2;
    unmatched_entries_ += drop;
    stack.erase(stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(drop));
    for (auto &c : stack) c.depth -= static_cast<uint32_t>(drop);
  }
  Call c;
  c.ip = s.ip;
  c.parent_ip = s.parent_ip;
  c.caller = stack.empty() ? 0 : stack.back().ip;
  c.entry_ts = s.ts;
  c.depth = static_cast<uint32_t>(stack.size());
  c.pid = s.pid;
  c.tgid = s.tgid;
  c.cpu = s.cpu;
  c.probe_id = s.probe_id;
  stack.push_back(c);
  return c.depth;
}

bool CallTracker::exit(const Sample &s, Call &out) {
  exit_probes_[s.probe_id] = 1;
  auto *stack = tasks_.find(task_key(s));
  if (!stack) {
    ++orphan_exits_;
    return false;
  }
  for (size_t i = stack->size(); i-- > 0;) {
    if ((*stack)[i].ip != s.ip) continue;
    unmatched_entries_ += stack->size() - 1 - i;
    out = (*stack)[i];
    // Timed from the entry of the probe that records the exit.
    if (out.probe2 && s.probe_id == out.probe2) out.entry_ts = out.entry2_ts;
    out.exit_ts = s.ts;
    if (out.exit_ts < out.entry_ts) ++backwards_;
    stack->resize(i);
    if (!stack->empty()) stack->back().child_ns += out.duration();
    return true;
  }
  ++orphan_exits_;
  return false;
}

const std::vector<Call> *CallTracker::open_calls(const Sample &s) const { return tasks_.find(task_key(s)); }

uint32_t CallTracker::depth(const Sample &s) const {
  auto *stack = tasks_.find(task_key(s));
  return stack ? static_cast<uint32_t>(stack->size()) : 0;
}

}  // namespace ktrack::analysis
