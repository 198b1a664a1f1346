// ktrackctl objtrace: follow kernel objects through every function that
// receives them, while a command runs.
#include <fmt/core.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "command.hpp"
#include "objtrace/objtrace.hpp"
#include "objtrace/objtrace_funcs.hpp"
#include "objtrace/objtrace_run.hpp"
#include "util/error.hpp"

extern char **environ;

namespace ktrackctl {
namespace {

struct ObjtraceOpts {
  std::vector<std::string> from;
  std::vector<std::string> watch;
  std::vector<std::string> functions;
  std::string module;
  bool no_btf = false;
  bool changes_only = false;
  bool api = false;
  bool no_free = false;
  bool json = false;
  bool stats = false;
  uint32_t max_objects = 4096;
  uint32_t args = KTRACK_OBJ_MAX_ARGS;
  uint32_t max_hits = 0;
  double max_age = 0;
  std::string destructor;
  std::string follow;
  uint32_t buf_pages = 1024;
  std::string output;
  bool no_compress = false;
  std::vector<std::string> command;
};

std::atomic<bool> g_interrupted{false};

void on_sigint(int) { g_interrupted = true; }

// Spawns argv; returns its pid.
pid_t spawn(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int err = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (err) throw ktrack::SysError(fmt::format("run '{}'", argv[0]), err);
  return pid;
}

ktrack::ObjConfig build_config(const ObjtraceOpts &o) {
  ktrack::ObjConfig cfg;
  std::unique_ptr<ktrack::BtfFields> btf;
  std::string why;
  bool need_btf = !o.follow.empty() && o.follow.find("->") != std::string::npos;
  for (auto &w : o.watch) need_btf |= w.find("->") != std::string::npos;
  if (need_btf) btf = ktrack::load_vmlinux_btf(&why);
  if (need_btf && !btf)
    throw ktrack::UsageError(fmt::format("STRUCT->FIELD needs the kernel's BTF: {}; use +OFFSET:TYPE", why));
  for (auto &f : o.from) cfg.sources.push_back(ktrack::parse_obj_source(f));
  for (auto &w : o.watch) cfg.watches.push_back(ktrack::parse_obj_watch(w, btf.get()));
  cfg.functions.clear();
  for (auto &f : o.functions) cfg.functions += (cfg.functions.empty() ? "" : " ") + f;
  if (cfg.functions.empty()) cfg.functions = "*";
  cfg.max_objects = o.max_objects;
  cfg.nr_args = o.args;
  cfg.max_hits = o.max_hits;
  cfg.max_age_ns = static_cast<uint64_t>(o.max_age * 1e9);
  if (o.changes_only) cfg.flags |= KTRACK_OBJF_CHANGES_ONLY;
  if (o.api) cfg.flags |= KTRACK_OBJF_API;
  if (o.no_free) cfg.flags |= KTRACK_OBJF_NO_FREE;
  if (!o.destructor.empty()) ktrack::parse_obj_destructor(o.destructor, cfg);
  if (!o.follow.empty()) {
    // A pointer field: "+OFF" or "STRUCT->FIELD".
    auto w = ktrack::parse_obj_watch(o.follow.find("->") != std::string::npos ? o.follow : o.follow + ":ptr",
                                     btf.get());
    if (w.offset % 8) throw ktrack::UsageError(fmt::format("--follow '{}' is not a pointer field", o.follow));
    cfg.flags |= KTRACK_OBJF_DERIVE;
    cfg.derive_offset = w.offset;
  }
  if (cfg.sources.empty() && !o.api)
    throw ktrack::UsageError("say what to track: --from 'r:FUNC $retval', --from 0xADDR, or --api");
  cfg.validate();
  return cfg;
}

const Command objtrace_cmd(40, [](CLI::App &app) {
  auto o = std::make_shared<ObjtraceOpts>();
  auto *cmd =
      app.add_subcommand("objtrace", "Follow kernel objects through every function that receives them");
  cmd->add_option("--from", o->from,
                  "Source of objects: 'r:FUNC $retval', 'p:FUNC $argN', '+OFF($argN)', 0xADDR")
      ->allow_extra_args(false);
  cmd->add_option("--watch", o->watch, "Value to record at each hit: STRUCT->FIELD[:TYPE] (BTF) or +OFF:TYPE")
      ->allow_extra_args(false);
  cmd->add_option("--functions", o->functions,
                  "Functions to hook: ftrace globs, space-separated (default '*'); GLOB:mod:MODULE for one "
                  "module's")
      ->allow_extra_args(false);
  cmd->add_option("--module", o->module, "Hook only functions of this module (like '*:mod:MODULE')");
  cmd->add_flag("--no-btf", o->no_btf,
                "Do not narrow the functions by BTF argument types: check the first --args arguments "
                "of every matching function");
  cmd->add_flag("--changes-only", o->changes_only, "Record a hit only when a watched value changed");
  cmd->add_option("--max-objects", o->max_objects, "Objects tracked at once (table size)");
  cmd->add_option("--args", o->args, "Arguments checked at each function entry (1..6)");
  cmd->add_option("--max-hits", o->max_hits, "Stop tracking an object after this many hits");
  cmd->add_option("--max-age", o->max_age, "Stop tracking an object after this many seconds");
  cmd->add_option("--destructor", o->destructor, "Untrack when FUNC[:argN] is called with the object");
  cmd->add_flag("--no-free", o->no_free, "Do not untrack on kfree/kmem_cache_free");
  cmd->add_option("--follow", o->follow, "Track the object a pointer field points to: STRUCT->FIELD or +OFF");
  cmd->add_flag("--api", o->api, "Accept objects from drivers (ktrack_obj_track())");
  cmd->add_option("--buffer-pages", o->buf_pages, "Ring buffer pages per CPU");
  cmd->add_flag("--json", o->json, "Print the lives as JSON");
  cmd->add_flag("--stats", o->stats, "Print the tracker's counters to stderr at the end");
  cmd->add_option("-o,--output", o->output, "Write a trace file (read it with 'ktrackctl report --objects')");
  cmd->add_flag("--no-compress", o->no_compress, "With -o: store records uncompressed (trace format 3)");
  cmd->add_option("command", o->command, "Command to run while tracking (after --)");
  cmd->footer(
      "Tracks objects from the sources, hooks the functions, runs COMMAND (or waits for\n"
      "Ctrl-C), then prints each object's life: where it came from, every hooked function\n"
      "it went through (argument position, watched values, changes) and how it ended.\n"
      "Objects are untracked on kfree/kmem_cache_free so a reused address is a new life.\n"
      "With BTF, when the objects' struct is known (a STRUCT->FIELD watch, or the source's\n"
      "type: alloc_inode returns a struct inode *), only the functions that take a pointer\n"
      "to it are hooked, and only those arguments are checked (--no-btf: all of them).\n"
      "Examples:\n"
      "  sudo ktrackctl objtrace --from 'r:alloc_inode $retval' --watch 'inode->i_mode:u16' \\\n"
      "       --functions '*' -- ls /tmp/newdir\n"
      "  sudo ktrackctl objtrace --from 'p:kfree_skb_reason $arg1' --watch +112:u32 \\\n"
      "       --functions 'skb_* kfree_skb*' --changes-only -o skb.ktrack -- ping -c1 ::1\n"
      "  ktrackctl report --objects skb.ktrack");
  cmd->callback([o] {
    ktrack::ObjtraceRunOptions ro;
    ro.module = o->module;
    ro.use_btf = !o->no_btf;
    ro.buf_pages = o->buf_pages;
    ro.output = o->output;
    ro.compress = !o->no_compress;
    ktrack::ObjtraceRun run(build_config(*o), ro);
    if (!run.note().empty()) fmt::print(stderr, "{}\n", run.note());
    int status = 0;
    run.run([&] {
      struct sigaction sa {};
      sa.sa_handler = on_sigint;
      sigaction(SIGINT, &sa, nullptr);
      if (!o->command.empty()) {
        pid_t pid = spawn(o->command);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
      } else {
        fmt::print(stderr, "tracking objects; Ctrl-C to stop\n");
        while (!g_interrupted) pause();
      }
    });
    auto st = run.stats();
    if (o->stats || st.rec_lost) fmt::print(stderr, "{}", ktrack::format_obj_stats(st));
    if (!o->output.empty()) {
      uint64_t n = run.finish_file();
      fmt::print(stderr, "wrote {} records ({} lives) to {}\n", n, st.lives, o->output);
    } else {
      fmt::print("{}", run.lives(o->json));
    }
    if (!o->command.empty() && WIFEXITED(status) && WEXITSTATUS(status))
      fmt::print(stderr, "note: '{}' exited with status {}\n", o->command[0], WEXITSTATUS(status));
  });
});

}  // namespace
}  // namespace ktrackctl
