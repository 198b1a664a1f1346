#include "capture_options.hpp"

#include <fmt/core.h>

#include <csignal>
#include <cstdio>
#include <set>

#include "command.hpp"
#include "device/session.hpp"
#include "probes/graph_scope.hpp"
#include "probes/probe_batch.hpp"
#include "probes/probe_spec.hpp"
#include "util/error.hpp"
#include "util/size.hpp"

namespace ktrackctl {

void add_capture_flags(CLI::App *cmd, CaptureFlags &f) {
  cmd->add_option("-s,--session", f.session, "Use this named session (see 'ktrackctl session')");
  cmd->add_option("-p,--pid", f.pids, "Record only these pids/tgids (repeatable, max 8)")
      ->allow_extra_args(false);
  cmd->add_option("-C,--cpu", f.cpus, "Record only on these CPUs (repeatable)")->allow_extra_args(false);
  cmd->add_option("-c,--comm", f.comm, "Keep only records of tasks with this command name");
  cmd->add_option("-d,--duration", f.duration, "Stop after this long (500us, 250ms, 10s, 2m, 1h)");
  cmd->add_option("--count", f.count,
                  "Stop after this many records (records already produced past it are counted, not shown)");
  cmd->add_option(
      "--buffer-pages", f.buf_pages,
      "Ring buffer pages per CPU (power of two; default 1024, 4 MiB, fewer where CPUs x 4 MiB would "
      "pass 128 MiB or 1/64 of the RAM; a named session keeps its own)");
  cmd->add_option("--mode", f.mode, "discard (drop newest when full) or overwrite (keep newest)");
  cmd->add_option("--clock", f.clock, "Timestamp clock: local, mono or boot");
  cmd->add_option("--flight", f.flight,
                  "Flight recorder: keep the newest SIZE (64M, 1G) over all CPUs, read at the end (a "
                  "probe's '=> stop', Ctrl-C or -d)");
  cmd->add_option("--graph", f.graph,
                  "Record only calls made under FUNC (or MOD:FUNC), per task, with FUNC's entries and exits: "
                  "the f probes given (default: FUNC's direct callees to --depth) become its call tree");
  f.depth_opt = cmd->add_option(
      "--depth", f.depth, "With --graph: calls at most N nested probed calls below FUNC (1..64, default 4)");
}

void apply_capture_flags(const CaptureFlags &f, ktrack::CaptureOptions &o) {
  o.session = f.session;
  o.pids = f.pids;
  o.cpus = f.cpus;
  o.comm = f.comm;
  if (!f.duration.empty()) o.duration = ktrack::parse_duration(f.duration);
  o.count = f.count;
  if (f.buf_pages) {
    if (f.buf_pages & (f.buf_pages - 1))
      throw ktrack::UsageError(
          fmt::format("--buffer-pages {} is not a power of two (e.g. 64, 256, 1024)", f.buf_pages));
    o.buf_pages = f.buf_pages;
  }
  if (!f.mode.empty()) o.mode = ktrack::parse_mode(f.mode);
  if (!f.clock.empty()) o.clock = ktrack::parse_clock(f.clock);
  if (!f.flight.empty()) o.flight_bytes = ktrack::parse_size(f.flight, "--flight");
  if (f.depth_opt && f.depth_opt->count() && f.graph.empty())
    throw ktrack::UsageError("--depth needs --graph FUNC (the function whose calls are recorded)");
  if (!f.graph.empty()) {
    uint32_t depth = f.depth_opt && f.depth_opt->count() ? f.depth : 4;
    ktrack::check_graph_scope(f.graph, depth);
    o.graph_root = f.graph;
    o.graph_depth = depth;
    if (o.specs.empty()) {
      auto callees = ktrack::graph_callees_of_system(f.graph, depth);
      if (!callees.nr_funcs)
        throw ktrack::UsageError(fmt::format(
            "--graph {}: no traceable function is called directly from it (to depth {}): give the functions "
            "to record, e.g. 'f ext4_*'",
            f.graph, depth));
      o.specs = callees.specs;
      if (callees.targets.size() <= ktrack::kGraphValueProbes) {
        // a probe each: every function's arguments and return value (BTF)
        ktrack::SystemSymbols syms;
        ktrack::ProbeCompiler pc = ktrack::ProbeCompiler::for_system(syms);
        o.specs.clear();
        std::set<std::string> names{"graph_root"};
        for (size_t i = 0; i < callees.targets.size(); i++) {
          const std::string &t = callees.targets[i];
          const std::string func = t.substr(t.find(':') == std::string::npos ? 0 : t.find(':') + 1);
          std::string name = ktrack::graph_probe_name(func, i);
          // the same name in two modules: the second gets its index
          if (!names.insert(name).second) names.insert(name = ktrack::graph_probe_name("." + func, i));
          o.specs.push_back(ktrack::graph_value_spec(pc, name, t));
        }
      }
      fmt::print(stderr, "graph: {} functions called from {} (direct calls, to depth {}){}\n",
                 callees.nr_funcs, f.graph, depth,
                 callees.capped ? fmt::format(", capped at {} functions", KTRACK_PROBE_MAX_FUNCS) : "");
      fmt::print(stderr,
                 "graph: indirect calls (function pointers) are not followed: add their functions as specs, "
                 "e.g. 'f ext4_*'\n");
    }
  }
  // A probe's '=> stop' ends the run, unless a '=> start' may resume it.
  bool stop = false, start = false;
  for (const auto &s : o.specs) {
    try {
      for (const auto &a : ktrack::parse_probe_spec(s).actions) {
        stop |= a.type == KTRACK_ACT_STOP;
        start |= a.type == KTRACK_ACT_START;
      }
    } catch (const ktrack::UsageError &) {
      // not a probe spec (objtrace...), or a bad one: reported when attached
    }
  }
  o.end_on_trigger_stop = stop && !start;
  // A named session keeps its own mode (the kernel refuses a discard one).
  if (has_snapshot_action(o.specs) && o.session.empty() && !o.flight_bytes &&
      o.mode.value_or(KTRACK_MODE_DISCARD) != KTRACK_MODE_OVERWRITE)
    throw ktrack::UsageError(
        "'=> snapshot' copies the history a flight recorder keeps: add --flight SIZE (e.g. --flight 64M)");
}

bool has_user_probe(const std::vector<std::string> &specs) {
  for (const auto &s : specs) {
    try {
      if (ktrack::parse_probe_spec(s).is_user()) return true;
    } catch (const ktrack::UsageError &) {
      // not a probe spec, or a bad one: reported when attached
    }
  }
  return false;
}

void follow_process_trees(const std::vector<std::string> &specs, ktrack::CaptureOptions &o,
                          CommandUnderCapture &command, ktrack::StopSignals &signals) {
  if (!has_user_probe(specs)) return;
  o.pid_tree = true;
  if (trailing_command().empty()) return;
  if (o.pids.size() + 1 > KTRACK_MAX_PID_FILTER)
    throw ktrack::UsageError(fmt::format("-p accepts at most {} pids with -- COMMAND (its own is one more)",
                                         KTRACK_MAX_PID_FILTER - 1));
  command.hold(signals);
  o.pids.push_back(command.pid());
  // the session's filter: every probe of it, kernel ones too, records this tree only
  fmt::print(stderr, "u/ur probes: recording only '{}' and the processes it starts (pid {})\n",
             trailing_command()[0], command.pid());
}

bool has_snapshot_action(const std::vector<std::string> &specs) {
  for (const auto &s : specs) {
    try {
      for (const auto &a : ktrack::parse_probe_spec(s).actions)
        if (a.type == KTRACK_ACT_SNAPSHOT) return true;
    } catch (const ktrack::UsageError &) {
      // not a probe spec, or a bad one: reported when attached
    }
  }
  return false;
}

void start_capture(ktrack::Capture &cap, const std::string &what) {
  cap.start();
  for (const auto &n : cap.notes()) fmt::print(stderr, "{}\n", n);
  if (!what.empty()) fmt::print(stderr, "{} (Ctrl-C stops)\n", what);
  std::fflush(stderr);
}

void print_capture_summary(const ktrack::Capture &cap, const char *what) {
  const auto &st = cap.status();
  fmt::print(stderr, "{}: {} records, {} lost, in {:.1f} s\n", what, st.events - st.lost_markers, st.lost,
             st.seconds);
  if (st.after_count)
    fmt::print(stderr, "{}: --count reached: {} more records produced before the stop were not shown\n", what,
               st.after_count);
  if (st.trigger_stopped)
    fmt::print(stderr,
               "{}: a probe's '=> stop' action ended the recording (its trigger record marks the moment)\n",
               what);
  for (const auto &line : cap.summary()) fmt::print(stderr, "{}\n", line);
}

CommandUnderCapture::CommandUnderCapture() : argv_(trailing_command()) {
  if (!argv_.empty()) ktrack::check_command(argv_);
}

bool CommandUnderCapture::hold(ktrack::StopSignals &signals) {
  if (argv_.empty()) return false;
  signals.stop_on_child_exit();  // before fork: an early exit is not missed
  child_ = std::make_unique<ktrack::ChildProcess>(argv_, true);
  return true;
}

void CommandUnderCapture::start(ktrack::StopSignals &signals) {
  if (argv_.empty()) return;
  if (child_) {
    child_->release();
    return;
  }
  signals.stop_on_child_exit();  // before fork: an early exit is not missed
  child_ = std::make_unique<ktrack::ChildProcess>(argv_);
}

void CommandUnderCapture::finish() {
  if (!child_) return;
  if (!child_->poll())
    fmt::print(stderr, "ktrackctl: the capture ended first: stopping '{}' (pid {}) with SIGTERM\n", argv_[0],
               child_->pid());
  int status = child_->finish(SIGTERM);
  exit_status() = status;
}

}  // namespace ktrackctl
