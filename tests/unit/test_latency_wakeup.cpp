// latency wakeup (analysis/latency_wakeup.hpp): synthetic scheduler records
// through the wake-up latency computation.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "analysis/latency_wakeup.hpp"
#include "event_formats.hpp"
#include "host/event_format.hpp"
#include "probes/probe_spec.hpp"

namespace ka = ktrack::analysis;
using ka::SchedRecord;

namespace {

SchedRecord waking(uint64_t ts, uint16_t cpu, int32_t pid, int32_t prio, const char *comm,
                   SchedRecord::Type t = SchedRecord::Waking) {
  SchedRecord r;
  r.type = t;
  r.ts = ts;
  r.cpu = cpu;
  r.pid = pid;
  r.prio = prio;
  r.target_cpu = cpu;
  r.comm = comm;
  return r;
}

SchedRecord sw(uint64_t ts, uint16_t cpu, int32_t prev, int32_t next, int32_t next_prio = 120,
               const char *next_comm = "") {
  SchedRecord r;
  r.type = SchedRecord::Switch;
  r.ts = ts;
  r.cpu = cpu;
  r.prev_pid = prev;
  r.prev_prio = 120;
  r.prev_comm = "prev";
  r.next_pid = next;
  r.next_prio = next_prio;
  r.next_comm = next_comm;
  return r;
}

std::string printed(const ka::LatencyWakeup &lat) {
  char *data = nullptr;
  size_t size = 0;
  FILE *f = open_memstream(&data, &size);
  {
    ka::Out out(f);
    lat.print(out);
  }
  std::fclose(f);
  std::string s(data, size);
  free(data);
  return s;
}

}  // namespace

TEST(LatencyWakeup, ExactLatencyAndMax) {
  ka::LatencyWakeup lat({});
  EXPECT_FALSE(lat.add(waking(1'000'000, 1, 42, 120, "sleep")));
  auto l = lat.add(sw(1'250'000, 0, 7, 42));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->latency_ns(), 250'000u);
  EXPECT_EQ(l->pid, 42);
  EXPECT_EQ(l->comm, "sleep");
  EXPECT_EQ(l->cpu, 0);
  lat.add(sw(1'300'000, 0, 42, 7));  // 42 goes to sleep again
  lat.add(waking(2'000'000, 1, 42, 120, "sleep"));
  l = lat.add(sw(2'010'000, 0, 7, 42));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->latency_ns(), 10'000u);
  ASSERT_EQ(lat.tasks().size(), 1u);
  const auto &t = lat.tasks().begin()->second;
  EXPECT_EQ(t.ns.count(), 2u);
  EXPECT_EQ(t.ns.min(), 10'000);
  EXPECT_EQ(t.ns.max(), 250'000);
  EXPECT_DOUBLE_EQ(t.ns.avg(), 130'000.0);
  ASSERT_TRUE(lat.max());
  EXPECT_EQ(lat.max()->latency_ns(), 250'000u);
  EXPECT_EQ(lat.max()->wake_ts, 1'000'000u);
  EXPECT_EQ(lat.latencies(), 2u);
}

TEST(LatencyWakeup, TheNameIsTheSwitchInsNextComm) {
  ka::LatencyWakeup lat({});
  lat.add(waking(100, 0, 12, 120, ""));
  auto l = lat.add(sw(300, 0, 0, 12, 120, "kt_sleeper"));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->comm, "kt_sleeper");
  EXPECT_EQ(lat.tasks().count({12, "kt_sleeper"}), 1u);
  EXPECT_NE(
      ka::LatencyWakeup::record_line(lat.max_trace().front(), 100).find("sched_waking: pid=12 prio=120"),
      std::string::npos);
}

TEST(LatencyWakeup, PerTaskAndTrace) {
  ka::LatencyWakeup lat({});
  lat.add(waking(100, 0, 10, 120, "a"));
  lat.add(waking(200, 0, 11, 120, "b"));
  lat.add(sw(1100, 0, 0, 10));   // a: 1000
  lat.add(sw(5200, 0, 10, 11));  // b: 5000
  ASSERT_EQ(lat.tasks().size(), 2u);
  EXPECT_EQ(lat.tasks().at({10, "a"}).ns.max(), 1000);
  EXPECT_EQ(lat.tasks().at({11, "b"}).ns.max(), 5000);
  ASSERT_TRUE(lat.max());
  EXPECT_EQ(lat.max()->pid, 11);
  // The trace ends with the switch-in and holds the waking.
  const auto &tr = lat.max_trace();
  ASSERT_FALSE(tr.empty());
  EXPECT_EQ(tr.back().type, SchedRecord::Switch);
  EXPECT_EQ(tr.back().next_pid, 11);
  bool has_waking = false;
  for (const auto &r : tr) has_waking |= r.type == SchedRecord::Waking && r.pid == 11;
  EXPECT_TRUE(has_waking);
  std::string text = printed(lat);
  EXPECT_NE(text.find("b pid 11 prio 120: count 1, min 5.0 us, avg 5.0 us, max 5.0 us"), std::string::npos)
      << text;
  EXPECT_NE(text.find("max latency: 5.0 us"), std::string::npos) << text;
  EXPECT_NE(text.find("sched_switch: prev_comm=prev prev_pid=10"), std::string::npos) << text;
}

TEST(LatencyWakeup, TraceKeepsTheWakingFromAnotherCpu) {
  ka::LatencyWakeupOptions o;
  o.trace_len = 3;
  ka::LatencyWakeup lat(o);
  lat.add(waking(100, 1, 50, 120, "w"));  // woken from CPU 1
  for (int i = 0; i < 10; i++) lat.add(sw(200 + i * 10, 0, 60 + i, 61 + i));
  ASSERT_TRUE(lat.add(sw(1000, 0, 70, 50)));
  const auto &tr = lat.max_trace();
  ASSERT_EQ(tr.size(), 4u);  // the waking, then the last 3 records on CPU 0
  EXPECT_EQ(tr.front().type, SchedRecord::Waking);
  EXPECT_EQ(tr.front().cpu, 1);
  EXPECT_EQ(tr.back().next_pid, 50);
}

TEST(LatencyWakeup, Log2BucketsInMicroseconds) {
  ka::LatencyWakeup lat({});
  const uint64_t lats[] = {500, 3'000, 3'900, 100'000, 250'000};  // ns: 0, 3, 3, 100, 250 us
  uint64_t ts = 1'000'000;
  for (uint64_t l : lats) {
    lat.add(waking(ts, 0, 9, 120, "t"));
    lat.add(sw(ts + l, 0, 0, 9));
    lat.add(sw(ts + l + 1, 0, 9, 0));
    ts += 1'000'000;
  }
  const auto &t = lat.tasks().at({9, "t"});
  uint64_t neg = 0;
  auto b = t.us.log2_buckets(neg);
  EXPECT_EQ(neg, 0u);
  ASSERT_GE(b.size(), 9u);
  EXPECT_EQ(b[0], 1u);  // [0]
  EXPECT_EQ(b[2], 2u);  // [2, 4)
  EXPECT_EQ(b[7], 1u);  // [64, 128)
  EXPECT_EQ(b[8], 1u);  // [128, 256)
  std::string text = printed(lat);
  EXPECT_NE(text.find("[2, 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("[128, 256)"), std::string::npos) << text;
}

TEST(LatencyWakeup, RtOnly) {
  ka::LatencyWakeupOptions o;
  o.rt = true;
  ka::LatencyWakeup lat(o);
  lat.add(waking(100, 0, 20, 120, "normal"));
  lat.add(waking(100, 0, 21, 49, "fifo"));
  EXPECT_FALSE(lat.add(sw(400, 0, 0, 20)));
  auto l = lat.add(sw(900, 0, 20, 21, 49));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->pid, 21);
  EXPECT_EQ(l->latency_ns(), 800u);
  ASSERT_EQ(lat.tasks().size(), 1u);
  EXPECT_EQ(lat.tasks().begin()->second.comm, "fifo");
  EXPECT_EQ(lat.max()->pid, 21);
  // prio 99 is RT, 100 is not.
  lat.add(waking(1000, 0, 22, 99, "rt99"));
  lat.add(waking(1000, 0, 23, 100, "nice-20"));
  EXPECT_TRUE(lat.add(sw(1100, 0, 21, 22)));
  EXPECT_FALSE(lat.add(sw(1200, 0, 22, 23)));
}

TEST(LatencyWakeup, WakingWithoutSwitchInIsNeverCounted) {
  ka::LatencyWakeup lat({});
  lat.add(waking(100, 0, 30, 120, "never"));
  lat.add(sw(200, 0, 1, 2));
  lat.add(sw(300, 0, 2, 1));
  EXPECT_EQ(lat.latencies(), 0u);
  EXPECT_TRUE(lat.tasks().empty());
  EXPECT_FALSE(lat.max());
  EXPECT_EQ(lat.pending(), 1u);
  EXPECT_NE(printed(lat).find("no wake-up latencies measured"), std::string::npos);
  // A waking of a running task (it is switched out later, not in): dropped.
  lat.add(waking(400, 0, 1, 120, "running"));
  lat.add(sw(500, 0, 1, 2));
  lat.add(sw(9000, 0, 2, 1));
  EXPECT_EQ(lat.latencies(), 0u);
}

// A second waking means the first was absorbed while the task ran (its
// switch-out unseen): the wait is from the newest one, never a stale one.
TEST(LatencyWakeup, SecondWakingReplacesTheFirst) {
  ka::LatencyWakeup lat({});
  lat.add(waking(1000, 0, 40, 120, "t"));
  lat.add(waking(1500, 1, 40, 120, "t"));
  auto l = lat.add(sw(3000, 0, 0, 40));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->wake_ts, 1500u);
  EXPECT_EQ(l->latency_ns(), 1500u);
}

TEST(LatencyWakeup, PidReuse) {
  ka::LatencyWakeup lat({});
  lat.add(waking(1000, 0, 77, 120, "old"));
  lat.add(sw(1100, 0, 0, 77));
  lat.add(sw(1200, 0, 77, 0));  // old exits
  // A pending waking of the old task whose switch-in was lost...
  lat.add(waking(2000, 0, 77, 120, "old"));
  // ...then the pid reused by a new task: its life starts at its wakeup_new.
  lat.add(waking(50'000, 1, 77, 120, "new", SchedRecord::WakeupNew));
  auto l = lat.add(sw(50'300, 1, 0, 77, 120, "new"));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->latency_ns(), 300u);
  EXPECT_EQ(l->comm, "new");
  ASSERT_EQ(lat.tasks().size(), 2u);
  EXPECT_EQ(lat.tasks().at({77, "old"}).ns.count(), 1u);
  EXPECT_EQ(lat.tasks().at({77, "new"}).ns.max(), 300);
}

TEST(LatencyWakeup, LostRecordsDropPendingWakings) {
  ka::LatencyWakeup lat({});
  lat.add(waking(1000, 0, 5, 120, "t"));
  SchedRecord lost;
  lost.type = SchedRecord::Lost;
  lost.ts = 1500;
  lat.add(lost);
  EXPECT_FALSE(lat.add(sw(90'000, 0, 0, 5)));
  EXPECT_EQ(lat.lost_records(), 1u);
}

TEST(LatencyWakeup, ThresholdAndCpu) {
  ka::LatencyWakeupOptions o;
  o.threshold_ns = 1000;
  o.cpus = {1};
  ka::LatencyWakeup lat(o);
  lat.add(waking(0, 1, 3, 120, "t"));
  EXPECT_FALSE(lat.add(sw(500, 1, 0, 3)));  // under the threshold: counted, not reported
  lat.add(sw(600, 1, 3, 0));
  lat.add(waking(1000, 1, 3, 120, "t"));
  EXPECT_TRUE(lat.add(sw(3000, 1, 0, 3)));  // over
  lat.add(sw(3100, 1, 3, 0));
  lat.add(waking(4000, 0, 3, 120, "t"));
  EXPECT_FALSE(lat.add(sw(90'000, 0, 0, 3)));  // on CPU 0: not selected
  ASSERT_TRUE(lat.max());
  EXPECT_EQ(lat.max()->latency_ns(), 2000u);
  EXPECT_EQ(lat.tasks().at({3, "t"}).ns.count(), 2u);
}

TEST(LatencyWakeup, Json) {
  ka::LatencyWakeupOptions o;
  o.json = true;
  ka::LatencyWakeup lat(o);
  lat.add(waking(1000, 0, 8, 49, "rt\"q"));
  lat.add(sw(4000, 0, 0, 8, 49));
  std::string j = printed(lat);
  EXPECT_EQ(j.find('\n'), j.size() - 1) << j;  // one object
  EXPECT_NE(j.find("\"comm\":\"rt\\\"q\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"max_us\":3.000"), std::string::npos) << j;
  EXPECT_NE(j.find("\"latency_us\":3.000"), std::string::npos) << j;
  EXPECT_NE(j.find("{\"low_us\":2,\"high_us\":4,\"count\":1}"), std::string::npos) << j;
}

namespace {

// sched_waking and sched_wakeup_new as 6.1 and 6.12 write them (the same
// sched_wakeup_template class in both: comm, pid, prio, target_cpu).
const char *const kWakeupTemplate = R"(name: NAME
ID: 300
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t pid;	offset:24;	size:4;	signed:1;
	field:int prio;	offset:28;	size:4;	signed:1;
	field:int target_cpu;	offset:32;	size:4;	signed:1;

print fmt: "comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu
)";

class SchedSymbols : public ktrack::SymbolSource {
 public:
  std::vector<uint64_t> lookup(const std::string &, const std::string &) override { return {}; }
  std::vector<std::string> filter_functions() override { return {}; }
  bool tracepoint_exists(const std::string &, const std::string &) override { return true; }
  std::vector<std::string> aliases(const std::string &) override { return {}; }
  std::optional<ktrack::EventFormat> event_format(const std::string &subsys,
                                                  const std::string &event) override {
    if (subsys != "sched") return std::nullopt;
    if (event == "sched_switch")
      return ktrack::parse_event_format(subsys, ktrack::test_formats::kSchedSwitch);
    if (event == "sched_waking" || event == "sched_wakeup_new") {
      std::string f = kWakeupTemplate;
      f.replace(f.find("NAME"), 4, event);
      return ktrack::parse_event_format(subsys, f);
    }
    return std::nullopt;
  }
};

}  // namespace

TEST(LatencyWakeup, SpecsResolveAgainstTheSchedFormats) {
  auto specs = ka::latency_wakeup_specs();
  ASSERT_EQ(specs.size(), 3u);
  const char *names[] = {"lat_waking", "lat_wakeup_new", "lat_switch"};
  const size_t nargs[] = {3, 3, 7};
  for (size_t i = 0; i < specs.size(); i++) {
    SchedSymbols syms;
    ktrack::ProbeSpec s = ktrack::parse_probe_spec(specs[i]);
    ktrack::resolve_symbols(s, syms);
    EXPECT_EQ(s.name, names[i]);
    EXPECT_EQ(s.kind, ktrack::ProbeKind::kEvent);
    EXPECT_EQ(s.args.size(), nargs[i]) << specs[i];
  }
}

TEST(LatencyWakeup, ReorderPutsCpusBackInTimeOrder) {
  // CPU 0's switch-in delivered before CPU 1's earlier waking (two drain
  // sweeps): in order again, the latency is measured.
  std::vector<SchedRecord> got;
  ka::SchedReorder re(1000);
  auto out = [&](const SchedRecord &r) { got.push_back(r); };
  re.push(sw(500, 0, 0, 9), out);
  re.push(waking(200, 1, 9, 120, "t"), out);
  EXPECT_TRUE(got.empty());
  re.push(sw(1600, 0, 9, 0), out);  // 200 and 500 are now final
  ASSERT_EQ(got.size(), 2u);
  re.flush(out);
  ASSERT_EQ(got.size(), 3u);
  ka::LatencyWakeup lat({});
  std::optional<ka::WakeupLatency> l;
  for (const auto &r : got)
    if (auto x = lat.add(r)) l = x;
  ASSERT_TRUE(l);
  EXPECT_EQ(l->latency_ns(), 300u);
  // Equal timestamps keep their arrival order.
  got.clear();
  re.push(waking(5000, 0, 1, 120, "a"), out);
  re.push(sw(5000, 0, 0, 1), out);
  re.flush(out);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].type, SchedRecord::Waking);
}
