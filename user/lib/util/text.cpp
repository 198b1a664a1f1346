#include "util/text.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

namespace ktrack {

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) break;
    s.remove_prefix(b);
    size_t e = s.find_first_of(" \t\r");
    out.push_back(s.substr(0, e));
    s = e == std::string_view::npos ? std::string_view{} : s.substr(e);
  }
  return out;
}

std::optional<uint64_t> parse_hex(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string_view module_of(std::string_view tok) {
  if (tok.size() > 2 && tok.front() == '[' && tok.back() == ']') return tok.substr(1, tok.size() - 2);
  return {};
}

std::optional<std::string> read_file(const std::string &path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ktrack
