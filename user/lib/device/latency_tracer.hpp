// The latency tracers of /dev/ktrack (KTRACK_IOC_LATENCY_*): in-kernel
// workloads (a timerlat-like timer and thread, an osnoise-like spinning
// thread) whose measurements are trace events of the ktrack system
// (`ktrackctl latency timer`, `ktrackctl latency noise`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <uapi/ktrack.h>

#include "device/session.hpp"

namespace ktrack {

// "0-3,6" (as the kernel's cpu lists) to CPU numbers, sorted, unique;
// throws UsageError on anything else or a CPU >= 256.
std::vector<uint32_t> parse_cpu_list(const std::string &text);

struct LatencyRequest {
  uint32_t kind = KTRACK_LATENCY_TIMER;
  uint64_t period_ns = 0, runtime_ns = 0, tolerance_ns = 0;
  std::vector<uint32_t> cpus;  // empty: every online CPU
};

// The request as the ioctl takes it.
ktrack_latency_req latency_req(const LatencyRequest &r);

// Starts the tracer on a /dev/ktrack file of its own (the tracer is that
// file's: it stops with it); throws Error with a sentence for each errno.
class LatencyTracer {
 public:
  explicit LatencyTracer(const LatencyRequest &r);
  ~LatencyTracer();
  LatencyTracer(const LatencyTracer &) = delete;
  LatencyTracer &operator=(const LatencyTracer &) = delete;
  // No timer, thread or tracepoint handler of it runs once this returns.
  void stop();

 private:
  Session s_;
  bool running_ = false;
};

}  // namespace ktrack
