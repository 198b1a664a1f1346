// latency timer / latency noise: see latency_tracers.hpp.
#include "analysis/latency_tracers.hpp"

#include <fmt/format.h>

#include <cstring>
#include <iterator>

#include <uapi/ktrack.h>

#include "util/json.hpp"

namespace ktrack::analysis {

namespace {

constexpr std::string_view kTimer = "lat_timer";
constexpr std::string_view kTimerOver = "lat_timer_over";
constexpr std::string_view kNoise = "lat_noise";

uint64_t u64_field(const Event &ev, std::string_view name, bool &ok) {
  uint64_t v = 0;
  ok = integer_field(ev, name, v) && ok;
  return v;
}

double us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

void json_dist(fmt::memory_buffer &buf, const Distribution &ns, const Distribution &us_dist) {
  fmt::format_to(std::back_inserter(buf),
                 "{{\"count\":{},\"min_us\":{:.3f},\"avg_us\":{:.3f},\"max_us\":{:.3f},\"buckets\":",
                 ns.count(), ns.count() ? us(static_cast<uint64_t>(ns.min())) : 0.0, ns.avg() / 1000.0,
                 ns.count() ? us(static_cast<uint64_t>(ns.max())) : 0.0);
  json_log2_buckets(buf, us_dist);
  buf.push_back('}');
}

std::string dist_line(const Distribution &d) {
  if (!d.count()) return "count 0";
  return fmt::format("count {}, min {:.1f} us, avg {:.1f} us, max {:.1f} us", d.count(),
                     us(static_cast<uint64_t>(d.min())), d.avg() / 1000.0,
                     us(static_cast<uint64_t>(d.max())));
}

}  // namespace

// ---- timer --------------------------------------------------------------------

std::vector<std::string> latency_timer_specs(uint64_t threshold_ns) {
  const std::string fields = " ktrack/ktrack_timerlat seq=$seq latency_ns=$latency_ns context=$context";
  std::vector<std::string> v{"e:" + std::string(kTimer) + fields};
  if (threshold_ns)
    v.push_back("e:" + std::string(kTimerOver) + fields +
                fmt::format(" if latency_ns > {} => stack:1", threshold_ns));
  return v;
}

bool timerlat_from_event(const Event &ev, TimerlatRecord &r) {
  if (ev.type != KTRACK_REC_PROBE || (ev.name != kTimer && ev.name != kTimerOver)) return false;
  bool ok = true;
  r = TimerlatRecord{};
  r.ts = ev.ts;
  r.cpu = ev.cpu;
  r.seq = u64_field(ev, "seq", ok);
  r.latency_ns = u64_field(ev, "latency_ns", ok);
  r.thread = u64_field(ev, "context", ok) != 0;
  r.over = ev.name == kTimerOver;
  r.probe_id = ev.probe_id;
  return ok;
}

bool stack_from_record(std::span<const uint8_t> rec, uint32_t &probe_id, std::vector<uint64_t> &ips) {
  ktrack_rec_hdr h;
  ktrack_rec_stack st;
  if (rec.size() < sizeof(h) + sizeof(st)) return false;
  std::memcpy(&h, rec.data(), sizeof(h));
  if (h.type != KTRACK_REC_STACK) return false;
  std::memcpy(&st, rec.data() + sizeof(h), sizeof(st));
  const size_t room = (rec.size() - sizeof(h) - sizeof(st)) / sizeof(uint64_t);
  if (st.nr > room) return false;
  probe_id = st.probe_id;
  ips.resize(st.nr);
  if (st.nr) std::memcpy(ips.data(), rec.data() + sizeof(h) + sizeof(st), st.nr * sizeof(uint64_t));
  return true;
}

bool LatencyTimer::add(const TimerlatRecord &r) {
  if (r.over) {
    if (over_) return false;
    over_ = r;
    return true;
  }
  CpuStats &c = cpus_[r.cpu];
  (r.thread ? c.thread_ns : c.irq_ns).add(static_cast<int64_t>(r.latency_ns));
  (r.thread ? c.thread_us : c.irq_us).add(static_cast<int64_t>(r.latency_ns / 1000));
  return false;
}

std::string LatencyTimer::stopped_line() const {
  if (!over_) return {};
  return fmt::format("stopped: {} latency {} us > threshold {} us on cpu {}",
                     over_->thread ? "thread" : "irq", over_->latency_ns / 1000, opt_.threshold_ns / 1000,
                     over_->cpu);
}

void LatencyTimer::print(Out &out) const {
  const Colors &c = opt_.colors;
  if (opt_.json) {
    auto &buf = out.buf();
    auto app = std::back_inserter(buf);
    fmt::format_to(app, "{{\"tracer\":\"timerlat\",\"period_us\":{},\"threshold_us\":{},\"cpus\":[",
                   opt_.period_ns / 1000, opt_.threshold_ns / 1000);
    bool first = true;
    for (const auto &[cpu, s] : cpus_) {
      fmt::format_to(app, "{}{{\"cpu\":{},\"irq\":", first ? "" : ",", cpu);
      json_dist(buf, s.irq_ns, s.irq_us);
      buf.append(std::string_view(",\"thread\":"));
      json_dist(buf, s.thread_ns, s.thread_us);
      buf.push_back('}');
      first = false;
    }
    buf.append(std::string_view("],\"stopped\":"));
    if (over_) {
      fmt::format_to(
          app, "{{\"cpu\":{},\"context\":\"{}\",\"seq\":{},\"ts\":{},\"latency_us\":{:.3f},\"stack\":[",
          over_->cpu, over_->thread ? "thread" : "irq", over_->seq, over_->ts, us(over_->latency_ns));
      for (size_t i = 0; i < over_stack_.size(); ++i) {
        if (i) buf.push_back(',');
        json_escape(buf, over_stack_[i]);
      }
      buf.append(std::string_view("]}"));
    } else {
      buf.append(std::string_view("null"));
    }
    buf.append(std::string_view("}\n"));
    out.flush();
    return;
  }
  out.print("# tracer: timerlat (period {} us{})\n", opt_.period_ns / 1000,
            opt_.threshold_ns ? fmt::format(", threshold {} us", opt_.threshold_ns / 1000) : std::string());
  if (cpus_.empty()) out.print("no timer latencies measured\n");
  for (const auto &[cpu, s] : cpus_) {
    out.print("{}cpu {}{}\n", c.bold, cpu, c.reset);
    out.print("  irq latency:    {}\n", dist_line(s.irq_ns));
    out.print("  thread latency: {}\n", dist_line(s.thread_ns));
    if (s.irq_us.count()) print_log2_bars(out, c, s.irq_us, fmt::format("cpu {} irq latency (us)", cpu));
    if (s.thread_us.count())
      print_log2_bars(out, c, s.thread_us, fmt::format("cpu {} thread latency (us)", cpu));
    out.print("\n");
  }
  if (over_) {
    out.print("{}{}{} (seq {}, at {})\n", c.alert, stopped_line(), c.reset, over_->seq, format_ts(over_->ts));
    if (over_stack_.empty())
      out.print("  (no kernel stack recorded)\n");
    else
      for (const auto &f : over_stack_) out.print("  => {}\n", f);
  }
  out.flush();
}

// ---- noise --------------------------------------------------------------------

namespace {
// The ktrack_osnoise fields, in the event's order.
constexpr const char *kNoiseFields[] = {
    "seq",        "runtime_ns", "noise_ns", "max_single_ns", "irq_count", "irq_ns",   "softirq_count",
    "softirq_ns", "nmi_count",  "nmi_ns",   "thread_count",  "thread_ns", "hw_count", "hw_ns"};
}  // namespace

std::vector<std::string> latency_noise_specs() {
  std::string s = "e:" + std::string(kNoise) + " ktrack/ktrack_osnoise";
  for (const char *f : kNoiseFields) s += fmt::format(" {0}=${0}", f);
  return {s};
}

bool osnoise_from_event(const Event &ev, OsnoiseRecord &r) {
  if (ev.type != KTRACK_REC_PROBE || ev.name != kNoise) return false;
  bool ok = true;
  r = OsnoiseRecord{};
  r.ts = ev.ts;
  r.cpu = ev.cpu;
  uint64_t *dst[] = {&r.seq,          &r.runtime_ns,    &r.noise_ns,   &r.max_single_ns, &r.irq_count,
                     &r.irq_ns,       &r.softirq_count, &r.softirq_ns, &r.nmi_count,     &r.nmi_ns,
                     &r.thread_count, &r.thread_ns,     &r.hw_count,   &r.hw_ns};
  for (size_t i = 0; i < std::size(kNoiseFields); ++i) *dst[i] = u64_field(ev, kNoiseFields[i], ok);
  return ok;
}

void LatencyNoise::add(const OsnoiseRecord &r) {
  CpuStats &c = cpus_[r.cpu];
  OsnoiseRecord &s = c.sum;
  c.periods++;
  s.cpu = r.cpu;
  s.runtime_ns += r.runtime_ns;
  s.noise_ns += r.noise_ns;
  s.max_single_ns = std::max(s.max_single_ns, r.max_single_ns);
  s.irq_count += r.irq_count;
  s.irq_ns += r.irq_ns;
  s.softirq_count += r.softirq_count;
  s.softirq_ns += r.softirq_ns;
  s.nmi_count += r.nmi_count;
  s.nmi_ns += r.nmi_ns;
  s.thread_count += r.thread_count;
  s.thread_ns += r.thread_ns;
  s.hw_count += r.hw_count;
  s.hw_ns += r.hw_ns;
}

namespace {
double available_pct(const OsnoiseRecord &s) {
  if (!s.runtime_ns) return 0;
  const uint64_t noise = std::min(s.noise_ns, s.runtime_ns);
  return 100.0 * static_cast<double>(s.runtime_ns - noise) / static_cast<double>(s.runtime_ns);
}
}  // namespace

void LatencyNoise::print(Out &out) const {
  const Colors &c = opt_.colors;
  if (opt_.json) {
    auto &buf = out.buf();
    auto app = std::back_inserter(buf);
    fmt::format_to(
        app, "{{\"tracer\":\"osnoise\",\"period_us\":{},\"runtime_us\":{},\"tolerance_ns\":{},\"cpus\":[",
        opt_.period_ns / 1000, opt_.runtime_ns / 1000, opt_.tolerance_ns);
    bool first = true;
    for (const auto &[cpu, cs] : cpus_) {
      const OsnoiseRecord &s = cs.sum;
      fmt::format_to(
          app,
          "{}{{\"cpu\":{},\"periods\":{},\"runtime_us\":{:.3f},\"noise_us\":{:.3f},\"available_pct\":{:.4f},"
          "\"max_single_us\":{:.3f},\"irq\":{{\"count\":{},\"us\":{:.3f}}},\"softirq\":{{\"count\":{},"
          "\"us\":{:.3f}}},\"nmi\":{{\"count\":{},\"us\":{:.3f}}},\"thread\":{{\"count\":{},\"us\":{:.3f}}},"
          "\"hw\":{{\"count\":{},\"us\":{:.3f}}}}}",
          first ? "" : ",", cpu, cs.periods, us(s.runtime_ns), us(s.noise_ns), available_pct(s),
          us(s.max_single_ns), s.irq_count, us(s.irq_ns), s.softirq_count, us(s.softirq_ns), s.nmi_count,
          us(s.nmi_ns), s.thread_count, us(s.thread_ns), s.hw_count, us(s.hw_ns));
      first = false;
    }
    buf.append(std::string_view("]}\n"));
    out.flush();
    return;
  }
  out.print("# tracer: osnoise (runtime {} us of each {} us period, tolerance {} ns)\n",
            opt_.runtime_ns / 1000, opt_.period_ns / 1000, opt_.tolerance_ns);
  if (cpus_.empty()) {
    out.print("no noise samples: no period ended on the traced CPUs\n");
    out.flush();
    return;
  }
  out.print("{}{:>4} {:>8} {:>13} {:>13} {:>9} {:>12}  {:>17} {:>17} {:>17} {:>17} {:>17}{}\n", c.bold, "cpu",
            "periods", "runtime(us)", "noise(us)", "%avail", "max(us)", "irq n/us", "softirq n/us",
            "nmi n/us", "thread n/us", "hw n/us", c.reset);
  auto pair = [](uint64_t n, uint64_t ns) { return fmt::format("{}/{:.0f}", n, us(ns)); };
  for (const auto &[cpu, cs] : cpus_) {
    const OsnoiseRecord &s = cs.sum;
    out.print("{:>4} {:>8} {:>13.0f} {:>13.0f} {:>8.3f}% {:>12.1f}  {:>17} {:>17} {:>17} {:>17} {:>17}\n",
              cpu, cs.periods, us(s.runtime_ns), us(s.noise_ns), available_pct(s), us(s.max_single_ns),
              pair(s.irq_count, s.irq_ns), pair(s.softirq_count, s.softirq_ns), pair(s.nmi_count, s.nmi_ns),
              pair(s.thread_count, s.thread_ns), pair(s.hw_count, s.hw_ns));
  }
  out.print(
      "hw: gaps with no IRQ, softirq, NMI or thread seen (IRQs disabled, IPIs, SMIs, the hypervisor)\n");
  out.flush();
}

}  // namespace ktrack::analysis
