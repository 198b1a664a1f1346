// graph: nesting, leaves, delay markers, lost records in the middle,
// context-switch separators, orphan exits.
#include <gtest/gtest.h>

#include "analysis/graph.hpp"
#include "analysis_fixture.hpp"

using namespace fixture;

namespace {

std::string run(const Stream &st, GraphOptions o = {}) {
  auto n = names();
  return capture([&](Out &out) {
    Graph g(o, n, out);
    for (const auto &s : st.samples) g.add(s);
    g.finish();
  });
}

}  // namespace

TEST(Graph, NestingLeavesAndMarkers) {
  Stream st;
  st.entry(1000, 0, 100, kA);
  st.entry(2000, 0, 100, kB).exit(2500, 0, 100, kB);  // leaf, 0.5 us
  st.entry(3000, 0, 100, kB);
  st.entry(4000, 0, 100, kC).exit(54000, 0, 100, kC);  // + 50 us
  st.exit(60000, 0, 100, kB);                          // + 57 us
  st.exit(201000, 0, 100, kA);                         // ! 200 us
  std::string out = run(st);
  EXPECT_EQ(out,
            "  0) bash-100             |               |  func_a() {\n"
            "  0) bash-100             |      0.500 us |    func_b();\n"
            "  0) bash-100             |               |    func_b() {\n"
            "  0) bash-100             | +   50.000 us |      func_c();\n"
            "  0) bash-100             | +   57.000 us |    } /* func_b */\n"
            "  0) bash-100             | !  200.000 us |  } /* func_a */\n");
}

TEST(Graph, LostRecordsInTheMiddle) {
  Stream st;
  st.entry(1000, 1, 100, kA);
  st.entry(2000, 1, 100, kB);
  st.lost(3000, 1, 1234, 2100, 2900);  // b's exit and c's entry are gone
  st.exit(4000, 1, 100, kC);           // orphan
  st.exit(5000, 1, 100, kA);           // closes a (b dropped)
  st.entry(6000, 1, 100, kB).exit(6100, 1, 100, kB);
  std::string out = run(st);
  EXPECT_EQ(lines(out),
            (std::vector<std::string>{
                "  1) bash-100             |               |  func_a() {",
                "  1) bash-100             |               |    func_b() {",
                "  1) ========== lost 1234 records on CPU 1 between 0.000002 and 0.000002 ==========",
                "  1) bash-100             |               |      } /* func_c (entry not recorded) */",
                "  1) bash-100             |      4.000 us |  } /* func_a */",
                "  1) bash-100             |      0.100 us |  func_b();",
            }))
      << out;
}

TEST(Graph, ContextSwitchSeparatorAndPerTaskNesting) {
  Stream st;
  st.entry(1000, 0, 100, kA);
  st.entry(2000, 0, 200, kB).exit(2100, 0, 200, kB);  // cat runs on CPU 0 now
  st.exit(3000, 0, 100, kA);
  std::string out = run(st);
  EXPECT_NE(out.find("  0) bash-100             |               |  func_a() {\n"
                     " ------------------------------------------\n  0)             bash-100  =>  cat-200\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  0) cat-200              |      0.100 us |  func_b();"), std::string::npos) << out;
  EXPECT_NE(out.find("  0) bash-100             |      2.000 us |  } /* func_a */"), std::string::npos)
      << out;
  GraphOptions o;
  o.per_task = true;
  std::string pt = run(st, o);
  EXPECT_EQ(pt.find("----"), std::string::npos) << pt;
  EXPECT_NE(pt.find(" cat-200                0) |      0.100 us |  func_b();"), std::string::npos) << pt;
}

TEST(Graph, PointsMarkersAndColor) {
  Stream st;
  st.entry(1000, 0, 100, kA);
  st.probe(Kind::Point, 1500, 0, 100, kC, kCaller, 7);
  st.marker(1600, 0, 100, "hello");
  st.exit(20000, 0, 100, kA);
  GraphOptions o;
  o.colors = Colors::on();
  std::string out = run(st, o);
  EXPECT_NE(out.find("|    /* tp_sched: func_c */"), std::string::npos) << out;
  EXPECT_NE(out.find("|    /* marker: hello */"), std::string::npos) << out;
  EXPECT_NE(out.find("\033[33m+ \033[0m  19.000 us"), std::string::npos) << out;
}

TEST(Graph, OpenCallsAtTheEndArePrinted) {
  Stream st;
  st.entry(1000, 0, 100, kA);
  std::string out = run(st);
  EXPECT_EQ(out, "  0) bash-100             |               |  func_a() {\n");
}

TEST(Graph, TwoProbesAtOneEntryAreOneCall) {
  // An f probe (1) pairs func_a and a p probe (2) at its entry takes its
  // stack: one call, a leaf, not a call that never returns around another.
  Stream st;
  st.probe(Kind::Entry, 1000, 0, 100, kA, kCaller, 2);
  st.entry(1100, 0, 100, kA).exit(3000, 0, 100, kA);
  std::string out = run(st);
  // Timed from the entry of the probe that recorded the exit.
  EXPECT_EQ(out, "  0) bash-100             |      1.900 us |  func_a();\n");
  // A recursion (the same probe again) still nests.
  Stream rec;
  rec.entry(1000, 0, 100, kA).entry(1100, 0, 100, kA).exit(1200, 0, 100, kA).exit(1300, 0, 100, kA);
  out = run(rec);
  EXPECT_NE(out.find("    func_a();"), std::string::npos) << out;
}

TEST(Graph, TwoPairingProbesPairACallEach) {
  // Two f probes over one function (1 and 2): once both have recorded
  // exits, each pairs its own call, as two probes should.
  Stream st;
  st.probe(Kind::Entry, 1000, 0, 100, kA, kCaller, 1);
  st.probe(Kind::Entry, 1100, 0, 100, kA, kCaller, 2);
  st.probe(Kind::Exit, 1900, 0, 100, kA, kCaller, 2);
  st.probe(Kind::Exit, 2000, 0, 100, kA, kCaller, 1);
  st.probe(Kind::Entry, 3000, 0, 100, kA, kCaller, 1);
  st.probe(Kind::Entry, 3100, 0, 100, kA, kCaller, 2);
  st.probe(Kind::Exit, 3900, 0, 100, kA, kCaller, 2);
  st.probe(Kind::Exit, 4000, 0, 100, kA, kCaller, 1);
  std::string out = run(st);
  EXPECT_NE(out.find("|      1.000 us |  } /* func_a */"), std::string::npos) << out;
  EXPECT_NE(out.find("|      0.800 us |    func_a();"), std::string::npos) << out;
}
