// Probe specs: the text a user writes (close to ftrace's kprobe_events),
// parsed into a ProbeSpec, resolved (symbols, globs, BTF names) and compiled
// into the binary description of include/uapi/ktrack.h.
//
//   p[:[GROUP/]NAME] [MOD:]SYM[+OFFS]|ADDR [FETCHARGS] [if COND]
//   p[:[GROUP/]NAME] [MOD:]SYM%return ...   (same as r)
//   r[MAXACTIVE][:[GROUP/]NAME] [MOD:]SYM [FETCHARGS] [if COND]
//   f[:[GROUP/]NAME] GLOB|SYM,SYM,...[%return|%both] [FETCHARGS] [if COND]
//   t[:[GROUP/]NAME] [SUBSYS/]EVENT [FETCHARGS] [if COND]
//   e[:[GROUP/]NAME] SUBSYS/EVENT [FETCHARGS] [if COND]   (a trace event's fields)
//   u[:[GROUP/]NAME] PATH:SYMBOL[+OFFS]|PATH:0xADDR [FETCHARGS] [if COND]   (uprobe)
//   u[:[GROUP/]NAME] PATH:SYMBOL%return ...   (same as ur)
//   ur[:[GROUP/]NAME] PATH:SYMBOL [FETCHARGS] [if COND]   (uretprobe)
//     PATH is absolute (an ELF file: program or shared library), split from
//     the target at the last ':'; SYMBOL is looked up in .symtab, then
//     .dynsym; 0xADDR is an ELF virtual address as nm prints it.  Fetches
//     read user memory (:string is a user string); no @SYM, $FIELD or BTF.
//   U[:[GROUP/]NAME] [SYSTEM/]EVENT [$FIELD[:TYPE] ...] [if COND]   (a typed user
//     event, include/ktrack/ktrack_user.h): the fields a program registered
//     (all of them when none is named); before it registers, name each
//     field with its type ($id:u32 $path:string) and the probe waits.
//   FETCHARG: [NAME=]FETCH[:TYPE] | BTF-EXPR[:TYPE] | $$args | $arg*
//   FETCH: $argN $retval $duration $stackN $stack $comm $cpu %REG @SYM[+-OFF]
//          @ADDR +|-[u]OFFS(FETCH) \IMM, and $FIELD (e: a field of the event)
//   TYPE: u8..u64 s8..s64 x8..x64 string ustring symbol, TYPE[N]
//   ... [if COND] [=> ACTION[:N] ...]   actions (triggers) run in the kernel by
//   each hit that passes: stop, start, stack; :N acts N times at most
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <uapi/ktrack.h>

#include "host/event_format.hpp"
#include "util/error.hpp"

namespace ktrack {

// A syntax error at a character of the spec: what() is the message, then the
// spec, then a caret under the offending character (ftrace style).
class SpecError : public UsageError {
 public:
  SpecError(const std::string &spec, size_t pos, const std::string &message);
  size_t pos() const { return pos_; }
  const std::string &message() const { return message_; }

 private:
  size_t pos_;
  std::string message_;
};

enum class ProbeKind { kKprobe, kKretprobe, kFuncs, kTracepoint, kEvent, kUprobe, kUretprobe, kUserEvent };

struct FetchArg {
  std::string name;
  size_t pos = 0;  // where it starts in the spec (errors)
  uint8_t src = 0;
  uint8_t type = 0;
  uint8_t size = 8;
  uint16_t count = 1;
  uint16_t flags = 0;
  int64_t param = 0;
  std::vector<int32_t> deref;
  bool type_given = false;
  std::string symbol;     // @SYM: resolved into param
  std::string btf_expr;   // a BTF name expression, resolved later
  bool all_args = false;  // $$args, expanded by BTF resolution
  std::string field;      // e: $FIELD, resolved against the event's format
};

// A trigger: what a passing hit does in the kernel (KTRACK_ACT_*), N times
// at most (0: every time).
struct ProbeAction {
  uint16_t type = 0;
  uint32_t count = 0;
  size_t pos = 0;  // where it is written (errors)
};
// "stop", "start", "stack" for KTRACK_ACT_*.
const char *action_name(uint16_t type);

struct FilterInsn {
  ktrack_probe_insn insn{};
  std::string str;  // string operand (added to the string table)
};

struct ProbeSpec {
  std::string text;  // the spec as written
  ProbeKind kind = ProbeKind::kKprobe;
  std::string name;
  bool name_given = false;
  std::string group;  // ftrace's GROUP of p:GROUP/NAME (checked, not used)
  std::string module;
  std::string symbol;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint32_t maxactive = 0;
  // f: patterns as written, then the resolved functions
  std::vector<std::string> patterns;
  std::vector<std::string> funcs;
  // f: funcs holds one glob that the kernel matches (ftrace, all
  // traceable functions, no KTRACK_PROBE_MAX_FUNCS cap): entries only.
  // "*", a glob over more functions than a probe names, and any entry-only
  // glob when the SymbolSource leaves globs to the kernel
  bool kernel_glob = false;
  // p: the symbol, at offset 0, is a function ftrace can attach to (listed
  // once in available_filter_functions: ftrace matches by name); f: one
  // such function; neither in ktrack.ko (its ftrace_ops leaves those out):
  // prefer_ftrace_ops() may take it
  bool ftrace_entry = false;
  bool entry = true;
  bool exit = false;
  // u, ur: the ELF file (as written, then its real absolute path), and the
  // probed instruction's offset in that file (resolve_symbols); symbol,
  // offset (+OFFS) and addr (0xADDR, an ELF address) are as written
  std::string path;
  uint64_t file_offset = 0;
  // t, e
  std::string subsys;
  std::string event;
  std::vector<FetchArg> args;
  std::string filter;  // COND text after "if"
  size_t filter_pos = 0;
  std::vector<FilterInsn> program;   // compiled filter
  std::vector<ProbeAction> actions;  // after "=>"
  // options
  uint32_t stack_depth = 0;
  uint64_t hit_limit = 0;
  // graph scoping (probes/graph_scope.hpp): KTRACK_PROBE_F_GRAPH_* and desc.graph_depth
  uint32_t graph_flags = 0;
  uint32_t graph_depth = 0;

  bool has_exit() const {
    return kind == ProbeKind::kKretprobe || kind == ProbeKind::kUretprobe ||
           (kind == ProbeKind::kFuncs && exit);
  }
  bool is_user() const { return kind == ProbeKind::kUprobe || kind == ProbeKind::kUretprobe; }
  // e and U: fetches read the fields of a record ($FIELD), not registers
  bool reads_fields() const { return kind == ProbeKind::kEvent || kind == ProbeKind::kUserEvent; }
  // U: the event's name, [SYSTEM/]EVENT
  std::string user_event() const { return subsys.empty() ? event : subsys + "/" + event; }
};

// Parses 'text' (syntax only: symbols are not looked up).  Throws SpecError.
ProbeSpec parse_probe_spec(const std::string &text);

// Where names are looked up; the default reads /proc/kallsyms and tracefs.
class SymbolSource {
 public:
  virtual ~SymbolSource() = default;
  // Addresses of 'name' (in 'module' when not empty); empty when unknown.
  virtual std::vector<uint64_t> lookup(const std::string &module, const std::string &name) = 0;
  // Functions ftrace can attach to (available_filter_functions), "name" or
  // "name [mod]".
  virtual std::vector<std::string> filter_functions() = 0;
  // Is 'subsys/event' (subsys may be empty) a tracepoint?  Returns the event.
  virtual bool tracepoint_exists(const std::string &subsys, const std::string &event) = 0;
  // Other names of the function at the address of core-kernel 'name'
  // (__x64_sys_getppid and __do_sys_getppid share one), address order.
  virtual std::vector<std::string> aliases(const std::string &name) = 0;
  // Every event as "SUBSYS/EVENT" (for "did you mean"); none by default.
  virtual std::vector<std::string> tracepoint_names() { return {}; }
  // Is module 'name' loaded?  (A MOD: tracepoint of a module that is not
  // stays pending, unchecked.)  By default: no.
  virtual bool module_loaded(const std::string &) { return false; }
  // The format of trace event SUBSYS/EVENT (e probes); nullopt when unknown.
  virtual std::optional<EventFormat> event_format(const std::string &, const std::string &) {
    return std::nullopt;
  }
  // The fields of user event NAME as registered now (U probes); nullopt
  // when no program has registered it.
  virtual std::optional<EventFormat> user_event_format(const std::string &) { return std::nullopt; }
  // May an entry-only f on one glob go to the kernel unmatched (kernel_glob:
  // ftrace's filter matches it, no function list is read here)?  By default
  // no: globs are matched here, into the names a probe holds.
  virtual bool globs_in_kernel() { return false; }
};

class KallsymsIndex;
// The running system's symbols (host/kallsyms, host/tracefs); kallsyms is
// read once, at the first lookup.
class SystemSymbols : public SymbolSource {
 public:
  // globs_in_kernel: for a probe that is attached now (probe add, record,
  // trace), not one that is only checked (probe compile) or scoped to a
  // graph (which hooks each function's exit).
  explicit SystemSymbols(bool globs_in_kernel = false);
  ~SystemSymbols() override;
  bool globs_in_kernel() override { return globs_in_kernel_; }
  std::vector<uint64_t> lookup(const std::string &module, const std::string &name) override;
  std::vector<std::string> filter_functions() override;
  bool tracepoint_exists(const std::string &subsys, const std::string &event) override;
  std::vector<std::string> aliases(const std::string &name) override;
  std::vector<std::string> tracepoint_names() override;
  bool module_loaded(const std::string &name) override;
  std::optional<EventFormat> event_format(const std::string &subsys, const std::string &event) override;
  std::optional<EventFormat> user_event_format(const std::string &name) override;

 private:
  const KallsymsIndex &kallsyms();
  std::unique_ptr<KallsymsIndex> kallsyms_;
  bool globs_in_kernel_;
  bool loaded_ = false;
  std::vector<std::string> funcs_;
};

// Resolves @SYM addresses, f globs into function lists, checks symbols are
// unique (MOD:SYM disambiguates) and tracepoints exist.  Throws SpecError.
void resolve_symbols(ProbeSpec &spec, SymbolSource &syms);

// Compiles 'spec.filter' against the fetch args into spec.program.
void compile_filter(ProbeSpec &spec);

// Builds the description blob (struct ktrack_probe_desc + sections).
std::vector<uint8_t> compile_probe(const ProbeSpec &spec);

// The decoding side: fetch layout and field formatting from a blob.
struct ProbeField {
  std::string name;
  uint8_t type = 0;
  uint8_t size = 0;
  uint16_t count = 1;
  uint16_t slot = 0;
};

struct ProbeSchema {
  uint32_t id = 0;
  std::string name;
  uint32_t kind = 0;
  std::string spec;
  std::vector<ProbeField> fields;
};

// Parses a blob (as compile_probe() made it or KTRACK_IOC_PROBE_GET
// returned it); throws Error when it is malformed.
ProbeSchema schema_from_desc(const std::vector<uint8_t> &blob);

// Slot layout rule of uapi/ktrack.h; returns bytes of the fixed part.
uint32_t layout_fields(std::vector<ProbeField> &fields);

// "name=value name=value ..." for one record's data[].
std::string format_probe_fields(const ProbeSchema &schema, const uint8_t *data, size_t len,
                                uint32_t fault_mask);

// Names for display.
const char *mechanism_name(uint32_t mech);
const char *probe_state_name(uint32_t state);
const char *probe_kind_name(uint32_t kind);

}  // namespace ktrack
