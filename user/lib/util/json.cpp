#include "util/json.hpp"

#include <iterator>

namespace ktrack {

void json_escape(fmt::memory_buffer &out, std::string_view s) {
  // Runs of characters that need no escape go in one append: per-byte
  // push_back made this a fifth of 'report --json'.
  out.push_back('"');
  const char *run = s.data();
  for (const char *p = s.data(), *end = p + s.size(); p != end; p++) {
    auto c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') continue;
    out.append(run, p);
    run = p + 1;
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out.append(std::string_view("\\n"));
    } else if (c == '\t') {
      out.append(std::string_view("\\t"));
    } else {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
  }
  out.append(run, s.data() + s.size());
  out.push_back('"');
}

}  // namespace ktrack
