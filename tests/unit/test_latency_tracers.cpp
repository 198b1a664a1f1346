// latency timer / latency noise (analysis/latency_tracers.hpp) and the
// latency tracers' request (device/latency_tracer.hpp): synthetic samples
// through the reports, the probe specs, the CPU list and the bitmap.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <uapi/ktrack.h>

#include "analysis/latency_tracers.hpp"
#include "device/latency_tracer.hpp"
#include "probes/probe_spec.hpp"
#include "util/error.hpp"

namespace ka = ktrack::analysis;

namespace {

template <typename T>
std::string printed(const T &lat) {
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

ka::TimerlatRecord tl(uint16_t cpu, uint64_t seq, uint64_t ns, bool thread, bool over = false) {
  ka::TimerlatRecord r;
  r.ts = seq * 1000;
  r.cpu = cpu;
  r.seq = seq;
  r.latency_ns = ns;
  r.thread = thread;
  r.over = over;
  r.probe_id = over ? 2 : 1;
  return r;
}

}  // namespace

TEST(LatencyTracers, CpuList) {
  EXPECT_EQ(ktrack::parse_cpu_list("0"), (std::vector<uint32_t>{0}));
  EXPECT_EQ(ktrack::parse_cpu_list("3,0-2,2"), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ktrack::parse_cpu_list("255"), (std::vector<uint32_t>{255}));
  for (const char *bad : {"", "256", "a", "1-", "-1", "3-1", "0,", "1,,2", "0x1", " 1"})
    EXPECT_THROW(ktrack::parse_cpu_list(bad), ktrack::UsageError) << bad;
}

TEST(LatencyTracers, RequestBitmapAndLayout) {
  static_assert(sizeof(ktrack_latency_req) == 80, "fixed layout: no implicit padding");
  static_assert(offsetof(ktrack_latency_req, period_ns) == 8 && offsetof(ktrack_latency_req, cpus) == 32 &&
                offsetof(ktrack_latency_req, reserved) == 64);
  ktrack::LatencyRequest r;
  r.kind = KTRACK_LATENCY_NOISE;
  r.period_ns = 200'000'000;
  r.runtime_ns = 100'000'000;
  r.tolerance_ns = 5000;
  r.cpus = {0, 1, 64, 255};
  ktrack_latency_req q = ktrack::latency_req(r);
  EXPECT_EQ(q.size, sizeof(q));
  EXPECT_EQ(q.kind, 2u);
  EXPECT_EQ(q.cpus[0], 3u);
  EXPECT_EQ(q.cpus[1], 1u);
  EXPECT_EQ(q.cpus[2], 0u);
  EXPECT_EQ(q.cpus[3], 1ULL << 63);
  EXPECT_EQ(q.reserved[0], 0u);
  EXPECT_EQ(q.reserved[1], 0u);
}

TEST(LatencyTracers, SpecsParse) {
  auto t = ka::latency_timer_specs(0);
  ASSERT_EQ(t.size(), 1u);
  auto s = ktrack::parse_probe_spec(t[0]);
  EXPECT_EQ(s.kind, ktrack::ProbeKind::kEvent);
  EXPECT_EQ(s.subsys, "ktrack");
  EXPECT_EQ(s.event, "ktrack_timerlat");
  EXPECT_EQ(s.args.size(), 3u);
  t = ka::latency_timer_specs(500'000);
  ASSERT_EQ(t.size(), 2u);
  s = ktrack::parse_probe_spec(t[1]);
  EXPECT_EQ(s.filter, "latency_ns > 500000");
  ASSERT_EQ(s.actions.size(), 1u);
  auto n = ktrack::parse_probe_spec(ka::latency_noise_specs().at(0));
  EXPECT_EQ(n.event, "ktrack_osnoise");
  EXPECT_EQ(n.args.size(), 14u);
}

TEST(LatencyTracers, TimerPerCpuAndContext) {
  ka::LatencyTimer lat({});
  EXPECT_FALSE(lat.add(tl(0, 1, 2'000, false)));
  EXPECT_FALSE(lat.add(tl(0, 1, 5'000, true)));
  EXPECT_FALSE(lat.add(tl(0, 2, 4'000, false)));
  EXPECT_FALSE(lat.add(tl(0, 2, 9'000, true)));
  EXPECT_FALSE(lat.add(tl(1, 1, 1'000, false)));
  ASSERT_EQ(lat.cpus().size(), 2u);
  const auto &c0 = lat.cpus().at(0);
  EXPECT_EQ(c0.irq_ns.count(), 2u);
  EXPECT_EQ(c0.irq_ns.min(), 2'000);
  EXPECT_EQ(c0.irq_ns.max(), 4'000);
  EXPECT_EQ(c0.thread_ns.max(), 9'000);
  EXPECT_DOUBLE_EQ(c0.thread_ns.avg(), 7'000.0);
  EXPECT_EQ(lat.cpus().at(1).thread_ns.count(), 0u);
  std::string text = printed(lat);
  EXPECT_NE(text.find("# tracer: timerlat (period 1000 us)"), std::string::npos) << text;
  EXPECT_NE(text.find("  irq latency:    count 2, min 2.0 us, avg 3.0 us, max 4.0 us"), std::string::npos)
      << text;
  EXPECT_NE(text.find("@cpu 0 thread latency (us):"), std::string::npos) << text;
  EXPECT_NE(text.find("  thread latency: count 0"), std::string::npos) << text;
  EXPECT_TRUE(lat.stopped_line().empty());
}

TEST(LatencyTracers, TimerThresholdStopsAtTheFirst) {
  ka::LatencyTimerOptions o;
  o.threshold_ns = 500'000;
  o.json = true;
  ka::LatencyTimer lat(o);
  lat.add(tl(1, 7, 1'234'567, true));  // the lat_timer record: counted
  EXPECT_TRUE(lat.add(tl(1, 7, 1'234'567, true, true)));
  EXPECT_FALSE(lat.add(tl(0, 9, 2'000'000, false, true)));  // a later one: not the first
  ASSERT_TRUE(lat.over());
  EXPECT_EQ(lat.over()->seq, 7u);
  EXPECT_EQ(lat.stopped_line(), "stopped: thread latency 1234 us > threshold 500 us on cpu 1");
  EXPECT_EQ(lat.cpus().at(1).thread_ns.count(), 1u);
  lat.set_over_stack({"hrtimer_interrupt+0x10/0x200", "asm_sysvec_apic_timer_interrupt+0x1a/0x20"});
  std::string js = printed(lat);
  EXPECT_NE(js.find("\"stopped\":{\"cpu\":1,\"context\":\"thread\",\"seq\":7,"), std::string::npos) << js;
  EXPECT_NE(js.find("\"stack\":[\"hrtimer_interrupt+0x10/0x200\","), std::string::npos) << js;
  EXPECT_NE(js.find("\"buckets\":[{\"low_us\":1024,\"high_us\":2048,\"count\":1}]"), std::string::npos) << js;
}

TEST(LatencyTracers, StackRecord) {
  std::vector<uint8_t> rec(sizeof(ktrack_rec_hdr) + sizeof(ktrack_rec_stack) + 2 * 8);
  ktrack_rec_hdr h{};
  h.len = static_cast<uint16_t>(rec.size());
  h.type = KTRACK_REC_STACK;
  ktrack_rec_stack st{};
  st.probe_id = 5;
  st.nr = 2;
  uint64_t ips[2] = {0xffffffff81000010ULL, 0xffffffff81000020ULL};
  std::memcpy(rec.data(), &h, sizeof(h));
  std::memcpy(rec.data() + sizeof(h), &st, sizeof(st));
  std::memcpy(rec.data() + sizeof(h) + sizeof(st), ips, sizeof(ips));
  uint32_t id = 0;
  std::vector<uint64_t> got;
  ASSERT_TRUE(ka::stack_from_record(rec, id, got));
  EXPECT_EQ(id, 5u);
  EXPECT_EQ(got, (std::vector<uint64_t>{ips[0], ips[1]}));
  st.nr = 3;  // more than the record holds
  std::memcpy(rec.data() + sizeof(h), &st, sizeof(st));
  EXPECT_FALSE(ka::stack_from_record(rec, id, got));
  h.type = KTRACK_REC_PROBE;
  std::memcpy(rec.data(), &h, sizeof(h));
  EXPECT_FALSE(ka::stack_from_record(rec, id, got));
}

TEST(LatencyTracers, NoiseSumsPerCpu) {
  ka::LatencyNoiseOptions o;
  o.period_ns = 200'000'000;
  o.runtime_ns = 100'000'000;
  o.tolerance_ns = 5000;
  ka::LatencyNoise noise(o);
  ka::OsnoiseRecord r;
  r.cpu = 1;
  r.runtime_ns = 100'000'000;
  r.noise_ns = 30'000'000;
  r.max_single_ns = 30'000'000;
  r.hw_count = 1;
  r.hw_ns = 29'000'000;
  r.irq_count = 3;
  r.irq_ns = 1'000'000;
  noise.add(r);
  r.noise_ns = 10'000'000;
  r.max_single_ns = 8'000'000;
  r.hw_count = 0;
  r.hw_ns = 0;
  r.thread_count = 2;
  r.thread_ns = 9'000'000;
  noise.add(r);
  const auto &c = noise.cpus().at(1);
  EXPECT_EQ(c.periods, 2u);
  EXPECT_EQ(c.sum.runtime_ns, 200'000'000u);
  EXPECT_EQ(c.sum.noise_ns, 40'000'000u);
  EXPECT_EQ(c.sum.max_single_ns, 30'000'000u);
  EXPECT_EQ(c.sum.irq_count, 6u);
  EXPECT_EQ(c.sum.hw_ns, 29'000'000u);
  EXPECT_EQ(c.sum.thread_ns, 9'000'000u);
  std::string text = printed(noise);
  EXPECT_NE(text.find("# tracer: osnoise (runtime 100000 us of each 200000 us period, tolerance 5000 ns)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" 80.000% "), std::string::npos) << text;
  EXPECT_NE(text.find("6/2000"), std::string::npos) << text;
  o.json = true;
  ka::LatencyNoise nj(o);
  nj.add(r);
  std::string js = printed(nj);
  EXPECT_NE(js.find("\"cpu\":1,\"periods\":1,\"runtime_us\":100000.000,\"noise_us\":10000.000,\"available_"
                    "pct\":90.0000"),
            std::string::npos)
      << js;
  EXPECT_NE(js.find("\"thread\":{\"count\":2,\"us\":9000.000}"), std::string::npos) << js;
}
