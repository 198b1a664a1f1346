#include "util/json.hpp"

#include <iterator>

namespace ktrack {

void json_escape(fmt::memory_buffer &out, std::string_view s) {
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out.append(std::string_view("\\n"));
    } else if (c == '\t') {
      out.append(std::string_view("\\t"));
    } else {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    }
  }
  out.push_back('"');
}

}  // namespace ktrack
