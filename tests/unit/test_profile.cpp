// profile: hit counts, total/avg/max/self times, nesting, lost records,
// unpaired records, caller breakdown.
#include <gtest/gtest.h>

#include "analysis/profile.hpp"
#include "analysis_fixture.hpp"

using namespace fixture;

namespace {

Profile::Row row(const std::vector<Profile::Row> &rows, const std::string &f) {
  for (const auto &r : rows)
    if (r.func == f) return r;
  ADD_FAILURE() << "no row for " << f;
  return {};
}

}  // namespace

TEST(Profile, NestedCallsTwoTasksInterleaved) {
  auto n = names();
  Stream st;
  // task 100 on CPU 0: a{ b() b() }  a = 0..1000, b = 100..200 and 300..600
  // task 200 on CPU 1, interleaved: a{} = 50..450, then b() 500..510
  st.entry(0, 0, 100, kA);
  st.entry(50, 1, 200, kA);
  st.entry(100, 0, 100, kB, kA + 0x10).exit(200, 0, 100, kB);
  st.entry(300, 0, 100, kB, kA + 0x20);
  st.exit(450, 1, 200, kA);
  st.entry(500, 1, 200, kB, kCaller2).exit(510, 1, 200, kB);
  st.exit(600, 0, 100, kB);
  st.exit(1000, 0, 100, kA);
  ProfileOptions o;
  Profile p(o, n);
  for (auto &s : st.samples) p.add(s);
  auto rows = p.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].func, "func_a");  // sorted by total time
  EXPECT_EQ(rows[0].st.hits, 2u);
  EXPECT_EQ(rows[0].st.timed, 2u);
  EXPECT_EQ(rows[0].st.total, 1400u);
  EXPECT_EQ(rows[0].st.max, 1000u);
  EXPECT_EQ(rows[0].st.min, 400u);
  EXPECT_EQ(rows[0].st.self, 1000u - 400u + 400u);
  EXPECT_EQ(rows[1].func, "func_b");
  EXPECT_EQ(rows[1].st.hits, 3u);
  EXPECT_EQ(rows[1].st.total, 100u + 300u + 10u);
  EXPECT_EQ(rows[1].st.max, 300u);

  std::string out = capture([&](Out &x) { p.print(x); });
  auto ls = lines(out);
  ASSERT_GE(ls.size(), 4u);
  EXPECT_NE(ls[0].find("Function"), std::string::npos);
  EXPECT_EQ(ls[2],
            "  func_a                                            2         1.400 us       0.700 us       "
            "1.000 us   "
            "      1.000 us");
  EXPECT_NE(ls[3].find("func_b"), std::string::npos);
}

TEST(Profile, CallerBreakdownMergesCallSites) {
  auto n = names();
  Stream st;
  st.entry(0, 0, 100, kB, kA + 0x10).exit(100, 0, 100, kB);
  st.entry(200, 0, 100, kB, kA + 0x30).exit(400, 0, 100, kB);
  st.entry(500, 0, 100, kB, kCaller2).exit(1500, 0, 100, kB);
  ProfileOptions o;
  o.callers = true;
  Profile p(o, n);
  for (auto &s : st.samples) p.add(s);
  auto r = row(p.rows(), "func_b");
  ASSERT_EQ(r.callers.size(), 2u);
  EXPECT_EQ(r.callers[0].first, "caller_y");
  EXPECT_EQ(r.callers[0].second.hits, 1u);
  EXPECT_EQ(r.callers[0].second.total, 1000u);
  EXPECT_EQ(r.callers[1].first, "func_a");
  EXPECT_EQ(r.callers[1].second.hits, 2u);
  EXPECT_EQ(r.callers[1].second.total, 300u);
  std::string out = capture([&](Out &x) { p.print(x); });
  EXPECT_NE(out.find("<- caller_y"), std::string::npos) << out;
}

TEST(Profile, LostAndUnpairedRecords) {
  auto n = names();
  Stream st;
  st.exit(10, 0, 100, kB);  // entry before the recording: a hit, no time
  st.entry(100, 0, 100, kA).entry(150, 0, 100, kC);
  st.lost(160, 0, 42, 155, 170);  // c's exit was lost
  st.exit(300, 0, 100, kA);       // closes a, drops c
  st.entry(400, 0, 100, kC);      // still open at the end
  ProfileOptions o;
  Profile p(o, n);
  for (auto &s : st.samples) p.add(s);
  auto rows = p.rows();
  auto a = row(rows, "func_a");
  EXPECT_EQ(a.st.hits, 1u);
  EXPECT_EQ(a.st.total, 200u);
  EXPECT_EQ(a.st.self, 200u);
  auto b = row(rows, "func_b");
  EXPECT_EQ(b.st.hits, 1u);
  EXPECT_EQ(b.st.timed, 0u);
  auto c = row(rows, "func_c");
  EXPECT_EQ(c.st.hits, 2u);
  EXPECT_EQ(c.st.timed, 0u);
  EXPECT_EQ(p.lost(), 42u);
  std::string out = capture([&](Out &x) { p.print(x); });
  EXPECT_NE(out.find("lost 42 records on CPU 0 between 0.000000 and 0.000000: totals may be low"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 entries without exit and 1 exits without entry"), std::string::npos) << out;
}

TEST(Profile, ExitOnlyDurationField) {
  auto n = names();
  Stream st;
  st.exit(10, 0, 100, kA).with(1, 5000);
  st.exit(20, 1, 200, kA).with(1, 7000);
  ProfileOptions o;
  o.json = true;
  Profile p(o, n);
  for (auto &s : st.samples) p.add(s);
  std::string out = capture([&](Out &x) { p.print(x); });
  EXPECT_EQ(out,
            "{\"func\":\"func_a\",\"hits\":2,\"timed\":2,\"total_ns\":12000,\"avg_ns\":6000,\"max_ns\":7000,"
            "\"min_ns\":5000,\"self_ns\":12000}\n");
}

TEST(Profile, SortAndLimit) {
  auto n = names();
  Stream st;
  for (int i = 0; i < 5; ++i) st.entry(i * 100, 0, 100, kB).exit(i * 100 + 10, 0, 100, kB);
  st.entry(1000, 0, 100, kA).exit(2000, 0, 100, kA);
  ProfileOptions o;
  o.sort = ProfileOptions::ByHits;
  Profile p(o, n);
  for (auto &s : st.samples) p.add(s);
  EXPECT_EQ(p.rows()[0].func, "func_b");
  o.sort = ProfileOptions::ByTotal;
  o.limit = 1;
  Profile q(o, n);
  for (auto &s : st.samples) q.add(s);
  EXPECT_EQ(q.rows()[0].func, "func_a");
  std::string out = capture([&](Out &x) { q.print(x); });
  EXPECT_EQ(out.find("func_b"), std::string::npos) << out;
}

TEST(Profile, ExitBeforeEntryOnAnotherCpuIsAHitWithoutTime) {
  // The local clock is per CPU: a call that moved from CPU 0 to CPU 1 can
  // end at a timestamp earlier than its entry.  Not a zero-length call.
  auto n = names();
  Stream st;
  st.entry(1000, 0, 100, kA).exit(900, 1, 100, kA);
  st.entry(2000, 1, 100, kA).exit(2500, 1, 100, kA);
  ProfileOptions o;
  Profile p(o, n);
  for (auto &s : st.samples) p.add(s);
  auto r = row(p.rows(), "func_a");
  EXPECT_EQ(r.st.hits, 2u);
  EXPECT_EQ(r.st.timed, 1u);
  EXPECT_EQ(r.st.total, 500u);
  EXPECT_EQ(r.st.min, 500u);
  std::string out = capture([&](Out &x) { p.print(x); });
  EXPECT_NE(out.find("1 calls ended on a CPU whose clock read earlier than their entry's"), std::string::npos)
      << out;
  EXPECT_NE(out.find("--clock mono"), std::string::npos);
  o.json = true;
  Profile pj(o, n);
  for (auto &s : st.samples) pj.add(s);
  std::string js = capture([&](Out &x) { pj.print(x); });
  EXPECT_NE(js.find("{\"calls_untimed_clock_skew\":1}"), std::string::npos) << js;
}

// profile --live: the kernel's totals, one function per address (two
// addresses of one function merged by name), no Self column or minimum.
TEST(Profile, KernelTotalsPrintWithoutSelf) {
  auto n = names();
  ProfileOptions o;
  o.kernel_totals = true;
  o.sort = ProfileOptions::ByHits;
  Profile p(o, n);
  p.add_totals(kA, {.hits = 3, .timed = 3, .total = 3000, .max = 1500});
  p.add_totals(kB, {.hits = 10, .timed = 9, .total = 900, .max = 200});
  p.add_totals(kB + 4, {.hits = 1, .timed = 1, .total = 100, .max = 300});
  auto rows = p.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].func, "func_b");
  EXPECT_EQ(rows[0].st.hits, 11u);
  EXPECT_EQ(rows[0].st.timed, 10u);
  EXPECT_EQ(rows[0].st.total, 1000u);
  EXPECT_EQ(rows[0].st.max, 300u);
  std::string out = capture([&](Out &x) { p.print(x); });
  auto ls = lines(out);
  ASSERT_EQ(ls.size(), 4u);
  EXPECT_EQ(ls[0].find("Self"), std::string::npos);
  EXPECT_EQ(
      ls[2],
      "  func_b                                           11         1.000 us       0.100 us       0.300 us");
  o.json = true;
  Profile pj(o, n);
  pj.add_totals(kA, {.hits = 3, .timed = 3, .total = 3000, .max = 1500});
  out = capture([&](Out &x) { pj.print(x); });
  EXPECT_EQ(
      out,
      "{\"func\":\"func_a\",\"hits\":3,\"timed\":3,\"total_ns\":3000,\"avg_ns\":1000,\"max_ns\":1500}\n");
  ProfileOptions ko;
  ko.kernel_totals = true;
  Profile none(ko, n);
  out = capture([&](Out &x) { none.print(x); });
  EXPECT_NE(out.find("no calls of the profiled functions"), std::string::npos);
}
