// `ktrackctl profile --live`: f probes that count and time each function in
// the kernel (KTRACK_PROBE_F_PROFILE, per-CPU tables), like ftrace's
// function profiler: no record per call, so it costs far less than
// recording every entry and exit when only the totals matter.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ktrack {

struct LiveProfileOptions {
  std::vector<std::string> targets;       // GLOB or MOD:GLOB: one f probe each
  std::vector<int32_t> pids;              // only these pids/tgids (the session's filter)
  std::vector<uint32_t> cpus;             // only these CPUs
  std::chrono::milliseconds duration{0};  // 0: until 'stop' is set
};

struct LiveProfileFunc {
  uint64_t ip = 0;
  uint64_t hits = 0, timed = 0, time_ns = 0, max_ns = 0;
};

struct LiveProfileResult {
  std::vector<LiveProfileFunc> funcs;  // summed over the probes, one per function
  uint64_t overflow = 0;               // hits the tables had no room for
  uint64_t misses = 0;                 // hits the kernel could not run the handler for
  std::vector<std::string> notes;      // one line per probe: "probe p0 (id 1): fprobe, armed, 12 functions"
};

// The f probe spec a target becomes ("f:NAME TARGET%both"); throws
// UsageError on a target that is not a function glob (exposed for tests).
std::string live_profile_spec(const std::string &target, size_t index);

// Attaches one profiling probe per target to a new session, runs it for
// the duration (or until 'stop'), and reads the kernel's totals.
// 'on_started' runs once the probes count, with the result's notes (to say
// so, and to start a workload).
LiveProfileResult run_live_profile(
    const LiveProfileOptions &o, const std::atomic<bool> &stop,
    const std::function<void(const std::vector<std::string> &notes)> &on_started = {});

}  // namespace ktrack
