// Reading /sys and /proc through a root that tests can redirect
// ($KTRACK_SYSFS_ROOT, $KTRACK_PROCFS_ROOT), so checks like 'doctor' are
// unit-testable on fake trees.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ktrack {

std::filesystem::path sysfs_root();   // "/sys" unless $KTRACK_SYSFS_ROOT
std::filesystem::path procfs_root();  // "/proc" unless $KTRACK_PROCFS_ROOT

// Contents of sysfs_root()/rel with trailing whitespace removed; nullopt
// when it cannot be read.
std::optional<std::string> read_sysfs_string(const std::string &rel);
std::optional<std::string> read_procfs_string(const std::string &rel);

// "Y"/"1" -> true; anything else or unreadable -> false.
bool read_sysfs_flag(const std::string &rel);

// The active lockdown mode ("none", "integrity", "confidentiality"), or ""
// when securityfs does not say.
std::string read_lockdown_mode();

// Under lockdown=confidentiality (LOCKDOWN_KPROBES, LOCKDOWN_TRACEFS and the
// kernel-read reasons) the kernel refuses what ktrack's probes and object
// tracker do: kLockdownForbids is the sentence's middle, for the callers'
// refusals.  integrity refuses only unsigned modules.
bool locked_down_confidentiality();
inline constexpr const char *kLockdownForbids =
    "the kernel is locked down (confidentiality), which forbids kprobes, function hooks and reading "
    "kernel memory";
// "cannot WHAT: <kLockdownForbids>[: NOTE]; boot without lockdown
// (lockdown=integrity at most) to TO_USE": every refusal of that kind.
std::string lockdown_refusal(std::string_view what, std::string_view to_use, std::string_view note = {});

}  // namespace ktrack
