// The latency tracers: see latency_tracer.hpp.
#include "device/latency_tracer.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "util/error.hpp"

namespace ktrack {

namespace {

constexpr uint32_t kMaxCpus = 256;  // the request's bitmap

uint32_t cpu_number(const std::string &text, std::string_view s) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    throw UsageError(fmt::format("--cpus '{}': '{}' is not a CPU number (a list like 0,2-3)", text, s));
  if (v >= kMaxCpus)
    throw UsageError(fmt::format("--cpus '{}': CPU {} is beyond the {} supported", text, v, kMaxCpus));
  return v;
}

}  // namespace

std::vector<uint32_t> parse_cpu_list(const std::string &text) {
  std::vector<uint32_t> out;
  std::string_view rest(text);
  if (rest.empty()) throw UsageError("--cpus needs a list of CPUs, like 0,2-3");
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty())
      throw UsageError(fmt::format("--cpus '{}' ends with a comma", text));
    size_t dash = item.find('-');
    uint32_t lo = cpu_number(text, item.substr(0, dash));
    uint32_t hi = dash == std::string_view::npos ? lo : cpu_number(text, item.substr(dash + 1));
    if (hi < lo) throw UsageError(fmt::format("--cpus '{}': the range {} goes backwards", text, item));
    for (uint32_t c = lo; c <= hi; ++c) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ktrack_latency_req latency_req(const LatencyRequest &r) {
  ktrack_latency_req req{};
  req.size = sizeof(req);
  req.kind = r.kind;
  req.period_ns = r.period_ns;
  req.runtime_ns = r.runtime_ns;
  req.tolerance_ns = r.tolerance_ns;
  for (uint32_t c : r.cpus) req.cpus[c / 64] |= 1ULL << (c % 64);
  return req;
}

LatencyTracer::LatencyTracer(const LatencyRequest &r) : s_(Session::open_anonymous()) {
  const char *what = r.kind == KTRACK_LATENCY_TIMER ? "timer" : "noise";
  if (!(s_.device().version().features & KTRACK_FEAT_LATENCY))
    throw Error(
        "the loaded ktrack.ko has no latency tracers: unload it and run 'ktrackctl load' to load the module "
        "that "
        "matches this ktrackctl");
  ktrack_latency_req req = latency_req(r);
  if (ioctl(s_.fd(), KTRACK_IOC_LATENCY_START, &req) == 0) {
    running_ = true;
    return;
  }
  int err = errno;
  switch (err) {
    case EBUSY:
      throw Error(
          fmt::format("the latency {} tracer is already running (another 'ktrackctl latency {}'): one at a "
                      "time, stop that one "
                      "first",
                      what, what));
    case EINVAL:
      throw Error(
          fmt::format("the kernel refused the latency {} tracer's settings: a CPU of --cpus is offline or "
                      "does not exist, or "
                      "the period is outside 100 us..1 s (runtime at most the period, tolerance below it)",
                      what));
    case EPERM:
      throw Error(
          fmt::format("the latency {} tracer needs CAP_PERFMON or CAP_SYS_ADMIN: run it as root", what));
    case ENOENT:
      throw Error(
          fmt::format("the latency {} tracer needs the tracepoints irq_handler_entry/exit, "
                      "softirq_entry/exit and sched_switch, "
                      "which this kernel lacks (see the kernel log)",
                      what));
    case ENOMEM:
      throw Error(fmt::format("no kernel memory for the latency {} tracer's threads", what));
    case ENOTTY:
      throw Error(
          "the loaded ktrack.ko has no latency tracers: unload it and run 'ktrackctl load' to load the "
          "module that "
          "matches this ktrackctl");
    default:
      throw SysError(fmt::format("start the latency {} tracer", what), err);
  }
}

void LatencyTracer::stop() {
  if (!running_) return;
  running_ = false;
  if (ioctl(s_.fd(), KTRACK_IOC_LATENCY_STOP) != 0) throw SysError("stop the latency tracer", errno);
}

LatencyTracer::~LatencyTracer() {
  // Closing the file stops it too; this says so before the close.
  if (running_) ioctl(s_.fd(), KTRACK_IOC_LATENCY_STOP);
}

}  // namespace ktrack
