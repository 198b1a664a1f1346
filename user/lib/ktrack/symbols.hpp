// Kernel address -> "sym+0xoff [module]" over a kallsyms snapshot (the text
// of /proc/kallsyms, plus "# module NAME BASE SIZE" lines from /proc/modules),
// so recorded files symbolize on another machine.
//
// A symbol covers [its address, the next symbol of any type), cut at its
// module's end when the snapshot has the module lines: an address past the
// last symbol of a module (a module loaded later, freed memory) is shown raw.
// On 6.12 the module's "size" is that of all its allocations, text apart, so
// the cut is loose there: exact extents need module-load records (issue 12).
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
    uint64_t end = 0;         // first address it does not cover
  };
  struct Module {
    std::string_view name;
    uint64_t base, size;
  };

  Symbolizer() = default;
  Symbolizer(const Symbolizer &) = delete;
  Symbolizer &operator=(const Symbolizer &) = delete;
  Symbolizer(Symbolizer &&) = default;
  Symbolizer &operator=(Symbolizer &&) = default;

  // Takes a snapshot in /proc/kallsyms format ("ADDR TYPE NAME [MODULE]"
  // lines, and "# module NAME BASE SIZE" lines); names text symbols (t, T,
  // w, W) with a non-zero address, and bounds each by the next symbol of any
  // type and its module's end.  Malformed lines are skipped.  Replaces any
  // previous snapshot.
  void load(std::string text);
  // Reads /proc/kallsyms (or $KTRACK_KALLSYMS when set, for tests) and
  // appends a "# module" line per module of /proc/modules (or
  // $KTRACK_MODULES).  Returns the text, or an empty string when unreadable
  // or when kptr_restrict hides the addresses (all zero).
  static std::string read_kallsyms();

  // The symbol covering 'addr', or null.  'off' receives addr - symbol.addr.
  const Symbol *lookup(uint64_t addr, uint64_t *off = nullptr) const;
  // The module whose range holds 'addr' (when the snapshot has module lines).
  const Module *module_of(uint64_t addr) const;
  // Appends "name+0xoff [module]", or "0xADDR [module]" / "0xADDR" when no
  // symbol covers it, to 'out'.
  void format_to(fmt::memory_buffer &out, uint64_t addr) const;
  std::string format(uint64_t addr) const;

  size_t size() const { return syms_.size(); }
  const std::string &text() const { return *text_; }

  static constexpr uint64_t kMaxOffset = 1 << 20;

 private:
  // Heap-held so the views in syms_ survive moves.
  std::unique_ptr<std::string> text_ = std::make_unique<std::string>();
  std::vector<Symbol> syms_;
  std::vector<Module> mods_;  // by base
};

}  // namespace ktrack
