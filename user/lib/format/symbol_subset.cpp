#include "format/symbol_subset.hpp"

#include <algorithm>

#include "format/symbols.hpp"
#include "util/text.hpp"

namespace ktrack {

SymbolSubset::SymbolSubset(std::string_view kallsyms) : text_(kallsyms) {
  std::string_view t = text_;
  while (!t.empty()) {
    std::string_view line = next_line(t);
    uint32_t off = static_cast<uint32_t>(line.data() - text_.data());
    if (line.rfind("# module ", 0) == 0) {
      pending_.append(line).push_back('\n');
      continue;
    }
    // The lines Symbolizer reads, names or bounds alike.
    if (auto l = parse_kallsyms_line(line))
      lines_.push_back({l->addr, off, static_cast<uint32_t>(line.size())});
  }
  std::stable_sort(lines_.begin(), lines_.end(),
                   [](const Line &a, const Line &b) { return a.addr < b.addr; });
  kept_flag_.assign(lines_.size(), 0);
}

void SymbolSubset::keep(size_t i) {
  if (kept_flag_[i]) return;
  kept_flag_[i] = 1;
  kept_++;
  pending_.append(text_, lines_[i].off, lines_[i].len).push_back('\n');
}

void SymbolSubset::need(uint64_t addr) {
  if (!addr) return;
  uint64_t *set = &recent_[((addr * 0x9e3779b97f4a7c15ull) >> 52) * 2];
  if (set[0] == addr || set[1] == addr) return;
  set[1] = set[0];
  set[0] = addr;
  auto it = std::upper_bound(lines_.begin(), lines_.end(), addr,
                             [](uint64_t a, const Line &l) { return a < l.addr; });
  if (it == lines_.begin()) return;  // below every symbol: nothing names it
  size_t hi = static_cast<size_t>(it - lines_.begin()), lo = hi - 1;
  while (lo > 0 && lines_[lo - 1].addr == lines_[hi - 1].addr) --lo;
  for (size_t i = lo; i < hi; i++) keep(i);
  if (hi < lines_.size()) keep(hi);
}

std::string SymbolSubset::take() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace ktrack
