// The stack tracer of /dev/ktrack (KTRACK_IOC_STACK_*): the deepest kernel
// task stack seen at a function entry, with each frame's depth and size, in
// the manner of ftrace's stack tracer (`ktrackctl stacktrace`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/session.hpp"

namespace ktrack {

struct StackFrame {
  uint64_t ip = 0;     // a return address in the frame's function
  uint32_t depth = 0;  // bytes of stack in use up to this frame
  uint32_t size = 0;   // bytes of this frame
};

struct StackMax {
  uint64_t max_bytes = 0;  // 0: nothing measured yet
  uint64_t func = 0;       // the function whose entry saw the maximum
  uint64_t checks = 0;     // function entries measured
  uint32_t pid = 0;
  std::string comm;
  std::vector<StackFrame> frames;  // deepest first
};

// Throws UsageError for a filter the kernel cannot take (too long).
void check_stack_filter(const std::string &filter);

class StackTracer {
 public:
  explicit StackTracer(const Session &s) : fd_(s.fd()) {}
  // Hooks every function ("") or those the ftrace globs in 'filter' name;
  // throws Error with a sentence (EBUSY: another session runs it; EINVAL:
  // a glob matches no traceable function; EPERM: privilege or lockdown).
  void start(const std::string &filter);
  // Unhooks; no measurement runs after it returns.
  void stop();
  // The maximum so far (running or stopped).
  StackMax read() const;

 private:
  int fd_;
};

}  // namespace ktrack
