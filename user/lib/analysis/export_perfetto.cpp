#include "analysis/export_perfetto.hpp"

#include <fmt/format.h>

namespace ktrack::analysis {

namespace {

// Trace-event timestamps are microseconds; keep nanosecond precision.
struct Us {
  uint64_t ns;
};

}  // namespace
}  // namespace ktrack::analysis

template <>
struct fmt::formatter<ktrack::analysis::Us> {
  constexpr auto parse(format_parse_context &ctx) { return ctx.begin(); }
  template <typename Ctx>
  auto format(const ktrack::analysis::Us &u, Ctx &ctx) const {
    return fmt::format_to(ctx.out(), "{}.{:03}", u.ns / 1000, u.ns % 1000);
  }
};

namespace ktrack::analysis {

PerfettoExport::PerfettoExport(const Names &names, Out &out) : names_(names), out_(out) {
  out_.write("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"ktrackctl\"},\"traceEvents\":[\n");
}

void PerfettoExport::begin_event() {
  if (!first_) out_.write(",\n");
  first_ = false;
}

void PerfettoExport::meta(uint32_t pid, uint32_t tid, std::string_view what, std::string_view name) {
  begin_event();
  auto &buf = out_.buf();
  fmt::format_to(std::back_inserter(buf),
                 "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"{}\",\"args\":{{\"name\":", pid, tid, what);
  json_escape(buf, name);
  buf.append(std::string_view("}}"));
}

const std::string &PerfettoExport::func(uint64_t ip) {
  std::string &n = func_names_[ip];
  if (n.empty()) n = names_.func_name(ip);
  return n;
}

void PerfettoExport::ensure_task(const Sample &s) {
  uint8_t &seen = tasks_seen_[task_key(s)];
  if (seen) return;
  seen = 1;
  std::string comm = s.comm.empty() ? names_.comm(s.pid) : std::string(s.comm);
  if (s.pid == 0) comm = fmt::format("swapper/{}", s.cpu);
  if (comm.empty()) comm = fmt::format("pid {}", s.pid);
  uint32_t pid = s.pid ? s.tgid : 0, tid = s.pid ? s.pid : kCpuPid - 1 - s.cpu;
  uint8_t &pseen = procs_seen_[pid];
  if (!pseen) {
    pseen = 1;
    std::string pcomm = s.tgid == s.pid ? comm : names_.comm(s.tgid);
    meta(pid, pid, "process_name", pid == 0 ? "idle" : pcomm.empty() ? fmt::format("tgid {}", pid) : pcomm);
  }
  meta(pid, tid, "thread_name", fmt::format("{} {}", comm, s.pid));
  task_names_[task_key(s)] = fmt::format("{}-{}", comm, s.pid);
}

void PerfettoExport::ensure_cpu(uint16_t cpu) {
  if (cpu >= cpus_.size()) cpus_.resize(cpu + 1u);
  if (cpus_[cpu].known) return;
  cpus_[cpu].known = true;
  uint8_t &seen = procs_seen_[kCpuPid];
  if (!seen) {
    seen = 1;
    meta(kCpuPid, kCpuPid, "process_name", "CPUs");
  }
  meta(kCpuPid, cpu, "thread_name", fmt::format("CPU {}", cpu));
  begin_event();
  fmt::format_to(
      std::back_inserter(out_.buf()),
      "{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
      kCpuPid, cpu, cpu);
}

void PerfettoExport::end_cpu_run(uint16_t cpu) {
  CpuRun &r = cpus_[cpu];
  if (!r.active) return;
  r.active = false;
  const std::string *name = task_names_.find(r.task);
  begin_event();
  auto &buf = out_.buf();
  fmt::format_to(std::back_inserter(buf),
                 "{{\"ph\":\"X\",\"cat\":\"cpu\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":",
                 kCpuPid, cpu, Us{r.start}, Us{r.last - r.start});
  json_escape(buf, name ? *name : std::string("?"));
  fmt::format_to(std::back_inserter(buf), ",\"args\":{{\"pid\":{}}}}}", r.pid);
}

void PerfettoExport::instant(uint32_t pid, uint32_t tid, uint64_t ts, std::string_view name,
                             std::string_view cat) {
  begin_event();
  auto &buf = out_.buf();
  fmt::format_to(std::back_inserter(buf),
                 "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{},\"name\":", cat,
                 pid, tid, Us{ts});
  json_escape(buf, name);
  buf.push_back('}');
}

void PerfettoExport::add(const Sample &s) {
  if (s.ts > last_ts_) last_ts_ = s.ts;
  ensure_cpu(s.cpu);
  CpuRun &run = cpus_[s.cpu];
  if (s.kind == Kind::Lost) {
    end_cpu_run(s.cpu);
    run.lost += s.lost;
    instant(kCpuPid, s.cpu, s.lost_first, lost_line(s), "lost");
    begin_event();
    fmt::format_to(std::back_inserter(out_.buf()),
                   "{{\"ph\":\"C\",\"pid\":{},\"tid\":{},\"ts\":{},\"name\":\"lost records CPU "
                   "{}\",\"args\":{{\"lost\":{}}}}}",
                   kCpuPid, s.cpu, Us{s.lost_last}, s.cpu, run.lost);
    out_.maybe_flush();
    return;
  }
  if (s.kind == Kind::Other || s.kind == Kind::Stack) return;
  ensure_task(s);
  uint64_t tk = task_key(s);
  if (run.active && run.task != tk) end_cpu_run(s.cpu);
  if (!run.active) {
    run.active = true;
    run.task = tk;
    run.pid = s.pid;
    run.start = s.ts;
  }
  run.last = s.ts;
  uint32_t pid = s.pid ? s.tgid : 0, tid = s.pid ? s.pid : kCpuPid - 1 - s.cpu;
  switch (s.kind) {
    case Kind::Entry:
      calls_.entry(s);
      break;
    case Kind::Exit: {
      Call c;
      if (calls_.exit(s, c)) {
        begin_event();
        auto &buf = out_.buf();
        fmt::format_to(std::back_inserter(buf),
                       "{{\"ph\":\"X\",\"cat\":\"call\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":",
                       pid, tid, Us{c.entry_ts}, Us{c.duration()});
        json_escape(buf, func(c.ip));
        fmt::format_to(std::back_inserter(buf), ",\"args\":{{\"cpu\":{},\"depth\":{}}}}}", c.cpu, c.depth);
      } else {
        instant(pid, tid, s.ts, func(s.ip) + " (exit, entry not recorded)", "probe");
      }
      break;
    }
    case Kind::Point:
      instant(pid, tid, s.ts, names_.probe_name(s.probe_id), "probe");
      break;
    case Kind::Marker:
      instant(pid, tid, s.ts, s.text, "marker");
      break;
    default:
      break;
  }
  out_.maybe_flush();
}

void PerfettoExport::finish() {
  for (size_t cpu = 0; cpu < cpus_.size(); ++cpu) end_cpu_run(static_cast<uint16_t>(cpu));
  calls_.for_each_open([&](const Call &c) {
    uint32_t pid = c.pid ? c.tgid : 0, tid = c.pid ? c.pid : kCpuPid - 1 - c.cpu;
    instant(pid, tid, c.entry_ts, func(c.ip) + " (entry, exit not recorded)", "probe");
  });
  out_.write("\n]}\n");
  out_.flush();
}

}  // namespace ktrack::analysis
