// Perfetto/Chrome JSON (parsed back), folded stacks, stackcount output.
#include <gtest/gtest.h>

#include "analysis/export_perfetto.hpp"
#include "analysis/stackagg.hpp"
#include "analysis_fixture.hpp"
#include "json_mini.hpp"

using namespace fixture;
using json_mini::Value;

namespace {

Value perfetto(const Stream &st) {
  auto n = names();
  std::string out = capture([&](Out &o) {
    PerfettoExport ex(n, o);
    for (const auto &s : st.samples) ex.add(s);
    ex.finish();
  });
  try {
    return json_mini::parse(out);
  } catch (const std::exception &e) {
    ADD_FAILURE() << "invalid JSON: " << e.what() << "\n" << out;
    return {};
  }
}

std::vector<const Value *> events(const Value &v, const std::string &ph, const std::string &name = "") {
  std::vector<const Value *> out;
  for (const auto &e : v["traceEvents"].arr)
    if (e["ph"].str == ph && (name.empty() || e["name"].str == name)) out.push_back(&e);
  return out;
}

}  // namespace

TEST(Perfetto, SlicesInstantsCountersAndTracks) {
  Stream st;
  st.entry(1000, 0, 100, kA);
  st.entry(2000, 0, 100, kB).exit(2500, 0, 100, kB);
  st.probe(Kind::Point, 2600, 1, 200, kC, kCaller, 7);
  st.lost(2700, 1, 99, 2650, 2690);
  st.marker(2800, 0, 100, "phase \"two\"");
  st.exit(5000, 0, 100, kA);
  st.entry(6000, 1, 200, kC);  // never exits
  Value v = perfetto(st);
  ASSERT_EQ(v.type, Value::Object);
  EXPECT_EQ(v["displayTimeUnit"].str, "ns");

  auto slices = events(v, "X");
  std::vector<const Value *> calls;
  for (auto *e : slices)
    if ((*e)["cat"].str == "call") calls.push_back(e);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ((*calls[0])["name"].str, "func_b");
  EXPECT_DOUBLE_EQ((*calls[0])["ts"].num, 2.0);
  EXPECT_DOUBLE_EQ((*calls[0])["dur"].num, 0.5);
  EXPECT_EQ((*calls[0])["pid"].num, 100);
  EXPECT_EQ((*calls[0])["tid"].num, 100);
  EXPECT_EQ((*calls[1])["name"].str, "func_a");
  EXPECT_DOUBLE_EQ((*calls[1])["dur"].num, 4.0);
  EXPECT_EQ((*calls[1])["args"]["depth"].num, 0);

  auto tp = events(v, "i", "tp_sched");
  ASSERT_EQ(tp.size(), 1u);
  EXPECT_EQ((*tp[0])["tid"].num, 200);
  EXPECT_DOUBLE_EQ((*tp[0])["ts"].num, 2.6);
  auto marker = events(v, "i", "phase \"two\"");
  ASSERT_EQ(marker.size(), 1u);
  EXPECT_EQ((*marker[0])["cat"].str, "marker");
  auto open = events(v, "i", "func_c (entry, exit not recorded)");
  ASSERT_EQ(open.size(), 1u);

  auto counters = events(v, "C", "lost records CPU 1");
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ((*counters[0])["args"]["lost"].num, 99);
  EXPECT_EQ((*counters[0])["pid"].num, PerfettoExport::kCpuPid);
  auto lost = events(v, "i", "lost 99 records on CPU 1 between 0.000002 and 0.000002");
  ASSERT_EQ(lost.size(), 1u);

  // Track names: the task and the CPUs.
  bool bash = false, cpu1 = false, cpus = false;
  for (auto *m : events(v, "M")) {
    if ((*m)["name"].str == "thread_name" && (*m)["args"]["name"].str == "bash 100") bash = true;
    if ((*m)["name"].str == "thread_name" && (*m)["args"]["name"].str == "CPU 1") cpu1 = true;
    if ((*m)["name"].str == "process_name" && (*m)["args"]["name"].str == "CPUs") cpus = true;
  }
  EXPECT_TRUE(bash);
  EXPECT_TRUE(cpu1);
  EXPECT_TRUE(cpus);
  // CPU tracks: runs of the same task.
  bool run = false;
  for (auto *e : slices)
    if ((*e)["cat"].str == "cpu" && (*e)["name"].str == "bash-100" && (*e)["tid"].num == 0) run = true;
  EXPECT_TRUE(run);
}

TEST(Perfetto, EmptyStreamIsValidJson) {
  Stream st;
  Value v = perfetto(st);
  EXPECT_EQ(v["traceEvents"].type, Value::Array);
  EXPECT_TRUE(v["traceEvents"].arr.empty());
}

TEST(Perfetto, ManyEventsStayValid) {
  Stream st;
  for (int i = 0; i < 5000; ++i) {
    uint32_t pid = 100 + static_cast<uint32_t>(i % 7);
    st.entry(static_cast<uint64_t>(i) * 100, static_cast<uint16_t>(i % 3), pid, kA);
    st.exit(static_cast<uint64_t>(i) * 100 + 50, static_cast<uint16_t>(i % 3), pid, kA);
  }
  Value v = perfetto(st);
  size_t calls = 0;
  for (auto *e : events(v, "X"))
    if ((*e)["cat"].str == "call") ++calls;
  EXPECT_EQ(calls, 5000u);
}

TEST(Stack, CountsAndFolded) {
  auto n = names();
  Stream st;
  for (int i = 0; i < 3; ++i) {
    st.entry(static_cast<uint64_t>(i) * 10, 0, 100, kB);
    st.stack(static_cast<uint64_t>(i) * 10, 0, 100, {kB + 4, kA + 0x10, kCaller + 0x20});
  }
  st.entry(100, 1, 200, kB);
  st.stack(100, 1, 200, {kB + 4, kCaller2 + 8});
  st.entry(110, 1, 200, kC);
  st.stack(110, 1, 200, {kA + 0x30, kCaller + 0x24});  // c's stack does not show c: the leaf is added
  st.lost(120, 1, 5, 111, 119);
  StackOptions o;
  StackAgg agg(o, n);
  for (auto &s : st.samples) agg.add(s);
  EXPECT_EQ(agg.distinct(), 3u);
  std::string out = capture([&](Out &x) { agg.print(x); });
  EXPECT_EQ(out.rfind("  func_b+0x4\n  func_a+0x10\n  caller_x+0x20\n    3\n\n", 0), 0u) << out;
  EXPECT_NE(out.find("lost 5 records on CPU 1"), std::string::npos);

  o.folded = true;
  StackAgg folded(o, n);
  for (auto &s : st.samples) folded.add(s);
  std::string f = capture([&](Out &x) { folded.print(x); });
  EXPECT_EQ(f,
            "caller_x;func_a;func_b 3\n"
            "caller_x;func_a;func_c 1\n"
            "caller_y;func_b 1\n"
            "[lost_5_records_on_CPU_1_between_0.000000_and_0.000000] 1\n");
  o.per_comm = true;
  StackAgg pc(o, n);
  for (auto &s : st.samples) pc.add(s);
  std::string p = capture([&](Out &x) { pc.print(x); });
  EXPECT_NE(p.find("bash;caller_x;func_a;func_b 3\n"), std::string::npos) << p;
  EXPECT_NE(p.find("cat;caller_y;func_b 1\n"), std::string::npos) << p;
}

TEST(Stack, JsonLinesParse) {
  auto n = names();
  Stream st;
  st.entry(0, 0, 100, kB);
  st.stack(0, 0, 100, {kB + 4, kA + 0x10});
  StackOptions o;
  o.json = true;
  StackAgg agg(o, n);
  for (auto &s : st.samples) agg.add(s);
  std::string out = capture([&](Out &x) { agg.print(x); });
  Value v = json_mini::parse(out);
  EXPECT_EQ(v["count"].num, 1);
  EXPECT_EQ(v["probe"].str, "func_b");
  ASSERT_EQ(v["stack"].arr.size(), 2u);
  EXPECT_EQ(v["stack"].arr[1].str, "func_a+0x10");
}
