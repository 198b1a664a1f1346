// Small text tools for the line formats of /proc and tracefs: lines,
// whitespace-separated tokens, hex numbers, "[module]" suffixes.  Views
// into the caller's text: no allocation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ktrack {

// The next line of 'text' (without '\n'); 'text' moves past it.  Inline:
// symbol snapshots run it for every kallsyms line.
inline std::string_view next_line(std::string_view &text) {
  size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  return line;
}
// Tokens separated by spaces, tabs or '\r'.
std::vector<std::string_view> split_ws(std::string_view s);
// "ffffffff81234560" (no 0x) -> value; nullopt unless all of 's' is hex.
std::optional<uint64_t> parse_hex(std::string_view s);
// "[mod]" -> "mod"; "" when 'tok' is not of that form.
std::string_view module_of(std::string_view tok);
// A whole file, or nullopt when it cannot be opened.
std::optional<std::string> read_file(const std::string &path);

}  // namespace ktrack
