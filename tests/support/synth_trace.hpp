// A synthetic but realistic trace file (mixed record types, several CPUs,
// nested entry/exit calls per task, tracepoint hits, stacks, markers and
// lost-record gaps), deterministic for a seed.  For the analysis tests and
// bench/analysis.sh; written through TraceWriter like `ktrackctl record`.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace ktrack::analysis {

struct SynthOptions {
  uint64_t records = 100000;  // total records to write (approximately: +- one batch)
  uint32_t cpus = 4;
  uint32_t tasks_per_cpu = 3;
  uint32_t seed = 1;
  uint64_t lost_every = 50000;  // a LOST record about every N records per CPU (0 = never)
  double stack_ratio = 0.05;    // share of entries followed by a STACK record
};

// What the file holds, for checking the views against.
struct SynthTruth {
  uint64_t records = 0, entries = 0, exits = 0, points = 0, stacks = 0, markers = 0;
  uint64_t lost_records = 0, lost_count = 0;
  std::map<std::string, uint64_t> calls;     // completed entry/exit pairs per function
  std::map<std::string, uint64_t> total_ns;  // their summed durations
};

SynthTruth write_synthetic_trace(const std::string &path, const SynthOptions &opt);

}  // namespace ktrack::analysis
