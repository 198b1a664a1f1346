#include "host/tracefs.hpp"

#include <algorithm>
#include <filesystem>

#include "util/text.hpp"

namespace ktrack {

namespace {
constexpr const char *kRoots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
}

std::optional<std::string> tracefs_read(const std::string &rel) {
  for (const char *root : kRoots)
    if (auto s = read_file(std::string(root) + "/" + rel)) return s;
  return std::nullopt;
}

bool tracefs_has(const std::string &rel) {
  std::error_code ec;
  for (const char *root : kRoots)
    if (std::filesystem::exists(std::filesystem::path(root) / rel, ec)) return true;
  return false;
}

bool tracefs_event_exists(const std::string &subsys, const std::string &event) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const char *root : kRoots) {
    fs::path events = fs::path(root) / "events";
    if (!fs::is_directory(events, ec)) continue;
    if (!subsys.empty()) return fs::exists(events / subsys / event, ec);
    for (const auto &d : fs::directory_iterator(events, ec))
      if (fs::exists(d.path() / event, ec)) return true;
    return false;
  }
  return true;  // no tracefs: the kernel will say
}

std::vector<std::string> tracefs_events() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> out;
  for (const char *root : kRoots) {
    fs::path events = fs::path(root) / "events";
    if (!fs::is_directory(events, ec)) continue;
    for (const auto &sub : fs::directory_iterator(events, ec)) {
      if (!sub.is_directory(ec)) continue;
      for (const auto &ev : fs::directory_iterator(sub.path(), ec))
        if (ev.is_directory(ec))
          out.push_back(sub.path().filename().string() + "/" + ev.path().filename().string());
    }
    break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ktrack
