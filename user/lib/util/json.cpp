#include "util/json.hpp"

#include <cstring>
#include <iterator>

namespace ktrack {

namespace {

inline bool needs_no_escape(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

}  // namespace

void json_escape(fmt::memory_buffer &out, std::string_view s) {
  // Runs of characters that need no escape go in one append: per-byte
  // push_back made this a fifth of 'report --json'.  The common case, a
  // string with nothing to escape, is one resize and one copy with both
  // quotes.
  const char *begin = s.data(), *end = begin + s.size(), *clean = begin;
  while (clean != end && needs_no_escape(static_cast<unsigned char>(*clean))) clean++;
  size_t at = out.size(), n = static_cast<size_t>(clean - begin);
  out.resize(at + n + 2);
  char *o = out.data() + at;
  *o = '"';
  if (n) std::memcpy(o + 1, begin, n);
  if (clean == end) {
    o[n + 1] = '"';
    return;
  }
  out.resize(at + n + 1);
  const char *run = clean;
  for (const char *p = clean; p != end; p++) {
    auto c = static_cast<unsigned char>(*p);
    if (needs_no_escape(c)) continue;
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
  out.append(run, end);
  out.push_back('"');
}

}  // namespace ktrack
