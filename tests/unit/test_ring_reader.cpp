// RingView and for_each_record on fake rings in memory: the consumer
// protocol of include/uapi/ktrack.h without a kernel (discard mode, PAD at
// the wrap, overwrite-mode laps with exact LOST synthesis, kernel LOST
// records, corrupt lengths).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "device/ring_reader.hpp"
#include "util/error.hpp"

namespace {

// A ring as the kernel lays it out, with a writer that follows its rules.
struct FakeRing {
  explicit FakeRing(uint64_t size = 4096, uint32_t mode = KTRACK_MODE_DISCARD)
      : ctrl(std::make_unique<ktrack_ring_ctrl>()), data(size) {
    std::memset(ctrl.get(), 0, sizeof(*ctrl));
    ctrl->data_size = size;
    ctrl->mode = mode;
  }
  // Appends a TEST_SEQ record (len 24 + payload), padding at the wrap.
  void put(uint64_t seq, uint32_t payload = 16, uint16_t type = KTRACK_REC_TEST_SEQ) {
    uint16_t len = static_cast<uint16_t>(sizeof(ktrack_rec_hdr) + payload);
    uint64_t off = head & (data.size() - 1);
    if (off + len > data.size()) {
      uint16_t pad = static_cast<uint16_t>(data.size() - off);
      std::memcpy(&data[off], &pad, 2);
      uint16_t t = KTRACK_REC_PAD;
      std::memcpy(&data[off + 2], &t, 2);
      head += pad;
      off = 0;
    }
    ktrack_rec_hdr h{};
    h.len = len;
    h.type = type;
    h.cpu = 3;
    h.ts = 1000 + seq;
    std::memcpy(&data[off], &h, sizeof(h));
    std::memcpy(&data[off + sizeof(h)], &seq, sizeof(seq));  // seq, or LOST count
    head += len;
    ctrl->data_head = head;
  }
  // Overwrite mode: the writer reclaimed up to 'pos' ('index' records before it).
  void reclaim(uint64_t pos, uint64_t index) {
    ctrl->overwrite_seq += 2;
    ctrl->oldest = pos;
    ctrl->oldest_index = index;
  }
  ktrack::RingView view() { return ktrack::RingView(ctrl.get(), data.data(), 3); }

  std::unique_ptr<ktrack_ring_ctrl> ctrl;
  std::vector<std::byte> data;
  uint64_t head = 0;
};

struct Got {
  uint16_t type;
  uint64_t value;  // seq, or LOST count
};

// Drains with drain(), or with drain_runs() (runs split into records).
std::vector<Got> drain(ktrack::RingView &v, bool runs = false) {
  std::vector<Got> out;
  auto one = [&](std::span<const std::byte> rec) {
    ktrack_rec_hdr h;
    std::memcpy(&h, rec.data(), sizeof(h));
    EXPECT_EQ(h.len, rec.size());
    EXPECT_NE(KTRACK_REC_PAD, h.type);
    uint64_t value;
    std::memcpy(&value, rec.data() + sizeof(h), sizeof(value));
    out.push_back({h.type, value});
  };
  if (runs) {
    v.drain_runs([&](uint32_t cpu, std::span<const std::byte> recs) {
      EXPECT_EQ(3u, cpu);
      ktrack::for_each_record(recs, one);
    });
  } else {
    v.drain([&](uint32_t cpu, std::span<const std::byte> rec) {
      EXPECT_EQ(3u, cpu);
      one(rec);
    });
  }
  return out;
}

TEST(RingView, DiscardDeliversInOrderAndAdvancesTail) {
  FakeRing r;
  for (uint64_t i = 0; i < 3; i++) r.put(i);
  auto v = r.view();
  EXPECT_EQ(3 * 40u, v.unread());
  auto got = drain(v);
  ASSERT_EQ(3u, got.size());
  for (uint64_t i = 0; i < 3; i++) EXPECT_EQ(i, got[i].value);
  EXPECT_EQ(r.head, r.ctrl->data_tail);
  EXPECT_EQ(3u, r.ctrl->tail_index);
  EXPECT_EQ(0u, v.unread());
  EXPECT_TRUE(drain(v).empty());
  EXPECT_EQ(3u, v.counters().records);
}

TEST(RingView, SkipsPadAtTheWrapAcrossLaps) {
  FakeRing r;
  auto v = r.view();
  uint64_t next = 0;
  for (int lap = 0; lap < 5; lap++) {
    for (int i = 0; i < 50; i++) r.put(next++, 48);  // 72-byte records: 4096 is not a multiple
    auto got = drain(v);
    ASSERT_EQ(50u, got.size());
    for (int i = 0; i < 50; i++) EXPECT_EQ(next - 50 + i, got[i].value);
  }
  EXPECT_EQ(250u, r.ctrl->tail_index);
}

TEST(RingView, KernelLostRecordCountsAndWeighs) {
  FakeRing r;
  r.put(0);
  r.put(5, sizeof(ktrack_rec_lost), KTRACK_REC_LOST);  // 5 records dropped here
  r.put(6);
  auto v = r.view();
  auto got = drain(v);
  ASSERT_EQ(3u, got.size());
  EXPECT_EQ(KTRACK_REC_LOST, got[1].type);
  EXPECT_EQ(5u, v.counters().lost);
  EXPECT_EQ(1u + 5u + 1u, r.ctrl->tail_index);  // a LOST record weighs its count
}

TEST(RingView, OverwriteLapSynthesisesExactLostRecord) {
  FakeRing r(4096, KTRACK_MODE_OVERWRITE);
  auto v = r.view();
  r.put(0);
  ASSERT_EQ(1u, drain(v).size());
  for (uint64_t i = 1; i <= 10; i++) r.put(i);
  // The writer lapped the reader: records 1..7 are gone, 8.. remain.
  r.reclaim(8 * 40, 8);
  auto got = drain(v);
  ASSERT_EQ(4u, got.size());
  EXPECT_EQ(KTRACK_REC_LOST, got[0].type);
  EXPECT_EQ(7u, got[0].value);
  EXPECT_EQ(8u, got[1].value);
  EXPECT_EQ(10u, got[3].value);
  EXPECT_EQ(7u, v.counters().lost);
  EXPECT_EQ(11u, r.ctrl->tail_index);
}

TEST(RingView, OverwriteReclaimOfPadOnlyIsNoLoss) {
  FakeRing r(4096, KTRACK_MODE_OVERWRITE);
  auto v = r.view();
  r.put(0);
  drain(v);
  r.reclaim(40, 1);  // only what was read already
  r.put(1);
  auto got = drain(v);
  ASSERT_EQ(1u, got.size());
  EXPECT_EQ(1u, got[0].value);
  EXPECT_EQ(0u, v.counters().lost);
}

// drain_runs() hands over what drain() does, a contiguous stretch at a
// time: the same records in the same order, the same counters and tail,
// PADs left out at each wrap, kernel LOST records weighing their count.
TEST(RingView, DrainRunsMatchesDrainAcrossWraps) {
  FakeRing a, b;
  auto va = a.view(), vb = b.view();
  uint64_t next = 0;
  for (int lap = 0; lap < 7; lap++) {
    for (int i = 0; i < 40; i++) {
      const bool lost = (next % 17) == 3;
      const uint64_t v = lost ? 4 : next;
      a.put(v, lost ? sizeof(ktrack_rec_lost) : 48, lost ? KTRACK_REC_LOST : KTRACK_REC_TEST_SEQ);
      b.put(v, lost ? sizeof(ktrack_rec_lost) : 48, lost ? KTRACK_REC_LOST : KTRACK_REC_TEST_SEQ);
      next++;
    }
    auto want = drain(va);
    auto got = drain(vb, true);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < got.size(); i++) {
      EXPECT_EQ(want[i].type, got[i].type);
      EXPECT_EQ(want[i].value, got[i].value);
    }
    EXPECT_EQ(a.ctrl->data_tail, b.ctrl->data_tail);
    EXPECT_EQ(a.ctrl->tail_index, b.ctrl->tail_index);
  }
  EXPECT_EQ(va.counters().records, vb.counters().records);
  EXPECT_EQ(va.counters().bytes, vb.counters().bytes);
  EXPECT_EQ(va.counters().lost, vb.counters().lost);
  EXPECT_GT(va.counters().lost, 0u);
  EXPECT_EQ(0u, vb.drain_runs([](uint32_t, std::span<const std::byte>) { ADD_FAILURE(); }));
}

// A call per stretch of the ring, at most kMaxRun bytes each (the writer
// waits for no longer write than that), and only what was committed when
// the drain began: records committed meanwhile wait for the next call.
TEST(RingView, DrainRunsCapsEachRunAndTakesWhatWasCommitted) {
  FakeRing r(1 << 20);
  uint64_t next = 0;
  while (r.head < 600u << 10) r.put(next++);
  auto v = r.view();
  std::vector<size_t> sizes;
  size_t n = v.drain_runs([&](uint32_t, std::span<const std::byte> recs) {
    sizes.push_back(recs.size());
    if (sizes.size() == 1) r.put(next++);  // committed during the drain
  });
  EXPECT_EQ(next - 1, n);
  ASSERT_EQ(3u, sizes.size());
  for (size_t sz : sizes) EXPECT_LE(sz, ktrack::RingView::kMaxRun);
  EXPECT_EQ(1u, drain(v, true).size());
}

TEST(RingView, DrainRunsGivesSpaceBackAfterTheCallback) {
  FakeRing r;
  for (uint64_t i = 0; i < 3; i++) r.put(i);
  auto v = r.view();
  EXPECT_THROW(v.drain_runs([&](uint32_t, std::span<const std::byte>) {
    EXPECT_EQ(0u, r.ctrl->data_tail);
    throw ktrack::Error("disk full");
  }),
               ktrack::Error);
  EXPECT_EQ(0u, r.ctrl->data_tail);
  EXPECT_EQ(0u, v.counters().records);
  size_t got = 0;
  v.drain_runs([&](uint32_t, std::span<const std::byte> recs) { got += recs.size() / 40; });
  EXPECT_EQ(3u, got);
  EXPECT_EQ(r.head, r.ctrl->data_tail);
}

// Overwrite mode: a record per call, each a checked copy, laps as drain().
TEST(RingView, DrainRunsOverwriteSynthesisesLost) {
  FakeRing r(4096, KTRACK_MODE_OVERWRITE);
  auto v = r.view();
  for (uint64_t i = 0; i <= 10; i++) r.put(i);
  r.reclaim(8 * 40, 8);
  auto got = drain(v, true);
  ASSERT_EQ(4u, got.size());
  EXPECT_EQ(KTRACK_REC_LOST, got[0].type);
  EXPECT_EQ(8u, got[0].value);
  EXPECT_EQ(10u, got[3].value);
}

TEST(RingView, CorruptLengthThrows) {
  for (bool runs : {false, true}) {
    FakeRing r;
    r.put(0);
    uint16_t bad = 12;  // not 8-aligned
    std::memcpy(&r.data[0], &bad, 2);
    auto v = r.view();
    EXPECT_THROW(drain(v, runs), ktrack::Error);
    EXPECT_EQ(0u, r.ctrl->data_tail);
  }
}

TEST(RingView, HeadTooFarAheadThrows) {
  FakeRing r;
  r.put(0);
  r.ctrl->data_head = 1 << 20;
  auto v = r.view();
  EXPECT_THROW(drain(v), ktrack::Error);
}

TEST(RingView, InvalidSizeThrows) {
  FakeRing r(4096);
  r.ctrl->data_size = 3000;
  EXPECT_THROW(r.view(), ktrack::Error);
}

TEST(ForEachRecord, SplitsWholeRecordsAndLeavesPartial) {
  FakeRing r;
  r.put(1);
  r.put(2);
  std::span<const std::byte> buf(r.data.data(), 80 + 10);  // 2 records + 10 bytes
  std::vector<uint64_t> seqs;
  size_t used = ktrack::for_each_record(buf, [&](std::span<const std::byte> rec) {
    uint64_t s;
    std::memcpy(&s, rec.data() + sizeof(ktrack_rec_hdr), 8);
    seqs.push_back(s);
  });
  EXPECT_EQ(80u, used);
  EXPECT_EQ((std::vector<uint64_t>{1, 2}), seqs);
}

TEST(ForEachRecord, CorruptLengthThrows) {
  std::vector<std::byte> buf(64);
  uint16_t len = 4;
  std::memcpy(buf.data(), &len, 2);
  EXPECT_THROW(ktrack::for_each_record(buf, [](std::span<const std::byte>) {}), ktrack::Error);
}

}  // namespace
