// ktrackctl doctor: what silently breaks tracing, and what to do about it.
#include <fmt/core.h>

#include "command.hpp"
#include "host/doctor.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

const Command doctor_cmd(90, [](CLI::App &app) {
  auto *cmd = app.add_subcommand("doctor", "Check what silently breaks tracing and say how to fix it");
  cmd->footer(
      "Checks: tracefs mounted, kernel lockdown, module signature enforcement, module\n"
      "taints that make the kernel ignore a module's tracepoints, ktrack loaded, kprobes on,\n"
      "probes of named sessions that missed calls (kretprobe maxactive).\n"
      "Exit status 2 when a check fails.\nExample:\n  sudo ktrackctl doctor");
  cmd->callback([] {
    int failed = 0;
    for (const auto &r : ktrack::run_doctor_checks()) {
      const char *tag = r.level == ktrack::CheckLevel::Ok     ? "ok  "
                        : r.level == ktrack::CheckLevel::Warn ? "warn"
                                                              : "FAIL";
      fmt::print("[{}] {}: {}\n", tag, r.name, r.message);
      if (!r.fix.empty()) fmt::print("       fix: {}\n", r.fix);
      if (r.level == ktrack::CheckLevel::Fail) ++failed;
    }
    if (failed) throw ktrack::Error(fmt::format("{} check{} failed", failed, failed == 1 ? "" : "s"));
  });
});

}  // namespace
}  // namespace ktrackctl
