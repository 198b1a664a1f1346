// The self-contained HTML report (ktrackctl export --format html): one file
// with the viewer (analysis/report/report.html, compiled in) and the data
// it draws, as one JSON object (analysis/report/SCHEMA.md):
//  - a header: machine, probes, time span, record counts, losses;
//  - flame graphs of kernel stacks (the same frames and counts as
//    'stack --folded') and of the call graph (entry/exit pairs: inclusive
//    time per call path);
//  - per-function and per-probe latency histograms: exactly what
//    'hist --json -k func' and '-k probe' print, plus 40 linear bins;
//  - latency over time (at most 2,000 points per group, evenly strided);
//  - a per-CPU timeline (records per time bin, at most 4,096 bins) with
//    every lost-record marker and the first 5,000 user markers;
//  - objtrace lives ('report --objects --json'), when the caller adds them.
// Memory grows with distinct stacks and call paths, and with the
// durations kept for the linear bins (Hist::kMaxPoints at most).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/calls.hpp"
#include "analysis/hist.hpp"
#include "analysis/stackagg.hpp"

namespace ktrack::analysis {

// What the report's header says of the recording.
struct HtmlHeader {
  std::string file, host, kernel, clock, session;
  uint32_t cpus = 0;
  std::vector<std::string> probes;
};

class HtmlExport {
 public:
  static constexpr size_t kMaxBins = 4096;
  static constexpr size_t kMaxScatter = 2000;
  static constexpr size_t kLinearBins = 40;
  static constexpr size_t kMaxMarkers = 5000;
  static constexpr size_t kMaxLostMarkers = 5000;
  static constexpr size_t kMaxFlameNodes = 200000;

  HtmlExport(const Names &names, HtmlHeader header);
  void add(const Sample &s);
  // Whether object tracker records went by (the caller then adds the
  // lives with set_objects_json).
  bool saw_objects() const { return saw_objects_; }
  void set_objects_json(std::string json) { objects_json_ = std::move(json); }
  // The data object alone (tests parse it), and the whole page.
  std::string data_json();
  void write(Out &out);

  // The viewer page with its one "@KTRACK_DATA@" placeholder.
  static std::string_view page_template();

 private:
  struct Node {
    uint32_t name = 0;
    uint64_t v = 0, k = 0;
    std::vector<uint32_t> children;
  };
  struct Flame {
    std::vector<Node> nodes;
    FlatMap<uint32_t> child_of{1024};  // (parent << 32 | name) -> node + 1
    bool truncated = false;
    Flame() { nodes.push_back(Node{}); }  // the root, "all"
    uint32_t child(uint32_t parent, uint32_t name);
    bool empty() const { return nodes.size() == 1; }
  };
  struct Lost {
    uint64_t ts, cpu, count, first, last;
  };
  struct Marker {
    uint64_t ts;
    uint16_t cpu;
    uint32_t pid;
    std::string comm, text;
  };

  uint32_t name_id(const std::string &name);
  uint32_t func_id(uint64_t ip);
  void add_call(const Sample &s);
  void add_to_timeline(const Sample &s);
  void parse_folded(const std::string &folded);
  void write_node(fmt::memory_buffer &b, const Flame &f, uint32_t idx, uint64_t &v_out);
  void write_hist(fmt::memory_buffer &hist, fmt::memory_buffer &scatter, Hist &h, const char *group);

  const Names &names_;
  HtmlHeader header_;
  StackAgg stacks_;
  Hist hist_func_, hist_probe_;
  CallTracker calls_;
  Flame stack_flame_, call_flame_;
  std::vector<std::string> strings_{"all"};
  std::unordered_map<std::string, uint32_t> string_ids_{{"all", 0}};
  FlatMap<uint32_t> func_ids_{1024};  // ip -> name id + 1
  std::vector<uint32_t> path_;

  uint64_t first_ts_ = 0, last_ts_ = 0, records_ = 0;
  bool any_ = false, saw_objects_ = false, folded_ = false;
  uint64_t n_entry_ = 0, n_exit_ = 0, n_point_ = 0, n_stack_ = 0, n_marker_ = 0, n_lostrec_ = 0, n_other_ = 0;
  LostSummary lost_sum_;
  std::vector<uint64_t> lost_per_cpu_;
  uint64_t bin_ns_ = 1024, bins_ = 0;
  std::vector<std::vector<uint64_t>> cpu_bins_;
  std::vector<Lost> lost_;
  std::vector<Marker> markers_;
  uint64_t markers_dropped_ = 0;
  std::string objects_json_;
};

}  // namespace ktrack::analysis
