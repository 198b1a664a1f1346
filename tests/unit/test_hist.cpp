// hist: buckets, percentiles, grouping, $duration from pairs and fields.
#include <gtest/gtest.h>

#include "analysis/hist.hpp"
#include "analysis_fixture.hpp"
#include "util/error.hpp"

using namespace fixture;

TEST(Distribution, ExactPercentilesForSmallValues) {
  Distribution d;
  for (int v = 100; v >= 1; --v) d.add(v);
  EXPECT_EQ(d.count(), 100u);
  EXPECT_EQ(d.min(), 1);
  EXPECT_EQ(d.max(), 100);
  EXPECT_DOUBLE_EQ(d.avg(), 50.5);
  EXPECT_EQ(d.percentile(50), 50);
  EXPECT_EQ(d.percentile(90), 90);
  EXPECT_EQ(d.percentile(99), 99);
  EXPECT_EQ(d.percentile(100), 100);
  EXPECT_EQ(d.percentile(0), 1);
}

TEST(Distribution, ExactWhileSmallThenBucketed) {
  Distribution d;
  d.add(1000);
  d.add(3000);
  EXPECT_EQ(d.percentile(90), 3000);
  EXPECT_EQ(d.percentile(50), 1000);
  Distribution merged;
  merged.merge(d);
  merged.merge(d);
  EXPECT_EQ(merged.count(), 4u);
  EXPECT_EQ(merged.percentile(75), 3000);
}

TEST(Distribution, LargeValuesWithinOnePointSixPercent) {
  Distribution d;
  for (int64_t v = 1; v <= 100000; ++v) d.add(v * 1000);
  for (double p : {50.0, 90.0, 99.0}) {
    double want = p / 100 * 100000 * 1000;
    double got = static_cast<double>(d.percentile(p));
    EXPECT_LE(got, want) << p;
    EXPECT_GE(got, want * (1 - 1.0 / 64) - 1000) << p;
  }
  EXPECT_EQ(d.max(), 100000000);
}

TEST(Distribution, IndexRoundTrip) {
  for (uint64_t v : {0ULL, 1ULL, 127ULL, 128ULL, 129ULL, 255ULL, 256ULL, 1000ULL, 123456789ULL, ~0ULL}) {
    size_t i = Distribution::index_of(v);
    EXPECT_LE(Distribution::lower_bound_of(i), v) << v;
    if (v < 128) {
      EXPECT_EQ(Distribution::lower_bound_of(i), v);
    }
  }
}

TEST(Distribution, Log2BucketsAndNegatives) {
  Distribution d;
  for (int64_t v : {0, 1, 2, 3, 4, 7, 8, 1000, -5, -1}) d.add(v);
  uint64_t neg;
  auto b = d.log2_buckets(neg);
  EXPECT_EQ(neg, 2u);
  ASSERT_EQ(b.size(), 11u);  // 1000 is in [512, 1024): bucket 10
  EXPECT_EQ(b[0], 1u);
  EXPECT_EQ(b[1], 1u);
  EXPECT_EQ(b[2], 2u);  // 2, 3
  EXPECT_EQ(b[3], 2u);  // 4, 7
  EXPECT_EQ(b[4], 1u);  // 8
  EXPECT_EQ(b[10], 1u);
  EXPECT_EQ(d.min(), -5);
  EXPECT_EQ(d.percentile(10), -5);
  EXPECT_EQ(d.percentile(20), -1);
  EXPECT_EQ(d.percentile(30), 0);
}

TEST(Hist, FieldGroupedByCommWithBars) {
  auto n = names();
  Stream st;
  // bash: len 1, 2, 3, 3 ; cat: len 100
  st.entry(10, 0, 100, kA).with(0, 1);
  st.entry(20, 0, 100, kA).with(0, 2);
  st.entry(30, 1, 100, kA).with(0, 3);
  st.entry(40, 1, 100, kA).with(0, 3);
  st.entry(50, 1, 200, kB).with(0, 100);
  st.entry(60, 1, 200, kB);  // no len: not counted
  HistOptions o;
  o.value = "len";
  o.key = "comm";
  Hist h(o, n);
  for (auto &s : st.samples) h.add(s);
  EXPECT_EQ(h.values(), 5u);
  std::string out = capture([&](Out &o2) { h.print(o2); });
  auto ls = lines(out);
  ASSERT_GE(ls.size(), 6u) << out;
  EXPECT_EQ(ls[0], "@[bash]: len");
  EXPECT_EQ(ls[1], "count 4, min 1, avg 2.2, p50 2, p90 3, p99 3, max 3");
  EXPECT_EQ(ls[2], "[1]                         1 |@@@@@@@@@@@@@@@@@@                                  |");
  EXPECT_EQ(ls[3], "[2, 4)                      3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|");
  EXPECT_NE(out.find("@[cat]: len\ncount 1, min 100, avg 100.0, p50 100, p90 100, p99 100, max 100\n"
                     "[64, 128)                   1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|"),
            std::string::npos)
      << out;
}

TEST(Hist, DurationFromPairsByFunctionJson) {
  auto n = names();
  Stream st;
  // func_a: 1000, 3000 ns ; func_b nested in the second func_a: 500 ns
  st.entry(0, 0, 100, kA).exit(1000, 0, 100, kA);
  st.entry(2000, 1, 200, kA).entry(2100, 1, 200, kB).exit(2600, 1, 200, kB).exit(5000, 1, 200, kA);
  HistOptions o;
  o.key = "func";
  o.json = true;
  Hist h(o, n);
  for (auto &s : st.samples) h.add(s);
  std::string out = capture([&](Out &o2) { h.print(o2); });
  auto ls = lines(out);
  ASSERT_EQ(ls.size(), 2u) << out;
  EXPECT_EQ(
      ls[0],
      "{\"key\":\"func_a\",\"value\":\"$duration\",\"count\":2,\"min\":1000,\"avg\":2000.000,\"p50\":1000,"
      "\"p90\":3000,\"p99\":3000,\"max\":3000,\"buckets\":[{\"label\":\"[512, "
      "1K)\",\"low\":512,\"high\":1024,"
      "\"count\":1},{\"label\":\"[1K, 2K)\",\"low\":1024,\"high\":2048,\"count\":0},{\"label\":\"[2K, 4K)\","
      "\"low\":2048,\"high\":4096,\"count\":1}]}");
  EXPECT_NE(ls[1].find("\"key\":\"func_b\",\"value\":\"$duration\",\"count\":1,\"min\":500"),
            std::string::npos);
}

TEST(Hist, DurationFieldWinsOverPairsAndExitOnlyWorks) {
  auto n = names();
  Stream st;
  st.exit(1000, 0, 100, kA).with(1, 777);  // r probe: no entry, $duration measured in the kernel
  st.entry(2000, 0, 100, kB).exit(2100, 0, 100, kB).with(1, 90);
  HistOptions o;
  o.value = "$duration";
  Hist h(o, n);
  for (auto &s : st.samples) h.add(s);
  std::string out = capture([&](Out &o2) { h.print(o2); });
  EXPECT_NE(out.find("count 2, min 90, avg 433.5, p50 90, p90 777, p99 777, max 777"), std::string::npos)
      << out;
}

TEST(Hist, LinearBucketsWithOutOfRange) {
  auto n = names();
  Stream st;
  for (int v : {-3, 0, 5, 9, 10, 15, 29, 30, 200})
    st.entry(static_cast<uint64_t>(v + 10), 0, 100, kA).with(0, v);
  HistOptions o;
  o.value = "len";
  o.linear = true;
  o.lin_min = 0;
  o.lin_max = 30;
  o.lin_step = 10;
  Hist h(o, n);
  for (auto &s : st.samples) h.add(s);
  std::string out = capture([&](Out &o2) { h.print(o2); });
  auto ls = lines(out);
  ASSERT_GE(ls.size(), 7u) << out;
  EXPECT_EQ(ls[2].substr(0, 29), "(..., 0)                    1");
  EXPECT_EQ(ls[3].substr(0, 29), "[0, 10)                     3");
  EXPECT_EQ(ls[4].substr(0, 29), "[10, 20)                    2");
  EXPECT_EQ(ls[5].substr(0, 29), "[20, 30)                    1");
  EXPECT_EQ(ls[6].substr(0, 29), "[30, ...)                   2");
}

TEST(Hist, LostRecordsAreReported) {
  auto n = names();
  Stream st;
  st.entry(0, 0, 100, kA).lost(5, 1, 1234, 1000000000, 2000000000).exit(10, 0, 100, kA);
  HistOptions o;
  Hist h(o, n);
  for (auto &s : st.samples) h.add(s);
  std::string out = capture([&](Out &o2) { h.print(o2); });
  EXPECT_NE(out.find("lost 1234 records on CPU 1 between 1.000000 and 2.000000"), std::string::npos) << out;
}

TEST(Hist, UsageErrors) {
  auto n = names();
  HistOptions o;
  o.value = "nosuchfield";
  EXPECT_THROW(Hist(o, n), ktrack::UsageError);
  o.value = "comm";
  EXPECT_THROW(Hist(o, n), ktrack::UsageError);
  o.value = "len";
  o.linear = true;
  o.lin_min = 10;
  o.lin_max = 5;
  EXPECT_THROW(Hist(o, n), ktrack::UsageError);
  o.lin_max = 20;
  o.lin_step = 0;
  EXPECT_THROW(Hist(o, n), ktrack::UsageError);
}

TEST(Hist, ColorOnlyWhenAsked) {
  auto n = names();
  Stream st;
  st.entry(0, 0, 100, kA).with(0, 4);
  HistOptions o;
  o.value = "len";
  Hist plain(o, n);
  o.colors = Colors::on();
  Hist colored(o, n);
  for (auto &s : st.samples) {
    plain.add(s);
    colored.add(s);
  }
  EXPECT_EQ(capture([&](Out &x) { plain.print(x); }).find('\033'), std::string::npos);
  EXPECT_NE(capture([&](Out &x) { colored.print(x); }).find("\033[32m@"), std::string::npos);
}
