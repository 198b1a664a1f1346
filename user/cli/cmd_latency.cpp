// ktrackctl latency wakeup: ftrace's wakeup / wakeup_rt tracers from the
// scheduler's trace events (analysis/latency_wakeup.hpp), live or from a
// file recorded with -o.
#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <memory>

#include "analysis/analysis_source.hpp"
#include "analysis/latency_wakeup.hpp"
#include "analysis/output.hpp"
#include "capture_options.hpp"
#include "cmd_latency_tracers.hpp"
#include "command.hpp"
#include "device/capture.hpp"
#include "device/recorder.hpp"
#include "format/event.hpp"
#include "format/trace_file.hpp"
#include "host/kallsyms.hpp"
#include "util/duration.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

namespace ka = ktrack::analysis;

struct WakeupFlags {
  std::string file;
  bool rt = false;
  double threshold_us = 0;
  std::string duration;
  std::vector<uint32_t> cpus;
  bool json = false;
  std::string output;
  uint32_t buf_pages = 0;
  size_t trace_len = 20;
};

// Records more than this older than the newest are in order (a drain
// sweep of a live capture is much shorter).
constexpr uint64_t kReorderWindowNs = 2'000'000'000;

// Feeds decoded records in time order; prints the live line of a latency
// over the threshold.
class Feeder {
 public:
  // live_lines go to stdout, or to stderr when stdout carries JSON.
  Feeder(ka::LatencyWakeup &lat, bool live_lines, bool json)
      : lat_(lat), live_lines_(live_lines), to_(json ? stderr : stdout) {}
  void operator()(const ktrack::Event &ev) {
    if (ka::sched_record_from_event(ev, r_)) {
      ++records_;
      reorder_.push(std::move(r_), add_);
    }
  }
  void finish() { reorder_.flush(add_); }
  uint64_t records() const { return records_; }

 private:
  ka::LatencyWakeup &lat_;
  bool live_lines_;
  std::FILE *to_;
  uint64_t records_ = 0;
  ka::SchedRecord r_;
  ka::SchedReorder reorder_{kReorderWindowNs};
  std::function<void(const ka::SchedRecord &)> add_ = [this](const ka::SchedRecord &r) {
    auto l = lat_.add(r);
    if (l && live_lines_) fmt::print(to_, "{}\n", ka::LatencyWakeup::live_line(*l));
  };
};

void run_file(const WakeupFlags &f, ka::LatencyWakeup &lat, bool live_lines) {
  ktrack::TraceReader reader(ka::checked_input(f.file));
  ktrack::Event ev;
  Feeder feed(lat, live_lines, f.json);
  std::span<const uint8_t> raw;
  uint64_t end = 0;
  const uint64_t dur = f.duration.empty() ? 0 : ktrack::parse_duration_ns(f.duration);
  while (reader.next_raw(raw)) {
    if (!reader.decoder().decode(raw, ev)) continue;
    if (dur) {
      if (!end) end = ev.ts + dur;
      if (ev.ts > end) break;
    }
    feed(ev);
  }
  feed.finish();
  if (!feed.records())
    throw ktrack::Error(
        fmt::format("{} has no scheduler records of 'latency wakeup': record one with 'ktrackctl "
                    "latency wakeup -o FILE'",
                    f.file));
}

void run_live(const WakeupFlags &f, ka::LatencyWakeup &lat, bool live_lines) {
  ktrack::CaptureOptions o;
  o.specs = ka::latency_wakeup_specs();
  if (!f.duration.empty()) o.duration = ktrack::parse_duration(f.duration);
  if (f.buf_pages) {
    if (f.buf_pages & (f.buf_pages - 1))
      throw ktrack::UsageError(
          fmt::format("--buffer-pages {} is not a power of two (e.g. 64, 256, 1024)", f.buf_pages));
    o.buf_pages = f.buf_pages;
  }
  CommandUnderCapture command;
  ktrack::StopSignals signals;
  std::string kallsyms;
  if (!f.output.empty()) kallsyms = ktrack::read_kallsyms();
  ktrack::Capture cap(o);
  std::unique_ptr<ktrack::Recorder> writer;
  if (!f.output.empty()) writer = std::make_unique<ktrack::Recorder>(cap, f.output, kallsyms);
  ktrack::Decoder dec(cap.schemas(), &cap.comms());
  ktrack::Event ev;
  Feeder feed(lat, live_lines, f.json);
  start_capture(cap, f.output.empty() ? "tracing wake-up latencies"
                                      : fmt::format("tracing wake-up latencies, recording to {}", f.output));
  command.start(signals);
  cap.run(
      [&](std::span<const uint8_t> rec) {
        if (writer) writer->write(rec);
        if (dec.decode(rec, ev)) feed(ev);
      },
      ktrack::StopSignals::flag(), [&](const ktrack::CaptureStatus &) { std::fflush(stdout); });
  feed.finish();
  command.finish();
  if (writer) writer->finish();
  print_capture_summary(cap, "latency");
}

const Command latency_cmd(57, [](CLI::App &app) {
  auto *latency =
      app.add_subcommand("latency",
                         "Latency tracers: wake-up latency (wakeup, wakeup_rt), timer latency (timerlat), "
                         "OS noise (osnoise)");
  latency->require_subcommand(1);
  auto f = std::make_shared<WakeupFlags>();
  auto *cmd = latency->add_subcommand(
      "wakeup", "Time from a task's wake-up to its switch-in, per task, with the largest one's trace");
  cmd->add_option("FILE", f->file, "A file recorded with 'latency wakeup -o FILE' (offline); none: live");
  cmd->add_flag("--rt", f->rt, "Only tasks with an RT priority (kernel prio < 100), as wakeup_rt");
  cmd->add_option("--threshold", f->threshold_us,
                  "Only latencies over US microseconds: printed as they happen, the max among them kept");
  cmd->add_option("-d,--duration", f->duration,
                  "Stop after DURATION (500ms, 10s, 2m); file: its first DURATION");
  cmd->add_option("-C,--cpu", f->cpus, "Only switch-ins on these CPUs (repeatable)")->allow_extra_args(false);
  cmd->add_flag("--json", f->json, "The summary as one JSON object");
  cmd->add_option("-o,--output", f->output, "Also save the raw recording to FILE (read it back with FILE)");
  cmd->add_option("--trace-len", f->trace_len,
                  "Records shown before the maximum's switch-in (1..10000, default 20)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--buffer-pages", f->buf_pages, "Ring pages per CPU (power of two)");
  cmd->footer(
      "Captures sched_waking, sched_wakeup_new and sched_switch with e probes (no kernel\n"
      "tracer needed: Debian's kernels lack CONFIG_SCHED_TRACER).  A task's wake-up latency\n"
      "is the time from its waking to the sched_switch that runs it, for every task (as\n"
      "runqlat; ftrace's wakeup follows only tasks of a higher priority than the one\n"
      "running, one at a time); a second waking replaces the first; a task switched\n"
      "out before that was running (its waking is dropped), lost records drop the pending\n"
      "wakings.  Records are put back in time order across CPUs within 2 s, so the\n"
      "--threshold lines come about 2 s late (on stderr with --json).  Stops at -d, Ctrl-C or the end of\n"
      "'-- COMMAND'.  Prints per task (pid, comm) count/min/avg/max and a log2 histogram in\n"
      "microseconds, then the maximum with the\n"
      "scheduler records on its CPU before the switch-in (and its waking).  Task names come\n"
      "from the switch-in (next_comm): in an e probe $comm is the waker's name.\n"
      "Examples:\n"
      "  sudo ktrackctl latency wakeup -d 10s\n"
      "  sudo ktrackctl latency wakeup --rt --threshold 100 -- ./rt-app\n"
      "  sudo ktrackctl latency wakeup -C 0 --json -d 5s -o wake.ktr; ktrackctl latency wakeup wake.ktr");
  add_latency_timer(latency);
  add_latency_noise(latency);
  cmd->callback([f] {
    ka::LatencyWakeupOptions o;
    o.rt = f->rt;
    if (!(f->threshold_us >= 0) || !std::isfinite(f->threshold_us))
      throw ktrack::UsageError("--threshold is a number of microseconds, >= 0");
    o.threshold_ns = static_cast<uint64_t>(f->threshold_us * 1000.0);
    o.cpus = f->cpus;
    o.trace_len = f->trace_len;
    o.json = f->json;
    const bool live_lines = o.threshold_ns != 0;
    ka::LatencyWakeup lat(o);
    if (!f->file.empty()) {
      if (!trailing_command().empty())
        throw ktrack::UsageError("'-- COMMAND' goes with a live run, not a FILE");
      if (!f->output.empty()) throw ktrack::UsageError("-o saves a live run: not with a FILE");
      run_file(*f, lat, live_lines);
    } else {
      run_live(*f, lat, live_lines);
    }
    ka::Out out(stdout);
    lat.print(out);
  });
});

}  // namespace
}  // namespace ktrackctl
