// Perfetto / Chrome trace-event JSON export (opens in ui.perfetto.dev and
// chrome://tracing):
//  - one track per task (process = tgid, thread = pid, named "comm"),
//    with a slice per entry/exit pair, instant events for tracepoint and
//    mid-function probe hits, unpaired entries/exits and markers;
//  - one track per CPU (process "CPUs") with a slice per run of records
//    from the same task, lost-record instants, and a "lost records"
//    counter per CPU.
// Written while streaming: memory is bounded by the open calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/calls.hpp"

namespace ktrack::analysis {

class PerfettoExport {
 public:
  // The process id the CPU tracks live under (no real tgid reaches it).
  static constexpr uint32_t kCpuPid = 0x7fffff00;

  PerfettoExport(const Names &names, Out &out);
  void add(const Sample &s);
  // Closes the JSON (unpaired entries become instants).
  void finish();

 private:
  void begin_event();
  void meta(uint32_t pid, uint32_t tid, std::string_view what, std::string_view name);
  void ensure_task(const Sample &s);
  void ensure_cpu(uint16_t cpu);
  void end_cpu_run(uint16_t cpu);
  void instant(uint32_t pid, uint32_t tid, uint64_t ts, std::string_view name, std::string_view cat);
  const std::string &func(uint64_t ip);

  struct CpuRun {
    bool known = false, active = false;
    uint64_t task = 0, start = 0, last = 0;
    uint32_t pid = 0;
    uint64_t lost = 0;
  };

  const Names &names_;
  Out &out_;
  CallTracker calls_;
  bool first_ = true;
  FlatMap<uint8_t> tasks_seen_{256}, procs_seen_{256};
  FlatMap<std::string> func_names_{1024};
  FlatMap<std::string> task_names_{256};
  std::vector<CpuRun> cpus_;
  uint64_t last_ts_ = 0;
};

}  // namespace ktrack::analysis
