// A fake /sys whose kernel/security/lockdown names MODE, for the tests of
// the sentences ktrackctl gives under lockdown: sets $KTRACK_SYSFS_ROOT
// (host/sysfs.hpp) while the object lives.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ktrack::test {

class FakeLockdown {
 public:
  explicit FakeLockdown(const std::string &mode) {
    root_ = std::filesystem::temp_directory_path() /
            ("ktrack-lockdown-" + std::to_string(::getpid()) + "-" + mode);
    std::filesystem::create_directories(root_ / "kernel/security");
    std::string line = "none integrity confidentiality";
    line.replace(line.find(mode), mode.size(), "[" + mode + "]");
    std::ofstream(root_ / "kernel/security/lockdown") << line << "\n";
    setenv("KTRACK_SYSFS_ROOT", root_.c_str(), 1);
  }
  ~FakeLockdown() {
    unsetenv("KTRACK_SYSFS_ROOT");
    std::filesystem::remove_all(root_);
  }
  FakeLockdown(const FakeLockdown &) = delete;
  FakeLockdown &operator=(const FakeLockdown &) = delete;

 private:
  std::filesystem::path root_;
};

}  // namespace ktrack::test
