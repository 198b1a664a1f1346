// Kernel address -> "sym+0xoff [module]" over a kallsyms snapshot (the text
// of /proc/kallsyms, plus "# module NAME BASE SIZE" lines from /proc/modules),
// so recorded files symbolize on another machine.
//
// A symbol covers [its address, the next symbol of any type), cut at its
// module's end when the snapshot has the module lines: an address past the
// last symbol of a module (freed memory, a module it does not know) is shown
// raw.  On 6.12 the module's "size" is that of all its allocations, text
// apart, so that cut is loose for modules of the snapshot.
//
// Over time: the stream's KTRACK_REC_MODULE / _SYMS records (ingest()) say
// when a module came (its text ranges and function symbols, with sizes) and
// went, so an address is named by the module that held it at the record's
// time (lookup(addr, ts)): a module loaded after the snapshot, one unloaded
// before the capture ended, another one loaded later at the same address.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ktrack {

// One "ADDR TYPE NAME [MODULE]" line of a kallsyms snapshot, as Symbolizer
// reads it: null for a line it skips (a "#" line, address 0, malformed).
// Every such line bounds the symbol before it, whatever its type.
struct KallsymsLine {
  uint64_t addr;
  char type;
  std::string_view name, module;
};
std::optional<KallsymsLine> parse_kallsyms_line(std::string_view line);

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
  // Adds more lines of the same snapshot (a format-3 file stores only the
  // lines its records need, in several KSYMS chunks: format/symbol_subset.hpp).
  void add(std::string text);

  // Takes a KTRACK_REC_MODULE or KTRACK_REC_MODULE_SYMS record (header and
  // payload; other types are ignored) into the module history.  Records
  // come in time order (the readers merge by timestamp).  Returns true when
  // it was one of these.
  bool ingest(std::span<const uint8_t> rec);
  // Did a module come or go during the capture (ingest())?
  bool history() const { return !loads_.empty() || !unloaded_.empty(); }

  // The symbol covering 'addr' at time 'ts' (record timestamps), or null.
  // 'off' receives addr - symbol.addr.
  const Symbol *lookup(uint64_t addr, uint64_t ts, uint64_t *off) const;
  // Without a time: the first module that held 'addr' (the snapshot's, else
  // the earliest load), or the time pin() gave it.
  const Symbol *lookup(uint64_t addr, uint64_t *off = nullptr) const;
  // The module whose range holds 'addr' (at 'ts'), name only.
  std::string_view module_of(uint64_t addr, uint64_t ts) const;
  std::string_view module_of(uint64_t addr) const;
  // Appends "name+0xoff [module]" ("name [module]" without 'offset', as
  // ftrace names the probed function of a return), or "0xADDR [module]" /
  // "0xADDR" when no symbol covers it, to 'out'.
  void format_to(fmt::memory_buffer &out, uint64_t addr, uint64_t ts, bool offset = true) const;
  void format_to(fmt::memory_buffer &out, uint64_t addr) const;
  std::string format(uint64_t addr) const;

  // For views that keep addresses and name them later (hist keys, stacks,
  // profiles): 'addr' itself when lookup(addr) will name it as the module
  // that held it at 'ts' did, else a key (never a kernel address) that
  // lookup() and format_to() resolve as (addr, ts).  Unchanged while no
  // module came or went during the capture.
  uint64_t pin(uint64_t addr, uint64_t ts);
  // The address a pinned key stands for (addr itself when not pinned).
  uint64_t unpin(uint64_t key) const;

  size_t size() const { return syms_.size() + load_syms_; }

  static constexpr uint64_t kMaxOffset = 1 << 20;

 private:
  // One module load seen in the stream.
  struct Load {
    std::string name;
    uint64_t text_base = 0, text_size = 0, init_base = 0, init_size = 0;
    uint64_t from = 0, until = UINT64_MAX;  // [load ts, unload ts)
    std::deque<std::string> names;          // stable storage for syms' views
    std::vector<Symbol> syms;               // by address once sorted
    bool sorted = true;
    bool covers(uint64_t a) const {
      return (a >= text_base && a - text_base < text_size) ||
             (init_size && a >= init_base && a - init_base < init_size);
    }
  };
  const Load *load_at(uint64_t addr, uint64_t ts) const;
  const Load *first_load(uint64_t addr) const;
  const Symbol *in_load(const Load &l, uint64_t addr, uint64_t *off) const;
  const Symbol *in_snapshot(uint64_t addr, uint64_t *off) const;
  const Module *snapshot_module(uint64_t addr) const;
  // Snapshot answer, unless that module went away before 'ts' (or another
  // took the address since).
  bool snapshot_valid(uint64_t addr, uint64_t ts) const;

  // Heap-held so the views in syms_ survive moves.
  std::vector<std::unique_ptr<std::string>> texts_;
  std::vector<Symbol> syms_;
  // in_snapshot()'s last answer: a report names the same few functions
  // record after record, and checking the neighbours costs less than a
  // binary search over every kernel symbol.  Relaxed atomic: const lookups
  // may run on several threads.
  struct Hint {
    std::atomic<size_t> i{0};
    Hint() = default;
    Hint(Hint &&o) noexcept : i(o.i.load(std::memory_order_relaxed)) {}
    Hint &operator=(Hint &&o) noexcept {
      i.store(o.i.load(std::memory_order_relaxed), std::memory_order_relaxed);
      return *this;
    }
  };
  mutable Hint hint_;
  std::vector<uint64_t> bounds_;              // every line's address: where the symbol before ends
  std::vector<Module> mods_;                  // by base
  std::vector<std::unique_ptr<Load>> loads_;  // in load order
  std::map<std::string, uint64_t, std::less<>> unloaded_;  // snapshot module -> unload ts
  size_t load_syms_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> pinned_;               // key - kPinBase -> (addr, ts)
  std::map<std::pair<uint64_t, const void *>, uint64_t> pin_keys_;  // (addr, holder) -> key
  static constexpr uint64_t kPinBase = 1ull << 32;
};

}  // namespace ktrack
