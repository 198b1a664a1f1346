// A fake /sys whose kernel/security/lockdown names MODE, for the tests of
// the sentences ktrackctl gives under lockdown: sets $KTRACK_SYSFS_ROOT
// (host/sysfs.hpp) while the object lives.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace ktrack::test {

class FakeLockdown {
 public:
  // MODE: none, integrity or confidentiality
  explicit FakeLockdown(const std::string &mode) {
    if (const char *old = std::getenv("KTRACK_SYSFS_ROOT")) old_ = old;
    root_ = std::filesystem::temp_directory_path() /
            ("ktrack-lockdown-" + std::to_string(::getpid()) + "-" + mode);
    std::filesystem::create_directories(root_ / "kernel/security");
    std::string line = "none integrity confidentiality";
    const size_t at = line.find(mode);
    if (at != std::string::npos) line.replace(at, mode.size(), "[" + mode + "]");
    std::ofstream(root_ / "kernel/security/lockdown") << line << "\n";
    setenv("KTRACK_SYSFS_ROOT", root_.c_str(), 1);
  }
  ~FakeLockdown() {
    if (old_)
      setenv("KTRACK_SYSFS_ROOT", old_->c_str(), 1);
    else
      unsetenv("KTRACK_SYSFS_ROOT");
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakeLockdown(const FakeLockdown &) = delete;
  FakeLockdown &operator=(const FakeLockdown &) = delete;

 private:
  std::filesystem::path root_;
  std::optional<std::string> old_;
};

}  // namespace ktrack::test
