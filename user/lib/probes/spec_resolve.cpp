// Probe spec symbol resolution: kprobe targets, f globs and lists, aliases,
// tracepoints (see probes/probe_spec.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "probes/probe_spec.hpp"
#include "probes/spec_parser.hpp"
#include "util/glob.hpp"
#include "util/suggest.hpp"

namespace ktrack {

using spec_detail::fail;

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
  }
  if (spec.kind == ProbeKind::kFuncs && !spec.module.empty()) {
    // MOD:GLOB: the kernel matches the globs in the module, when it loads
    // or now (it may not be loaded yet): nothing to look up here.
  } else if (spec.kind == ProbeKind::kFuncs) {
    auto all = syms.filter_functions();
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
    if (picked.size() > KTRACK_PROBE_MAX_FUNCS)
      fail(t, target_pos(),
           fmt::format("the pattern names {} functions (max {}): narrow it", picked.size(),
                       KTRACK_PROBE_MAX_FUNCS));
    spec.funcs.assign(picked.begin(), picked.end());
  }
  if (spec.kind == ProbeKind::kTracepoint) resolve_tracepoint(spec, syms, target_pos());
  for (auto &a : spec.args) {
    if (a.symbol.empty()) continue;
    auto addrs = syms.lookup("", a.symbol);
    if (addrs.empty()) fail(t, a.pos, fmt::format("symbol not found: {}", a.symbol));
    if (addrs.size() > 1) fail(t, a.pos, fmt::format("{} is not unique: use @ADDR", a.symbol));
    a.param = (int64_t)addrs[0];
  }
}

}  // namespace ktrack
