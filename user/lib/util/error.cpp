#include "util/error.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>

namespace ktrack {

SysError::SysError(const std::string &action, int err) : Error(explain_errno(action, err)), err_(err) {}

namespace {

const char *file_advice(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      return "you may not write or read there: choose a path in a directory of yours";
    case ENOENT:
      return "check the path: a directory in it does not exist";
    case ENOSPC:
    case EDQUOT:
      return "the filesystem is full: free space or write elsewhere";
    case EROFS:
      return "the filesystem is read-only: write elsewhere";
    default:
      return nullptr;
  }
}

std::string explain_file_errno(const std::string &action, int err) {
  const char *advice = file_advice(err);
  if (advice) return fmt::format("cannot {}: {} ({})", action, advice, std::strerror(err));
  return fmt::format("cannot {}: {}", action, std::strerror(err));
}

}  // namespace

FileError::FileError(const std::string &action, int err) : Error(explain_file_errno(action, err)) {}

namespace {

// Advice for errno values that mean the same thing for every /dev/ktrack call.
const char *generic_advice(int err) {
  switch (err) {
    case EPERM:
      return "this needs root (CAP_PERFMON or CAP_SYS_ADMIN): run it with sudo (a member of the ktrack "
             "group, "
             "when the module was loaded with group_access=1, may only record the sessions root shares, "
             "write "
             "markers into them and write user events: docs/ACCESS.md)";
    case EACCES:
      return "this needs root (CAP_PERFMON or CAP_SYS_ADMIN): run it with sudo (the ktrack group may open "
             "/dev/ktrack when root loads the module with group_access=1, and then records only the sessions "
             "root shares with 'session create NAME --group': docs/ACCESS.md)";
    case ENOENT:
      return "the ktrack module is not loaded: run 'sudo ktrackctl load'";
    case ENOTTY:
      return "the loaded ktrack module does not know this request: load the module that matches "
             "this ktrackctl ('sudo ktrackctl unload && sudo ktrackctl load')";
    case EFAULT:
      return "the kernel could not read or write the request's memory (a bug in the caller)";
    case EINVAL:
      return "the kernel rejected a value in the request as invalid";
    case E2BIG:
      return "a size in the request is larger than the kernel allows";
    case EBUSY:
      return "the resource is in use: stop the session or close its readers first";
    case EMFILE:
      return "ktrack's session limit is reached (module parameter max_sessions, default 64): close "
             "other ktrack users or destroy named sessions ('ktrackctl session list'), or raise it in "
             "/sys/module/ktrack/parameters/max_sessions (for the ktrack group: max_group_files, default 16)";
    case ENOMEM:
      return "the kernel is out of memory for this request: ask for smaller buffers";
    case ENODEV:
    case ENXIO:
      return "the ktrack device is gone (module unloaded?): run 'sudo ktrackctl load'";
    default:
      return nullptr;
  }
}

}  // namespace

std::string explain_errno(const std::string &action, int err) {
  const char *advice = generic_advice(err);
  if (advice) return fmt::format("cannot {}: {} ({})", action, advice, std::strerror(err));
  return fmt::format("cannot {}: {}", action, std::strerror(err));
}

}  // namespace ktrack
