// Probe spec symbol resolution: kprobe targets, f globs and lists, aliases,
// tracepoints (see probes/probe_spec.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include <limits.h>
#include <stdlib.h>

#include <cerrno>

#include "host/elf_symbols.hpp"
#include "host/sysfs.hpp"
#include "probes/btf_resolver.hpp"
#include "probes/probe_spec.hpp"
#include "probes/spec_parser.hpp"
#include "util/glob.hpp"
#include "util/suggest.hpp"

namespace ktrack {

using spec_detail::fail;

// ---- e probes: fields ----------------------------------------------------------

namespace {

bool is_string_type(const FetchArg &a) {
  return a.type == KTRACK_FETCH_T_STRING || a.type == KTRACK_FETCH_T_USTRING;
}

// One $FIELD: where it lies in the event's record (param), how to read it
// (the leading dereference loads the field itself), its type.
void resolve_field(const ProbeSpec &spec, const EventFormat &ef, FetchArg &a) {
  const std::string &t = spec.text;
  const EventField *f = ef.find(a.field);
  if (!f)
    fail(t, a.pos,
         fmt::format("{}/{} has no field '{}'; its fields: {}", spec.subsys, spec.event, a.field,
                     ef.field_names()));
  a.param = f->offset;
  if (a.flags & KTRACK_FETCH_F_USER)
    fail(t, a.pos,
         "a field is read from the event's record: +uOFFS() cannot start at one (:ustring reads a user "
         "string)");
  bool str = a.type_given && is_string_type(a);
  if (f->is_dynamic) {  // __data_loc / __rel_loc: the data lies later in the record
    if (!f->is_string)
      fail(t, a.pos, fmt::format("'{}' is a dynamic array ({}): only strings are read", a.field, f->type));
    if (!a.deref.empty())
      fail(t, a.pos, fmt::format("'{}' is a string in the record: it cannot be dereferenced", a.field));
    if (a.type_given && a.type != KTRACK_FETCH_T_STRING)
      fail(t, a.pos,
           fmt::format("'{}' is a string in the record ({}): use :string or no type", a.field, f->type));
    a.flags |= f->is_relative ? KTRACK_FETCH_F_REL_LOC : KTRACK_FETCH_F_DATA_LOC;
    a.type = KTRACK_FETCH_T_STRING;
    a.size = 1;
    return;
  }
  if (f->is_array) {
    if (!a.deref.empty())
      fail(t, a.pos, fmt::format("'{}' is an array ({}): it cannot be dereferenced", a.field, f->type));
    if (f->is_string && (!a.type_given || a.type == KTRACK_FETCH_T_STRING)) {  // char[N], read in place
      a.type = KTRACK_FETCH_T_STRING;
      a.size = 1;
      return;
    }
    if (str) fail(t, a.pos, fmt::format("'{}' is {}: not a string", a.field, f->type));
    if (!a.type_given) {
      if (f->elem_size != 1 && f->elem_size != 2 && f->elem_size != 4 && f->elem_size != 8)
        fail(t, a.pos,
             fmt::format("'{}' is {}: elements of {} bytes cannot be read", a.field, f->type, f->elem_size));
      a.type = f->is_signed ? KTRACK_FETCH_T_S : KTRACK_FETCH_T_U;
      a.size = (uint8_t)f->elem_size;
    }
    if (a.count > 1) {  // TYPE[N] as written: N elements must fit
      if (a.size * a.count > f->size)
        fail(t, a.pos,
             fmt::format("'{}' is {} ({} bytes): {} elements of {} bytes do not fit it", a.field, f->type,
                         f->size, a.count, a.size));
    } else {  // the whole array
      a.count = (uint16_t)std::min<uint32_t>(f->size / a.size, KTRACK_FETCH_MAX_ARRAY);
    }
    a.deref = {0};
    return;
  }
  if (!a.deref.empty() || (str && f->is_pointer)) {  // follow the pointer the field holds
    if (!f->is_pointer && f->size != sizeof(uint64_t))
      fail(t, a.pos, fmt::format("'{}' is {}: only a pointer can be dereferenced", a.field, f->type));
    if (a.deref.empty()) a.deref = {0};  // the string at the pointer itself
    a.deref.insert(a.deref.begin(), 0);
    if (a.deref.size() > KTRACK_FETCH_MAX_DEREF)
      fail(t, a.pos,
           fmt::format("dereference is nested too deep (max {} levels)", KTRACK_FETCH_MAX_DEREF - 1));
    return;  // typed as written, x64 by default
  }
  if (str)
    fail(t, a.pos,
         fmt::format("'{}' is {}: not a string (strings are char arrays, __data_loc char[] and pointers)",
                     a.field, f->type));
  if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
    fail(t, a.pos,
         fmt::format("'{}' is {} of {} bytes: it cannot be read as a number", a.field, f->type, f->size));
  if (!a.type_given) {
    a.type = f->is_pointer ? KTRACK_FETCH_T_X : f->is_signed ? KTRACK_FETCH_T_S : KTRACK_FETCH_T_U;
    a.size = (uint8_t)f->size;
  } else if (a.size * a.count > f->size) {
    fail(t, a.pos,
         fmt::format("'{}' is {} ({} bytes): a {}-byte type does not fit it", a.field, f->type, f->size,
                     a.size * a.count));
  }
  a.deref = {0};
}

// A field of an event whose module is not loaded: sent by name with the
// type the user gave, found and checked by the kernel when the module loads
// (KTRACK_FETCH_F_BY_NAME).  Untyped, its width is unknown until then.
void field_by_name(const ProbeSpec &spec, FetchArg &a) {
  const std::string &t = spec.text;
  if (!a.type_given)
    fail(t, a.pos,
         fmt::format("module {} is not loaded, so the fields of {}/{} are not known yet: give '{}' a type "
                     "(${}:u32, :s64, :x64, :string) or load {} first",
                     spec.module, spec.subsys, spec.event, a.field, a.field, spec.module));
  if (a.flags & KTRACK_FETCH_F_USER)
    fail(t, a.pos,
         "a field is read from the event's record: +uOFFS() cannot start at one (:ustring reads a user "
         "string)");
  if (is_string_type(a)) {
    if (!a.deref.empty())
      fail(t, a.pos,
           fmt::format("'{}': a string is read as the field's kind says (no dereference) while module {} "
                       "is not loaded",
                       a.field, spec.module));
  } else {
    a.deref.insert(a.deref.begin(), 0);  // the field itself, then what it points to
    if (a.deref.size() > KTRACK_FETCH_MAX_DEREF)
      fail(t, a.pos,
           fmt::format("dereference is nested too deep (max {} levels)", KTRACK_FETCH_MAX_DEREF - 1));
  }
  a.flags |= KTRACK_FETCH_F_BY_NAME;
}

void resolve_fields(ProbeSpec &spec, SymbolSource &syms, size_t target_pos) {
  auto ef = syms.event_format(spec.subsys, spec.event);
  if (!ef && !spec.module.empty() && !syms.module_loaded(spec.module)) {
    for (auto &a : spec.args)
      if (a.src == KTRACK_FETCH_SRC_FIELD) field_by_name(spec, a);
    if (!spec.filter.empty()) compile_filter(spec);
    return;
  }
  if (!ef) {
    if (!spec.module.empty())
      fail(spec.text, target_pos,
           fmt::format("module {} is loaded but has no event {}/{} (see /sys/kernel/tracing/events/{})",
                       spec.module, spec.subsys, spec.event, spec.subsys));
    fail(spec.text, target_pos,
         fmt::format("no trace event {}/{}{} (see /sys/kernel/tracing/events)", spec.subsys, spec.event,
                     did_you_mean(closest_names(spec.subsys + "/" + spec.event, syms.tracepoint_names()))));
  }
  for (auto &a : spec.args)
    if (a.src == KTRACK_FETCH_SRC_FIELD) resolve_field(spec, *ef, a);
  if (!spec.filter.empty()) compile_filter(spec);
}

// A U event this system does not have registered: a runtime error (exit 2).
[[noreturn]] void fail_unregistered(const std::string &spec, size_t pos, const std::string &message) {
  throw Error(SpecError(spec, pos, message).what());
}

// U: the kernel finds every field by name, each time a program registers
// the event (KTRACK_FETCH_F_BY_NAME), with the type resolved here.
void to_user_event_field(FetchArg &a) {
  a.flags &= ~(KTRACK_FETCH_F_DATA_LOC | KTRACK_FETCH_F_REL_LOC);
  a.flags |= KTRACK_FETCH_F_BY_NAME;
  if (is_string_type(a))
    a.deref.clear();
  else
    a.deref = {0};
}

// U [SYSTEM/]EVENT: the fields as the program registered them (all of them
// when none is named); not registered yet, each named field needs a type.
void resolve_user_event(ProbeSpec &spec, SymbolSource &syms, size_t target_pos) {
  const std::string &t = spec.text;
  const std::string name = spec.user_event();
  auto ef = syms.user_event_format(name);
  if (!ef) {
    if (spec.args.empty())
      fail_unregistered(
          t, target_pos,
          fmt::format(
              "user event {} is not registered: start the program that registers it first, or name "
              "the fields to record with their types ($id:u32 $path:string) and the probe waits for it",
              name));
    for (auto &a : spec.args) {
      if (a.src != KTRACK_FETCH_SRC_FIELD) continue;
      if (!a.type_given)
        fail_unregistered(
            t, a.pos,
            fmt::format("user event {} is not registered yet, so the type of '{}' is not known: give it one "
                        "(${}:u32, :s64, :x64, :string) or start the program first",
                        name, a.field, a.field));
      if (!a.deref.empty() || (a.flags & KTRACK_FETCH_F_USER))
        fail(t, a.pos, "a user event's field is read in place: it cannot be dereferenced");
      if (a.type == KTRACK_FETCH_T_USTRING || a.type == KTRACK_FETCH_T_SYMBOL)
        fail(t, a.pos, "a user event's field is a number or a string (:string)");
      to_user_event_field(a);
    }
    if (!spec.filter.empty()) compile_filter(spec);
    return;
  }
  if (spec.args.empty()) {
    for (const auto &f : ef->fields) {
      FetchArg a;
      a.name = f.name;
      a.field = f.name;
      a.src = KTRACK_FETCH_SRC_FIELD;
      a.pos = target_pos;
      spec.args.push_back(a);
    }
  }
  for (auto &a : spec.args) {
    if (a.src != KTRACK_FETCH_SRC_FIELD) continue;
    if (!ef->find(a.field))
      fail(t, a.pos,
           fmt::format("user event {} has no field '{}' (its fields: {})", name, a.field, ef->field_names()));
    if (!a.deref.empty() || (a.flags & KTRACK_FETCH_F_USER))
      fail(t, a.pos, "a user event's field is read in place: it cannot be dereferenced");
    resolve_field(spec, *ef, a);
    to_user_event_field(a);
  }
  if (!spec.filter.empty()) compile_filter(spec);
}

}  // namespace

// ---- symbol resolution -------------------------------------------------------

namespace {

// t [MOD:][SUBSYS/]EVENT: MOD: of a module not loaded is pending (the
// kernel arms it when the module comes); of a loaded one, the module must
// have it; else the event must exist, and the closest names are offered.
void resolve_tracepoint(const ProbeSpec &spec, SymbolSource &syms, size_t pos) {
  const std::string name = spec.subsys.empty() ? spec.event : spec.subsys + "/" + spec.event;
  if (!spec.module.empty()) {
    if (!syms.module_loaded(spec.module) || !syms.lookup(spec.module, "__tracepoint_" + spec.event).empty())
      return;
  } else if (syms.tracepoint_exists(spec.subsys, spec.event)) {
    return;
  }
  std::vector<std::string> names = syms.tracepoint_names(), keys;
  for (const auto &n : names) keys.push_back(spec.subsys.empty() ? n.substr(n.find('/') + 1) : n);
  std::vector<std::string> close;
  for (const auto &k : closest_names(spec.subsys.empty() ? spec.event : name, keys))
    for (size_t i = 0; i < keys.size(); i++)
      if (keys[i] == k && std::find(close.begin(), close.end(), names[i]) == close.end())
        close.push_back(names[i]);
  if (close.size() > 3) close.resize(3);
  if (!spec.module.empty())
    fail(spec.text, pos,
         fmt::format("module {} has no tracepoint {}{}", spec.module, name, did_you_mean(close)));
  fail(spec.text, pos,
       fmt::format("no such tracepoint: {}{} (is its module loaded? name it MODULE:{} to wait for it)", name,
                   did_you_mean(close), name));
}

// A u/ur target this system does not have (the file, an x86-64 ELF, the
// symbol, code at the address): a runtime error (exit 2), with the spec and
// its caret as SpecError has them.
[[noreturn]] void fail_target(const std::string &spec, size_t pos, const std::string &message) {
  throw Error(SpecError(spec, pos, message).what());
}

// u / ur: PATH to its real absolute path (the kernel opens that), SYMBOL
// [+OFFS] or 0xADDR to the instruction's offset in the file.
void resolve_user(ProbeSpec &spec, size_t pos) {
  const std::string &t = spec.text;
  char real[PATH_MAX];
  if (!realpath(spec.path.c_str(), real)) {
    int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      fail_target(
          t, pos,
          fmt::format("{} does not exist: give the absolute path of a program or shared library", spec.path));
    fail_target(t, pos, explain_errno(fmt::format("resolve the path {}", spec.path), e));
  }
  std::string path = real;
  if (path.size() + 1 > KTRACK_PROBE_PATH_MAX)
    fail_target(t, pos,
                fmt::format("the real path of {} is too long (max {} characters)", spec.path,
                            KTRACK_PROBE_PATH_MAX - 1));
  std::optional<ElfSymbols> elf;
  try {
    elf.emplace(path);
  } catch (const Error &e) {
    fail_target(t, pos, e.what());
  }
  const size_t at = pos + spec.path.size() + 1;  // the symbol or address
  uint64_t addr = spec.addr;
  if (!spec.symbol.empty()) {
    auto fn = elf->function(spec.symbol);
    if (!fn)
      fail_target(t, at,
                  fmt::format("{} has no function {} (in .symtab or .dynsym){}: see 'nm {}' or 'nm -D {}'",
                              path, spec.symbol,
                              did_you_mean(closest_names(spec.symbol, elf->function_names())), path, path));
    if (fn->size && spec.offset >= fn->size)
      fail_target(
          t, at, fmt::format("{} is {} bytes long: +{} is past its end", spec.symbol, fn->size, spec.offset));
    addr = fn->addr + spec.offset;
  }
  auto off = elf->file_offset(addr);
  if (!off)
    fail_target(
        t, at,
        fmt::format("0x{:x} is in no executable segment of {}: give an address of its code as 'nm' prints it",
                    addr, path));
  spec.path = path;
  spec.file_offset = *off;
}

// Would ktrack.ko hand 'glob' to ftrace_set_filter() (kmod/probe_desc.c
// kt_check_kernel_glob(), kt_split_funcs())?  It refuses ftrace's "!GLOB"
// (remove), an index (neither names a function) and a name of
// KTRACK_PROBE_SYM_MAX bytes or more; those are matched here, as before.
bool kernel_takes_glob(const std::string &glob) {
  return !glob.empty() && glob.size() < KTRACK_PROBE_SYM_MAX && glob[0] != '!' &&
         !std::isdigit(static_cast<unsigned char>(glob[0]));
}

// Would ftrace's filter, given 'name', take that one function and no
// other ('lines': available_filter_functions)?  It matches by name: the
// name must be listed once, and not be ktrack.ko's (its ftrace_ops handler
// leaves those out).
bool ftrace_takes_alone(const std::vector<std::string> &lines, const std::string &name) {
  int n = 0;
  for (const auto &line : lines)
    if (line.compare(0, line.find_first_of(" \t"), name) == 0) {
      if (line.find("[ktrack]") != std::string::npos) return false;
      n++;
    }
  return n == 1;
}

}  // namespace

void resolve_symbols(ProbeSpec &spec, SymbolSource &syms) {
  const std::string &t = spec.text;
  auto target_pos = [&]() -> size_t {
    size_t i = 0;
    while (i < t.size() && std::isspace((unsigned char)t[i])) i++;
    while (i < t.size() && !std::isspace((unsigned char)t[i])) i++;
    while (i < t.size() && std::isspace((unsigned char)t[i])) i++;
    return i;
  };
  if ((spec.kind == ProbeKind::kKprobe || spec.kind == ProbeKind::kKretprobe) && !spec.symbol.empty()) {
    auto addrs = syms.lookup(spec.module, spec.symbol);
    if (addrs.empty() && spec.module.empty())
      fail(t, target_pos(),
           fmt::format("symbol not found: {} (is its module loaded? name it MODULE:{} to wait for it)",
                       spec.symbol, spec.symbol));
    if (addrs.size() > 1)
      fail(t, target_pos(),
           fmt::format("{} is not unique ({} definitions): write MOD:{} or probe by address", spec.symbol,
                       addrs.size(), spec.symbol));
    if (spec.kind == ProbeKind::kKprobe && spec.module.empty() && !spec.offset && !addrs.empty())
      spec.ftrace_entry = ftrace_takes_alone(syms.filter_functions(), spec.symbol);
  }
  if (spec.kind == ProbeKind::kFuncs && !spec.module.empty()) {
    // MOD:GLOB: the kernel matches the globs in the module, when it loads
    // or now (it may not be loaded yet): nothing to look up here.
  } else if (spec.kind == ProbeKind::kFuncs && spec.patterns.size() == 1 && spec.patterns[0] == "*" &&
             !spec.exit) {
    // every function: the kernel takes "*" as ftrace's function tracer
    // does, and listing them first would cost as much as attaching
    spec.kernel_glob = true;
    spec.funcs = {"*"};
  } else if (spec.kind == ProbeKind::kFuncs && !spec.exit && spec.patterns.size() == 1 &&
             has_glob(spec.patterns[0]) && syms.globs_in_kernel() && !BtfResolver::needed(spec) &&
             kernel_takes_glob(spec.patterns[0])) {
    // One glob, entries only, attached now: ftrace's filter matches it in
    // the kernel, as set_ftrace_filter does, and one ftrace_ops hooks what
    // it matched (modules that load later too).  Listing the functions here
    // first cost more than attaching them: 'probe add f:x in*' (1,057
    // functions listed) took 0.9-1.2 s on 6.12 under TCG, 0.45 s of it
    // reading available_filter_functions, against 0.2 s for the ioctl
    // (issue 16, bench/attach.sh).  A glob that matches nothing is the
    // kernel's ENOENT (explain_probe_add_errno).
    spec.kernel_glob = true;
    spec.funcs = {spec.patterns[0]};
  } else if (spec.kind == ProbeKind::kFuncs) {
    auto all = syms.filter_functions();
    // confidentiality refuses tracefs (LOCKDOWN_TRACEFS), and f probes anyway
    if (all.empty() && locked_down_confidentiality())
      throw Error(lockdown_refusal(fmt::format("add probe '{}'", spec.name), "use f probes"));
    std::set<std::string> names;
    for (const auto &line : all) {
      std::string n = line.substr(0, line.find_first_of(" \t"));
      names.insert(n);
    }
    std::set<std::string> picked;
    size_t pos = target_pos();
    for (const auto &pat : spec.patterns) {
      size_t before = picked.size();
      if (has_glob(pat)) {
        for (const auto &n : names)
          if (glob_match(pat, n)) picked.insert(n);
        if (picked.size() == before) fail(t, pos, fmt::format("no traceable function matches '{}'", pat));
      } else if (names.count(pat)) {
        picked.insert(pat);
      } else {
        // An alias of a traceable function (6.1 lists __do_sys_getppid, not
        // __x64_sys_getppid at the same address; 6.12 the other way round):
        // the same spec must attach the same function on every kernel.
        std::string alias;
        for (const auto &n : syms.aliases(pat))
          if (names.count(n)) {
            alias = n;
            break;
          }
        if (alias.empty())
          fail(
              t, pos,
              fmt::format("{} is not a function ftrace can attach to (see available_filter_functions)", pat));
        picked.insert(alias);
      }
      pos += pat.size() + 1;
    }
    if (picked.size() > KTRACK_PROBE_MAX_FUNCS) {
      // One glob over more functions than a probe holds by name: the
      // kernel matches it (ftrace's filter, one ftrace_ops), entries only.
      if (spec.patterns.size() != 1 || !has_glob(spec.patterns[0]))
        fail(t, target_pos(),
             fmt::format("the patterns name {} functions: a probe names at most {}; give one glob (as "
                         "'f:NAME GLOB') to trace more, or narrow them",
                         picked.size(), KTRACK_PROBE_MAX_FUNCS));
      if (spec.exit)
        fail(t, target_pos(),
             fmt::format(
                 "the pattern names {} functions: exits (%return or %both) hook each function, at most {}; "
                 "narrow the glob, or trace entries only",
                 picked.size(), KTRACK_PROBE_MAX_FUNCS));
      spec.kernel_glob = true;
      spec.funcs = {spec.patterns[0]};
    } else {
      spec.funcs.assign(picked.begin(), picked.end());
      spec.ftrace_entry = picked.size() == 1 && ftrace_takes_alone(all, *picked.begin());
    }
  }
  if (spec.is_user()) resolve_user(spec, target_pos());
  if (spec.kind == ProbeKind::kTracepoint) resolve_tracepoint(spec, syms, target_pos());
  if (spec.kind == ProbeKind::kEvent) resolve_fields(spec, syms, target_pos());
  if (spec.kind == ProbeKind::kUserEvent) resolve_user_event(spec, syms, target_pos());
  for (auto &a : spec.args) {
    if (a.symbol.empty()) continue;
    auto addrs = syms.lookup("", a.symbol);
    if (addrs.empty()) fail(t, a.pos, fmt::format("symbol not found: {}", a.symbol));
    if (addrs.size() > 1) fail(t, a.pos, fmt::format("{} is not unique: use @ADDR", a.symbol));
    a.param = (int64_t)addrs[0];
  }
}

}  // namespace ktrack
