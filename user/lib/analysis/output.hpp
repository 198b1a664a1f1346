// Output shared by the analysis views: the buffered writer, colours, the
// adaptive duration and timestamp formats, and the lost-record lines.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/sample.hpp"
#include "util/duration.hpp"
#include "util/json.hpp"

namespace ktrack::analysis {

// Formatting shared by the views.
// "12.345 us", "1.234 ms", "850 ns" (ftrace-like adaptive unit).
std::string format_duration(uint64_t ns);
// "1234.567890" (seconds.microseconds, as ftrace prints timestamps).
std::string format_ts(uint64_t ns);
// ftrace function_graph delay marker for a duration: "$ " > 1 s, "@ " > 100 ms,
// "* " > 10 ms, "# " > 1 ms, "! " > 100 us, "+ " > 10 us, "  " otherwise.
const char *duration_marker(uint64_t ns);
// "lost 1234 records on CPU 1 between 12.000001 and 12.000500"
std::string lost_line(const Sample &s);
// The one duration grammar (ktrack/duration.hpp), also reachable here.
using ktrack::parse_duration_ns;

}  // namespace ktrack::analysis

namespace ktrack::analysis {

// Per-CPU summary of lost-record markers, for the views that aggregate
// (hist, profile, stack, top): one "lost N records on CPU c between t1 and
// t2 (in K gaps)" line per CPU.
class Out;
struct Colors;

class LostSummary {
 public:
  void add(const Sample &s);
  uint64_t total() const { return total_; }
  std::vector<std::string> lines() const;
  // Every view prints the same lines: {"lost":"LINE"} objects in JSON,
  // else "LINE<suffix>" in the alert colour.
  void print(Out &out, const Colors &c, bool json, std::string_view suffix = {}) const;

 private:
  struct PerCpu {
    uint64_t count = 0, first = ~0ULL, last = 0, gaps = 0;
  };
  std::vector<PerCpu> cpus_;
  uint64_t total_ = 0;
};

}  // namespace ktrack::analysis

namespace ktrack::analysis {

// Buffered output for the streaming views: text is formatted into one
// buffer (fmt::format_to, no per-line allocation) and written in large
// blocks.  Throws ktrack::Error when the write fails (disk full, EPIPE).
class Out {
 public:
  explicit Out(FILE *f) : f_(f) {}
  ~Out();
  Out(const Out &) = delete;
  Out &operator=(const Out &) = delete;
  fmt::memory_buffer &buf() { return buf_; }
  template <typename... T>
  void print(fmt::format_string<T...> fmt, T &&...args) {
    // fmt::appender writes into the buffer directly (a back_inserter goes
    // through an intermediate buffer).
    fmt::format_to(fmt::appender(buf_), fmt, std::forward<T>(args)...);
    if (buf_.size() >= kFlushAt) flush();
  }
  void write(std::string_view s) {
    buf_.append(s.data(), s.data() + s.size());
    if (buf_.size() >= kFlushAt) flush();
  }
  // Fast paths for the per-record views (no format string to parse; widths
  // count bytes, as ftrace's do).
  void spaces(size_t n);
  void pad_left(std::string_view s, size_t width);   // right-aligned
  void pad_right(std::string_view s, size_t width);  // left-aligned
  void number(uint64_t v, size_t width = 0);         // right-aligned
  void maybe_flush() {
    if (buf_.size() >= kFlushAt) flush();
  }
  void flush();

 private:
  static constexpr size_t kFlushAt = 1 << 16;
  FILE *f_;
  fmt::memory_buffer buf_;
};

// ANSI colours, empty strings when colour is off.
struct Colors {
  const char *bar = "", *warn = "", *alert = "", *dim = "", *bold = "", *reset = "";
  static Colors on() { return {"\033[32m", "\033[33m", "\033[31m", "\033[2m", "\033[1m", "\033[0m"}; }
  static Colors off() { return {}; }
};

}  // namespace ktrack::analysis
