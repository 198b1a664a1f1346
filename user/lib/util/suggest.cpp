#include "util/suggest.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace ktrack {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view word, const std::vector<std::string> &candidates,
                                       size_t max) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  std::vector<std::pair<size_t, size_t>> scored;  // distance, index
  for (size_t i = 0; i < candidates.size(); i++) {
    size_t d = edit_distance(word, candidates[i]);
    if (d <= limit) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto &x, const auto &y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto &[d, i] : scored) {
    if (out.size() == max) break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end()) out.push_back(candidates[i]);
  }
  return out;
}

std::string did_you_mean(const std::vector<std::string> &names) {
  if (names.empty()) return "";
  std::string s = " (did you mean ";
  for (size_t i = 0; i < names.size(); i++) {
    if (i) s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s + "?)";
}

}  // namespace ktrack
