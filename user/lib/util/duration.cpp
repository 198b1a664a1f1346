#include "util/duration.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

#include "util/error.hpp"

namespace ktrack {

uint64_t parse_duration_ns(std::string_view text, std::string_view what) {
  std::string t(text);
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(t.c_str(), &end);
  std::string_view unit(end ? end : "");
  double mult = 0;
  if (unit == "ns")
    mult = 1;
  else if (unit == "us")
    mult = 1e3;
  else if (unit == "ms")
    mult = 1e6;
  else if (unit == "s" || unit.empty())
    mult = 1e9;
  else if (unit == "m" || unit == "min")
    mult = 60e9;
  else if (unit == "h")
    mult = 3600e9;
  // strtod also takes "inf", "nan", hex floats and leading blanks: digits only.
  bool plain = !t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.') &&
               t.find_first_of("xXpP") == std::string::npos;
  if (!plain || end == t.c_str() || mult == 0 || errno || !std::isfinite(v) || v < 0 || v * mult > 1.8e19)
    throw UsageError(
        fmt::format("{} '{}' is not a duration: write e.g. 500us, 250ms, 1.5s, 10s, 2m or 1h", what, text));
  return static_cast<uint64_t>(v * mult + 0.5);
}

std::chrono::milliseconds parse_duration(std::string_view text) {
  uint64_t ns = parse_duration_ns(text, "-d/--duration");
  if (ns == 0) throw UsageError(fmt::format("-d/--duration '{}' must be longer than zero", text));
  return std::chrono::milliseconds((ns + 999999) / 1000000);
}

void wait_until_stopped(const std::atomic<bool> &stop, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (!stop.load()) {
    if (limit.count() && std::chrono::steady_clock::now() >= end) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace ktrack
