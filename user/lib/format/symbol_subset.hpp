// The part of a kallsyms snapshot that a trace file needs.  /proc/kallsyms
// is about 7 MB; a file names a few hundred functions at most, so
// TraceWriter stores only the lines that name the addresses its records
// hold (format version 3), a few kilobytes, written in KSYMS chunks ahead
// of the records that need them.
//
// For an address it keeps every line at the greatest address <= it (the
// symbol Symbolizer would name, with its aliases, in their order) and the
// first line above it (where Symbolizer ends that symbol), plus all the
// "# module" lines.  A Symbolizer given these lines names each such address
// exactly as it would with the whole snapshot: same symbol, same offset,
// same cut at a module's end or past kMaxOffset.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ktrack {

class SymbolSubset {
 public:
  // 'kallsyms' as Symbolizer::load() takes it; copied.
  explicit SymbolSubset(std::string_view kallsyms);

  // The lines that name 'addr' join the pending text (once).
  void need(uint64_t addr);
  // The lines added since the last call (the module lines first), to be
  // written as one KSYMS chunk; empty when nothing was added.
  std::string take();
  // Lines taken or pending so far, of how many.
  size_t kept() const { return kept_; }
  size_t lines() const { return lines_.size(); }

 private:
  void keep(size_t i);

  struct Line {
    uint64_t addr;
    uint32_t off, len;  // in text_
  };
  std::string text_;
  std::vector<Line> lines_;  // by address, file order among equal ones
  std::vector<uint8_t> kept_flag_;
  std::string pending_;
  size_t kept_ = 0;
  // Addresses already handled (4096 sets of 2): a record stream names the
  // same few functions over and over, so most need() calls end here.
  std::array<uint64_t, 8192> recent_{};
};

}  // namespace ktrack
