// The HTML report (export --format html): the data it embeds for a known
// synthetic trace, parsed back: functions, counts, histogram bins, flame
// frames, timeline losses and markers; and the page around it.
#include <gtest/gtest.h>

#include "analysis/export_html.hpp"
#include "analysis/hist.hpp"
#include "analysis_fixture.hpp"
#include "json_mini.hpp"

using namespace fixture;
using json_mini::Value;

namespace {

// func_a (4 us) calls func_b twice (500 ns, 1500 ns); func_c runs alone
// on CPU 1 (300 ns); two stacks through func_a, one through func_c; 99
// records lost on CPU 1; two markers.
Stream known_trace() {
  Stream st;
  st.entry(1000, 0, 100, kA);
  st.stack(1001, 0, 100, {kA, kCaller});
  st.entry(2000, 0, 100, kB).exit(2500, 0, 100, kB);
  st.entry(3000, 0, 100, kB).exit(4500, 0, 100, kB);
  st.marker(4600, 0, 100, "phase <two>");
  st.exit(5000, 0, 100, kA);
  st.entry(6000, 1, 200, kC);
  st.stack(6001, 1, 200, {kC, kCaller2});
  st.lost(6100, 1, 99, 6050, 6090);
  st.exit(6300, 1, 200, kC);
  st.entry(7000, 0, 100, kA);
  st.stack(7001, 0, 100, {kA, kCaller});
  st.marker(7100, 1, 200, "end");
  return st;
}

Value data_of(HtmlExport &ex) {
  std::string json = ex.data_json();
  EXPECT_EQ(json.find('<'), std::string::npos) << "a '<' can end the <script> element";
  try {
    return json_mini::parse(json);
  } catch (const std::exception &e) {
    ADD_FAILURE() << "invalid JSON: " << e.what() << "\n" << json;
    return {};
  }
}

Value report(const Stream &st) {
  auto n = names();
  HtmlHeader h;
  h.file = "known.ktr";
  h.kernel = "6.12.0-test";
  h.cpus = 2;
  h.probes = {"pa", "pb"};
  HtmlExport ex(n, h);
  for (const auto &s : st.samples) ex.add(s);
  return data_of(ex);
}

const Value *child(const Value &node, const Value &strings, const std::string &name) {
  for (const auto &c : node["c"].arr)
    if (strings.arr[static_cast<size_t>(c["n"].num)].str == name) return &c;
  return nullptr;
}

}  // namespace

TEST(HtmlReport, HeaderCountsAndLosses) {
  Value d = report(known_trace());
  ASSERT_EQ(d.type, Value::Object);
  const Value &h = d["header"];
  EXPECT_EQ(h["kernel"].str, "6.12.0-test");
  EXPECT_EQ(h["file"].str, "known.ktr");
  EXPECT_EQ(h["probes"].arr.size(), 2u);
  EXPECT_EQ(h["first_ts"].num, 1000);
  EXPECT_EQ(h["last_ts"].num, 7100);
  EXPECT_EQ(h["duration_ns"].num, 6100);
  EXPECT_EQ(h["records"].num, 15);
  EXPECT_EQ(h["counts"]["entry"].num, 5);
  EXPECT_EQ(h["counts"]["exit"].num, 4);
  EXPECT_EQ(h["counts"]["stack"].num, 3);
  EXPECT_EQ(h["counts"]["marker"].num, 2);
  EXPECT_EQ(h["counts"]["lost_markers"].num, 1);
  EXPECT_EQ(h["lost"].num, 99);
  ASSERT_EQ(h["lost_per_cpu"].arr.size(), 1u);
  EXPECT_EQ(h["lost_per_cpu"].arr[0]["cpu"].num, 1);
  EXPECT_EQ(h["unmatched_entries"].num, 0);  // func_a's second call is still open
  EXPECT_TRUE(d["objects"].type == Value::Null);
}

TEST(HtmlReport, HistogramsAreHistsJson) {
  Value d = report(known_trace());
  const auto &func = d["hist"]["func"].arr;
  ASSERT_EQ(func.size(), 3u);
  // Most values first: func_b (2 calls), then func_a and func_c.
  EXPECT_EQ(func[0]["key"].str, "func_b");
  EXPECT_EQ(func[0]["count"].num, 2);
  EXPECT_EQ(func[0]["min"].num, 500);
  EXPECT_EQ(func[0]["max"].num, 1500);
  uint64_t in_buckets = 0;
  for (const auto &b : func[0]["buckets"].arr) in_buckets += static_cast<uint64_t>(b["count"].num);
  EXPECT_EQ(in_buckets, 2u);
  // The same lines as 'hist --json -k func'.
  auto n = names();
  HistOptions o;
  o.key = "func";
  o.json = true;
  Hist h(o, n);
  Stream st = known_trace();
  for (const auto &s : st.samples) h.add(s);
  std::string printed = capture([&](Out &out) { h.print(out); });
  Value first = json_mini::parse(lines(printed)[0]);
  EXPECT_EQ(first["key"].str, func[0]["key"].str);
  EXPECT_EQ(first["buckets"].arr.size(), func[0]["buckets"].arr.size());

  // Linear: 40 equal bins from 500 up past 1500, one value in each end bin.
  const auto &lin = d["hist"]["func_linear"]["func_b"].arr;
  ASSERT_EQ(lin.size(), 40u);
  EXPECT_EQ(lin[0]["low"].num, 500);
  EXPECT_EQ(lin[0]["count"].num, 1);
  uint64_t in_bins = 0;
  for (const auto &b : lin) {
    in_bins += static_cast<uint64_t>(b["count"].num);
    if (b["low"].num <= 1500 && 1500 < b["high"].num) {
      EXPECT_EQ(b["count"].num, 1);
    }
  }
  EXPECT_EQ(in_bins, 2u);
  EXPECT_GT(lin[39]["high"].num, 1500);
  // Per probe: every pair came from probe 1 ("pa").
  const auto &probe = d["hist"]["probe"].arr;
  ASSERT_EQ(probe.size(), 1u);
  EXPECT_EQ(probe[0]["key"].str, "pa");
  EXPECT_EQ(probe[0]["count"].num, 4);

  // Latency over time: points relative to the first record.
  const Value &sc = d["scatter"]["func"]["func_b"];
  EXPECT_EQ(sc["total"].num, 2);
  ASSERT_EQ(sc["points"].arr.size(), 2u);
  EXPECT_EQ(sc["points"].arr[0].arr[0].num, 1500);  // exit at 2500, first record at 1000
  EXPECT_EQ(sc["points"].arr[0].arr[1].num, 500);
}

TEST(HtmlReport, FlameGraphsOfStacksAndCalls) {
  Value d = report(known_trace());
  const Value &strings = d["strings"];
  EXPECT_EQ(strings.arr[0].str, "all");
  const Value &stacks = d["flame"]["stacks"];
  EXPECT_EQ(stacks["v"].num, 3);
  // Root first, as 'stack --folded': caller_x;func_a twice, caller_y;func_c once.
  const Value *cx = child(stacks, strings, "caller_x");
  ASSERT_NE(cx, nullptr);
  EXPECT_EQ((*cx)["v"].num, 2);
  const Value *fa = child(*cx, strings, "func_a");
  ASSERT_NE(fa, nullptr);
  EXPECT_EQ((*fa)["k"].num, 2);
  const Value *cy = child(stacks, strings, "caller_y");
  ASSERT_NE(cy, nullptr);
  EXPECT_EQ((*cy)["v"].num, 1);

  const Value &calls = d["flame"]["calls"];
  const Value *a = child(calls, strings, "func_a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["v"].num, 4000);  // inclusive
  EXPECT_EQ((*a)["k"].num, 1);
  const Value *b = child(*a, strings, "func_b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)["v"].num, 2000);
  EXPECT_EQ((*b)["k"].num, 2);
  const Value *c = child(calls, strings, "func_c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["v"].num, 300);
  EXPECT_EQ(calls["v"].num, 4300);
  EXPECT_EQ(calls["k"].num, 2);
}

TEST(HtmlReport, ParentValueCoversItsChildren) {
  // func_a's exit is lost: its node still spans its callee.
  Stream st;
  st.entry(1000, 0, 100, kA);
  st.entry(2000, 0, 100, kB).exit(2600, 0, 100, kB);
  Value d = report(st);
  const Value *a = child(d["flame"]["calls"], d["strings"], "func_a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["v"].num, 600);
  EXPECT_EQ((*a)["k"].num, 0);
}

TEST(HtmlReport, TimelineBinsLostAndMarkers) {
  Value d = report(known_trace());
  const Value &t = d["timeline"];
  EXPECT_EQ(t["start"].num, 1000);
  uint64_t total = 0;
  for (const auto &cpu : t["cpus"].arr)
    for (const auto &c : cpu["counts"].arr) total += static_cast<uint64_t>(c.num);
  EXPECT_EQ(total, 15u);
  EXPECT_LE(t["bins"].num, static_cast<double>(HtmlExport::kMaxBins));
  EXPECT_GE(t["bins"].num * t["bin_ns"].num, 6100);
  ASSERT_EQ(t["lost"].arr.size(), 1u);
  EXPECT_EQ(t["lost"].arr[0]["count"].num, 99);
  EXPECT_EQ(t["lost"].arr[0]["cpu"].num, 1);
  EXPECT_EQ(t["lost"].arr[0]["first"].num, 6050);
  ASSERT_EQ(t["markers"].arr.size(), 2u);
  EXPECT_EQ(t["markers"].arr[0]["text"].str, "phase <two>");
  EXPECT_EQ(t["markers"].arr[0]["comm"].str, "bash");
}

TEST(HtmlReport, LongTracesCoarsenTheBinsAndKeepEveryLoss) {
  Stream st;
  uint64_t lost = 0;
  for (uint64_t i = 0; i < 6000; ++i) {
    st.entry(1000 + i * 100000, static_cast<uint16_t>(i % 4), 100, kA);
    st.exit(1000 + i * 100000 + 50, static_cast<uint16_t>(i % 4), 100, kA);
    st.lost(1000 + i * 100000 + 60, static_cast<uint16_t>(i % 4), i + 1, 0, 0);
    lost += i + 1;
  }
  Value d = report(st);
  const Value &t = d["timeline"];
  EXPECT_LE(t["bins"].num, static_cast<double>(HtmlExport::kMaxBins));
  EXPECT_EQ(t["cpus"].arr.size(), 4u);
  uint64_t sum = 0;
  for (const auto &l : t["lost"].arr) sum += static_cast<uint64_t>(l["count"].num);
  EXPECT_EQ(sum, lost);
  EXPECT_LE(t["lost"].arr.size(), HtmlExport::kMaxLostMarkers);
  EXPECT_EQ(d["header"]["lost"].num, static_cast<double>(lost));
  // Scatter: strided down to the cap, the total says how many there were.
  const Value &sc = d["scatter"]["func"]["func_a"];
  EXPECT_EQ(sc["total"].num, 6000);
  EXPECT_LE(sc["points"].arr.size(), HtmlExport::kMaxScatter);
  EXPECT_GE(sc["points"].arr.size(), HtmlExport::kMaxScatter / 2);
}

TEST(HtmlReport, ThePageEmbedsTheDataOnce) {
  auto n = names();
  HtmlExport ex(n, HtmlHeader{});
  Stream st = known_trace();
  for (const auto &s : st.samples) ex.add(s);
  std::string page = capture([&](Out &o) { ex.write(o); });
  EXPECT_EQ(page.find("@KTRACK_DATA@"), std::string::npos);
  size_t at = page.find("<script id=\"ktrack-data\" type=\"application/json\">");
  ASSERT_NE(at, std::string::npos);
  size_t begin = page.find('>', at) + 1, end = page.find("</script>", begin);
  Value d = json_mini::parse(page.substr(begin, end - begin));
  EXPECT_EQ(d["header"]["records"].num, 15);
  // Self-contained: nothing is fetched from elsewhere.
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
}

TEST(HtmlReport, TwoProbesAtOneEntryAreOneCallPath) {
  Stream st;
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t t = 10000 * i;
    st.entry(t + 1000, 0, 100, kB);
    st.probe(Kind::Entry, t + 1100, 0, 100, kA, kCaller, 2);  // p probe with a stack
    st.stack(t + 1100, 0, 100, {kA, kB});
    st.entry(t + 1200, 0, 100, kA).exit(t + 2000, 0, 100, kA);
    st.exit(t + 3000, 0, 100, kB);
  }
  Value d = report(st);
  const Value &calls = d["flame"]["calls"];
  ASSERT_EQ(calls["c"].arr.size(), 1u);
  const Value *b = child(calls, d["strings"], "func_b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)["k"].num, 3);
  ASSERT_EQ((*b)["c"].arr.size(), 1u);
  const Value *a = child(*b, d["strings"], "func_a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["k"].num, 3);
  EXPECT_EQ((*a)["v"].num, 3 * 800);  // from the entry of the probe that recorded the exit
  EXPECT_EQ(d["header"]["unmatched_entries"].num, 0);
}

TEST(HtmlReport, DataIsTheSameWhenAskedTwice) {
  auto n = names();
  HtmlExport ex(n, HtmlHeader{});
  Stream st = known_trace();
  for (const auto &s : st.samples) ex.add(s);
  EXPECT_EQ(ex.data_json(), ex.data_json());
}

TEST(HtmlReport, LinearBinsOfHugeDurations) {
  // Durations near INT64_MAX: the bins' arithmetic must not overflow.
  Stream st;
  st.entry(0, 0, 100, kA).exit(0, 0, 100, kA);
  st.entry(1, 0, 100, kA).exit(INT64_MAX, 0, 100, kA);
  Value d = report(st);
  const auto &lin = d["hist"]["func_linear"]["func_a"].arr;
  ASSERT_EQ(lin.size(), 40u);
  uint64_t sum = 0;
  for (const auto &b : lin) sum += static_cast<uint64_t>(b["count"].num);
  EXPECT_EQ(sum, 2u);
  EXPECT_EQ(lin[0]["count"].num, 1);
  EXPECT_EQ(lin[39]["count"].num, 1);
}
