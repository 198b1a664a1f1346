// top: per-function / per-probe hit rates over a window, refreshed while a
// session runs (or stepped through a recorded file by record time).
#pragma once

#include <cstdint>
#include <string>

#include "analysis/analysis.hpp"

namespace ktrack::analysis {

struct TopOptions {
  enum Sort { ByRate, ByTotal, ByName } sort = ByRate;
  size_t limit = 20;  // rows per screen (0 = all)
  bool json = false;
  bool clear = false;  // clear the terminal before each screen
  Colors colors;
};

class Top {
 public:
  Top(const TopOptions &opt, const Names &names);
  void add(const Sample &s);
  // Prints the window that ended at 'now_ts' and lasted 'window_ns'
  // (rates are per second of it), then starts a new window.
  void print(Out &out, uint64_t now_ts, uint64_t window_ns);
  uint64_t window_hits() const { return window_hits_; }

 private:
  struct Row {
    uint32_t probe_id = 0;
    uint64_t window = 0, total = 0;
  };
  TopOptions opt_;
  const Names &names_;
  FlatMap<Row> rows_{1024};  // by function address
  FlatMap<std::string> func_names_{1024};
  FlatMap<uint8_t> entry_probes_{64};
  uint64_t window_hits_ = 0, total_hits_ = 0;
  uint64_t window_lost_ = 0, total_lost_ = 0;
  LostSummary window_lost_lines_;
  uint64_t screens_ = 0;
};

}  // namespace ktrack::analysis
