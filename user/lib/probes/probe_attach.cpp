#include "probes/probe_attach.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include "probes/graph_scope.hpp"
#include "probes/probe_batch.hpp"
#include "probes/probe_spec.hpp"
#include "util/error.hpp"

namespace ktrack {

bool looks_like_probe_spec(const std::string &s) {
  if (s.size() < 3) return false;
  size_t i = 1;
  if (s[0] == 'r')
    while (i < s.size() && std::isdigit((unsigned char)s[i])) i++;
  if (s[0] == 'u' && s[1] == 'r') i = 2;  // ur
  if (!std::strchr("prfteuU", s[0])) return false;
  return i < s.size() && (s[i] == ' ' || s[i] == ':');
}

std::string probe_summary(const ProbeInfo &p) {
  std::string s = fmt::format("probe {}: {} hits", p.name, p.hits);
  if (p.idle) s += fmt::format(", {} while not recording", p.idle);
  if (p.filtered) s += fmt::format(", {} filtered out", p.filtered);
  if (p.dropped) s += fmt::format(", {} dropped (ring full or hit limit)", p.dropped);
  if (p.misses) s += fmt::format(", {} missed by the kernel", p.misses);
  if (p.faults) s += fmt::format(", {} fetch faults", p.faults);
  return s;
}

namespace {

// Deletes the probes named in 'names' from 'session'; never throws (a probe
// that stays is said on stderr).
void remove_probes(Session &session, std::vector<std::string> &names) noexcept {
  if (names.empty()) return;
  ProbeClient pc(session.fd());
  // the last added first: a graph's scoped probes before its root, so that
  // no scope is left open by a root taken off mid-call while they run
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    const std::string &n = *it;
    try {
      pc.del(n);
    } catch (const std::exception &e) {
      fmt::print(stderr, "warning: probe {} stays in session '{}': {}\n", n, session.name(), e.what());
    }
  }
  names.clear();
}

}  // namespace

SessionSetup probe_session_setup(const std::string &graph_root, uint32_t graph_depth) {
  auto attached = std::make_shared<std::vector<std::string>>();
  SessionSetup s;
  s.name = "probes";
  s.attach = [attached, graph_root, graph_depth](Session &session, SchemaRegistry &reg,
                                                 std::vector<std::string> &specs,
                                                 std::vector<std::string> &notes) {
    // An argument that is no probe spec fails the command (Capture says
    // so): attach nothing then, and compile every spec before adding any,
    // so that a failing command leaves no probe behind.
    if (!std::all_of(specs.begin(), specs.end(), looks_like_probe_spec)) return;
    std::vector<CompiledProbe> compiled;
    if (!graph_root.empty()) {
      if (!(session.device().version().features & KTRACK_FEAT_GRAPH_SCOPE))
        throw Error(
            "the loaded ktrack.ko cannot scope probes to a function (no KTRACK_FEAT_GRAPH_SCOPE): unload "
            "it and run 'ktrackctl load' to load the module that matches this ktrackctl");
      try {
        SystemSymbols syms;
        ProbeCompiler pc = ProbeCompiler::for_system(syms);
        compiled.push_back(pc.compile(graph_value_spec(pc, "graph_root", graph_root)));
      } catch (const Error &e) {
        throw UsageError(fmt::format("--graph {}: {}", graph_root, e.what()));
      }
      mark_graph_root(compiled.back().spec);
      compiled.back().blob = compile_probe(compiled.back().spec);
    }
    for (const auto &spec : specs) {
      // scoped to a graph, an f probe hooks each function's exit: its glob
      // is matched here, into names; so it is for a module that cannot
      // match a glob itself
      compiled.push_back(compile_probe_for_system(
          spec, 0, 0, graph_root.empty() && (session.device().version().features & KTRACK_FEAT_KERNEL_GLOB)));
      check_probe_features(compiled.back().spec, session.device().version().features);
      if (!graph_root.empty() && mark_graph_scoped(compiled.back().spec, graph_depth))
        compiled.back().blob = compile_probe(compiled.back().spec);
      prefer_ftrace_ops(compiled.back(), session.device().version().features);
    }
    specs.clear();
    ProbeClient pc(session.fd());
    try {
      for (const auto &c : compiled) {
        auto r = pc.add(c.spec, c.blob);
        attached->push_back(c.spec.name);
        reg.add(probe_decoder_schema(r.id, schema_from_desc(c.blob)));
        notes.push_back(
            fmt::format("probe {} (id {}): {}, {}{}", c.spec.name, r.id, mechanism_name(r.mechanism),
                        probe_state_name(r.state),
                        c.spec.kind == ProbeKind::kUserEvent && r.state == KTRACK_PROBE_ST_PENDING
                            ? fmt::format(" (armed when a program registers {})", c.spec.user_event())
                            : ""));
      }
    } catch (...) {
      // a later spec failed: the command does not run, so take back the
      // probes it already put on the session
      remove_probes(session, *attached);
      throw;
    }
  };
  s.describe = [](Session &session, SchemaRegistry &reg) {
    try {
      register_probe_schemas(session.fd(), reg);
    } catch (const SysError &) {
      // a module without probe support: its records have no probe schemas
    }
  };
  s.detach = [attached](Session &session, std::vector<std::string> &summary) {
    if (attached->empty()) return;
    try {
      for (const auto &p : ProbeClient(session.fd()).list())
        if (std::find(attached->begin(), attached->end(), p.name) != attached->end())
          summary.push_back(probe_summary(p));
    } catch (const Error &e) {
      summary.push_back(fmt::format("probe counts unavailable: {}", e.what()));
    }
    remove_probes(session, *attached);
  };
  return s;
}

}  // namespace ktrack
