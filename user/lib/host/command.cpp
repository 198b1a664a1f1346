#include "host/command.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ktrack {

namespace {

// What exec would say about 'path': 0, or an errno.
int exec_errno(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (::access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

[[noreturn]] void fail(const std::string &cmd, int err) {
  if (err == ENOENT || err == ENOTDIR)
    throw CommandError(fmt::format("cannot run '{}': command not found (check the name and $PATH)", cmd),
                       127);
  if (err == EISDIR) throw CommandError(fmt::format("cannot run '{}': it is a directory", cmd), 126);
  if (err == EACCES || err == EPERM)
    throw CommandError(fmt::format("cannot run '{}': permission denied (is it executable?)", cmd), 126);
  throw CommandError(fmt::format("cannot run '{}': {}", cmd, std::strerror(err)), 126);
}

}  // namespace

void check_command(const std::vector<std::string> &argv) {
  if (argv.empty() || argv[0].empty()) throw UsageError("'--' must be followed by a command to run");
  const std::string &cmd = argv[0];
  if (cmd.find('/') != std::string::npos) {
    if (int err = exec_errno(cmd)) fail(cmd, err);
    return;
  }
  const char *env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  int seen = ENOENT;
  size_t start = 0;
  while (true) {
    size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    int err = exec_errno((dir.empty() ? "." : dir) + "/" + cmd);
    if (!err) return;
    if (err != ENOENT && err != ENOTDIR) seen = err;  // found, not runnable: as execvp says
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  fail(cmd, seen);
}

int shell_status(int ws) {
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  if (WIFSIGNALED(ws)) return 128 + WTERMSIG(ws);
  return 255;
}

ChildProcess::ChildProcess(const std::vector<std::string> &argv, bool held) : name_(argv.at(0)) {
  check_command(argv);
  std::vector<char *> args;
  for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  int pipefd[2], gofd[2] = {-1, -1};
  if (::pipe2(pipefd, O_CLOEXEC) != 0) throw SysError("create a pipe", errno);
  if (held && ::pipe2(gofd, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    throw SysError("create a pipe", err);
  }
  pid_ = ::fork();
  if (pid_ < 0) {
    int err = errno;
    for (int fd : {pipefd[0], pipefd[1], gofd[0], gofd[1]})
      if (fd >= 0) ::close(fd);
    throw SysError(fmt::format("start '{}'", argv[0]), err);
  }
  if (pid_ == 0) {
    // The child: only async-signal-safe calls until exec.
    struct sigaction sa;
    std::memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) ::sigaction(sig, &sa, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::close(pipefd[0]);
    if (held) {
      ::close(gofd[1]);
      char go = 0;
      ssize_t r;
      do {
        r = ::read(gofd[0], &go, 1);
      } while (r < 0 && errno == EINTR);
      if (r != 1) ::_exit(125);  // never released: ktrackctl failed first
    }
    ::execvp(args[0], args.data());
    int err = errno;
    ssize_t w = ::write(pipefd[1], &err, sizeof(err));
    (void)w;
    ::_exit(err == ENOENT ? 127 : 126);
  }
  ::close(pipefd[1]);
  exec_err_fd_ = pipefd[0];
  if (held) {
    ::close(gofd[0]);
    go_fd_ = gofd[1];
    return;
  }
  wait_exec();
}

void ChildProcess::release() {
  if (go_fd_ < 0) return;
  // A child killed while held (Ctrl-C during set-up) left no reader: EPIPE,
  // not SIGPIPE; its exit is then seen as any exit (poll(), finish()).
  sigset_t pipe, old;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe, &old);
  char go = 1;
  ssize_t w;
  do {
    w = ::write(go_fd_, &go, 1);
  } while (w < 0 && errno == EINTR);
  if (w < 0 && errno == EPIPE) {
    const struct timespec now = {0, 0};
    ::sigtimedwait(&pipe, nullptr, &now);  // the SIGPIPE it raised, if not blocked before
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(go_fd_);
  go_fd_ = -1;
  wait_exec();
}

// Reads exec's errno from the child, or EOF once exec succeeded.
void ChildProcess::wait_exec() {
  int err = 0;
  ssize_t n;
  do {
    n = ::read(exec_err_fd_, &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  ::close(exec_err_fd_);
  exec_err_fd_ = -1;
  if (n == (ssize_t)sizeof(err)) {
    finish(0);
    fail(name_, err);
  }
}

ChildProcess::~ChildProcess() {
  if (go_fd_ >= 0) ::close(go_fd_);  // a held child exits on EOF
  if (exec_err_fd_ >= 0) ::close(exec_err_fd_);
  if (pid_ > 0 && !status_) finish(SIGTERM);
}

std::optional<int> ChildProcess::poll() {
  if (status_) return status_;
  int ws;
  pid_t r;
  do {
    r = ::waitpid(pid_, &ws, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) status_ = shell_status(ws);
  return status_;
}

int ChildProcess::finish(int sig) {
  if (poll()) return *status_;
  if (sig) ::kill(pid_, sig);
  int ws;
  pid_t r;
  do {
    r = ::waitpid(pid_, &ws, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? shell_status(ws) : 255;
  return *status_;
}

}  // namespace ktrack
