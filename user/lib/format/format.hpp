// Text (ftrace-like) and JSON-lines formatting of decoded Events, and a
// buffered output sink.  Formatters append to a fmt::memory_buffer: no
// per-record heap allocation once the buffer has grown.
//
//   text:  "            bash-1234    [001] 12.000001234: marker: text=\"hi\""
//          i.e. comm-pid [cpu] seconds.nanoseconds: event: field=value ...
//          probe records add "(sym+off)" after the event name on entry and
//          "(return_site <- function)" on exit, like ftrace.
//   json:  {"ts":12000001234,"cpu":1,"pid":1234,"tgid":1234,"comm":"bash",
//           "ctx":"task","event":"marker","type":2,"fields":{"text":"hi"}}
//          probe records add "probe_id", "probe_event", "ip", "parent_ip"
//          (symbolized strings); integers are JSON numbers, x* fields and
//          unresolved symbols "0x..." strings, bytes a hex string, arrays
//          JSON arrays; fields a truncated record lacks are null.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "format/event.hpp"
#include "format/symbols.hpp"
#include "util/json.hpp"  // json_escape(), for formatters of other records

namespace ktrack {

struct FormatOptions {
  const Symbolizer *symbols = nullptr;  // null: addresses print as hex
  uint64_t ts = 0;                      // set per event by format_*: addresses are named as at that time
};

// Appends one line (with '\n') per event.
void format_text(const Event &ev, const FormatOptions &opt, fmt::memory_buffer &out);
void format_json(const Event &ev, const FormatOptions &opt, fmt::memory_buffer &out);
// CSV (RFC 4180): timestamp (s.ns), cpu, pid, tgid, comm, event, function
// (probe records), fields (the text form's "name=value ..." in one cell).
void format_csv_header(fmt::memory_buffer &out);
void format_csv(const Event &ev, const FormatOptions &opt, fmt::memory_buffer &out);

// Buffers output and writes it to a file descriptor in large writes.
class BufferedOutput {
 public:
  explicit BufferedOutput(int fd, size_t flush_at = 1 << 20) : fd_(fd), flush_at_(flush_at) {}
  ~BufferedOutput();
  BufferedOutput(const BufferedOutput &) = delete;
  BufferedOutput &operator=(const BufferedOutput &) = delete;

  fmt::memory_buffer &buf() { return buf_; }
  // Writes the buffer out once it holds flush_at bytes.
  void maybe_flush() {
    if (buf_.size() >= flush_at_) flush();
  }
  // Writes everything; throws SysError (EPIPE included) on failure.
  void flush();

 private:
  int fd_;
  size_t flush_at_;
  fmt::memory_buffer buf_;
};

}  // namespace ktrack
