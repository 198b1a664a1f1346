// RecordMerger ordering and the capture option helpers.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstring>
#include <deque>
#include <queue>
#include <random>

#include "device/capture.hpp"
#include "format/event.hpp"
#include "format/merge.hpp"
#include "util/error.hpp"

using namespace ktrack;

namespace {

std::vector<uint8_t> rec(uint16_t type, uint16_t cpu, uint64_t ts, uint64_t seq) {
  ktrack_rec_hdr h{};
  h.type = type;
  h.cpu = cpu;
  h.ts = ts;
  std::vector<uint8_t> out;
  append_record(out, h, std::string_view(reinterpret_cast<const char *>(&seq), sizeof(seq)));
  return out;
}

uint64_t seq_of(std::span<const uint8_t> r) {
  uint64_t s;
  std::memcpy(&s, r.data() + sizeof(ktrack_rec_hdr), 8);
  return s;
}

}  // namespace

// A record per CPU on thousands of CPUs (a short crafted file can name any
// CPU below 8192) costs little: each CPU's queue starts small.  With queues
// of 16,384 refs from the start, these 64 KB of records took 3 GB.
TEST(Merger, ManyCpusCostLittle) {
  auto rss_kib = [] {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
  };
  long before = rss_kib();
  RecordMerger m;
  for (uint16_t cpu = 0; cpu < RecordMerger::kMaxCpus - 1; cpu++)
    m.push(rec(KTRACK_REC_MARKER, cpu, 100 + cpu, cpu));
  std::span<const uint8_t> r;
  uint64_t n = 0;
  while (m.pop(r)) EXPECT_EQ(seq_of(r), n++);
  EXPECT_EQ(n, RecordMerger::kMaxCpus - 1u);
  EXPECT_LT(rss_kib() - before, 256 * 1024) << "KiB";
}

TEST(Merger, OrdersByTimestampKeepsPerCpuOrder) {
  RecordMerger m;
  std::mt19937 rng(3);
  // Per CPU: increasing timestamps except a nested (NMI-like) inversion.
  uint64_t expect_seq[3] = {};
  for (uint16_t cpu = 0; cpu < 3; cpu++) {
    uint64_t ts = cpu;
    for (uint64_t i = 0; i < 1000; i++) {
      ts += 1 + rng() % 10;
      uint64_t t = (i == 500) ? ts - 5 : ts;
      m.push(rec(KTRACK_REC_TEST_SEQ, cpu, t, i));
    }
  }
  m.push(rec(KTRACK_REC_PAD, 0, 0, 0));  // dropped
  std::span<const uint8_t> out;
  uint64_t n = 0;
  while (m.pop(out)) {
    ktrack_rec_hdr h;
    std::memcpy(&h, out.data(), sizeof(h));
    ASSERT_EQ(seq_of(out), expect_seq[h.cpu]++) << "CPU " << h.cpu << " order broken";
    n++;
  }
  EXPECT_EQ(n, 3000u);
  EXPECT_EQ(m.buffered_bytes(), 0u);
  EXPECT_TRUE(m.empty());
}

TEST(Merger, InterleavesCpusByTimestamp) {
  RecordMerger m;
  for (uint64_t i = 0; i < 10; i++) m.push(rec(KTRACK_REC_TEST_SEQ, 1, 2 * i + 1, i));
  for (uint64_t i = 0; i < 10; i++) m.push(rec(KTRACK_REC_TEST_SEQ, 0, 2 * i, i));
  std::span<const uint8_t> out;
  uint64_t ts = 0;
  while (m.pop(out)) {
    ktrack_rec_hdr h;
    std::memcpy(&h, out.data(), sizeof(h));
    EXPECT_EQ(h.ts, ts++);
  }
  EXPECT_EQ(ts, 20u);
  EXPECT_THROW(m.push(rec(KTRACK_REC_TEST_SEQ, 9000, 0, 0)), Error);
}

// Streaming use: buffers adopted, popped, recycled and refilled, per-CPU
// queues that grow and wrap around; ties between CPUs keep arrival order.
TEST(Merger, StreamsBuffersWithGrowthWrapAndTies) {
  RecordMerger m;
  uint64_t next_seq[2] = {}, expect_seq[2] = {}, ts[2] = {};
  uint64_t popped = 0, last_ts = 0;
  std::span<const uint8_t> out;
  for (int round = 0; round < 40; round++) {
    // CPU 0 sends big batches (its queue grows past the first ring size),
    // CPU 1 small ones, with equal timestamps now and then.
    for (uint16_t cpu = 0; cpu < 2; cpu++) {
      ByteBuffer buf = m.take_buffer();
      size_t n = cpu == 0 ? 30000 : 500;
      for (size_t i = 0; i < n; i++) {
        ts[cpu] += cpu == 0 ? 1 : 60;
        auto r = rec(KTRACK_REC_TEST_SEQ, cpu, ts[cpu], next_seq[cpu]++);
        buf.insert(buf.end(), r.begin(), r.end());
      }
      m.push_buffer(std::move(buf));
    }
    // Drain most of it: the rings wrap.
    for (int k = 0; k < 25000 && m.pop(out); k++) {
      ktrack_rec_hdr h;
      std::memcpy(&h, out.data(), sizeof(h));
      ASSERT_EQ(seq_of(out), expect_seq[h.cpu]++);
      ASSERT_GE(h.ts, last_ts);
      last_ts = h.ts;
      popped++;
    }
  }
  while (m.pop(out)) {
    ktrack_rec_hdr h;
    std::memcpy(&h, out.data(), sizeof(h));
    ASSERT_EQ(seq_of(out), expect_seq[h.cpu]++);
    popped++;
  }
  EXPECT_EQ(popped, next_seq[0] + next_seq[1]);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.buffered_bytes(), 0u);
}

// A drained run copies in block-sized pieces: a run of several blocks
// (a large ring's sweep) keeps every record whole and in order, beside
// another CPU's records pushed one at a time.
TEST(Merger, PushRecordsSpansBlocks) {
  RecordMerger m;
  std::vector<uint8_t> run;
  const uint64_t n = 3 * RecordMerger::kBlockSize / 32 + 7;  // 32-byte records
  for (uint64_t i = 0; i < n; i++) {
    auto r = rec(KTRACK_REC_TEST_SEQ, 1, 10 * i, i);
    ASSERT_EQ(32u, r.size());
    run.insert(run.end(), r.begin(), r.end());
  }
  // A ring's 8-byte PAD (no header) in the middle and at the end: skipped.
  const uint8_t pad8[8] = {8, 0, KTRACK_REC_PAD, 0, 0, 0, 0, 0};
  run.insert(run.begin() + 32 * 1000, pad8, pad8 + 8);
  run.insert(run.end(), pad8, pad8 + 8);
  m.push(rec(KTRACK_REC_TEST_SEQ, 0, 15, 1000000));
  m.push_records(run);
  m.push(rec(KTRACK_REC_TEST_SEQ, 0, 25, 1000001));
  std::span<const uint8_t> out;
  std::vector<uint64_t> got;
  while (m.pop(out)) got.push_back(seq_of(out));
  ASSERT_EQ(n + 2, got.size());
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 1000000, 2, 1000001, 3}),
            std::vector<uint64_t>(got.begin(), got.begin() + 6));
  EXPECT_EQ(n - 1, got.back());
  EXPECT_EQ(0u, m.buffered_bytes());
  std::vector<uint8_t> bad = rec(KTRACK_REC_TEST_SEQ, 0, 1, 1);
  bad[0] = 16;  // a record's length below its header's
  EXPECT_THROW(m.push_records(bad), Error);
  EXPECT_THROW(m.push_records(std::span<const uint8_t>(pad8, 4)), Error);  // cut short
}

// Records of mixed sizes: a block's room ends inside a record, which then
// starts the next block, whole.
TEST(Merger, PushRecordsOfMixedSizesSplitAtRecords) {
  RecordMerger m;
  std::vector<uint8_t> run;
  std::vector<size_t> lens;
  for (uint64_t i = 0; run.size() < 3 * RecordMerger::kBlockSize; i++) {
    ktrack_rec_hdr h{};
    h.type = KTRACK_REC_TEST_SEQ;
    h.ts = i;
    std::string payload(8 + 8 * (i % 29), 'x');
    std::memcpy(payload.data(), &i, sizeof(i));
    append_record(run, h, payload);
    lens.push_back(sizeof(h) + payload.size());
  }
  m.push_records(run);
  std::span<const uint8_t> out;
  size_t n = 0;
  while (m.pop(out)) {
    ASSERT_LT(n, lens.size());
    EXPECT_EQ(lens[n], out.size());
    EXPECT_EQ(n, seq_of(out));
    n++;
  }
  EXPECT_EQ(lens.size(), n);
}

// The tournament with runs gives exactly the order of the plain rule: the
// smallest (ts, when the CPU's key was set) first, a CPU's key set when its
// queue fills and after each of its pops.  A heap reference with that rule
// checks random mixes of buffers, single pushes, PADs, ties, interleaved
// pops and CPUs appearing late.
TEST(Merger, TournamentMatchesHeapReference) {
  struct RefKey {
    uint64_t ts, seq;
    uint16_t cpu;
    bool operator>(const RefKey &o) const { return ts != o.ts ? ts > o.ts : seq > o.seq; }
  };
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; trial++) {
    RecordMerger m;
    std::vector<std::deque<uint64_t>> ref_q(40);  // per CPU: record ids
    std::vector<uint64_t> ref_ts(1u << 20);       // id -> ts
    std::priority_queue<RefKey, std::vector<RefKey>, std::greater<RefKey>> heap;
    uint64_t seq = 0, id = 0;
    uint16_t ncpu = static_cast<uint16_t>(1 + rng() % 37);
    std::vector<uint64_t> ts(ncpu);
    auto ref_add = [&](uint16_t cpu, uint64_t rid) {
      if (ref_q[cpu].empty()) heap.push({ref_ts[rid], seq++, cpu});
      ref_q[cpu].push_back(rid);
    };
    auto ref_pop = [&](uint64_t &rid) {
      if (heap.empty()) return false;
      RefKey k = heap.top();
      heap.pop();
      rid = ref_q[k.cpu].front();
      ref_q[k.cpu].pop_front();
      if (!ref_q[k.cpu].empty()) heap.push({ref_ts[ref_q[k.cpu].front()], seq++, k.cpu});
      return true;
    };
    auto make = [&](uint16_t cpu) {
      // Mostly runs of close timestamps; ties across CPUs are common.
      ts[cpu] += rng() % 4;
      ref_ts[id] = ts[cpu];
      return rec(KTRACK_REC_TEST_SEQ, cpu, ts[cpu], id++);
    };
    uint16_t seen = static_cast<uint16_t>(1 + rng() % ncpu);  // CPUs appear over time
    std::span<const uint8_t> out;
    for (int step = 0; step < 400 && id + 4000 < ref_ts.size(); step++) {
      if (seen < ncpu && rng() % 8 == 0) seen++;
      if (rng() % 3 == 0) {
        uint16_t cpu = static_cast<uint16_t>(rng() % seen);
        auto r = make(cpu);
        ref_add(cpu, id - 1);
        m.push(r);
      } else {
        ByteBuffer buf = m.take_buffer();
        int runs = 1 + static_cast<int>(rng() % 6);
        for (int k = 0; k < runs; k++) {
          uint16_t cpu = static_cast<uint16_t>(rng() % seen);
          int n = 1 + static_cast<int>(rng() % 50);
          for (int i = 0; i < n; i++) {
            auto r = make(cpu);
            ref_add(cpu, id - 1);
            buf.insert(buf.end(), r.begin(), r.end());
          }
          if (rng() % 5 == 0) {
            auto pad = rec(KTRACK_REC_PAD, static_cast<uint16_t>(rng() % 9000), 0, 0);
            buf.insert(buf.end(), pad.begin(), pad.end());
          }
        }
        if (rng() % 2) {
          m.push_buffer(std::move(buf));
        } else {
          m.push_records(buf);  // a ring drain's run: copied, PADs dropped
          m.recycle(std::move(buf));
        }
      }
      for (int k = static_cast<int>(rng() % 120); k > 0; k--) {
        uint64_t want;
        bool has = ref_pop(want);
        ASSERT_EQ(m.pop(out), has);
        if (!has) break;
        ASSERT_EQ(seq_of(out), want) << "trial " << trial << " step " << step;
      }
    }
    uint64_t want;
    while (ref_pop(want)) {
      ASSERT_TRUE(m.pop(out));
      ASSERT_EQ(seq_of(out), want);
    }
    EXPECT_FALSE(m.pop(out));
    EXPECT_TRUE(m.empty());
    EXPECT_EQ(m.buffered_bytes(), 0u);
  }
}

TEST(Capture, ParseDuration) {
  EXPECT_EQ(parse_duration("10").count(), 10000);
  EXPECT_EQ(parse_duration("10s").count(), 10000);
  EXPECT_EQ(parse_duration("1.5s").count(), 1500);
  EXPECT_EQ(parse_duration("500ms").count(), 500);
  EXPECT_EQ(parse_duration("2m").count(), 120000);
  EXPECT_EQ(parse_duration("1h").count(), 3600000);
  for (const char *bad : {"", "s", "0", "-1", "10x", "1..2s", "ms"})
    EXPECT_THROW(parse_duration(bad), UsageError) << bad;
}

TEST(Capture, HumanBytes) {
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(3u << 20), "3.0 MiB");
}
