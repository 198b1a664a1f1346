// A command run under a capture (`record`/`trace -- COMMAND [ARGS]`): found
// as execvp() finds it, started with the caller's stdio and environment,
// waited for; its exit status becomes ktrackctl's (as `perf record -- CMD`).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace ktrack {

// The command cannot be run: status() is the shell's, 127 (not found) or
// 126 (found but not executable).
class CommandError : public Error {
 public:
  CommandError(const std::string &what, int status) : Error(what), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// Throws CommandError when argv[0] is not found (in $PATH when it has no
// '/') or is not executable: checked before anything is armed.
void check_command(const std::vector<std::string> &argv);

// The shell's status of a waitpid() status: the exit code, or 128 + signal.
int shell_status(int wait_status);

class ChildProcess {
 public:
  // fork()s and exec()s argv (signal dispositions and mask back to the
  // defaults).  Throws CommandError when exec fails (the child is reaped).
  explicit ChildProcess(const std::vector<std::string> &argv);
  ~ChildProcess();
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  pid_t pid() const { return pid_; }
  // The shell status once it exited (reaped), else nullopt.
  std::optional<int> poll();
  // Waits for it (sending 'sig' first when it still runs and sig != 0).
  int finish(int sig);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace ktrack
