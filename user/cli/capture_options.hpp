// Flags shared by trace and record (-s -p -C -c -d --buffer-pages --mode
// --clock), parsed into ktrack::CaptureOptions.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "device/capture.hpp"
#include "host/command.hpp"

namespace ktrackctl {

struct CaptureFlags {
  std::string session;
  std::vector<int32_t> pids;
  std::vector<uint32_t> cpus;
  std::string comm;
  std::string duration;
  uint64_t count = 0;
  uint32_t buf_pages = 0;
  std::string mode;
  std::string clock;
  std::string flight;
  std::string graph;                       // --graph FUNC
  uint32_t depth = 0;                      // --depth N
  const CLI::Option *depth_opt = nullptr;  // given?
};

void add_capture_flags(CLI::App *cmd, CaptureFlags &f);
// Validates and copies the flags; throws ktrack::UsageError.  --graph with
// no spec scopes FUNC's static callees (said on stderr, with how many).
void apply_capture_flags(const CaptureFlags &f, ktrack::CaptureOptions &o);

class CommandUnderCapture;

// Is some spec a u or ur probe (a user-space function)?
bool has_user_probe(const std::vector<std::string> &specs);
// With u/ur probes, -p and -- COMMAND select process trees: every process
// the given ones (and the command, forked now and held) start is recorded
// too (KTRACK_CFG_F_PID_TREE).  Before the Capture is built.
void follow_process_trees(const std::vector<std::string> &specs, ktrack::CaptureOptions &o,
                          CommandUnderCapture &command, ktrack::StopSignals &signals);

// Does some probe spec carry a '=> snapshot' action?
bool has_snapshot_action(const std::vector<std::string> &specs);

// Starts recording, then shows what was attached ("probe x (id 1): kprobe,
// armed") and 'what' ("recording to FILE") on stderr: once such a line is
// out, every hit is recorded or counted lost.  'what' empty: no such line.
void start_capture(ktrack::Capture &cap, const std::string &what = {});
// After Capture::run(): "N records, M lost" (what: "trace", "report"...)
// and what each attached probe saw, on stderr.
void print_capture_summary(const ktrack::Capture &cap, const char *what);

// `-- COMMAND [ARGS]` of trace/record (trailing_command()).  Constructed
// before the capture: checks the command can run (else CommandError, exit
// status 127/126, before anything is armed).  start(), once recording has
// begun, runs it and makes its exit stop the capture; finish(), after
// Capture::run(), waits for it (stopping it with SIGTERM when -d or a signal
// ended the capture first) and makes its status ktrackctl's.
class CommandUnderCapture {
 public:
  CommandUnderCapture();
  // Forks the command now, held before its exec until start(), so that its
  // pid is known before recording begins; false when there is none.
  bool hold(ktrack::StopSignals &signals);
  pid_t pid() const { return child_ ? child_->pid() : -1; }
  void start(ktrack::StopSignals &signals);
  void finish();

 private:
  std::vector<std::string> argv_;
  std::unique_ptr<ktrack::ChildProcess> child_;
};

}  // namespace ktrackctl
