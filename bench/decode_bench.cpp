// Host-side decode throughput: generates a recorded file (test_seq, marker
// and probe records on 4 CPUs, drained in per-CPU batches like the
// recorder), then reads it back (merge + decode), and decodes + formats to
// text and to JSON.  Prints records/s; asserts nothing.
//
//   ktrack_decode_bench [RECORDS] [FILE]
#include <fmt/core.h>
#include <unistd.h>

#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <string>

#include "format/event.hpp"
#include "format/format.hpp"
#include "format/trace_file.hpp"
#include "records.hpp"

using namespace ktrack;
using Clock = std::chrono::steady_clock;

namespace {

// CPU seconds (user + system) of this process: meaningful on a shared,
// loaded machine where wall time is not.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void generate(const std::string &path, uint64_t n) {
  SchemaRegistry reg;
  reg.add(testing::probe_schema(1, "do_sys_openat2",
                                {make_field("dfd", FieldType::S32, 0), make_field("flags", FieldType::X32, 4),
                                 make_field("filename", FieldType::DynString, 8, 4)}));
  TraceMeta meta;
  meta.nr_cpus = 4;
  meta.clock = "local";
  meta.kernel_release = "bench";
  std::string ksyms = "ffffffff81000000 T _stext\nffffffff81200000 T do_sys_openat2\n";
  TraceWriter w(path, meta, reg, ksyms);
  w.set_comm_resolver({});
  for (uint32_t p = 0; p < 8; p++) w.set_comm(1000 + p, fmt::format("worker{}", p));
  std::vector<uint8_t> batch[4];
  uint64_t seq[4] = {};
  uint64_t ts = 1'000'000'000;
  std::string probe(offsetof(ktrack_rec_probe, data), '\0');
  for (uint64_t i = 0; i < n; i++) {
    uint16_t cpu = static_cast<uint16_t>(i % 4);
    ktrack_rec_hdr h{};
    h.cpu = cpu;
    h.ts = ts += 37;
    h.pid = h.tgid = 1000 + static_cast<uint32_t>(i % 8);
    switch (i % 3) {
      case 0: {  // 32-byte payload, as the transport benchmark uses
        h.type = KTRACK_REC_TEST_SEQ;
        uint8_t p[32] = {};
        uint64_t sq = seq[cpu]++;
        std::memcpy(p, &sq, 8);
        append_record(batch[cpu], h, std::span<const uint8_t>(p, sizeof(p)));
        break;
      }
      case 1:
        h.type = KTRACK_REC_MARKER;
        append_record(batch[cpu], h, std::string_view("request 12345 handled\0", 22));
        break;
      default: {
        h.type = KTRACK_REC_PROBE;
        ktrack_rec_probe pr{};
        pr.probe_id = 1;
        pr.event = KTRACK_PROBE_EV_ENTRY;
        pr.data_len = 12 + 12;
        pr.ip = 0xffffffff81200000ull;
        pr.parent_ip = 0xffffffff81200100ull;
        std::string rec = probe;
        std::memcpy(rec.data(), &pr, rec.size());
        int32_t dfd = -100;
        uint32_t flags = 0x8000, slot = (12u << 16) | 12u;
        rec.append(reinterpret_cast<const char *>(&dfd), 4);
        rec.append(reinterpret_cast<const char *>(&flags), 4);
        rec.append(reinterpret_cast<const char *>(&slot), 4);
        rec.append("/etc/passwd\0", 12);
        append_record(batch[cpu], h, rec);
      }
    }
    if (batch[cpu].size() >= (256u << 10)) {
      for (auto &b : batch) {
        w.write_records(b);
        b.clear();
      }
    }
  }
  for (auto &b : batch) w.write_records(b);
  w.finish();
}

enum class Mode { Decode, Text, Json };

void run(const std::string &path, Mode mode, const char *label) {
  auto t0 = Clock::now();
  double c0 = cpu_seconds();
  TraceReader r(path);
  Event ev;
  FormatOptions fo{&r.symbols()};
  fmt::memory_buffer out;
  uint64_t n = 0, bytes = 0, out_bytes = 0;
  while (r.next(ev)) {
    n++;
    bytes += ev.len;
    if (mode == Mode::Text)
      format_text(ev, fo, out);
    else if (mode == Mode::Json)
      format_json(ev, fo, out);
    if (out.size() >= (1u << 20)) {
      out_bytes += out.size();
      out.clear();  // formatting cost only; no terminal/file write
    }
  }
  out_bytes += out.size();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  double c = cpu_seconds() - c0;
  fmt::print(
      "{:<22} {:>9} records: wall {:6.3f} s {:6.2f} M rec/s | cpu {:6.3f} s {:6.2f} M rec/s {:6.1f} MB/s "
      "in{}\n",
      label, n, s, n / s / 1e6, c, n / c / 1e6, bytes / c / 1e6,
      mode == Mode::Decode ? std::string() : fmt::format(" {:6.1f} MB/s out", out_bytes / c / 1e6));
}

}  // namespace

int main(int argc, char **argv) {
  uint64_t n = argc > 1 ? std::stoull(argv[1]) : 3'000'000;
  std::string path = argc > 2 ? argv[2] : fmt::format("/tmp/ktrack-decode-bench-{}.ktrack", ::getpid());
  auto t0 = Clock::now();
  generate(path, n);
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  fmt::print("{:<22} {:>9} records: wall {:6.3f} s {:6.2f} M rec/s\n", "generate+write file", n, s,
             n / s / 1e6);
  run(path, Mode::Decode, "read+merge+decode");
  run(path, Mode::Text, "decode+format text");
  run(path, Mode::Json, "decode+format JSON");
  if (argc <= 2) ::unlink(path.c_str());
  return 0;
}
