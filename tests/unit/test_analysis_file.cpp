// The views over a recorded file (TraceWriter -> TraceReader -> views),
// checked against what the synthetic workload generator wrote; damaged
// files end with a clear error after the records before the damage.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "analysis/analysis_source.hpp"
#include "analysis/export_perfetto.hpp"
#include "analysis/graph.hpp"
#include "analysis/hist.hpp"
#include "analysis/profile.hpp"
#include "analysis/stackagg.hpp"
#include "analysis/top.hpp"
#include "analysis_fixture.hpp"
#include "json_mini.hpp"
#include "records.hpp"
#include "synth_trace.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using namespace ktrack::analysis;
using fixture::capture;

namespace {

// A probe's schema replaced in place (a later schemas chunk of a file, a
// reused probe id in a live session): fields are found where the new
// schema puts them, by the one-field read and by the full decode.
TEST(EventNames, FieldFollowsASchemaReplacedInPlace) {
  using ktrack::FieldType;
  using ktrack::make_field;
  ktrack::SchemaRegistry reg;
  reg.add(ktrack::testing::probe_schema(
      1, "p", {make_field("a", FieldType::U32, 0), make_field("b", FieldType::U64, 8)}));
  ktrack::Decoder dec(reg);
  EventNames names(reg, nullptr, nullptr);
  const int a = names.field_id("a"), b = names.field_id("b");
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  auto record = [](uint32_t first, uint64_t second) {
    std::string data(16, '\0');
    std::memcpy(data.data(), &first, 4);
    std::memcpy(data.data() + 8, &second, 8);
    std::vector<uint8_t> out;
    ktrack::append_record(out, ktrack::testing::rec_hdr(KTRACK_REC_PROBE, 0, 1000, 7, 7),
                          ktrack::testing::probe_payload(1, 0, 0xffffffff81000000ull, 0, data));
    return out;
  };
  RecordRef ref(dec);
  Sample s;
  // A record with 'first' at offset 0 and 'second' at 8: fields a and b as read.
  auto read_ab = [&](uint32_t first, uint64_t second, int64_t &va, int64_t &vb) {
    std::vector<uint8_t> rec = record(first, second);
    ref.reset(rec);
    sample_from_ref(ref, nullptr, s);
    ASSERT_TRUE(names.field_value(s, a, va));
    ASSERT_TRUE(names.field_value(s, b, vb));
  };
  int64_t va = 0, vb = 0;
  read_ab(11, 22, va, vb);
  EXPECT_EQ(va, 11);
  EXPECT_EQ(vb, 22);

  const ktrack::Schema *before = reg.find(KTRACK_REC_PROBE, 1);
  reg.add(ktrack::testing::probe_schema(
      1, "p", {make_field("b", FieldType::U32, 0), make_field("a", FieldType::U64, 8)}));
  ASSERT_EQ(before, reg.find(KTRACK_REC_PROBE, 1));  // the same object, new fields
  read_ab(33, 44, va, vb);
  EXPECT_EQ(va, 44);
  EXPECT_EQ(vb, 33);
}

// A field asked of records of two, then three schemas in turn (the
// one-field read remembers two per field): each record's own layout.
TEST(EventNames, FieldOfThreeSchemasInTurn) {
  using ktrack::FieldType;
  using ktrack::make_field;
  ktrack::SchemaRegistry reg;
  for (uint32_t id = 1; id <= 3; id++) {
    // probe N has 'v' in slot N-1 of three U32 fields; the others hold 99
    std::vector<ktrack::FieldDesc> f;
    for (uint32_t i = 0; i < 3; i++)
      f.push_back(make_field(i + 1 == id ? "v" : "pad" + std::to_string(i), FieldType::U32, i * 4));
    reg.add(ktrack::testing::probe_schema(id, "p" + std::to_string(id), f));
  }
  ktrack::Decoder dec(reg);
  EventNames names(reg, nullptr, nullptr);
  const int v = names.field_id("v");
  ASSERT_GE(v, 0);
  RecordRef ref(dec);
  Sample s;
  // two in turn (both remembered), then a third and back (replacements)
  const uint32_t order[] = {1, 2, 1, 2, 2, 1, 3, 1, 3, 2, 3, 3, 2, 1, 2, 3};
  int round = 0;
  for (uint32_t id : order) {
    round++;
    uint32_t data[3] = {99, 99, 99};
    data[id - 1] = 100 * id + static_cast<uint32_t>(round);
    std::vector<uint8_t> rec;
    ktrack::append_record(
        rec, ktrack::testing::rec_hdr(KTRACK_REC_PROBE, 0, 1000, 7, 7),
        ktrack::testing::probe_payload(id, 0, 0xffffffff81000000ull, 0,
                                       std::string(reinterpret_cast<const char *>(data), sizeof(data))));
    ref.reset(rec);
    sample_from_ref(ref, nullptr, s);
    int64_t got = -1;
    ASSERT_TRUE(names.field_value(s, v, got));
    EXPECT_EQ(got, 100 * id + static_cast<uint32_t>(round)) << "probe " << id << " round " << round;
  }
}

class SynthFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ =
        new std::string(fs::temp_directory_path() / ("ktrack-analysis-" + std::to_string(getpid()) + ".ktr"));
    SynthOptions o;
    o.records = 60000;
    o.cpus = 3;
    o.lost_every = 7000;
    truth_ = new SynthTruth(write_synthetic_trace(*path_, o));
  }
  static void TearDownTestSuite() {
    fs::remove(*path_);
    delete path_;
    delete truth_;
  }
  static std::string *path_;
  static SynthTruth *truth_;
};
std::string *SynthFile::path_;
SynthTruth *SynthFile::truth_;

}  // namespace

TEST_F(SynthFile, ProfileMatchesTheWorkload) {
  FileSource src(*path_);
  ProfileOptions o;
  Profile p(o, src.names());
  Filter all;
  uint64_t n = src.run(all, [&](const Sample &s) { p.add(s); });
  EXPECT_EQ(n, truth_->records);
  EXPECT_EQ(p.lost(), truth_->lost_count);
  auto rows = p.rows();
  uint64_t timed = 0;
  for (const auto &r : rows) {
    if (!truth_->calls.count(r.func)) continue;
    EXPECT_EQ(r.st.timed, truth_->calls.at(r.func)) << r.func;
    EXPECT_EQ(r.st.total, truth_->total_ns.at(r.func)) << r.func;
    timed += r.st.timed;
  }
  EXPECT_EQ(timed, truth_->exits);
  EXPECT_EQ(rows.size(), 16u);
}

TEST_F(SynthFile, HistCountsEveryPairAndFiltersWork) {
  FileSource src(*path_);
  HistOptions o;
  o.key = "";
  Hist h(o, src.names());
  Filter all;
  src.run(all, [&](const Sample &s) { h.add(s); });
  EXPECT_EQ(h.values(), truth_->exits);

  FileSource src2(*path_);
  HistOptions o2;
  o2.value = "len";
  o2.key = "comm";
  Hist h2(o2, src2.names());
  FilterSpec spec;
  spec.cpus = {1};
  spec.events = {"fgraph"};
  spec.where = "len < 1000";
  Filter f(spec, src2.names());
  src2.run(f, [&](const Sample &s) { h2.add(s); });
  std::string out = capture([&](Out &x) { h2.print(x); });
  EXPECT_NE(out.find("@[worker0]: len"), std::string::npos) << out;
  EXPECT_NE(out.find("lost "), std::string::npos) << out;
  EXPECT_NE(out.find("on CPU 1 between"), std::string::npos) << out;
  EXPECT_EQ(out.find("on CPU 0 between"), std::string::npos) << out;
}

TEST_F(SynthFile, GraphStackTopAndPerfettoRun) {
  {
    FileSource src(*path_);
    GraphOptions o;
    FilterSpec spec;
    spec.pids = {1000};
    Filter f(spec, src.names());
    std::string out = capture([&](Out &x) {
      Graph g(o, src.names(), x);
      src.run(f, [&](const Sample &s) { g.add(s); });
      g.finish();
    });
    EXPECT_NE(out.find("  0) worker0-1000         |"), std::string::npos);
    EXPECT_NE(out.find("vfs_read() {"), std::string::npos);
    EXPECT_NE(out.find("} /* vfs_read */"), std::string::npos);
    EXPECT_NE(out.find("=========="
                       " lost "),
              std::string::npos);
    EXPECT_EQ(out.find("worker1-1001"), std::string::npos);
  }
  {
    FileSource src(*path_);
    StackOptions o;
    o.folded = true;
    StackAgg agg(o, src.names());
    Filter all;
    src.run(all, [&](const Sample &s) { agg.add(s); });
    std::string out = capture([&](Out &x) { agg.print(x); });
    EXPECT_NE(out.find("entry_SYSCALL_64;"), std::string::npos) << out.substr(0, 500);
    uint64_t total = 0;
    for (const auto &l : fixture::lines(out))
      if (l.rfind("entry_SYSCALL_64;", 0) == 0) total += std::stoull(l.substr(l.rfind(' ') + 1));
    EXPECT_EQ(total, truth_->stacks);
  }
  {
    FileSource src(*path_);
    TopOptions o;
    o.limit = 0;
    Top top(o, src.names());
    Filter all;
    uint64_t last = 0;
    src.run(all, [&](const Sample &s) {
      top.add(s);
      last = s.ts;
    });
    EXPECT_EQ(top.window_hits(), truth_->entries + truth_->points);
    std::string out = capture([&](Out &x) { top.print(x, last, 1000000000); });
    EXPECT_NE(out.find("vfs_read"), std::string::npos);
  }
  {
    FileSource src(*path_);
    FilterSpec spec;
    spec.until = "2ms";
    Filter f(spec, src.names());
    std::string out = capture([&](Out &x) {
      PerfettoExport ex(src.names(), x);
      src.run(f, [&](const Sample &s) { ex.add(s); });
      ex.finish();
    });
    json_mini::Value v = json_mini::parse(out);
    size_t calls = 0;
    for (const auto &e : v["traceEvents"].arr)
      if (e["ph"].str == "X" && e["cat"].str == "call") ++calls;
    EXPECT_GT(calls, 100u);
  }
}

TEST_F(SynthFile, TruncatedAndCorruptedFilesFailClearly) {
  auto size = fs::file_size(*path_);
  std::string cut = *path_ + ".cut", bad = *path_ + ".bad";
  fs::copy_file(*path_, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, size / 2);
  {
    FileSource src(cut);
    Profile p(ProfileOptions{}, src.names());
    Filter all;
    uint64_t n = 0;
    try {
      src.run(all, [&](const Sample &s) {
        ++n;
        p.add(s);
      });
      ADD_FAILURE() << "a truncated file was read to the end";
    } catch (const ktrack::Error &e) {
      EXPECT_NE(std::string(e.what()).find(cut), std::string::npos) << e.what();
    }
    EXPECT_GT(n, 1000u);
  }
  fs::copy_file(*path_, bad, fs::copy_options::overwrite_existing);
  {
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 3));
    char junk[64];
    std::memset(junk, 0x5a, sizeof(junk));
    f.write(junk, sizeof(junk));
  }
  {
    FileSource src(bad);
    Filter all;
    EXPECT_THROW(src.run(all, [](const Sample &) {}), ktrack::Error);
  }
  {
    std::ofstream f(bad, std::ios::trunc);
    f << "this is not a trace\n";
  }
  EXPECT_THROW(FileSource{bad}, ktrack::Error);
  fs::remove(cut);
  fs::remove(bad);
}
