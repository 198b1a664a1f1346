// Kernel address -> "sym+0xoff [module]" over a kallsyms snapshot (the text
// of /proc/kallsyms), so recorded files symbolize on another machine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace ktrack {

class Symbolizer {
 public:
  struct Symbol {
    uint64_t addr;
    std::string_view name;
    std::string_view module;  // empty for the core kernel
  };

  Symbolizer() = default;
  Symbolizer(const Symbolizer &) = delete;
  Symbolizer &operator=(const Symbolizer &) = delete;
  Symbolizer(Symbolizer &&) = default;
  Symbolizer &operator=(Symbolizer &&) = default;

  // Takes a snapshot in /proc/kallsyms format ("ADDR TYPE NAME [MODULE]"
  // lines); keeps text symbols (t, T, w, W) with a non-zero address.
  // Malformed lines are skipped.  Replaces any previous snapshot.
  void load(std::string text);
  // Reads /proc/kallsyms (or $KTRACK_KALLSYMS when set, for tests).  Returns
  // the text, or an empty string when unreadable or when kptr_restrict hides
  // the addresses (all zero).
  static std::string read_kallsyms();

  // The symbol covering 'addr' (the closest one at or below it, at most
  // kMaxOffset before it), or null.  'off' receives addr - symbol.addr.
  const Symbol *lookup(uint64_t addr, uint64_t *off = nullptr) const;
  // Appends "name+0xoff [module]" (or "0xADDR" when unknown) to 'out'.
  void format_to(fmt::memory_buffer &out, uint64_t addr) const;
  std::string format(uint64_t addr) const;

  size_t size() const { return syms_.size(); }
  const std::string &text() const { return *text_; }

  static constexpr uint64_t kMaxOffset = 1 << 20;

 private:
  // Heap-held so the views in syms_ survive moves.
  std::unique_ptr<std::string> text_ = std::make_unique<std::string>();
  std::vector<Symbol> syms_;
};

}  // namespace ktrack
