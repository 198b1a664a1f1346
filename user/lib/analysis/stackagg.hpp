// stack: aggregated kernel stacks (stackcount-style) and folded stacks
// for flame graph tools (flamegraph.pl, inferno, speedscope).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"

namespace ktrack::analysis {

struct StackOptions {
  bool folded = false;    // "root;...;leaf count" lines
  bool offsets = false;   // sym+off instead of sym in folded output
  bool per_comm = false;  // first folded frame / stack header is the task name
  size_t limit = 0;       // stackcount: at most this many stacks (0 = all)
  bool json = false;
  Colors colors;
};

class StackAgg {
 public:
  StackAgg(const StackOptions &opt, const Names &names);
  void add(const Sample &s);
  void print(Out &out);
  size_t distinct() const { return entries_.size(); }

 private:
  struct Entry {
    uint32_t offset = 0, nr = 0;  // in pool_
    uint32_t comm = 0;            // interned, when per_comm
    uint64_t leaf = 0;            // ip of the probe record before the stack
    uint64_t count = 0;
  };
  uint32_t comm_id(const Sample &s);

  StackOptions opt_;
  const Names &names_;
  std::vector<uint64_t> pool_;
  std::vector<Entry> entries_;
  FlatMap<std::vector<uint32_t>> by_hash_{1024};
  std::vector<uint64_t> last_ip_;  // per CPU: ip of the last probe record
  StringInterner comms_;
  FlatMap<uint32_t> pid_comm_{256};
  LostSummary lost_;
};

}  // namespace ktrack::analysis
