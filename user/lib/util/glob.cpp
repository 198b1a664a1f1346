#include "util/glob.hpp"

namespace ktrack {

bool has_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool glob_match(std::string_view pat, std::string_view s) {
  size_t p = 0, i = 0, star_p = std::string_view::npos, star_i = 0;
  while (true) {
    if (p < pat.size() && pat[p] == '*') {
      star_p = ++p;
      star_i = i;
      continue;
    }
    if (i == s.size()) {
      if (p == pat.size()) return true;
    } else if (p < pat.size() && (pat[p] == '?' || pat[p] == s[i])) {
      p++;
      i++;
      continue;
    } else if (p < pat.size() && pat[p] == '[') {
      size_t q = p + 1;
      bool neg = q < pat.size() && pat[q] == '!', hit = false;
      if (neg) q++;
      while (q < pat.size() && pat[q] != ']') {
        if (q + 2 < pat.size() && pat[q + 1] == '-' && pat[q + 2] != ']') {
          hit |= s[i] >= pat[q] && s[i] <= pat[q + 2];
          q += 3;
        } else {
          hit |= s[i] == pat[q++];
        }
      }
      if (q < pat.size() && hit != neg) {
        p = q + 1;
        i++;
        continue;
      }
    }
    // Mismatch: let the last '*' take one more character, if there is one.
    if (star_p == std::string_view::npos || star_i >= s.size()) return false;
    p = star_p;
    i = ++star_i;
  }
}

}  // namespace ktrack
