// RecordSpool: records parked per CPU come back merged by timestamp, each
// CPU's order kept, across the reader's block boundaries, and the files go.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>
#include <vector>

#include "format/event.hpp"
#include "format/merge.hpp"
#include "format/record_spool.hpp"
#include "util/error.hpp"

using namespace ktrack;

namespace {

std::filesystem::path scratch_dir() {
  auto d = std::filesystem::temp_directory_path() / ("ktrack-spool-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// A TEST_SEQ record of 'payload' bytes: cpu, ts, and its id first.
std::vector<uint8_t> rec(uint16_t cpu, uint64_t ts, uint64_t id, size_t payload = 8) {
  ktrack_rec_hdr h{};
  h.type = KTRACK_REC_TEST_SEQ;
  h.cpu = cpu;
  h.ts = ts;
  std::vector<uint8_t> body(payload);
  std::memcpy(body.data(), &id, sizeof(id));
  std::vector<uint8_t> out;
  append_record(out, h, body);
  return out;
}

struct Seen {
  uint16_t cpu;
  uint64_t ts, id;
};

std::vector<Seen> merge_all(RecordSpool &s) {
  std::vector<Seen> got;
  s.merge([&](std::span<const uint8_t> r) {
    ktrack_rec_hdr h;
    std::memcpy(&h, r.data(), sizeof(h));
    EXPECT_EQ(h.len, r.size());
    uint64_t id;
    std::memcpy(&id, r.data() + sizeof(h), sizeof(id));
    got.push_back({h.cpu, h.ts, id});
  });
  return got;
}

}  // namespace

// Runs of three CPUs, appended in sweeps as a recorder drains them, with
// records of varied sizes (several MiB per CPU, so records straddle the
// merge's read blocks) and timestamp ties across CPUs.
TEST(RecordSpool, MergesCpusByTimeKeepingEachCpusOrder) {
  const auto dir = scratch_dir();
  const std::string base = (dir / "t.ktr").string();
  std::vector<Seen> want;
  {
    RecordSpool s(base);
    std::mt19937 rng(3);
    uint64_t ts[3] = {0, 0, 0}, id = 0;
    for (int sweep = 0; sweep < 40; sweep++) {
      for (uint16_t cpu : {2, 0, 1}) {
        std::vector<uint8_t> run;
        const int n = 1 + static_cast<int>(rng() % 3000);
        for (int i = 0; i < n; i++) {
          ts[cpu] += rng() % 3;  // ties within and across CPUs
          auto r = rec(cpu, ts[cpu], id, 8 + 8 * (rng() % 20));
          want.push_back({cpu, ts[cpu], id++});
          run.insert(run.end(), r.begin(), r.end());
        }
        s.append(cpu, run);
      }
    }
    EXPECT_GT(s.bytes(), 3u * RecordMerger::kBlockSize);
    EXPECT_TRUE(std::filesystem::exists(s.path(1)));
    auto got = merge_all(s);
    // The expected order: by ts, ties to the lower CPU, each CPU's order kept.
    std::stable_sort(want.begin(), want.end(), [](const Seen &a, const Seen &b) {
      return std::tie(a.ts, a.cpu) < std::tie(b.ts, b.cpu);
    });
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_EQ(want[i].id, got[i].id) << "record " << i;
      ASSERT_EQ(want[i].cpu, got[i].cpu);
    }
    // Merged, the files stay until the caller's copy is safe.
    EXPECT_TRUE(std::filesystem::exists(s.path(0)));
    s.discard();
    EXPECT_FALSE(std::filesystem::exists(s.path(0)));
    EXPECT_FALSE(std::filesystem::exists(s.path(1)));
  }
  std::filesystem::remove_all(dir);
}

// Records gather in memory up to kParkBytes a CPU before a write(2) (a
// probe on vfs_write sees each one).  A spool that never merged (an error
// on the way) keeps its files, what it held in memory included, for
// 'report' to read; a merge removes them.
TEST(RecordSpool, WritesInBatchesAndKeepsFilesUntilMerged) {
  const auto dir = scratch_dir();
  const std::string base = (dir / "u.ktr").string();
  std::vector<uint8_t> run, big;  // a short run, and one written as it is
  uint64_t id = 0;
  while (run.size() + 32 < RecordSpool::kDirectBytes) {
    auto r = rec(3, id, id);
    id++;
    run.insert(run.end(), r.begin(), r.end());
  }
  while (big.size() < RecordSpool::kDirectBytes) {
    auto r = rec(3, id, id);
    id++;
    big.insert(big.end(), r.begin(), r.end());
  }
  const size_t fit = RecordSpool::kParkBytes / run.size();  // short runs gathered in one write
  {
    RecordSpool s(base);
    for (size_t i = 0; i < fit; i++) s.append(3, run);
    EXPECT_FALSE(std::filesystem::exists(s.path(3)));  // in memory yet
    s.append(3, run);                                  // past kParkBytes: the others go out together
    ASSERT_TRUE(std::filesystem::exists(s.path(3)));
    EXPECT_EQ(fit * run.size(), std::filesystem::file_size(s.path(3)));
    s.append(3, big);  // what was gathered first, then the long run
    EXPECT_EQ((fit + 1) * run.size() + big.size(), std::filesystem::file_size(s.path(3)));
    s.append(3, run);
    EXPECT_EQ((fit + 2) * run.size() + big.size(), s.bytes());
    EXPECT_FALSE(std::filesystem::exists(s.path(0)));
    EXPECT_EQ(std::vector<std::string>{s.path(3)}, s.files());
  }
  RecordSpool probe(base);
  ASSERT_TRUE(std::filesystem::exists(probe.path(3)));
  // What the next recording to the same file says it replaces: this base's
  // CPU files only.
  for (const char *other : {".cpu.spool", ".cpu1x.spool", ".cpu2.spool.x", "x.cpu4.spool"})
    std::fclose(std::fopen((base + other).c_str(), "w"));
  EXPECT_EQ(std::vector<std::string>{probe.path(3)}, probe.leftovers());
  for (const char *other : {".cpu.spool", ".cpu1x.spool", ".cpu2.spool.x", "x.cpu4.spool"})
    std::filesystem::remove(base + other);
  // All of it, raw, in order: the destructor wrote out the last short run.
  EXPECT_EQ((fit + 2) * run.size() + big.size(), std::filesystem::file_size(probe.path(3)));

  {
    RecordSpool s(base);  // a new recording replaces the leftover
    s.append(3, rec(3, 1, 1));
    EXPECT_EQ(1u, merge_all(s).size());
    s.discard();
    EXPECT_TRUE(s.files().empty());
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// A CPU's records keep ring order even where their time goes back (an
// NMI's record committed inside the one it interrupted).
TEST(RecordSpool, KeepsRingOrderWhereTimeGoesBack) {
  const auto dir = scratch_dir();
  RecordSpool s((dir / "x.ktr").string());
  std::vector<uint8_t> run0, run1;
  for (auto [ts, id] : {std::pair<uint64_t, uint64_t>{10, 0}, {30, 1}, {20, 2}, {40, 3}}) {
    auto r = rec(0, ts, id);
    run0.insert(run0.end(), r.begin(), r.end());
  }
  auto r = rec(1, 25, 100);
  run1.insert(run1.end(), r.begin(), r.end());
  s.append(0, run0);
  s.append(1, run1);
  std::vector<uint64_t> ids;
  for (const Seen &e : merge_all(s)) ids.push_back(e.id);
  EXPECT_EQ((std::vector<uint64_t>{0, 100, 1, 2, 3}), ids);
  std::filesystem::remove_all(dir);
}

// A parked file damaged on disk is an error that names it, not a crash.
TEST(RecordSpool, CorruptFileIsAnError) {
  const auto dir = scratch_dir();
  const std::string base = (dir / "v.ktr").string();
  {
    RecordSpool s(base);
    auto r = rec(0, 5, 1);
    r[0] = 4;  // a length below the header's
    s.append(0, r);
    EXPECT_THROW(merge_all(s), Error);
    EXPECT_EQ(std::vector<std::string>{s.path(0)}, s.files());  // kept for the user
  }
  {
    RecordSpool s(base);
    auto r = rec(0, 5, 1);
    s.append(0, std::span<const uint8_t>(r.data(), r.size() - 8));  // cut short
    EXPECT_THROW(merge_all(s), Error);
  }
  std::filesystem::remove_all(dir);
}

// The merged records' destination fails half-way (a full disk): every
// parked record is still in the files, which the spool keeps.
TEST(RecordSpool, FailedDestinationKeepsEveryRecord) {
  const auto dir = scratch_dir();
  const std::string base = (dir / "y.ktr").string();
  std::vector<uint8_t> run;
  for (uint64_t i = 0; i < 1000; i++) {
    auto r = rec(0, i, i);
    run.insert(run.end(), r.begin(), r.end());
  }
  {
    RecordSpool s(base);
    s.append(0, run);
    size_t taken = 0;
    EXPECT_THROW(s.merge([&](std::span<const uint8_t>) {
      if (++taken == 500) throw Error("disk full");
    }),
                 Error);
  }
  ASSERT_TRUE(std::filesystem::exists(base + ".cpu0.spool"));
  EXPECT_EQ(run.size(), std::filesystem::file_size(base + ".cpu0.spool"));
  std::filesystem::remove_all(dir);
}

// A Ctrl-C during the merge ('abandon' says so, asked every 4,096
// records): it stops with an Error, and the files keep every record.
TEST(RecordSpool, AbandonedMergeKeepsTheFiles) {
  const auto dir = scratch_dir();
  const std::string base = (dir / "z.ktr").string();
  std::vector<uint8_t> run;
  for (uint64_t i = 0; i < 20000; i++) {
    auto r = rec(0, i, i);
    run.insert(run.end(), r.begin(), r.end());
  }
  {
    RecordSpool s(base);
    s.append(0, run);
    size_t taken = 0, asked = 0;
    EXPECT_THROW(s.merge([&](std::span<const uint8_t>) { taken++; }, [&] { return ++asked == 2; }), Error);
    EXPECT_EQ(2u, asked);
    EXPECT_EQ(4096u, taken);  // asked before the first record, then after 4,096
    EXPECT_EQ(std::vector<std::string>{s.path(0)}, s.files());
  }
  EXPECT_EQ(run.size(), std::filesystem::file_size(base + ".cpu0.spool"));
  {
    RecordSpool s(base);  // not asked to stop: all of it
    s.append(0, run);
    size_t taken = 0;
    s.merge([&](std::span<const uint8_t>) { taken++; }, [] { return false; });
    EXPECT_EQ(20000u, taken);
    s.discard();
  }
  std::filesystem::remove_all(dir);
}

// Nothing parked: the merge hands over nothing.
TEST(RecordSpool, EmptyMergesNothing) {
  RecordSpool s((scratch_dir() / "w.ktr").string());
  EXPECT_TRUE(merge_all(s).empty());
  EXPECT_EQ(0u, s.bytes());
  std::filesystem::remove_all(scratch_dir());
}
