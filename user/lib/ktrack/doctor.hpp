// 'ktrackctl doctor': the checks for what silently breaks tracing, each
// with what to do about it.  Pure functions of sysfs/procfs contents, so
// they run against fake trees in unit tests.
#pragma once

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

}  // namespace ktrack
