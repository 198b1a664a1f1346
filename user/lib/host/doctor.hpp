// 'ktrackctl doctor': the checks for what silently breaks tracing, each
// with what to do about it.  Pure functions of sysfs/procfs contents, so
// they run against fake trees in unit tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ktrack {

enum class CheckLevel { Ok, Warn, Fail };

struct CheckResult {
  std::string name;  // short id, e.g. "tracefs"
  CheckLevel level;
  std::string message;  // what was found
  std::string fix;      // what to do (empty when Ok)
};

std::vector<CheckResult> run_doctor_checks();

// One ktrack probe's counters, for the misses check.
struct ProbeMisses {
  std::string session;
  std::string probe;
  uint64_t hits = 0;
  uint64_t misses = 0;
};

// The verdict on probes that missed calls (a return probe out of instances,
// a handler that would have recursed): their latencies silently leave out
// exactly the overlapping calls.
CheckResult check_probe_misses(const std::vector<ProbeMisses> &probes);
// The probes of every named session (an anonymous session belongs to one
// process and cannot be looked up); empty when ktrack is not loaded.
std::vector<ProbeMisses> collect_probe_misses();

}  // namespace ktrack
