// profile: per-function hit count and total/avg/max/self time from
// entry/exit pairs, like ftrace's function_profile, with an optional
// breakdown by caller.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/analysis.hpp"
#include "analysis/calls.hpp"

namespace ktrack::analysis {

struct ProfileOptions {
  enum Sort { ByTotal, ByHits, ByAvg, ByMax, BySelf, ByName } sort = ByTotal;
  bool callers = false;  // per-caller breakdown under each function
  size_t limit = 0;      // print at most this many functions (0 = all)
  // The totals come from the kernel (profile --live, add_totals()): no self
  // time and no minimum are known, so neither is printed.
  bool kernel_totals = false;
  bool json = false;
  Colors colors;
};

struct FuncStats {
  uint64_t hits = 0;   // entries + points + exits without an entry
  uint64_t timed = 0;  // calls with a duration
  uint64_t total = 0, self = 0, max = 0, min = ~0ULL;
};

class Profile {
 public:
  Profile(const ProfileOptions &opt, const Names &names);
  void add(const Sample &s);
  // One function's totals, counted elsewhere (the kernel's profile tables).
  void add_totals(uint64_t ip, const FuncStats &st);
  void print(Out &out);

  // Aggregated by function name (callers merged by name); for tests.
  struct Row {
    std::string func;
    FuncStats st;
    std::vector<std::pair<std::string, FuncStats>> callers;
  };
  std::vector<Row> rows() const;
  uint64_t lost() const { return lost_.total(); }

 private:
  FuncStats *caller_stats(uint64_t ip, uint64_t caller_ip);
  void print_totals(Out &out, const std::vector<Row> &rows_v) const;
  void hit(uint64_t ip, uint64_t caller_ip);
  void timed(uint64_t ip, uint64_t caller_ip, uint64_t dur, uint64_t self);

  ProfileOptions opt_;
  const Names &names_;
  CallTracker calls_;
  int duration_field_ = -1;
  FlatMap<FuncStats> funcs_{1024};
  FlatMap<FuncStats> callers_{1024};  // by caller_keys_ key
  FlatMap<std::pair<uint64_t, uint64_t>> caller_keys_{1024};
  LostSummary lost_;
};

}  // namespace ktrack::analysis
