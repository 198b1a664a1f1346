// The ktrackctl built next to the unit tests: the tests that run it as a
// user would (its options, its refusals) find it from their own path.
#pragma once

#include <limits.h>
#include <unistd.h>

#include <filesystem>
#include <string>

inline std::string ktrackctl_path() {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return "";
  self[n] = 0;
  // build/user/tests/unit/test_x -> build/user/bin/ktrackctl
  return (std::filesystem::path(self).parent_path() / "../../bin/ktrackctl").lexically_normal();
}
