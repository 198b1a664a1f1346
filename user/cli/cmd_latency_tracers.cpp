// ktrackctl latency timer / latency noise: starts a latency tracer of
// ktrack.ko (device/latency_tracer.hpp), records its trace events with e
// probes and reports them (analysis/latency_tracers.hpp).
#include "cmd_latency_tracers.hpp"

#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <optional>

#include "analysis/latency_tracers.hpp"
#include "analysis/output.hpp"
#include "capture_options.hpp"
#include "device/capture.hpp"
#include "device/latency_tracer.hpp"
#include "format/event.hpp"
#include "format/symbols.hpp"
#include "host/kallsyms.hpp"
#include "util/duration.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

namespace ka = ktrack::analysis;

constexpr const char *kDefaultDuration = "10s";

struct TimerFlags {
  uint64_t period_us = 1000;
  std::string cpus;
  double threshold_us = 0;
  std::string duration = kDefaultDuration;
  bool json = false;
};

struct NoiseFlags {
  uint64_t runtime_ms = 100;
  uint64_t period_ms = 200;
  double tolerance_us = 5;
  std::string cpus;
  std::string duration = kDefaultDuration;
  bool json = false;
};

// -d: "0" runs until Ctrl-C.
std::chrono::milliseconds run_length(const std::string &d) {
  if (d == "0") return std::chrono::milliseconds(0);
  auto ms = ktrack::parse_duration(d);
  if (ms.count() <= 0)
    throw ktrack::UsageError("-d needs a duration such as 10s, 500ms or 2m (0: until Ctrl-C)");
  return ms;
}

std::string cpus_text(const std::vector<uint32_t> &cpus) {
  if (cpus.empty()) return "every online CPU";
  std::string s;
  for (uint32_t c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return (cpus.size() == 1 ? "CPU " : "CPUs ") + s;
}

std::string frame_text(const ktrack::Symbolizer &syms, uint64_t ip) {
  uint64_t off = 0;
  const auto *s = syms.lookup(ip, &off);
  if (!s) return fmt::format("{:#x}", ip);
  std::string out = fmt::format("{}+{:#x}", s->name, off);
  if (s->end > s->addr) out += fmt::format("/{:#x}", s->end - s->addr);
  if (!s->module.empty()) out += fmt::format(" [{}]", s->module);
  return out;
}

void run_timer(const TimerFlags &f) {
  if (f.period_us < 100 || f.period_us > 1'000'000)
    throw ktrack::UsageError(fmt::format("--period {} us is outside 100..1000000 us", f.period_us));
  if (!(f.threshold_us >= 0) || !std::isfinite(f.threshold_us))
    throw ktrack::UsageError("--threshold is a number of microseconds, >= 0");
  ktrack::LatencyRequest req;
  req.kind = KTRACK_LATENCY_TIMER;
  req.period_ns = f.period_us * 1000;
  if (!f.cpus.empty()) req.cpus = ktrack::parse_cpu_list(f.cpus);

  ka::LatencyTimerOptions lo;
  lo.period_ns = req.period_ns;
  lo.threshold_ns = static_cast<uint64_t>(f.threshold_us * 1000.0);
  lo.json = f.json;
  ka::LatencyTimer lat(lo);

  ktrack::CaptureOptions o;
  o.specs = ka::latency_timer_specs(lo.threshold_ns);
  o.duration = run_length(f.duration);
  ktrack::StopSignals signals;
  ktrack::Capture cap(o);
  ktrack::Decoder dec(cap.schemas(), &cap.comms());
  start_capture(cap);
  ktrack::LatencyTracer tracer(req);
  fmt::print(stderr, "measuring timer latencies on {}, period {} us{}{}\n", cpus_text(req.cpus), f.period_us,
             lo.threshold_ns ? fmt::format(", stopping at the first over {} us", lo.threshold_ns / 1000) : "",
             o.duration.count() ? fmt::format(", for {} (-d; Ctrl-C stops)", f.duration) : " (Ctrl-C stops)");
  std::fflush(stderr);
  std::optional<uint32_t> over_probe;
  bool have_stack = false;
  ktrack::Event ev;
  ka::TimerlatRecord r;
  std::vector<uint64_t> ips;
  cap.run(
      [&](std::span<const uint8_t> rec) {
        uint32_t probe_id = 0;
        if (over_probe && !have_stack && ktrack::analysis::stack_from_record(rec, probe_id, ips) &&
            probe_id == *over_probe) {
          ktrack::Symbolizer syms;
          syms.load(ktrack::read_kallsyms());
          std::vector<std::string> frames;
          for (uint64_t ip : ips) frames.push_back(frame_text(syms, ip));
          // From the tracer's code on: the frames above it are the trace
          // event's and perf's, which recorded the stack.
          for (size_t i = frames.size(); i-- > 0;)
            if (frames[i].starts_with("perf_trace_ktrack_timerlat+")) {
              frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(i) + 1);
              break;
            }
          lat.set_over_stack(std::move(frames));
          have_stack = true;
          return;
        }
        if (!dec.decode(rec, ev) || !ka::timerlat_from_event(ev, r)) return;
        if (lat.add(r)) {
          over_probe = r.probe_id;
          // Its STACK record comes right after it: the drain delivers it.
          ktrack::StopSignals::flag().store(true);
        }
      },
      ktrack::StopSignals::flag(), [&](const ktrack::CaptureStatus &) {});
  tracer.stop();
  print_capture_summary(cap, "latency timer");
  ka::Out out(stdout);
  lat.print(out);
  if (lat.over() && f.json) fmt::print(stderr, "{}\n", lat.stopped_line());
}

void run_noise(const NoiseFlags &f) {
  if (f.period_ms < 1 || f.period_ms > 1000)
    throw ktrack::UsageError(fmt::format("--period {} ms is outside 1..1000 ms", f.period_ms));
  if (f.runtime_ms < 1 || f.runtime_ms > f.period_ms)
    throw ktrack::UsageError(
        fmt::format("--runtime {} ms must be at least 1 ms and at most the period (--period {} ms): give a "
                    "longer --period",
                    f.runtime_ms, f.period_ms));
  if (!(f.tolerance_us >= 0) || !std::isfinite(f.tolerance_us) ||
      f.tolerance_us * 1000.0 >= f.period_ms * 1e6)
    throw ktrack::UsageError("--tolerance is a number of microseconds, >= 0 and below the period");
  ktrack::LatencyRequest req;
  req.kind = KTRACK_LATENCY_NOISE;
  req.period_ns = f.period_ms * 1'000'000;
  req.runtime_ns = f.runtime_ms * 1'000'000;
  req.tolerance_ns = static_cast<uint64_t>(f.tolerance_us * 1000.0);
  if (!f.cpus.empty()) req.cpus = ktrack::parse_cpu_list(f.cpus);

  ka::LatencyNoiseOptions lo;
  lo.period_ns = req.period_ns;
  lo.runtime_ns = req.runtime_ns;
  lo.tolerance_ns = req.tolerance_ns;
  lo.json = f.json;
  ka::LatencyNoise noise(lo);

  ktrack::CaptureOptions o;
  o.specs = ka::latency_noise_specs();
  o.duration = run_length(f.duration);
  ktrack::StopSignals signals;
  ktrack::Capture cap(o);
  ktrack::Decoder dec(cap.schemas(), &cap.comms());
  start_capture(cap);
  ktrack::LatencyTracer tracer(req);
  fmt::print(stderr, "measuring noise on {}: {} ms of each {} ms, gaps over {} us{}\n", cpus_text(req.cpus),
             f.runtime_ms, f.period_ms, f.tolerance_us,
             o.duration.count() ? fmt::format(", for {} (-d; Ctrl-C stops)", f.duration) : " (Ctrl-C stops)");
  std::fflush(stderr);
  ktrack::Event ev;
  ka::OsnoiseRecord r;
  cap.run(
      [&](std::span<const uint8_t> rec) {
        if (dec.decode(rec, ev) && ka::osnoise_from_event(ev, r)) noise.add(r);
      },
      ktrack::StopSignals::flag(), [&](const ktrack::CaptureStatus &) {});
  tracer.stop();
  print_capture_summary(cap, "latency noise");
  ka::Out out(stdout);
  noise.print(out);
}

}  // namespace

void add_latency_timer(CLI::App *latency) {
  auto f = std::make_shared<TimerFlags>();
  auto *cmd = latency->add_subcommand(
      "timer", "Timer IRQ and thread wake-up latency per CPU (timerlat), from an in-kernel periodic timer");
  cmd->add_option("--period", f->period_us, "Timer period in microseconds (100..1000000, default 1000)");
  cmd->add_option("--cpus", f->cpus, "CPUs to measure, as a list like 0,2-3 (default: every online CPU)");
  cmd->add_option(
      "--threshold", f->threshold_us,
      "Stop at the first IRQ or thread latency over US microseconds: print it with its kernel stack");
  cmd->add_option("-d,--duration", f->duration,
                  "Run for DURATION (10s, 500ms, 2m; default 10s; 0: until Ctrl-C)");
  cmd->add_flag("--json", f->json, "The summary as one JSON object");
  cmd->footer(
      "ktrack.ko runs, on each CPU, an hrtimer firing every period (absolute, pinned, hard IRQ)\n"
      "and a SCHED_FIFO (priority 50) kernel thread it wakes.  The IRQ latency is the time from\n"
      "the timer's expected expiry to its handler, the thread latency from the same expiry to\n"
      "the thread running: IRQs disabled, preemption disabled and higher-priority RT tasks show\n"
      "in them.  Each is a ktrack:ktrack_timerlat trace event, recorded with e probes.  Prints per\n"
      "CPU count/min/avg/max and a log2 histogram (us) of each.  --threshold stops at the first\n"
      "latency over it: 'stopped: thread latency N us > threshold T us on cpu C', with the kernel\n"
      "stack of the event (the timer interrupt's or the thread's).  One timer tracer at a time.\n"
      "Examples:\n"
      "  sudo ktrackctl latency timer --period 1000 --cpus 0\n"
      "  sudo ktrackctl latency timer --threshold 500 -d 0\n"
      "  sudo ktrackctl latency timer --cpus 1-3 -d 1m --json");
  cmd->callback([f] { run_timer(*f); });
}

void add_latency_noise(CLI::App *latency) {
  auto f = std::make_shared<NoiseFlags>();
  auto *cmd = latency->add_subcommand(
      "noise", "Operating-system noise per CPU (osnoise): time a spinning kernel thread loses, and to what");
  cmd->add_option("--runtime", f->runtime_ms, "Milliseconds of each period spent measuring (default 100)");
  cmd->add_option("--period", f->period_ms, "Period in milliseconds (1..1000, default 200)");
  cmd->add_option("--tolerance", f->tolerance_us,
                  "A gap between two clock reads longer than US microseconds is noise (default 5)");
  cmd->add_option("--cpus", f->cpus, "CPUs to measure, as a list like 0,2-3 (default: every online CPU)");
  cmd->add_option("-d,--duration", f->duration,
                  "Run for DURATION (10s, 500ms, 2m; default 10s; 0: until Ctrl-C)");
  cmd->add_flag("--json", f->json, "The summary as one JSON object");
  cmd->footer(
      "ktrack.ko runs, on each CPU, a kernel thread (SCHED_OTHER, preemptible) that for --runtime\n"
      "of every --period reads the clock in a loop and sleeps the rest; a gap over --tolerance\n"
      "is noise.  Meanwhile handlers on irq_handler_entry/exit, softirq_entry/exit, nmi_handler\n"
      "and sched_switch count what interrupted it and for how long: irq, softirq, nmi, thread\n"
      "(other tasks running on the CPU), and hw: gaps when none of these was seen (IRQs disabled,\n"
      "IPIs, SMIs, the hypervisor).  Each period is a ktrack:ktrack_osnoise trace event, recorded\n"
      "with an e probe.  Prints per CPU the runtime, the noise, the % of the CPU available to the\n"
      "thread, the largest single gap and count/time per source.  One noise tracer at a time.\n"
      "Examples:\n"
      "  sudo ktrackctl latency noise --runtime 100\n"
      "  sudo ktrackctl latency noise --runtime 900 --period 1000 --cpus 1 -d 1m --json");
  cmd->callback([f] { run_noise(*f); });
}

}  // namespace ktrackctl
