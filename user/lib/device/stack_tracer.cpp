#include "device/stack_tracer.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

namespace ktrack {

void check_stack_filter(const std::string &filter) {
  if (filter.size() >= KTRACK_STACK_FILTER_MAX)
    throw UsageError(
        fmt::format("--filter: the globs take {} bytes, more than the {} the kernel takes: use fewer",
                    filter.size(), KTRACK_STACK_FILTER_MAX - 1));
}

void StackTracer::start(const std::string &filter) {
  check_stack_filter(filter);
  ktrack_stack_start req{};
  req.size = sizeof(req);
  std::memcpy(req.filter, filter.data(), filter.size());
  if (ioctl(fd_, KTRACK_IOC_STACK_START, &req) == 0) return;
  int err = errno;
  switch (err) {
    case EBUSY:
      throw Error("the stack tracer is already running for another ktrackctl: stop that one first");
    case EINVAL:
      throw Error(
          fmt::format("--filter '{}' matches no function ftrace can trace: see "
                      "/sys/kernel/tracing/available_filter_functions",
                      filter));
    case ENOTTY:
      throw Error(
          "the loaded ktrack.ko has no stack tracer: unload it and run 'ktrackctl load' to load the module "
          "that "
          "matches this ktrackctl");
    default:
      throw SysError("start the stack tracer", err);
  }
}

void StackTracer::stop() {
  if (ioctl(fd_, KTRACK_IOC_STACK_STOP) != 0) throw SysError("stop the stack tracer", errno);
}

StackMax StackTracer::read() const {
  std::vector<ktrack_stack_frame> frames(KTRACK_STACK_MAX_FRAMES);
  ktrack_stack_max req{};
  req.size = sizeof(req);
  req.nr = static_cast<uint32_t>(frames.size());
  req.frames_ptr = (uint64_t)(uintptr_t)frames.data();
  if (ioctl(fd_, KTRACK_IOC_STACK_GET, &req) != 0) throw SysError("read the stack tracer's maximum", errno);
  StackMax m;
  m.max_bytes = req.max_bytes;
  m.func = req.func;
  m.checks = req.checks;
  m.pid = req.pid;
  m.comm.assign(req.comm, strnlen(req.comm, sizeof(req.comm)));
  for (uint32_t i = 0; i < req.nr && i < frames.size(); i++)
    m.frames.push_back({frames[i].ip, frames[i].depth, frames[i].size});
  return m;
}

}  // namespace ktrack
