// Analysis core: the small view of a decoded record that every analysis
// view (hist, profile, graph, stack, top, exports) consumes, the interface
// through which the views ask the decoder for names, fields and symbols,
// and a flat hash map for the hot aggregation paths.
//
// The views never allocate per record: a Sample points into the decoder's
// buffers, keys are integers (ip, pid, probe id, interned comm), and names
// are resolved once per distinct key when a view prints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/duration.hpp"
#include "util/json.hpp"

namespace ktrack::analysis {

// What a record means to the views.
enum class Kind : uint8_t {
  Other,   // any record the views do not interpret (still filtered/counted)
  Entry,   // probe hit at function entry (KTRACK_PROBE_EV_ENTRY)
  Exit,    // probe hit at function return (KTRACK_PROBE_EV_EXIT)
  Point,   // tracepoint or mid-function probe hit (KTRACK_PROBE_EV_TP)
  Lost,    // KTRACK_REC_LOST: 'lost' records between lost_first..lost_last
  Stack,   // KTRACK_REC_STACK: stack of the probe record before it (same CPU)
  Marker,  // user marker / driver printf text
};

struct Sample {
  uint64_t ts = 0;
  uint32_t pid = 0;
  uint32_t tgid = 0;
  uint16_t cpu = 0;
  uint16_t type = 0;  // KTRACK_REC_*
  uint16_t flags = 0;
  Kind kind = Kind::Other;
  uint32_t probe_id = 0;
  uint64_t ip = 0;         // probed function (Entry/Exit/Point)
  uint64_t parent_ip = 0;  // caller (Entry) or return address (Exit)
  uint64_t lost = 0;       // Lost: how many records
  uint64_t lost_first = 0, lost_last = 0;
  const uint64_t *stack = nullptr;  // Stack: innermost frame first
  uint32_t stack_nr = 0;
  std::string_view text;         // Marker text
  std::string_view comm;         // task name when the decoder knows it
  const void *origin = nullptr;  // the decoder's own record (field access)
};

// Fills 's' from one raw record as the ABI defines it (header + payload,
// 'len' bytes available).  Returns false when the record is malformed
// (length too short for its type).  Probe payload fields are not decoded
// here: they are reached through Names::field_value().
bool sample_from_record(const void *rec, size_t len, Sample &s);

// A symbol as the views print it.
struct Symbol {
  std::string name;  // "vfs_read", or "0xffffffff81234567" when unknown
  uint64_t offset = 0;
  std::string module;  // "" for the kernel image
};

// What the views need from the decoder (schema registry + symbolizer +
// task names).  The defaults make the views usable on bare records.
class Names {
 public:
  virtual ~Names() = default;
  virtual std::string probe_name(uint32_t probe_id) const;
  // 'ip' is an address, or a key Symbolizer::pin() made of (address, time).
  virtual Symbol symbol(uint64_t ip) const;
  // The address behind such a key (for comparisons with numbers).
  virtual uint64_t address(uint64_t ip) const { return ip; }
  virtual std::string comm(uint32_t pid) const;  // "" when unknown
  // Numeric payload fields by name: field_id() once per name (-1 when no
  // probe has it), then field_value() per record (false when this record's
  // probe has no such field).
  virtual int field_id(std::string_view name) const;
  virtual bool field_value(const Sample &s, int id, int64_t &out) const;
  // String payload fields (for --where name=="glob" and string keys).
  virtual bool field_string(const Sample &s, int id, std::string &out) const;

  // "sym+0x1a [mod]"
  std::string symbolize(uint64_t ip) const;
  // "sym" (function name only; for grouping and graph lines)
  std::string func_name(uint64_t ip) const { return symbol(ip).name; }
};

// Open-addressing hash map from uint64 keys, linear probing, power-of-two
// capacity.  Values stay in one vector so iteration is cache friendly.
// Pointers returned by find_or_insert are stable only until the next insert.
template <typename V>
class FlatMap {
 public:
  explicit FlatMap(size_t capacity = 64) { rehash(capacity); }

  V &operator[](uint64_t key) { return find_or_insert(key); }

  V &find_or_insert(uint64_t key) {
    size_t i = slot(key);
    while (true) {
      int32_t idx = index_[i];
      if (idx < 0) break;
      if (entries_[idx].first == key) return entries_[idx].second;
      i = (i + 1) & mask_;
    }
    if ((entries_.size() + 1) * 2 > index_.size()) {
      rehash(index_.size() * 2);
      i = slot(key);
      while (index_[i] >= 0) i = (i + 1) & mask_;
    }
    index_[i] = static_cast<int32_t>(entries_.size());
    entries_.emplace_back(key, V{});
    return entries_.back().second;
  }

  V *find(uint64_t key) {
    size_t i = slot(key);
    while (true) {
      int32_t idx = index_[i];
      if (idx < 0) return nullptr;
      if (entries_[idx].first == key) return &entries_[idx].second;
      i = (i + 1) & mask_;
    }
  }
  const V *find(uint64_t key) const { return const_cast<FlatMap *>(this)->find(key); }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  std::vector<std::pair<uint64_t, V>> &entries() { return entries_; }
  const std::vector<std::pair<uint64_t, V>> &entries() const { return entries_; }
  void clear() {
    entries_.clear();
    std::fill(index_.begin(), index_.end(), -1);
  }

 private:
  size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & mask_;
  }
  void rehash(size_t cap) {
    size_t n = 16;
    while (n < cap) n <<= 1;
    index_.assign(n, -1);
    mask_ = n - 1;
    for (size_t e = 0; e < entries_.size(); ++e) {
      size_t i = slot(entries_[e].first);
      while (index_[i] >= 0) i = (i + 1) & mask_;
      index_[i] = static_cast<int32_t>(e);
    }
  }

  std::vector<int32_t> index_;
  std::vector<std::pair<uint64_t, V>> entries_;
  size_t mask_ = 0;
};

// Interns short strings (task names) to small integers, so views can key
// on them without storing a string per record.
class StringInterner {
 public:
  uint32_t intern(std::string_view s);
  const std::string &str(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  FlatMap<std::vector<uint32_t>> by_hash_;
  std::vector<std::string> strings_;
};

// The key a task is tracked under: its pid, except pid 0 (the idle task,
// and interrupts on it), which is distinct per CPU.
inline uint64_t task_key(const Sample &s) { return s.pid ? s.pid : (1ULL << 32) | s.cpu; }

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

#include <cstdio>

#include <fmt/format.h>

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
