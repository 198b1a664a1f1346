#include "util/size.hpp"

#include <fmt/core.h>

#include <cctype>
#include <string>

#include "util/error.hpp"

namespace ktrack {

uint64_t parse_size(std::string_view text, std::string_view what) {
  auto bad = [&] {
    return UsageError(
        fmt::format("{} '{}': expected a size such as 64M, 1G or 512K (bytes, K, M or G)", what, text));
  };
  size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (v > (1ull << 40)) throw bad();
    v = v * 10 + static_cast<uint64_t>(text[i] - '0');
    i++;
  }
  if (i == 0) throw bad();
  std::string unit;
  for (; i < text.size(); i++) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  int shift;
  if (unit.empty() || unit == "b")
    shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    shift = 30;
  else
    throw bad();
  if (v == 0) throw UsageError(fmt::format("{} '{}': the size must be above zero", what, text));
  if (v > ((1ull << 40) >> shift)) throw UsageError(fmt::format("{} '{}': at most 1 TiB", what, text));
  return v << shift;
}

}  // namespace ktrack
