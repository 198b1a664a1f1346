#include "host/sysfs.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace ktrack {

namespace {

std::optional<std::string> read_trimmed(const fs::path &p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

}  // namespace

fs::path sysfs_root() {
  const char *r = std::getenv("KTRACK_SYSFS_ROOT");
  return r ? fs::path(r) : fs::path("/sys");
}

fs::path procfs_root() {
  const char *r = std::getenv("KTRACK_PROCFS_ROOT");
  return r ? fs::path(r) : fs::path("/proc");
}

std::optional<std::string> read_sysfs_string(const std::string &rel) {
  return read_trimmed(sysfs_root() / rel);
}

std::optional<std::string> read_procfs_string(const std::string &rel) {
  return read_trimmed(procfs_root() / rel);
}

bool read_sysfs_flag(const std::string &rel) {
  auto v = read_sysfs_string(rel);
  return v && (*v == "Y" || *v == "1" || *v == "y");
}

std::string read_lockdown_mode() {
  // "none [integrity] confidentiality": the active mode is bracketed.
  auto v = read_sysfs_string("kernel/security/lockdown");
  if (!v) return "";
  auto open = v->find('[');
  auto close = v->find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return v->substr(open + 1, close - open - 1);
}

bool locked_down_confidentiality() { return read_lockdown_mode() == "confidentiality"; }

std::string lockdown_refusal(std::string_view what, std::string_view to_use, std::string_view note) {
  return fmt::format("cannot {}: {}{}{}; boot without lockdown (lockdown=integrity at most) to {}", what,
                     kLockdownForbids, note.empty() ? "" : ": ", note, to_use);
}

}  // namespace ktrack
