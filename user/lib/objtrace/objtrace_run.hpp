// One object-tracking run (`ktrackctl objtrace`): a session of its own with
// the tracker configured (function set resolved in userspace, see
// objtrace_funcs.hpp), a reader thread that writes a trace file or builds
// each object's life, and the stop that delivers every record.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "device/session.hpp"
#include "format/symbols.hpp"
#include "objtrace/objtrace.hpp"

namespace ktrack {

struct ObjtraceRunOptions {
  std::string module;   // --module: only this module's functions
  bool use_btf = true;  // narrow the function set by argument types
  uint32_t buf_pages = 1024;
  std::string output;    // a trace file; empty: lives are built in memory
  bool compress = true;  // the file's record chunks LZ4-compressed where that pays
};

class ObjtraceRun {
 public:
  // Opens the session and configures the tracker; nothing is hooked yet.
  ObjtraceRun(ObjConfig cfg, ObjtraceRunOptions o);
  ~ObjtraceRun();
  ObjtraceRun(const ObjtraceRun &) = delete;
  ObjtraceRun &operator=(const ObjtraceRun &) = delete;

  // What the function set hooks and why not fewer (empty when nothing to say).
  const std::string &note() const { return note_; }
  // Starts recording, tracks the given addresses, hooks the functions, then
  // calls 'wait' (run a command, or wait for Ctrl-C); then unhooks, flushes,
  // stops and delivers every record.
  void run(const std::function<void()> &wait);

  ktrack_obj_stats stats() const;
  // With an output file: finishes it and returns how many records it holds.
  uint64_t finish_file();
  // Without one: each object's life, as text or JSON.
  std::string lives(bool json) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string note_;
};

}  // namespace ktrack
