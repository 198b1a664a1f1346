// Graph scoping (`record --graph FUNC --depth N`, KTRACK_FEAT_GRAPH_SCOPE):
// a root probe on FUNC opens a scope per task while it runs, and every f
// probe of the capture records only calls made inside such a scope, at
// most N nested calls of its functions deep.  Also the default function
// set: FUNC's static callees to depth N, found by decoding its x86-64 text
// (direct `call rel32` only) from /proc/kcore.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "probes/probe_spec.hpp"

namespace ktrack {

class KallsymsIndex;
class ProbeCompiler;

// Throws UsageError unless FUNC ("FUNC" or "MOD:FUNC") and DEPTH
// (1..KTRACK_GRAPH_MAX_DEPTH) make a graph scope.
void check_graph_scope(const std::string &func, uint32_t depth);

// "f:graph_root FUNC%both": the root probe of a scope.
std::string graph_root_spec(const std::string &func);
// The spec that records the most of TARGET's calls ("NAME" or "MOD:NAME"):
// its arguments at entry ($$args, named and typed by BTF) and its return
// value at exit (ret=$retval, unless it returns void), with fewer of them
// where BTF does not describe the function; the first of
//   f:NAME TARGET%both $$args ret=$retval | ... $$args | ... ret=$retval | f:NAME TARGET%both
// that compiles.
std::string graph_value_spec(ProbeCompiler &pc, const std::string &name, const std::string &target);
// Callee sets up to this many functions get a probe each, with their values
// (graph_value_spec); larger ones one probe per module, without values.
constexpr size_t kGraphValueProbes = 64;
// A probe name for function 'func': the name itself when it is a C
// identifier of at most 31 characters, else '_' + the name made one, cut,
// + '_INDEX' ("foo.isra.0" -> "_foo_isra_0_3").
std::string graph_probe_name(const std::string &func, size_t index);
// Marks 'spec' as the root probe (entries and exits, KTRACK_PROBE_F_GRAPH_ROOT).
void mark_graph_root(ProbeSpec &spec);
// Marks an f spec as scoped: entries and exits, KTRACK_PROBE_F_GRAPH_SCOPED,
// graph_depth 'depth'.  Other kinds are left as they are (false).
bool mark_graph_scoped(ProbeSpec &spec, uint32_t depth);

// Targets of the x86-64 `e8 rel32` calls in 'code' (the bytes at address
// 'addr'), in order, each once.  Every offset is tried (no instruction
// decoding): callers keep only targets that start a function.
std::vector<uint64_t> direct_call_targets(std::span<const uint8_t> code, uint64_t addr);

struct CalleeSet {
  // "f:graph_callees FUNC,FUNC,..." per module ("" first), ready to compile
  std::vector<std::string> specs;
  std::vector<std::string> targets;  // the functions, "NAME" or "MOD:NAME", in spec order
  size_t nr_funcs = 0;
  bool capped = false;  // more than KTRACK_PROBE_MAX_FUNCS were found
};
// Reads 'len' bytes of kernel text at 'addr' (fewer or none when unreadable).
using TextReader = std::function<std::vector<uint8_t>(uint64_t addr, size_t len)>;
// FUNC's static callee closure to 'depth' levels: each function's direct
// calls whose target is exactly the start of a text symbol in 'syms' that
// ftrace can trace ('traceable': available_filter_functions lines, "name"
// or "name [mod]"), thunks and __fentry__ left out, FUNC itself too (its
// root probe records it).  Throws UsageError when FUNC is not in 'syms'.
CalleeSet graph_callees(const KallsymsIndex &syms, const std::vector<std::string> &traceable,
                        const std::string &func, uint32_t depth, const TextReader &read);
// The same over the running system: /proc/kallsyms, available_filter_functions
// and the text read from /proc/kcore.  Throws Error when kcore cannot be read.
CalleeSet graph_callees_of_system(const std::string &func, uint32_t depth);

}  // namespace ktrack
