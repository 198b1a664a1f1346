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
  // held: the child waits before its exec until release() (so that its pid
  // can be given to a filter first); destroyed unreleased, it exits.
  explicit ChildProcess(const std::vector<std::string> &argv, bool held = false);
  ~ChildProcess();
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;

  pid_t pid() const { return pid_; }
  // A held child execs now; throws CommandError as the constructor does.
  void release();
  // The shell status once it exited (reaped), else nullopt.
  std::optional<int> poll();
  // Waits for it (sending 'sig' first when it still runs and sig != 0).
  int finish(int sig);

 private:
  void wait_exec();

  std::string name_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  int exec_err_fd_ = -1;  // the child writes exec's errno here (CLOEXEC: EOF on success)
  int go_fd_ = -1;        // held: a byte here lets the child exec
};

}  // namespace ktrack
