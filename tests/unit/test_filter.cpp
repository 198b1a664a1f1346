// Record filters and the raw-record adapter (including malformed input).
#include <gtest/gtest.h>

#include <cstring>

#include "analysis/filter.hpp"
#include "analysis_fixture.hpp"
#include "util/error.hpp"

#include <uapi/ktrack.h>

using namespace fixture;

namespace {

std::vector<size_t> kept(const Stream &st, const FilterSpec &spec) {
  auto n = names();
  Filter f(spec, n);
  std::vector<size_t> out;
  for (size_t i = 0; i < st.samples.size(); ++i)
    if (f.matches(st.samples[i])) out.push_back(i);
  return out;
}

Stream sample_stream() {
  Stream st;
  st.entry(1000000000, 0, 100, kA).with(0, 5);                // 0 bash
  st.entry(1100000000, 1, 200, kB).with(0, 50);               // 1 cat
  st.lost(1200000000, 1, 7, 1150000000, 1190000000);          // 2
  st.probe(Kind::Point, 1300000000, 0, 300, kC, kCaller, 7);  // 3 kworker
  st.with_str(2, "sda1");
  st.stack(1300000000, 0, 300, {kC});             // 4 belongs to 3
  st.exit(2500000000, 1, 200, kB).with(1, 4000);  // 5 cat
  return st;
}

}  // namespace

TEST(Filter, PidCpuCommEvent) {
  auto st = sample_stream();
  FilterSpec s;
  s.pids = {200};
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{1, 2, 5}));  // lost records always pass
  s = {};
  s.cpus = {0};
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{0, 3, 4}));
  s = {};
  s.comms = {"kw*"};
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{2, 3, 4}));
  s = {};
  s.events = {"tp_*"};
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{2, 3, 4}));
  s = {};
  s.events = {"pa"};  // probe 1 (entries and exit of the fixture)
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{0, 1, 2, 5}));
}

TEST(Filter, TimeWindow) {
  auto st = sample_stream();
  FilterSpec s;
  s.since = "150ms";
  s.until = "1s";
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{2, 3, 4}));
  s = {};
  s.since = "@1.2";
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{3, 4, 5}));  // the gap ended before 1.2 s
  s.until = "@1.3";
  EXPECT_EQ(kept(st, s), (std::vector<size_t>{3, 4}));
}

TEST(Filter, WherePredicates) {
  auto st = sample_stream();
  const struct {
    const char *where;
    std::vector<size_t> kept;
  } cases[] = {
      {"len > 10", {1, 2}},
      {"len >= 5 && cpu == 0", {0, 2}},
      {"len == 5 || comm == \"kworker*\"", {0, 2, 3, 4}},
      {"name == \"sd*\"", {2, 3, 4}},
      {"$duration > 3us", {2, 5}},
      {"pid != 100 && func == func_b", {1, 2, 5}},
      {"len & 0x4", {0, 2}},
      // the probe 'if' grammar (util/predicate.hpp): parentheses, '!', '~'
      {"(len == 5 || len == 50) && cpu == 1", {1, 2}},
      {"!(len > 10)", {0, 2, 3, 4, 5}},  // a record without 'len' is not len > 10
      {"comm ~ 'kw*'", {2, 3, 4}},
  };
  for (const auto &c : cases) {
    FilterSpec s;
    s.where = c.where;
    EXPECT_EQ(kept(st, s), c.kept) << c.where;
  }
}

TEST(Filter, BadInputSaysWhere) {
  auto n = names();
  FilterSpec s;
  s.where = "len >> 3";
  try {
    Filter f(s, n);
    FAIL() << "accepted";
  } catch (const ktrack::UsageError &e) {
    EXPECT_NE(std::string(e.what()).find("column 6"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("     ^"), std::string::npos) << e.what();
  }
  s.where = "nosuch == 1";
  EXPECT_THROW(Filter(s, n), ktrack::UsageError);
  s.where = "len == \"x";
  EXPECT_THROW(Filter(s, n), ktrack::UsageError);
  s.where = "len < \"x\"";
  EXPECT_THROW(Filter(s, n), ktrack::UsageError);
  s.where = "len == 3 &&";
  EXPECT_THROW(Filter(s, n), ktrack::UsageError);
  s = {};
  s.since = "5 parsecs";
  EXPECT_THROW(Filter(s, n), ktrack::UsageError);
  s.since = "@12:30";
  EXPECT_THROW(Filter(s, n), ktrack::UsageError);
}

TEST(Durations, ParseAndFormat) {
  EXPECT_EQ(parse_duration_ns("10ms", "x"), 10000000u);
  EXPECT_EQ(parse_duration_ns("1.5", "x"), 1500000000u);
  EXPECT_EQ(parse_duration_ns("250us", "x"), 250000u);
  EXPECT_EQ(parse_duration_ns("2m", "x"), 120000000000u);
  EXPECT_THROW(parse_duration_ns("", "x"), ktrack::UsageError);
  EXPECT_THROW(parse_duration_ns("-1s", "x"), ktrack::UsageError);
  // one grammar for every command: -d of record/trace and of the views alike
  EXPECT_EQ(parse_duration_ns("1h", "x"), 3600000000000u);
  EXPECT_EQ(parse_duration_ns("500us", "x"), 500000u);
  EXPECT_EQ(parse_duration_ns("300ns", "x"), 300u);
  EXPECT_EQ(parse_duration_ns("10", "x"), 10000000000u);
  EXPECT_EQ(parse_duration_ns("1min", "x"), 60000000000u);
  for (const char *bad : {"1d", "inf", "nan", "0x10", " 1s", "1s ", "s", "1 s", "10sec"})
    EXPECT_THROW(parse_duration_ns(bad, "x"), ktrack::UsageError) << bad;
  EXPECT_EQ(ktrack::parse_duration("500us").count(), 1);  // a capture rounds up to 1 ms
  EXPECT_EQ(ktrack::parse_duration("1h").count(), 3600000);
  EXPECT_EQ(ktrack::parse_duration("250ms").count(), 250);
  EXPECT_THROW(ktrack::parse_duration("0"), ktrack::UsageError);
  EXPECT_EQ(format_ts(1234567890123), "1234.567890");
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(12345), "12.345 us");
  EXPECT_STREQ(duration_marker(10001), "+ ");
  EXPECT_STREQ(duration_marker(100001), "! ");
  EXPECT_STREQ(duration_marker(10000), "  ");
}

TEST(SampleFromRecord, ProbeStackLostMarker) {
  alignas(8) uint8_t buf[128] = {};
  auto *h = reinterpret_cast<ktrack_rec_hdr *>(buf);
  h->len = sizeof(ktrack_rec_hdr) + sizeof(ktrack_rec_probe);
  h->type = KTRACK_REC_PROBE;
  h->cpu = 3;
  h->ts = 42;
  h->pid = 7;
  h->tgid = 6;
  ktrack_rec_probe p{};
  p.probe_id = 9;
  p.event = KTRACK_PROBE_EV_EXIT;
  p.ip = kA;
  p.parent_ip = kCaller;
  std::memcpy(buf + sizeof(*h), &p, sizeof(p));
  Sample s;
  ASSERT_TRUE(sample_from_record(buf, sizeof(buf), s));
  EXPECT_EQ(s.kind, Kind::Exit);
  EXPECT_EQ(s.ip, kA);
  EXPECT_EQ(s.cpu, 3);
  EXPECT_EQ(s.tgid, 6u);
  EXPECT_EQ(s.probe_id, 9u);

  h->type = KTRACK_REC_STACK;
  h->len = sizeof(ktrack_rec_hdr) + sizeof(ktrack_rec_stack) + 2 * 8;
  ktrack_rec_stack sk{9, 2};
  std::memcpy(buf + sizeof(*h), &sk, sizeof(sk));
  uint64_t ips[2] = {kA, kB};
  std::memcpy(buf + sizeof(*h) + sizeof(sk), ips, sizeof(ips));
  ASSERT_TRUE(sample_from_record(buf, sizeof(buf), s));
  EXPECT_EQ(s.kind, Kind::Stack);
  ASSERT_EQ(s.stack_nr, 2u);
  EXPECT_EQ(s.stack[1], kB);
  sk.nr = 3;  // claims more than it holds
  std::memcpy(buf + sizeof(*h), &sk, sizeof(sk));
  EXPECT_FALSE(sample_from_record(buf, sizeof(buf), s));

  h->type = KTRACK_REC_LOST;
  h->len = sizeof(ktrack_rec_hdr) + sizeof(ktrack_rec_lost);
  ktrack_rec_lost l{1234, 10, 20, KTRACK_LOST_FULL, 0};
  std::memcpy(buf + sizeof(*h), &l, sizeof(l));
  ASSERT_TRUE(sample_from_record(buf, sizeof(buf), s));
  EXPECT_EQ(s.kind, Kind::Lost);
  EXPECT_EQ(lost_line(s), "lost 1234 records on CPU 3 between 0.000000 and 0.000000");

  h->type = KTRACK_REC_MARKER;
  h->len = sizeof(ktrack_rec_hdr) + 8;
  std::memcpy(buf + sizeof(*h), "hi there", 8);  // no NUL: bounded by len
  ASSERT_TRUE(sample_from_record(buf, sizeof(buf), s));
  EXPECT_EQ(s.text, "hi there");
}

TEST(SampleFromRecord, TruncatedAndCorrupted) {
  alignas(8) uint8_t buf[64] = {};
  auto *h = reinterpret_cast<ktrack_rec_hdr *>(buf);
  Sample s;
  EXPECT_FALSE(sample_from_record(buf, 10, s));  // shorter than a header
  h->len = 8;                                    // shorter than its own header
  EXPECT_FALSE(sample_from_record(buf, sizeof(buf), s));
  h->len = 200;  // longer than the bytes available
  EXPECT_FALSE(sample_from_record(buf, sizeof(buf), s));
  h->len = sizeof(ktrack_rec_hdr) + 8;
  h->type = KTRACK_REC_PROBE;  // probe payload cut short
  EXPECT_FALSE(sample_from_record(buf, sizeof(buf), s));
  h->type = KTRACK_REC_LOST;
  EXPECT_FALSE(sample_from_record(buf, sizeof(buf), s));
  h->type = 999;  // unknown types pass as Other
  ASSERT_TRUE(sample_from_record(buf, sizeof(buf), s));
  EXPECT_EQ(s.kind, Kind::Other);
}

TEST(FlatMap, GrowsAndFinds) {
  FlatMap<uint64_t> m(4);
  for (uint64_t i = 0; i < 10000; ++i) m[i * 7919] = i;
  EXPECT_EQ(m.size(), 10000u);
  for (uint64_t i = 0; i < 10000; ++i) ASSERT_EQ(*m.find(i * 7919), i);
  EXPECT_EQ(m.find(1), nullptr);
  StringInterner in;
  EXPECT_EQ(in.intern("a"), 0u);
  EXPECT_EQ(in.intern("b"), 1u);
  EXPECT_EQ(in.intern("a"), 0u);
  EXPECT_EQ(in.str(1), "b");
}

// The interner remembers where recent texts lived: a buffer that holds
// another name since (a task renamed in the comm table) is a new string.
TEST(StringInterner, ABufferReusedForAnotherText) {
  StringInterner in;
  char buf[16] = "worker1";
  std::string_view v(buf, 7);
  const uint32_t w1 = in.intern(v);
  EXPECT_EQ(in.intern(v), w1);
  std::memcpy(buf, "kworker", 7);
  const uint32_t kw = in.intern(v);
  EXPECT_NE(kw, w1);
  EXPECT_EQ(in.str(kw), "kworker");
  EXPECT_EQ(in.intern(std::string_view(buf, 3)), in.intern("kwo"));  // same place, shorter
  std::memcpy(buf, "worker1", 7);
  EXPECT_EQ(in.intern(v), w1);
  EXPECT_EQ(in.intern(std::string("worker1")), w1);  // elsewhere, same text
  EXPECT_EQ(in.intern(std::string_view()), in.intern(""));
  EXPECT_EQ(in.size(), 4u);  // worker1, kworker, kwo, ""
}
