// latency timer / latency noise: the reports of ktrack.ko's latency tracers
// (KTRACK_IOC_LATENCY_START), whose measurements are the trace events
// ktrack/ktrack_timerlat and ktrack/ktrack_osnoise, captured with e probes.
//   timer (timerlat): per CPU, the latency of a periodic timer's IRQ
//     handler and of the SCHED_FIFO thread it wakes, from the same expected
//     expiry: count/min/avg/max and a log2 histogram in microseconds each;
//     with a threshold, the first latency over it (and its kernel stack).
//   noise (osnoise): per CPU, the time a spinning thread lost to other work
//     in its runtime, and to what: IRQs, softirqs, NMIs, other threads, or
//     nothing seen (hw: IRQs disabled, SMIs, the hypervisor).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/hist.hpp"
#include "analysis/output.hpp"
#include "format/event.hpp"

namespace ktrack {
class Symbolizer;
}

namespace ktrack::analysis {

// ---- timer --------------------------------------------------------------------

struct TimerlatRecord {
  uint64_t ts = 0;
  uint16_t cpu = 0;
  uint64_t seq = 0;
  uint64_t latency_ns = 0;
  bool thread = false;  // context 1 (the thread), else the IRQ handler
  bool over = false;    // from the threshold's probe (its STACK record follows)
  uint32_t probe_id = 0;
};

// The e probes of a live run: lat_timer on every sample; with a threshold,
// lat_timer_over on the samples over it, whose first hit records its
// kernel stack (=> stack:1).
std::vector<std::string> latency_timer_specs(uint64_t threshold_ns);
// A record of those probes; false for any other.
bool timerlat_from_event(const Event &ev, TimerlatRecord &out);
// A KTRACK_REC_STACK record (header included): its probe id and addresses.
bool stack_from_record(std::span<const uint8_t> rec, uint32_t &probe_id, std::vector<uint64_t> &ips);

struct LatencyTimerOptions {
  uint64_t period_ns = 1'000'000;
  uint64_t threshold_ns = 0;  // 0: none
  bool json = false;
  Colors colors;
};

class LatencyTimer {
 public:
  struct CpuStats {
    Distribution irq_ns, irq_us;  // exact min/avg/max; the log2 histogram
    Distribution thread_ns, thread_us;
  };
  explicit LatencyTimer(LatencyTimerOptions o) : opt_(std::move(o)) {}
  // Adds a lat_timer sample; a lat_timer_over one is kept as the stopping
  // sample (the first only).  Returns true when this one is that first.
  bool add(const TimerlatRecord &r);
  // The stopping sample, once seen.
  const std::optional<TimerlatRecord> &over() const { return over_; }
  // The kernel stack of the stopping sample, symbolized, innermost first.
  void set_over_stack(std::vector<std::string> frames) { over_stack_ = std::move(frames); }
  const std::map<uint16_t, CpuStats> &cpus() const { return cpus_; }
  // "stopped: thread latency 1234 us > threshold 500 us on cpu 1"
  std::string stopped_line() const;
  void print(Out &out) const;

 private:
  LatencyTimerOptions opt_;
  std::map<uint16_t, CpuStats> cpus_;
  std::optional<TimerlatRecord> over_;
  std::vector<std::string> over_stack_;
};

// ---- noise --------------------------------------------------------------------

struct OsnoiseRecord {
  uint64_t ts = 0;
  uint16_t cpu = 0;
  uint64_t seq = 0, runtime_ns = 0, noise_ns = 0, max_single_ns = 0;
  uint64_t irq_count = 0, irq_ns = 0, softirq_count = 0, softirq_ns = 0, nmi_count = 0, nmi_ns = 0;
  uint64_t thread_count = 0, thread_ns = 0, hw_count = 0, hw_ns = 0;
};

// The e probe of a live run: lat_noise on every period's ktrack_osnoise.
std::vector<std::string> latency_noise_specs();
bool osnoise_from_event(const Event &ev, OsnoiseRecord &out);

struct LatencyNoiseOptions {
  uint64_t period_ns = 0, runtime_ns = 0, tolerance_ns = 0;  // for the header
  bool json = false;
  Colors colors;
};

class LatencyNoise {
 public:
  struct CpuStats {
    uint64_t periods = 0;
    OsnoiseRecord sum;  // every count and time summed; max_single_ns the max
  };
  explicit LatencyNoise(LatencyNoiseOptions o) : opt_(std::move(o)) {}
  void add(const OsnoiseRecord &r);
  const std::map<uint16_t, CpuStats> &cpus() const { return cpus_; }
  // Per CPU: runtime, noise, % of the CPU available, max single noise and
  // count/time per source; or one JSON object.
  void print(Out &out) const;

 private:
  LatencyNoiseOptions opt_;
  std::map<uint16_t, CpuStats> cpus_;
};

}  // namespace ktrack::analysis
