// Analysis throughput: generates a realistic trace file and times the
// views over it, single thread, streaming (bounded memory).  Prints
// numbers; asserts nothing about time.
//
//   ktrack_analysis_bench gen FILE RECORDS [CPUS]
//   ktrack_analysis_bench run FILE
#include <fcntl.h>
#include <fmt/core.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include <time.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>

#include "analysis/analysis_source.hpp"
#include "analysis/export_perfetto.hpp"
#include "analysis/graph.hpp"
#include "analysis/hist.hpp"
#include "analysis/profile.hpp"
#include "analysis/stackagg.hpp"
#include "format/format.hpp"
#include "synth_trace.hpp"
#include "util/error.hpp"

using namespace ktrack::analysis;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of this process: on a shared machine wall time measures the
// other tenants too; the single-thread rate is records per CPU second.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

FILE *null_out() {
  static FILE *f = [] {
    FILE *n = std::fopen("/dev/null", "w");
    if (!n) throw ktrack::SysError("open /dev/null", errno);
    return n;
  }();
  return f;
}

long max_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

void report(const char *what, uint64_t records, double wall, double cpu) {
  fmt::print("{:<40} {:>10} rec | wall {:>7.3f} s {:>6.2f} M rec/s | cpu {:>7.3f} s {:>6.2f} M rec/s\n", what,
             records, wall, static_cast<double>(records) / wall / 1e6, cpu,
             static_cast<double>(records) / cpu / 1e6);
  std::fflush(stdout);
}

// Runs one view over the whole file with a fresh reader.
void time_view(const std::string &path, const char *what,
               const std::function<void(FileSource &, Filter &)> &fn) {
  double t0 = now(), c0 = cpu_now();
  FileSource src(path);
  Filter all;
  uint64_t n = 0;
  fn(src, all);
  n = src.reader().events();
  report(what, n, now() - t0, cpu_now() - c0);
}

}  // namespace

int main(int argc, char **argv) {
  try {
    if (argc >= 4 && std::strcmp(argv[1], "gen") == 0) {
      SynthOptions o;
      o.records = std::stoull(argv[3]);
      if (argc >= 5) o.cpus = static_cast<uint32_t>(std::stoul(argv[4]));
      double t0 = now();
      SynthTruth t = write_synthetic_trace(argv[2], o);
      fmt::print(
          "generated {} records ({} entries, {} exits, {} tracepoint hits, {} stacks, {} markers, "
          "{} lost markers) on {} CPUs in {:.1f} s\n",
          t.records, t.entries, t.exits, t.points, t.stacks, t.markers, t.lost_records, o.cpus, now() - t0);
      return 0;
    }
    if (argc != 3 || std::strcmp(argv[1], "run") != 0) {
      fmt::print(stderr, "usage: {} gen FILE RECORDS [CPUS] | run FILE\n", argv[0]);
      return 1;
    }
    std::string path = argv[2];

    time_view(path, "decode only (TraceReader::next)",
              [](FileSource &src, Filter &f) { src.run(f, [](const Sample &) {}); });
    time_view(path, "hist $duration by func", [](FileSource &src, Filter &f) {
      HistOptions o;
      o.key = "func";
      Hist h(o, src.names());
      src.run(f, [&](const Sample &s) { h.add(s); });
      Out out(null_out());
      h.print(out);
    });
    time_view(path, "hist len by comm (payload field)", [](FileSource &src, Filter &f) {
      HistOptions o;
      o.value = "len";
      o.key = "comm";
      Hist h(o, src.names());
      src.run(f, [&](const Sample &s) { h.add(s); });
      Out out(null_out());
      h.print(out);
    });
    time_view(path, "profile", [](FileSource &src, Filter &f) {
      Profile p(ProfileOptions{}, src.names());
      src.run(f, [&](const Sample &s) { p.add(s); });
      Out out(null_out());
      p.print(out);
    });
    time_view(path, "profile --callers -p 1000 (filtered)", [](FileSource &src, Filter &) {
      ProfileOptions o;
      o.callers = true;
      Profile p(o, src.names());
      FilterSpec spec;
      spec.pids = {1000};
      Filter f(spec, src.names());
      src.run(f, [&](const Sample &s) { p.add(s); });
      Out out(null_out());
      p.print(out);
    });
    time_view(path, "stack --folded", [](FileSource &src, Filter &f) {
      StackOptions o;
      o.folded = true;
      StackAgg agg(o, src.names());
      src.run(f, [&](const Sample &s) { agg.add(s); });
      Out out(null_out());
      agg.print(out);
    });
    time_view(path, "graph text > /dev/null", [](FileSource &src, Filter &f) {
      Out out(null_out());
      Graph g(GraphOptions{}, src.names(), out);
      src.run(f, [&](const Sample &s) { g.add(s); });
      g.finish();
    });
    time_view(path, "report text (format_text) > /dev/null", [](FileSource &src, Filter &) {
      ktrack::BufferedOutput out(fileno(null_out()));
      ktrack::FormatOptions fo;
      fo.symbols = &src.reader().symbols();
      ktrack::Event ev;
      while (src.reader().next(ev)) {
        ktrack::format_text(ev, fo, out.buf());
        out.maybe_flush();
      }
      out.flush();
    });
    time_view(path, "export perfetto > /dev/null", [](FileSource &src, Filter &f) {
      Out out(null_out());
      PerfettoExport ex(src.names(), out);
      src.run(f, [&](const Sample &s) { ex.add(s); });
      ex.finish();
    });

    // The aggregators alone, on records already in memory (what the views
    // add on top of the decoder).
    {
      ktrack::TraceReader r(path);
      std::vector<uint8_t> recs;
      ktrack::Event ev;
      uint64_t n = 0;
      while (n < 2000000 && r.next(ev)) {
        recs.insert(recs.end(), ev.raw.begin(), ev.raw.end());
        ++n;
      }
      std::vector<Sample> samples;
      samples.reserve(n);
      for (size_t off = 0; off < recs.size();) {
        Sample s;
        uint16_t len;
        std::memcpy(&len, recs.data() + off, 2);
        sample_from_record(recs.data() + off, recs.size() - off, s);
        samples.push_back(s);
        off += len;
      }
      Names bare;
      double t0 = now(), c0 = cpu_now();
      HistOptions ho;
      ho.key = "func";
      Hist h(ho, bare);
      for (const auto &s : samples) h.add(s);
      report("in-memory: hist $duration by func", samples.size(), now() - t0, cpu_now() - c0);
      t0 = now();
      c0 = cpu_now();
      Profile p(ProfileOptions{}, bare);
      for (const auto &s : samples) p.add(s);
      report("in-memory: profile", samples.size(), now() - t0, cpu_now() - c0);
      t0 = now();
      c0 = cpu_now();
      {
        Out out(null_out());
        Graph g(GraphOptions{}, bare, out);
        for (const auto &s : samples) g.add(s);
        g.finish();
      }
      report("in-memory: graph text > /dev/null", samples.size(), now() - t0, cpu_now() - c0);
    }
    fmt::print("max RSS {} MiB\n", max_rss_mib());
    return 0;
  } catch (const std::exception &e) {
    fmt::print(stderr, "ktrack_analysis_bench: {}\n", e.what());
    return 2;
  }
}
