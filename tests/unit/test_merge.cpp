// RecordMerger ordering and the capture option helpers.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstring>
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
