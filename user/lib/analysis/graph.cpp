#include "analysis/graph.hpp"

#include <fmt/format.h>

namespace ktrack::analysis {

namespace {
constexpr size_t kMaxIndent = 64;  // deeper nesting is printed at this depth
}

Graph::Graph(const GraphOptions &opt, const Names &names, Out &out) : opt_(opt), names_(names), out_(out) {}

void Graph::header() {
  if (opt_.per_task)
    out_.print(
        "# {}{:<20} CPU  DURATION           FUNCTION CALLS\n# {}{:<20} |    |   |              |   |   |   "
        "|\n",
        opt_.abstime ? "    TIME        " : "", "TASK-PID", opt_.abstime ? "     |          " : "", "  |");
  else
    out_.print(
        "# {}CPU  {:<20} DURATION           FUNCTION CALLS\n# {}|    {:<20} |   |              |   |   |   "
        "|\n",
        opt_.abstime ? "    TIME        " : "", "TASK-PID", opt_.abstime ? "     |          " : "", "  |");
}

const std::string &Graph::func(uint64_t ip) {
  std::string &n = func_names_[ip];
  if (n.empty()) n = names_.func_name(ip);
  return n;
}

const std::string &Graph::task(uint32_t pid, std::string_view comm) {
  std::string &n = task_names_[pid];
  if (n.empty() || (!comm.empty() && n.compare(0, comm.size(), comm) != 0)) {
    std::string c = comm.empty() ? names_.comm(pid) : std::string(comm);
    n = fmt::format("{}-{}", c.empty() ? "<...>" : c, pid);
  }
  return n;
}

// The per-line parts are written with Out's fast paths: a graph prints a
// line per record, and format-string parsing would be most of its cost.
void Graph::prefix(uint16_t cpu, uint32_t pid, std::string_view comm, uint64_t ts) {
  if (opt_.abstime) {
    out_.pad_left(format_ts(ts), 15);
    out_.write(" ");
  }
  if (opt_.per_task) {
    out_.write(" ");
    out_.pad_right(task(pid, comm), 20);
    out_.write(" ");
    out_.number(cpu, 3);
    out_.write(") ");
  } else {
    out_.write(" ");
    out_.number(cpu, 2);
    out_.write(") ");
    out_.pad_right(task(pid, comm), 20);
    out_.write(" ");
  }
}

void Graph::duration(uint64_t ns, bool have) {
  if (!have) {
    out_.write("|               |  ");
    return;
  }
  const char *m = duration_marker(ns);
  const Colors &c = opt_.colors;
  const char *col = m[0] == '+' ? c.warn : m[0] != ' ' ? c.alert : "";
  out_.write("| ");
  out_.write(col);
  out_.write(m);
  if (*col) out_.write(c.reset);
  // "%8.3f us" in integers: microseconds and three decimals.
  out_.number(ns / 1000, 4);
  char frac[5] = {'.', static_cast<char>('0' + ns / 100 % 10), static_cast<char>('0' + ns / 10 % 10),
                  static_cast<char>('0' + ns % 10), 0};
  out_.write(frac);
  out_.write(" us |  ");
}

void Graph::indent(size_t depth) { out_.spaces(2 * std::min(depth, kMaxIndent)); }

void Graph::flush_pending(Pending &p) {
  if (!p.active) return;
  p.active = false;
  prefix(p.cpu, p.pid, {}, p.ts);
  duration(0, false);
  indent(p.depth);
  out_.write(func(p.ip));
  out_.write("() {\n");
}

void Graph::add(const Sample &s) {
  if (s.kind == Kind::Lost) {
    // Calls that started on this CPU before the gap are printed before it.
    for (auto &[key, p] : pending_)
      if (p.active && p.cpu == s.cpu) flush_pending(p);
    const Colors &c = opt_.colors;
    out_.print("{}{:>3}) ========== {} =========={}\n", c.alert, s.cpu, lost_line(s), c.reset);
    return;
  }
  if (s.kind != Kind::Entry && s.kind != Kind::Exit && s.kind != Kind::Point && s.kind != Kind::Marker)
    return;
  uint64_t tk = task_key(s);
  if (!opt_.per_task) {
    if (s.cpu >= cpu_task_.size()) cpu_task_.resize(s.cpu + 1u, 0);
    uint64_t &last = cpu_task_[s.cpu];
    if (last && last != tk + 1) {
      // The task on this CPU changed (ftrace prints the same separator);
      // what the previous task had started is not a leaf any more.
      if (auto *prev_pending = pending_.find(last - 1)) flush_pending(*prev_pending);
      auto *prev_name = task_names_.find(static_cast<uint32_t>((last - 1) & 0xffffffff));
      std::string prev = prev_name ? *prev_name : std::string("?");  // task() may rehash task_names_
      out_.print(
          " ------------------------------------------\n {:>2}) {:>20}  =>  {}\n"
          " ------------------------------------------\n\n",
          s.cpu, prev, task(s.pid, s.comm));
    }
    last = tk + 1;
  }
  Pending &p = pending_[tk];
  switch (s.kind) {
    case Kind::Entry: {
      bool merged;
      uint32_t depth = calls_.entry(s, &merged);
      if (merged) return;  // a second probe at the entry of the open call
      flush_pending(p);
      task(s.pid, s.comm);  // cache the name: s.comm does not outlive this record
      p = Pending{true, s.ip, s.ts, depth, s.pid, s.cpu};
      return;
    }
    case Kind::Exit: {
      Call c;
      bool matched = calls_.exit(s, c);
      // A leaf: nothing entered since its entry (an entry flushes the
      // pending line), so the pending call is this one.
      if (matched && p.active && p.ip == c.ip && p.depth == c.depth) {
        p.active = false;
        prefix(p.cpu, s.pid, s.comm, c.entry_ts);
        duration(c.duration(), true);
        indent(c.depth);
        out_.write(func(c.ip));
        out_.write("();\n");
        break;
      }
      flush_pending(p);
      prefix(s.cpu, s.pid, s.comm, s.ts);
      if (matched) {
        duration(c.duration(), true);
        indent(c.depth);
        out_.write("} /* ");
        out_.write(func(c.ip));
        out_.write(" */\n");
      } else {
        // Its entry is before the recording or among lost records.
        duration(0, false);
        out_.print("{:{}}}} /* {} (entry not recorded) */\n", "",
                   2 * std::min<size_t>(calls_.depth(s), kMaxIndent), func(s.ip));
      }
      break;
    }
    default: {
      flush_pending(p);
      prefix(s.cpu, s.pid, s.comm, s.ts);
      duration(0, false);
      size_t ind = 2 * std::min<size_t>(calls_.depth(s), kMaxIndent);
      if (s.kind == Kind::Marker)
        out_.print("{:{}}/* marker: {} */\n", "", ind, s.text);
      else
        out_.print("{:{}}/* {}: {} */\n", "", ind, names_.probe_name(s.probe_id), func(s.ip));
      break;
    }
  }
  out_.maybe_flush();
}

void Graph::finish() {
  for (auto &[key, p] : pending_) flush_pending(p);
  out_.flush();
}

}  // namespace ktrack::analysis
