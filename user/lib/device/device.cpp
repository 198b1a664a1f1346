#include "device/device.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "util/error.hpp"

namespace ktrack {

std::string feature_names(uint64_t f) {
  static const std::pair<uint64_t, const char *> names[] = {
      {KTRACK_FEAT_RING, "ring"},
      {KTRACK_FEAT_KPROBE, "kprobe"},
      {KTRACK_FEAT_KRETPROBE, "kretprobe"},
      {KTRACK_FEAT_FPROBE, "fprobe"},
      {KTRACK_FEAT_FTRACE_OPS, "ftrace_ops"},
      {KTRACK_FEAT_TRACEPOINT, "tracepoint"},
      {KTRACK_FEAT_OBJTRACE, "objtrace"},
      {KTRACK_FEAT_NAMED_SESS, "named-sessions"},
      {KTRACK_FEAT_OBJ_FUNC_ADDRS, "obj-func-addrs"},
      {KTRACK_FEAT_PROBE_IDLE, "probe-idle"},
      {KTRACK_FEAT_MODULE_EVENTS, "module-events"},
      {KTRACK_FEAT_FUNCS_MODULE, "funcs-module"},
      {KTRACK_FEAT_EVENT_PROBE, "event-probe"},
      {KTRACK_FEAT_EVENT_BY_NAME, "event-by-name"},
      {KTRACK_FEAT_LINKED_STACK, "linked-stack"},
      {KTRACK_FEAT_STATS_WAKEUPS, "stats-wakeups"},
      {KTRACK_FEAT_TRIGGERS, "triggers"},
      {KTRACK_FEAT_OBJ_MODULE_GONE, "obj-module-gone"},
      {KTRACK_FEAT_PROFILE, "profile"},
      {KTRACK_FEAT_STACK_TRACER, "stack-tracer"},
      {KTRACK_FEAT_DUMP_ON_OOPS, "dump-on-oops"},
      {KTRACK_FEAT_SNAPSHOT, "snapshot"},
      {KTRACK_FEAT_GRAPH_SCOPE, "graph-scope"},
      {KTRACK_FEAT_UPROBE, "uprobe"},
      {KTRACK_FEAT_PID_TREE, "pid-tree"},
      {KTRACK_FEAT_USER_EVENT, "user-events"},
      {KTRACK_FEAT_LATENCY, "latency"},
      {KTRACK_FEAT_GROUP, "group"},
      {KTRACK_FEAT_KERNEL_GLOB, "kernel-glob"},
      {KTRACK_FEAT_KPROBE_FTRACE_OPS, "kprobe-ftrace-ops"},
  };
  std::string out;
  for (const auto &[bit, name] : names) {
    if (!(f & bit)) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out.empty() ? "none" : out;
}

Device::Device(const std::string &path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw SysError("open " + path, errno);
}

Device::~Device() {
  if (fd_ >= 0) ::close(fd_);
}

Device::Device(Device &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Device &Device::operator=(Device &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

int Device::ioctl_raw(unsigned long cmd, void *arg) const {
  int rc;
  do {
    rc = ::ioctl(fd_, cmd, arg);
  } while (rc < 0 && errno == EINTR);
  return rc < 0 ? -errno : rc;
}

VersionInfo Device::version() const {
  ktrack_version v{};
  v.size = sizeof(v);
  int rc = ioctl_raw(KTRACK_IOC_VERSION, &v);
  if (rc < 0) throw SysError("query the ktrack version", -rc);
  VersionInfo info;
  info.abi_version = v.abi_version;
  info.features = v.features;
  info.module_version.assign(v.module_version, strnlen(v.module_version, sizeof(v.module_version)));
  info.kernel_release.assign(v.kernel_release, strnlen(v.kernel_release, sizeof(v.kernel_release)));
  return info;
}

}  // namespace ktrack
