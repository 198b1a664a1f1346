// graph: an ftrace function_graph-like view from entry/exit records:
// nested and indented per task, durations on exits and leaf calls, the
// ftrace delay markers (+ > 10us, ! > 100us, # > 1ms, * > 10ms, @ > 100ms,
// $ > 1s), context-switch separators per CPU, and a line wherever records
// were lost.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/analysis.hpp"
#include "analysis/calls.hpp"

namespace ktrack::analysis {

struct GraphOptions {
  bool per_task = false;  // task column first, no per-CPU switch separators
  bool abstime = false;   // timestamp column
  Colors colors;
};

class Graph {
 public:
  Graph(const GraphOptions &opt, const Names &names, Out &out);
  void header();
  void add(const Sample &s);
  // Prints the calls still waiting for their leaf/non-leaf decision.
  void finish();

 private:
  struct Pending {
    bool active = false;
    uint64_t ip = 0, ts = 0;
    uint32_t depth = 0, pid = 0;
    uint16_t cpu = 0;
  };
  void flush_pending(Pending &p);
  void prefix(uint16_t cpu, uint32_t pid, std::string_view comm, uint64_t ts);
  void duration(uint64_t ns, bool have);
  void indent(size_t depth);
  const std::string &func(uint64_t ip);
  const std::string &task(uint32_t pid, std::string_view comm);

  GraphOptions opt_;
  const Names &names_;
  Out &out_;
  CallTracker calls_;
  FlatMap<Pending> pending_{256};
  FlatMap<std::string> func_names_{1024};
  FlatMap<std::string> task_names_{256};
  std::vector<uint64_t> cpu_task_;  // per CPU: task key last printed + 1
  std::string comm_scratch_;
};

}  // namespace ktrack::analysis
