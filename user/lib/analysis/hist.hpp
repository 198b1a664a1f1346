// hist: log2 and linear histograms of a numeric field or of $duration,
// grouped by a key, printed as bpftrace-style terminal bars with count,
// min, avg, p50/p90/p99 and max.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/calls.hpp"
#include "analysis/filter.hpp"

namespace ktrack::analysis {

// A distribution in bounded memory.  Percentiles are exact while it holds
// at most kExact values (they are kept); beyond, they come from buckets
// that are exact for |v| < 128 and log-linear above (64 sub-buckets per
// power of two: the lower bound of a bucket at most 1/64 = 1.6% wide,
// clamped to [min, max]).
class Distribution {
 public:
  void add(int64_t v);
  void merge(const Distribution &o);
  uint64_t count() const { return count_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  double avg() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0; }
  // Nearest-rank percentile (p in 0..100): the value at rank ceil(p/100*n).
  int64_t percentile(double p) const;
  // Counts per log2 bucket: [0] = value 0, [i] = [2^(i-1), 2^i), plus
  // 'negative' for values below 0.
  std::vector<uint64_t> log2_buckets(uint64_t &negative) const;

  static constexpr size_t kExact = 1024;
  static size_t index_of(uint64_t v);
  static uint64_t lower_bound_of(size_t idx);

 private:
  uint64_t count_ = 0;
  __int128 sum_ = 0;
  int64_t min_ = INT64_MAX, max_ = INT64_MIN;
  std::vector<uint64_t> pos_, neg_;  // by index_of(|v|)
  std::vector<int64_t> exact_;       // every value while count_ <= kExact
};

// The log2 bars of hist's text output for one distribution ("[4, 8)  12
// |@@@@  |"), from the first to the last non-empty bucket, under a line
// "@TITLE:".
void print_log2_bars(Out &out, const Colors &c, const Distribution &d, std::string_view title);
// The same buckets as JSON: [{"low_us":L,"high_us":H,"count":N},...] (the
// non-empty ones; "_us" as the latency tools' distributions are in us).
void json_log2_buckets(fmt::memory_buffer &buf, const Distribution &d);

struct HistOptions {
  std::string value = "$duration";  // field name
  std::string key;                  // group-by field name ("" = one group)
  bool linear = false;
  int64_t lin_min = 0, lin_max = 0, lin_step = 1;
  bool json = false;
  // Keep each value with its timestamp (the HTML report's linear bins and
  // latency-over-time plot), up to kMaxPoints values in all.
  bool keep_points = false;
  Colors colors;
};

// One group of a histogram as the HTML report reads it: its label, its
// distribution and, with keep_points, its (timestamp, value) pairs in
// record order.
struct HistGroup {
  std::string label;
  Distribution d;
  std::vector<std::pair<uint64_t, int64_t>> points;
};

class Hist {
 public:
  Hist(const HistOptions &opt, const Names &names);
  void add(const Sample &s);
  // Prints every group (most values first) and the lost-record lines.
  void print(Out &out);
  uint64_t values() const { return values_; }
  // The groups merged by label (as print() shows them), most values first.
  std::vector<HistGroup> groups() const;
  // keep_points stopped keeping values after this many (0: kept them all).
  static constexpr size_t kMaxPoints = 4u << 20;
  bool points_truncated() const { return points_truncated_; }

 private:
  struct Group {
    Distribution d;
    std::vector<uint64_t> lin;  // linear: [0] below min, [1..n] bins, [n+1] >= max
    uint64_t lin_n = 0;
    std::vector<std::pair<uint64_t, int64_t>> points;  // keep_points
  };
  bool key_of(const Sample &s, uint64_t &key);
  void add_value(uint64_t key, int64_t v, uint64_t ts);
  std::string key_label(uint64_t key) const;

  HistOptions opt_;
  const Names &names_;
  FieldRef value_, key_;
  bool have_key_ = false;
  bool value_is_duration_ = false;
  CallTracker calls_;
  FlatMap<Group> groups_{64};
  StringInterner interned_;
  FlatMap<uint32_t> pid_comm_;  // pid -> interned comm id
  LostSummary lost_;
  uint64_t values_ = 0;
  uint64_t unmeasured_ = 0;  // exits with neither an entry nor a duration field
  size_t nbins_ = 0;
  size_t points_ = 0;
  bool points_truncated_ = false;
  std::string scratch_;
};

}  // namespace ktrack::analysis
