#include "util/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

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
  // read(2) in large blocks: /proc files (kallsyms: 7 MB) are made as they
  // are read, and small reads cost a pass through seq_file each.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  size_t used = 0;
  for (;;) {
    if (out.size() - used < (256u << 10)) out.resize(std::max<size_t>(out.size() * 2, 1u << 20));
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(used);
  return out;
}

}  // namespace ktrack
