#include "probes/live_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "device/session.hpp"
#include "probes/probe_client.hpp"
#include "util/duration.hpp"
#include "util/error.hpp"

namespace ktrack {

std::string live_profile_spec(const std::string &target, size_t index) {
  if (target.empty()) throw UsageError("--live needs a function glob, e.g. --live 'vfs_*'");
  if (target.find_first_of(" \t%") != std::string::npos)
    throw UsageError(
        fmt::format("--live '{}': give one function glob (or MOD:GLOB) per --live, with no spaces or suffix; "
                    "entries and exits are both profiled",
                    target));
  return fmt::format("f:profile{} {}%both", index, target);
}

LiveProfileResult run_live_profile(
    const LiveProfileOptions &o, const std::atomic<bool> &stop,
    const std::function<void(const std::vector<std::string> &notes)> &on_started) {
  if (o.targets.empty()) throw UsageError("--live needs at least one function glob, e.g. --live 'vfs_*'");
  // Compiled first: a bad glob is refused before anything is attached.
  std::vector<CompiledProbe> compiled;
  for (size_t i = 0; i < o.targets.size(); i++) {
    compiled.push_back(compile_probe_for_system(live_profile_spec(o.targets[i], i)));
    auto &blob = compiled.back().blob;
    ktrack_probe_desc d;
    std::memcpy(&d, blob.data(), sizeof(d));
    d.flags |= KTRACK_PROBE_F_PROFILE;
    std::memcpy(blob.data(), &d, sizeof(d));
  }
  Session s = Session::open_anonymous();
  if (!(s.device().version().features & KTRACK_FEAT_PROFILE))
    throw Error(
        "the loaded ktrack.ko cannot profile in the kernel (no KTRACK_FEAT_PROFILE): unload it and run "
        "'ktrackctl load' to load the module that matches this ktrackctl");
  SessionConfig cfg = s.config();
  cfg.buf_pages = 1;  // a profile writes no record: the smallest rings
  cfg.pids = o.pids;
  for (uint32_t c : o.cpus) {
    if (c >= 64) throw UsageError(fmt::format("-C {}: CPU filters cover CPUs 0..63", c));
    cfg.cpu_mask |= 1ULL << c;
  }
  s.configure(cfg);
  ProbeClient pc(s.fd());
  LiveProfileResult r;
  std::vector<uint32_t> ids;
  for (const auto &c : compiled) {
    auto added = pc.add(c.spec, c.blob);
    ids.push_back(added.id);
  }
  for (const auto &info : pc.list())
    r.notes.push_back(fmt::format("probe {} (id {}): {}, {}, {} functions", info.name, info.id,
                                  mechanism_name(info.mechanism), probe_state_name(info.state),
                                  info.nr_funcs));
  s.start();
  if (on_started) on_started(r.notes);
  wait_until_stopped(stop, o.duration);
  s.stop();
  // A function two targets match ('vfs_*' and 'vfs_read') was counted by
  // both probes, each every call: its figures come from the first.
  std::unordered_map<uint64_t, size_t> at;
  for (uint32_t id : ids) {
    uint64_t overflow = 0;
    for (const auto &e : pc.profile(id, &overflow)) {
      auto [it, fresh] = at.try_emplace(e.ip, r.funcs.size());
      if (!fresh) continue;
      r.funcs.push_back(
          {.ip = e.ip, .hits = e.hits, .timed = e.timed, .time_ns = e.time_ns, .max_ns = e.max_ns});
    }
    r.overflow += overflow;
  }
  for (const auto &info : pc.list()) r.misses += info.misses;
  return r;
}

}  // namespace ktrack
