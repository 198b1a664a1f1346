#include "host/doctor.hpp"

#include <fmt/core.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "device/session.hpp"
#include "host/module_loader.hpp"
#include "host/sysfs.hpp"
#include "probes/probe_client.hpp"
#include "util/error.hpp"

#include <uapi/ktrack.h>

namespace fs = std::filesystem;

namespace ktrack {

namespace {

CheckResult check_tracefs() {
  auto mounts = read_procfs_string("mounts").value_or("");
  std::istringstream in(mounts);
  std::string dev, dir, type, rest;
  while (in >> dev >> dir >> type && std::getline(in, rest)) {
    if (type == "tracefs") return {"tracefs", CheckLevel::Ok, "tracefs is mounted at " + dir, ""};
  }
  return {"tracefs", CheckLevel::Fail, "tracefs is not mounted: TRACE_EVENTs are invisible",
          "mount it: sudo mount -t tracefs nodev /sys/kernel/tracing"};
}

CheckResult check_lockdown() {
  std::string mode = read_lockdown_mode();
  if (mode.empty()) return {"lockdown", CheckLevel::Ok, "no lockdown reported (securityfs silent)", ""};
  if (mode == "none") return {"lockdown", CheckLevel::Ok, "kernel lockdown: none", ""};
  // What each mode refuses is what it refuses the kernel's own tracers
  // (LOCKDOWN_MODULE_SIGNATURE at integrity; LOCKDOWN_KPROBES, LOCKDOWN_TRACEFS
  // and the kernel-read reasons at confidentiality): kmod/ checks the same.
  if (mode == "integrity") {
    // loaded (signed, or before lockdown): nothing ktrack does is refused
    const bool loaded = std::filesystem::exists(sysfs_root() / "module/ktrack");
    return {"lockdown", loaded ? CheckLevel::Warn : CheckLevel::Fail,
            std::string("kernel lockdown is 'integrity': only signed modules load (ktrack.ko included); "
                        "once loaded, every probe and the object tracker work") +
                (loaded ? " (ktrack is loaded)" : " (ktrack is not loaded)"),
            "sign the ktrack modules with a key the kernel trusts (DKMS signs with its MOK key: "
            "enroll it with 'mokutil --import'), or disable Secure Boot for this debugging session"};
  }
  return {"lockdown", CheckLevel::Fail,
          fmt::format("kernel lockdown is '{}': only signed modules load, and kprobes, function hooks, "
                      "tracefs and kernel memory reads are refused: p, r and f probes, t probes that read "
                      "memory, the object tracker and the stack tracer fail with EPERM, e probes cannot read "
                      "their event's format (t probes that read no kernel memory, u/ur and U probes work)",
                      mode),
          "boot without lockdown (lockdown=integrity at most, or Secure Boot disabled) for this "
          "debugging session"};
}

CheckResult check_sig_enforce() {
  if (read_sysfs_flag("module/module/parameters/sig_enforce"))
    return {"sig_enforce", CheckLevel::Fail,
            "module signature enforcement is on: an unsigned ktrack.ko will be refused",
            "sign ktrack.ko (scripts/sign-file with your MOK key), or boot with "
            "module.sig_enforce=0 where Secure Boot allows it"};
  return {"sig_enforce", CheckLevel::Ok, "module signatures are not enforced", ""};
}

// The kernel ignores the tracepoints of a module whose taint has any bit
// other than O (out of tree), C (staging), E (unsigned) and N (test):
// see trace_module_has_bad_taint() in kernel/tracepoint.c.
CheckResult check_module_taints() {
  std::vector<std::string> bad;
  std::error_code ec;
  for (auto it = fs::directory_iterator(sysfs_root() / "module", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    auto taint = read_sysfs_string("module/" + name + "/taint");
    if (!taint) continue;
    std::string letters;
    for (char c : *taint)
      if (c != 'O' && c != 'C' && c != 'E' && c != 'N' && c != ' ') letters += c;
    if (!letters.empty()) bad.push_back(fmt::format("{} ({})", name, *taint));
  }
  if (bad.empty())
    return {"module_taint", CheckLevel::Ok, "no module has a taint that disables its tracepoints", ""};
  std::string list;
  for (const auto &b : bad) list += (list.empty() ? "" : ", ") + b;
  return {"module_taint", CheckLevel::Warn,
          "the kernel silently ignores the TRACE_EVENTs of these modules because of their taint: " + list,
          "rebuild and load them without the offending taint (P: proprietary licence, F: forced "
          "load): declare MODULE_LICENSE(\"GPL\") and load with insmod, not insmod -f"};
}

CheckResult check_ktrack_loaded() {
  ModuleStatus st = module_status("ktrack");
  if (!st.loaded)
    return {"ktrack", CheckLevel::Warn, "the ktrack module is not loaded", "load it: sudo ktrackctl load"};
  std::error_code ec;
  if (!fs::exists("/dev/ktrack", ec))
    return {"ktrack", CheckLevel::Fail, "ktrack is loaded but /dev/ktrack is missing",
            "is devtmpfs mounted on /dev? (mount -t devtmpfs devtmpfs /dev)"};
  return {
      "ktrack", CheckLevel::Ok,
      fmt::format("ktrack {} is loaded ({} user{})", st.version, st.refcount, st.refcount == 1 ? "" : "s"),
      ""};
}

// The ktrack group (docs/ACCESS.md): off, or on with the device where the group reaches it.
CheckResult check_group_access() {
  auto v = read_sysfs_string("module/ktrack/parameters/group_access");
  if (!v) return {"group", CheckLevel::Ok, "group access: unknown (ktrack not loaded)", ""};
  if (*v != "Y") return {"group", CheckLevel::Ok, "group access: off (root only)", ""};
  struct stat st {};
  if (::stat(kDevicePath, &st) != 0) return {"group", CheckLevel::Ok, "group access: on", ""};
  const struct group *g = ::getgrgid(st.st_gid);
  std::string gname = g ? g->gr_name : std::to_string(st.st_gid);
  unsigned mode = st.st_mode & 0777;
  if (gname != "ktrack" || mode != 0660)
    return {"group", CheckLevel::Warn,
            fmt::format("group access is on (group_access=1) but /dev/ktrack is mode {:o}, group {}", mode,
                        gname),
            "install the udev rule 60-ktrack.rules and the group (the ktrackctl package does both), or: "
            "sudo groupadd --system ktrack && sudo chgrp ktrack /dev/ktrack"};
  return {"group", CheckLevel::Ok,
          "group access: on: members of group ktrack record the sessions root shares "
          "('session create NAME --group')",
          ""};
}

CheckResult check_kprobes_enabled() {
  auto v = read_sysfs_string("kernel/debug/kprobes/enabled");
  if (!v) return {"kprobes", CheckLevel::Ok, "kprobes state unknown (debugfs not mounted)", ""};
  if (*v == "1") return {"kprobes", CheckLevel::Ok, "kprobes are enabled", ""};
  return {"kprobes", CheckLevel::Fail, "kprobes are globally disabled",
          "enable them: echo 1 | sudo tee /sys/kernel/debug/kprobes/enabled"};
}

}  // namespace

CheckResult check_probe_misses(const std::vector<ProbeMisses> &probes) {
  std::string list;
  for (const auto &p : probes)
    if (p.misses)
      list += fmt::format("{}{} in session '{}' ({} missed, {} hit)", list.empty() ? "" : ", ", p.probe,
                          p.session, p.misses, p.hits);
  if (list.empty())
    return {"probe_misses", CheckLevel::Ok,
            probes.empty() ? "no ktrack probe in a named session to check"
                           : "no ktrack probe in a named session missed a call",
            ""};
  return {"probe_misses", CheckLevel::Warn,
          "these probes missed calls, so their counts and latencies leave out exactly the calls that "
          "overlapped (often the slow ones): " +
              list,
          "give a return probe more instances (r64:NAME ..., default max(10, 2 x CPUs)) and compare "
          "MISSES with HITS in 'ktrackctl probe list -s SESSION'"};
}

std::vector<ProbeMisses> collect_probe_misses() {
  std::vector<ProbeMisses> out;
  std::error_code ec;
  if (!fs::exists(kDevicePath, ec)) return out;
  try {
    for (const auto &info : Session::list()) {
      Session s = Session::attach(info.name);
      for (const auto &p : ProbeClient(s.fd()).list()) out.push_back({info.name, p.name, p.hits, p.misses});
    }
  } catch (const Error &) {
    // Not root, or a session destroyed meanwhile: report what was seen.
  }
  return out;
}

std::vector<CheckResult> run_doctor_checks() {
  return {check_tracefs(),       check_lockdown(),
          check_sig_enforce(),   check_module_taints(),
          check_ktrack_loaded(), check_kprobes_enabled(),
          check_group_access(),  check_probe_misses(collect_probe_misses())};
}

}  // namespace ktrack
