// The object tracker's function set, resolved in userspace (issue 5):
//   - which traceable functions the globs name (available_filter_functions,
//     "name [module]" lines; ftrace's "GLOB:mod:MOD" selects one module's);
//   - with BTF, only those that take a pointer to the tracked struct, and
//     which argument registers hold it (a per-function mask);
//   - their addresses (/proc/kallsyms, or available_filter_functions_addrs
//     where the kernel has it), as the kernel's struct ktrack_obj_func[].
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <uapi/ktrack.h>

#include "host/kallsyms.hpp"

#include "objtrace/objtrace.hpp"

namespace ktrack {

// One traceable function: a line of available_filter_functions ("name",
// "name [mod]") or of available_filter_functions_addrs ("ADDR name [mod]").
struct TraceableFunc {
  std::string name;
  std::string module;  // "" for vmlinux
  uint64_t addr = 0;   // from the _addrs file only
};
std::vector<TraceableFunc> parse_filter_functions(std::string_view text);

// "GLOB", "GLOB:mod:MOD" or ":mod:MOD" (= "*:mod:MOD").  Throws UsageError.
struct FuncGlob {
  std::string glob;
  std::string module;  // "" = any
};
FuncGlob parse_func_glob(std::string_view spec);
// Space-separated globs; 'module' (--module) applies to those without one.
std::vector<FuncGlob> parse_func_globs(std::string_view specs, const std::string &module);

// Argument types of kernel functions from BTF.
class BtfFuncArgs {
 public:
  virtual ~BtfFuncArgs() = default;
  // Bit n set when argument register n (n < nr_args) holds a pointer to
  // 'strct'; nullopt when BTF has no prototype for the function.
  virtual std::optional<uint8_t> arg_mask(const std::string &func, const std::string &module,
                                          const std::string &strct, unsigned nr_args) const = 0;
  // The struct that the return value (arg < 0) or argument 'arg' (0-based)
  // of 'func' points to, if BTF says so.
  virtual std::optional<std::string> pointee_struct(const std::string &func, int arg) const = 0;
};
// vmlinux BTF plus module BTF (/sys/kernel/btf/MOD) on demand; null with
// 'why' when BTF or libbpf is missing.
std::unique_ptr<BtfFuncArgs> load_btf_func_args(std::string *why = nullptr);

struct FuncSelection {
  std::vector<ktrack_obj_func> funcs;  // what the kernel gets
  size_t matched = 0;                  // traceable functions the globs match
  size_t untyped = 0;                  // matched, no pointer to the struct
  size_t no_proto = 0;                 // matched, no BTF prototype (clones, asm)
  size_t no_addr = 0;                  // matched, address not unique in kallsyms
  std::string strct;                   // "" when not filtered by type
};

// Selects the functions: every traceable function that a glob matches,
// with BTF ('btf' and 'strct' set) only those taking a 'strct' pointer
// (mask = those arguments), otherwise all of them (mask = first nr_args).
// Addresses come from 'traceable' (the _addrs file) or 'ksyms'; a name
// that kallsyms lists a different number of times than ftrace is skipped
// (no_addr): its addresses cannot be told apart.
FuncSelection select_functions(std::span<const FuncGlob> globs, std::span<const TraceableFunc> traceable,
                               const KallsymsIndex &ksyms, const BtfFuncArgs *btf, const std::string &strct,
                               unsigned nr_args);

// When more than KTRACK_OBJ_MAX_MASKS masks are used, the rarest ones are
// merged into their union (checks a few more arguments there).
void limit_masks(std::vector<ktrack_obj_func> &funcs);

// "hooking 1473 functions that take a struct inode * (of 48213 matching '*')".
std::string describe_selection(const FuncSelection &sel, std::string_view globs);

// The struct the tracked objects are, when known: that of the first watch
// written STRUCT->FIELD, else what a source's value points to per BTF
// ('r:alloc_inode $retval' -> "inode").  "" when unknown.
std::string tracked_struct(const ObjConfig &cfg, const BtfFuncArgs *btf);

// Resolves cfg.functions (and 'module', --module) into cfg.func_addrs from
// tracefs and /proc/kallsyms: typed by BTF when 'use_btf' and the struct is
// known, otherwise all matching functions with the first nr_args checked.
// Keeps the kernel's glob path (cfg.func_addrs empty) when there is nothing
// to gain: no module, no type filter, or 'kernel_addrs' false (an older
// ktrack.ko).  Returns the sentence that says what is hooked and why.
// Throws UsageError when nothing would be hooked.
std::string resolve_obj_functions(ObjConfig &cfg, const std::string &module, bool use_btf, bool kernel_addrs);

}  // namespace ktrack
