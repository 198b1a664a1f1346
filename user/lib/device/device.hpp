// The /dev/ktrack character device: opening it and the ioctls that are not
// about a session (version and features).  Sessions build on Device.
#pragma once

#include <cstdint>
#include <string>

#include <uapi/ktrack.h>

namespace ktrack {

inline constexpr const char *kDevicePath = "/dev/ktrack";

struct VersionInfo {
  uint32_t abi_version = 0;
  uint64_t features = 0;
  std::string module_version;
  std::string kernel_release;
};

// Names of the KTRACK_FEAT_* bits set in 'features', space-separated.
std::string feature_names(uint64_t features);

class Device {
 public:
  // Opens 'path' (default /dev/ktrack) read-write; throws SysError with
  // advice (not loaded, needs root, ...).
  explicit Device(const std::string &path = kDevicePath);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  Device(Device &&other) noexcept;
  Device &operator=(Device &&other) noexcept;

  int fd() const { return fd_; }
  VersionInfo version() const;

  // ioctl() that retries on EINTR; returns -errno on failure.
  int ioctl_raw(unsigned long cmd, void *arg) const;

 private:
  int fd_ = -1;
};

}  // namespace ktrack
