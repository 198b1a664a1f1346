// The one home of /proc/kallsyms: reading it (with the module ranges of
// /proc/modules) for symbol snapshots, and looking names up in it for probe
// specs and objtrace's function sets.
//
// $KTRACK_KALLSYMS and $KTRACK_MODULES replace /proc/kallsyms and
// /proc/modules in read_kallsyms() (tests, or naming records of another
// machine); KallsymsIndex::system(), whose addresses go into the kernel,
// always reads the running kernel's.  Single-threaded: the lookups cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ktrack {

// The text of /proc/kallsyms followed by one "# module NAME BASE SIZE" line
// per loaded module (the snapshot Symbolizer::load() takes and trace files
// keep).  When kptr_restrict hides the addresses (all zero, as for a member
// of the ktrack group), the snapshot root saved for the group this boot
// (save_group_kallsyms()), else empty: a snapshot of zeros would name
// nothing.
std::string read_kallsyms();

// Root shares a session with the ktrack group (docs/ACCESS.md): save this
// boot's snapshot to $KTRACK_GROUP_KALLSYMS or /run/ktrack/kallsyms, mode
// 0640, in the group of 'device' (/dev/ktrack's, the ktrack group), so
// that members name the addresses of what they record.  Throws on failure.
void save_group_kallsyms(const std::string &device);

// An index over kallsyms text ("ADDR TYPE NAME [MOD]" lines; "# ..." lines
// are skipped).  Views into the text it owns.
class KallsymsIndex {
 public:
  struct Sym {
    uint64_t addr;
    char type;  // 'T', 't', 'D', ...
    std::string_view name;
    std::string_view module;  // "" for the core kernel
  };
  explicit KallsymsIndex(std::string text);
  KallsymsIndex(KallsymsIndex &&) = default;  // the text stays where it is: views stay valid
  KallsymsIndex &operator=(KallsymsIndex &&) = default;
  // /proc/kallsyms as it is now (no module lines needed).
  static KallsymsIndex system();

  // Addresses of every symbol 'name' of any type, in 'module' ("" = any).
  std::vector<uint64_t> lookup(std::string_view module, std::string_view name) const;
  // Addresses of the text (t/T) symbol 'name' of exactly 'module' ("" =
  // the core kernel); null when none.
  const std::vector<uint64_t> *find_text(const std::string &name, const std::string &module) const;
  // Other core-kernel text symbols at the address of the core text symbol
  // 'name' (aliases such as __x64_sys_getppid / __do_sys_getppid).
  std::vector<std::string> aliases(std::string_view name) const;
  bool empty() const { return syms_.empty(); }
  // Every symbol, in the text's order.
  const std::vector<Sym> &symbols() const { return syms_; }

 private:
  std::unique_ptr<const std::string> text_;
  std::vector<Sym> syms_;
  const std::vector<uint32_t> &by_name(std::string_view name) const;
  mutable std::unordered_map<std::string_view, std::vector<uint32_t>> name_index_;  // name -> syms_, lazily
  mutable unsigned scans_ = 0;
  mutable std::vector<uint32_t> scan_;
  mutable std::unordered_map<std::string, std::vector<uint64_t>> text_index_;  // "mod\0name", built lazily
};

}  // namespace ktrack
