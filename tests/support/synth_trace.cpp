#include "synth_trace.hpp"
#include "records.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "format/event.hpp"
#include "format/trace_file.hpp"

namespace ktrack::analysis {

namespace {

constexpr const char *kFuncs[] = {"vfs_read",
                                  "vfs_write",
                                  "ksys_read",
                                  "ksys_write",
                                  "rw_verify_area",
                                  "fsnotify",
                                  "security_file_permission",
                                  "ext4_file_read_iter",
                                  "filemap_read",
                                  "copy_page_to_iter",
                                  "touch_atime",
                                  "down_read",
                                  "up_read",
                                  "mutex_lock",
                                  "mutex_unlock",
                                  "__fdget_pos"};
constexpr size_t kNFuncs = sizeof(kFuncs) / sizeof(kFuncs[0]);
constexpr uint64_t kBase = 0xffffffff81100000ULL, kStride = 0x1000;

// xorshift64*: fast and deterministic.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ULL;
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>((next() >> 32) % n); }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
};

struct Frame {
  uint32_t func;
  uint64_t ts;
};

struct Task {
  uint32_t pid;
  std::vector<Frame> stack;
};

struct Cpu {
  uint64_t ts;
  std::vector<Task> tasks;
  uint32_t cur = 0;
  uint64_t since_lost = 0;
};

void put_probe(std::vector<uint8_t> &out, uint16_t cpu, uint64_t ts, uint32_t pid, uint32_t probe_id,
               uint16_t event, uint64_t ip, uint64_t parent, uint64_t len_field) {
  append_record(out, testing::rec_hdr(KTRACK_REC_PROBE, cpu, ts, pid, pid),
                testing::probe_payload(probe_id, event, ip, parent, testing::bytes_of(len_field)));
}

}  // namespace

SynthTruth write_synthetic_trace(const std::string &path, const SynthOptions &opt) {
  SchemaRegistry reg;
  reg.add(testing::probe_schema(1, "fgraph", {make_field("len", FieldType::U64, 0, 8)}));
  reg.add(testing::probe_schema(2, "sched_tp", {make_field("prio", FieldType::S64, 0, 8)}));

  std::string ksyms;
  for (size_t i = 0; i < kNFuncs; ++i) ksyms += fmt::format("{:016x} T {}\n", kBase + i * kStride, kFuncs[i]);
  ksyms += fmt::format("{:016x} T entry_SYSCALL_64\n", kBase + kNFuncs * kStride);

  TraceMeta meta;
  meta.nr_cpus = opt.cpus;
  meta.clock = "local";
  meta.kernel_release = "synthetic";
  meta.hostname = "synth";
  TraceWriter w(path, meta, reg, ksyms);
  w.set_comm_resolver({});

  Rng rng{opt.seed * 0x9E3779B97F4A7C15ULL + 1};
  std::vector<Cpu> cpus(opt.cpus);
  for (uint32_t c = 0; c < opt.cpus; ++c) {
    cpus[c].ts = 1000000000ULL + c * 137;
    for (uint32_t t = 0; t < opt.tasks_per_cpu; ++t) {
      uint32_t pid = 1000 + c * 100 + t;
      cpus[c].tasks.push_back(Task{pid, {}});
      w.set_comm(pid, fmt::format("worker{}", t));
    }
  }
  SynthTruth truth;
  std::vector<uint8_t> batch;
  const uint64_t syscall_ip = kBase + kNFuncs * kStride + 0x40;
  constexpr uint32_t kBatch = 4096;
  while (truth.records < opt.records) {
    for (uint32_t c = 0; c < opt.cpus && truth.records < opt.records; ++c) {
      Cpu &cpu = cpus[c];
      batch.clear();
      for (uint32_t i = 0; i < kBatch && truth.records < opt.records; ++i) {
        cpu.ts += 40 + rng.below(400);
        Task &task = cpu.tasks[cpu.cur];
        double r = rng.unit();
        ++truth.records;
        if (opt.lost_every && ++cpu.since_lost >= opt.lost_every) {
          cpu.since_lost = 0;
          auto h = testing::rec_hdr(KTRACK_REC_LOST, static_cast<uint16_t>(c), cpu.ts, 0, 0);
          ktrack_rec_lost l{};
          l.count = 1 + rng.below(1000);
          l.first_ts = cpu.ts - 1000;
          l.last_ts = cpu.ts - 10;
          l.reason = KTRACK_LOST_FULL;
          append_record(batch, h, std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(&l), sizeof(l)));
          ++truth.lost_records;
          truth.lost_count += l.count;
          continue;
        }
        if (r < 0.01) {
          uint32_t f = rng.below(kNFuncs);
          put_probe(batch, static_cast<uint16_t>(c), cpu.ts, task.pid, 2, KTRACK_PROBE_EV_TP,
                    kBase + f * kStride, syscall_ip, rng.below(140));
          ++truth.points;
          continue;
        }
        if (r < 0.011) {
          auto h = testing::rec_hdr(KTRACK_REC_MARKER, static_cast<uint16_t>(c), cpu.ts, task.pid, task.pid);
          append_record(batch, h, std::string_view("synthetic marker"));
          ++truth.markers;
          continue;
        }
        if (task.stack.empty() && r < 0.02) {
          // Context switch between calls.
          cpu.cur = rng.below(static_cast<uint32_t>(cpu.tasks.size()));
          --truth.records;
          continue;
        }
        bool enter = task.stack.empty() || (task.stack.size() < 6 && rng.unit() < 0.5);
        if (enter) {
          uint32_t f = rng.below(kNFuncs);
          uint64_t parent = task.stack.empty() ? syscall_ip : kBase + task.stack.back().func * kStride + 0x20;
          put_probe(batch, static_cast<uint16_t>(c), cpu.ts, task.pid, 1, KTRACK_PROBE_EV_ENTRY,
                    kBase + f * kStride, parent, rng.below(65536));
          task.stack.push_back(Frame{f, cpu.ts});
          ++truth.entries;
          if (rng.unit() < opt.stack_ratio && truth.records < opt.records) {
            auto h = testing::rec_hdr(KTRACK_REC_STACK, static_cast<uint16_t>(c), cpu.ts, task.pid, task.pid);
            std::vector<uint64_t> st;
            st.push_back(0);  // header: probe_id, nr
            for (size_t k = task.stack.size(); k-- > 0;)
              st.push_back(kBase + task.stack[k].func * kStride + 0x10);
            st.push_back(syscall_ip);
            uint32_t hdr2[2] = {1, static_cast<uint32_t>(st.size() - 1)};
            std::memcpy(st.data(), hdr2, 8);
            append_record(
                batch, h,
                std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(st.data()), st.size() * 8));
            ++truth.stacks;
            ++truth.records;
          }
        } else {
          Frame fr = task.stack.back();
          task.stack.pop_back();
          put_probe(batch, static_cast<uint16_t>(c), cpu.ts, task.pid, 1, KTRACK_PROBE_EV_EXIT,
                    kBase + fr.func * kStride, syscall_ip, rng.below(65536));
          ++truth.exits;
          ++truth.calls[kFuncs[fr.func]];
          truth.total_ns[kFuncs[fr.func]] += cpu.ts - fr.ts;
        }
      }
      w.write_records(batch);
    }
  }
  w.finish();
  return truth;
}

}  // namespace ktrack::analysis
