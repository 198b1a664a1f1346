// ktrackctl probe add | list | del | compile: dynamic probes of a session.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iostream>

#include "command.hpp"
#include "device/capture.hpp"
#include "device/session.hpp"
#include "probes/probe_batch.hpp"
#include "probes/probe_client.hpp"
#include "probes/probe_spec.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

// 'probe add' without -s keeps its probes in this named session, so they
// outlive the ktrackctl process.
constexpr const char *kDefaultSession = "default";

struct AddOptions {
  std::string spec;
  std::string session = kDefaultSession;
  uint32_t stack = 0;
  uint64_t limit = 0;
};

const Command probe_cmd(30, [](CLI::App &app) {
  auto *probe = app.add_subcommand(
      "probe", "Add, list and delete dynamic probes (kprobe, kretprobe, fprobe, tracepoint, uprobe)");
  probe->require_subcommand(1);
  probe->footer(
      "SPEC (close to ftrace's kprobe_events):\n"
      "  p[:NAME] [MOD:]SYM[+OFFS]|ADDR [FETCHARGS] [if COND]   kprobe (SYM%return: a return probe)\n"
      "  r[MAXACTIVE][:NAME] [MOD:]SYM [FETCHARGS] [if COND]    return probe ($retval, $duration)\n"
      "  f[:NAME] GLOB|SYM,SYM..[%return|%both] [FETCHARGS]     function entries/exits\n"
      "  t[:NAME] [MOD:][SUBSYS/]EVENT [FETCHARGS] [if COND]    tracepoint ($argN = its arguments)\n"
      "  e[:NAME] [MOD:]SUBSYS/EVENT [FETCHARGS] [if COND]      trace event ($FIELD = its fields)\n"
      "  u[:NAME] /PATH:SYM[+OFFS]|/PATH:0xADDR [FETCHARGS]     uprobe: user code of a program or library\n"
      "  ur[:NAME] /PATH:SYM [FETCHARGS] [if COND]              uretprobe ($retval, $duration; "
      "/PATH:SYM%return)\n"
      "  (u/ur: SYM from .symtab or .dynsym, 0xADDR an ELF address as nm prints it; memory and :string\n"
      "  are the process's; no @SYM, BTF names or '=> stack')\n"
      "  ('ktrackctl events [GLOB]' lists the tracepoints and events, their arguments and fields)\n"
      "FETCHARGS: [NAME=]FETCH[:TYPE]; FETCH: $argN %REG $retval $duration $stackN $comm $cpu\n"
      "  @SYM[+OFF] @ADDR +|-OFFS(FETCH) +uOFFS(FETCH) \\IMM $stack, BTF names (file->f_pos, $arg2->pid,\n"
      "  $retval->name), $$args or $arg* (every argument); NAME may be GROUP/NAME (GROUP is ignored)\n"
      "TYPE: u8..u64 s8..s64 x8..x64 string ustring symbol TYPE[N]\n"
      "COND: FIELD OP VALUE joined by && || ! ( ); FIELD: an argument, pid, tgid, comm, cpu;\n"
      "  OP: == != < <= > >= & ~ (glob)\n"
      "Examples:\n"
      "  sudo ktrackctl probe add 'p:rd vfs_read file->f_pos count if count > 4096'\n"
      "  sudo ktrackctl probe add 'r:rl vfs_read ret=$retval lat=$duration'\n"
      "  sudo ktrackctl probe add 'f vfs_*%return'\n"
      "  sudo ktrackctl probe list\n"
      "  sudo ktrackctl probe del rd");

  auto add_opts = std::make_shared<AddOptions>();
  auto *add = probe->add_subcommand("add", "Compile SPEC and attach it to a session");
  add->add_option("spec", add_opts->spec, "The probe spec (quote it)")->required();
  add->add_option("-s,--session", add_opts->session,
                  "Named session (default: 'default', created when missing)");
  add->add_option("--stack", add_opts->stack, "Capture the kernel stack, this many frames (0..64)");
  add->add_option("--limit", add_opts->limit, "Stop recording after this many records");
  add->callback([add_opts] {
    auto c = ktrack::compile_probe_for_system(add_opts->spec, add_opts->stack, add_opts->limit,
                                              /*globs_in_kernel=*/true);
    bool created = false;
    auto session = ktrack::Session::open_named(add_opts->session, ktrack::kDevicePath, &created);
    ktrack::ProbeAdded r;
    uint64_t created_id = 0;
    try {
      created_id = created ? ktrack::Session::id_of(add_opts->session) : 0;
    } catch (const ktrack::Error &) {
      // not known: a refusal then keeps the session, as before
    }
    try {
      // a module that cannot match a glob itself gets the names, as before
      if (c.spec.kernel_glob && !(session.device().version().features & KTRACK_FEAT_KERNEL_GLOB))
        c = ktrack::compile_probe_for_system(add_opts->spec, add_opts->stack, add_opts->limit, false);
      ktrack::check_probe_features(c.spec, session.device().version().features);
      ktrack::prefer_ftrace_ops(c, session.device().version().features);
      ktrack::ProbeClient pc(session.fd());
      r = pc.add(c.spec, c.blob);
    } catch (...) {
      // A refused probe changes nothing: not even the session it was for.
      if (created_id) ktrack::Session::destroy_if_unused(add_opts->session, created_id);
      throw;
    }
    fmt::print("probe {} (id {}) added to session '{}': {}, {}\n", c.spec.name, r.id, add_opts->session,
               ktrack::mechanism_name(r.mechanism), ktrack::probe_state_name(r.state));
    if (r.state == KTRACK_PROBE_ST_PENDING)
      fmt::print("module {} is not loaded: the probe arms when it loads\n", c.spec.module);
  });

  auto list_session = std::make_shared<std::string>(kDefaultSession);
  auto *list = probe->add_subcommand("list", "Show the probes of a session: mechanism, state, hits, misses");
  list->add_option("-s,--session", *list_session, "Named session (default: 'default')");
  list->callback([list_session] {
    auto session = ktrack::Session::attach(*list_session);
    ktrack::ProbeClient pc(session.fd());
    auto probes = pc.list();
    if (probes.empty()) {
      fmt::print("no probes in session '{}'\n", *list_session);
      return;
    }
    fmt::print("{:<4} {:<20} {:<2} {:<26} {:<9} {:>10} {:>8} {:>10} {:>8} {:>7} {:>8}  {}\n", "ID", "NAME",
               "K", "MECHANISM", "STATE", "HITS", "MISSES", "FILTERED", "DROPPED", "FAULTS", "IDLE",
               "TARGET");
    for (const auto &p : probes) {
      std::string target = p.target;
      if (p.kind == KTRACK_PROBE_UPROBE || p.kind == KTRACK_PROBE_URETPROBE)
        target = ktrack::schema_from_desc(pc.get(p.id)).spec;  // the path and symbol, as written
      if (p.nr_funcs > 1) target += fmt::format(" (+{} more)", p.nr_funcs - 1);
      fmt::print("{:<4} {:<20} {:<2} {:<26} {:<9} {:>10} {:>8} {:>10} {:>8} {:>7} {:>8}  {}\n", p.id, p.name,
                 ktrack::probe_kind_name(p.kind), ktrack::mechanism_name(p.mechanism),
                 ktrack::probe_state_name(p.state), p.hits, p.misses, p.filtered, p.dropped, p.faults, p.idle,
                 target);
    }
  });

  auto del_name = std::make_shared<std::string>();
  auto del_all = std::make_shared<bool>(false);
  auto del_session = std::make_shared<std::string>(kDefaultSession);
  auto *del = probe->add_subcommand("del", "Delete a probe by name, or every probe with --all");
  del->add_option("name", *del_name, "Probe name (see 'probe list')");
  del->add_flag("--all", *del_all, "Delete every probe of the session");
  del->add_option("-s,--session", *del_session, "Named session (default: 'default')");
  del->callback([del_name, del_all, del_session] {
    if (*del_all == !del_name->empty())
      throw ktrack::UsageError("name one probe to delete, or pass --all (not both)");
    auto session = ktrack::Session::attach(*del_session);
    ktrack::ProbeClient pc(session.fd());
    if (*del_all) {
      pc.del_all();
      fmt::print("deleted every probe of session '{}'\n", *del_session);
    } else if (pc.del(*del_name)) {
      fmt::print("deleted probe {}\n", *del_name);
    } else {
      throw ktrack::Error(fmt::format("no probe named '{}' in session '{}': see 'ktrackctl probe list -s {}'",
                                      *del_name, *del_session, *del_session));
    }
  });

  auto cspec = std::make_shared<std::string>();
  auto cout_path = std::make_shared<std::string>();
  auto cstack = std::make_shared<uint32_t>(0);
  auto climit = std::make_shared<uint64_t>(0);
  auto cbatch = std::make_shared<std::string>();
  auto *comp = probe->add_subcommand("compile", "Compile SPEC to its binary description (no kernel change)");
  auto *spec_opt = comp->add_option("spec", *cspec, "The probe spec");
  auto *batch_opt = comp->add_option(
      "--batch", *cbatch,
      "Compile one spec per line of FILE ('-': stdin), kallsyms and BTF read once; print one verdict "
      "per line: 'ok NAME', 'error POS MESSAGE' (POS: the caret's offset) or 'error - MESSAGE'");
  spec_opt->excludes(batch_opt);
  comp->add_option("-o,--output", *cout_path, "Write the description here (default: print a summary)");
  comp->add_option("--stack", *cstack, "Kernel stack frames to capture");
  comp->add_option("--limit", *climit, "Hit limit");
  comp->callback([cspec, cout_path, cstack, climit, cbatch] {
    if (!cbatch->empty()) {
      ktrack::SystemSymbols syms;
      auto pc = ktrack::ProbeCompiler::for_system(syms);
      if (*cbatch == "-") {
        ktrack::compile_batch(pc, std::cin, std::cout);
        return;
      }
      std::ifstream in(*cbatch);
      if (!in) throw ktrack::Error(fmt::format("cannot read {}", *cbatch));
      ktrack::compile_batch(pc, in, std::cout);
      return;
    }
    if (cspec->empty()) throw ktrack::UsageError("probe compile needs a SPEC (or --batch FILE)");
    auto c = ktrack::compile_probe_for_system(*cspec, *cstack, *climit);
    if (!cout_path->empty()) {
      std::ofstream out(*cout_path, std::ios::binary);
      out.write(reinterpret_cast<const char *>(c.blob.data()), (std::streamsize)c.blob.size());
      if (!out) throw ktrack::Error(fmt::format("cannot write {}", *cout_path));
      return;
    }
    fmt::print("probe {} ({} bytes)\n", c.spec.name, c.blob.size());
    for (const auto &a : c.spec.args) {
      std::string d;
      for (auto o : a.deref) d += fmt::format("{}{}", d.empty() ? "" : ",", o);
      fmt::print("  {} src={} param={} deref=[{}] type={} size={} count={}{}\n", a.name, a.src, a.param, d,
                 a.type, a.size, a.count, a.flags ? fmt::format(" flags=0x{:x}", a.flags) : "");
    }
    for (const auto &f : c.spec.funcs) fmt::print("  function {}\n", f);
    if (c.spec.is_user())
      fmt::print("  file {} offset 0x{:x}{}\n", c.spec.path, c.spec.file_offset,
                 c.spec.symbol.empty() ? "" : fmt::format(" ({}+0x{:x})", c.spec.symbol, c.spec.offset));
  });
});

}  // namespace

}  // namespace ktrackctl
