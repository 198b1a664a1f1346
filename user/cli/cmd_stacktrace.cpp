// ktrackctl stacktrace: the deepest kernel stack while it runs, in the manner
// of ftrace's stack tracer (stack_trace, stack_max_size).
#include <fmt/core.h>
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "capture_options.hpp"
#include "command.hpp"
#include "device/capture.hpp"
#include "device/stack_tracer.hpp"
#include "format/symbols.hpp"
#include "host/kallsyms.hpp"
#include "util/duration.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace ktrackctl {
namespace {

struct StackFlags {
  std::vector<std::string> filters;
  std::string duration;
  bool json = false;
};

// "sym+0x1a/0x40 [mod]", as ftrace's stack_trace prints a location.
std::string location(const ktrack::Symbolizer &syms, uint64_t ip, std::string *func, std::string *mod) {
  uint64_t off = 0;
  const auto *s = syms.lookup(ip, &off);
  if (!s) {
    *func = fmt::format("{:#x}", ip);
    mod->clear();
    return *func;
  }
  *func = std::string(s->name);
  *mod = std::string(s->module);
  std::string out = fmt::format("{}+{:#x}", s->name, off);
  if (s->end > s->addr) out += fmt::format("/{:#x}", s->end - s->addr);
  if (!s->module.empty()) out += fmt::format(" [{}]", s->module);
  return out;
}

void print(const ktrack::StackMax &m, bool json) {
  ktrack::Symbolizer syms;
  syms.load(ktrack::read_kallsyms());
  std::string func, mod;
  std::string where = m.func ? location(syms, m.func, &func, &mod) : "";
  std::string where_func = func;
  if (json) {
    fmt::memory_buffer b;
    fmt::format_to(fmt::appender(b), "{{\"max_bytes\":{},\"checks\":{},\"pid\":{},\"comm\":", m.max_bytes,
                   m.checks, m.pid);
    ktrack::json_escape(b, m.comm);
    b.append(std::string_view(",\"function\":"));
    ktrack::json_escape(b, where_func);
    b.append(std::string_view(",\"frames\":["));
    for (size_t i = 0; i < m.frames.size(); i++) {
      const auto &f = m.frames[i];
      std::string loc = location(syms, f.ip, &func, &mod);
      if (i) b.push_back(',');
      fmt::format_to(fmt::appender(b), "{{\"depth\":{},\"size\":{},\"location\":", f.depth, f.size);
      ktrack::json_escape(b, loc);
      b.append(std::string_view(",\"function\":"));
      ktrack::json_escape(b, func);
      b.append(std::string_view(",\"module\":"));
      ktrack::json_escape(b, mod);
      b.push_back('}');
    }
    b.append(std::string_view("]}\n"));
    fmt::print("{}", fmt::to_string(b));
    return;
  }
  if (!m.max_bytes) {
    fmt::print("no stack measured: no traced function ran in task context ({} entries seen)\n", m.checks);
    return;
  }
  fmt::print("deepest kernel stack: {} bytes, at the entry of {}, in {}-{} ({} function entries measured)\n",
             m.max_bytes, where_func, m.comm.empty() ? "<...>" : m.comm, m.pid, m.checks);
  fmt::print("        Depth    Size   Location    ({} entries)\n", m.frames.size());
  fmt::print("        -----    ----   --------\n");
  for (size_t i = 0; i < m.frames.size(); i++) {
    const auto &f = m.frames[i];
    fmt::print("  {:>2})   {:>6}   {:>5}   {}\n", i, f.depth, f.size, location(syms, f.ip, &func, &mod));
  }
}

const Command stacktrace_cmd(56, [](CLI::App &app) {
  auto f = std::make_shared<StackFlags>();
  auto *cmd = app.add_subcommand("stacktrace",
                                 "The deepest kernel stack while it runs, frame by frame (ftrace's "
                                 "stack tracer)");
  cmd->add_option(
         "--filter", f->filters,
         "Measure only at the entry of functions matching this ftrace glob (repeatable; default: every "
         "function)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("-d,--duration", f->duration, "Stop after DURATION (500ms, 10s, 2m); default: Ctrl-C");
  cmd->add_flag("--json", f->json, "JSON output (one object)");
  cmd->footer(
      "At every entry of a traced function, measures how much of the task's kernel stack is\n"
      "in use; on a new maximum, saves the stack and finds each frame on it.  Prints the\n"
      "maximum with each frame's depth and size (Depth counts from the top of the stack).\n"
      "Interrupt stacks and NMIs are not measured.  Hooking every function slows the whole\n"
      "system while it runs; --filter narrows it.  Runs until -d, Ctrl-C or the end of\n"
      "'-- COMMAND'.\n"
      "Examples:\n"
      "  sudo ktrackctl stacktrace -d 10s\n"
      "  sudo ktrackctl stacktrace --filter 'ext4_*' --filter 'jbd2_*' -- tar xf linux.tar\n"
      "  sudo ktrackctl stacktrace --json -d 5s");
  cmd->callback([f] {
    std::string filter;
    for (const auto &g : f->filters) {
      if (g.empty() || g.find_first_of(" \t") != std::string::npos)
        throw ktrack::UsageError(fmt::format("--filter '{}': give one glob per --filter", g));
      filter += (filter.empty() ? "" : " ") + g;
    }
    ktrack::check_stack_filter(filter);
    std::chrono::milliseconds dur{0};
    if (!f->duration.empty()) dur = ktrack::parse_duration(f->duration);
    CommandUnderCapture command;
    ktrack::Session s = ktrack::Session::open_anonymous();
    if (!(s.device().version().features & KTRACK_FEAT_STACK_TRACER))
      throw ktrack::Error(
          "the loaded ktrack.ko has no stack tracer: unload it and run 'ktrackctl load' to load the module "
          "that "
          "matches this ktrackctl");
    ktrack::StackTracer tracer(s);
    ktrack::StopSignals signals;
    tracer.start(filter);
    bool quiet = !trailing_command().empty() || dur.count() != 0;
    // Once this is said, every entry of a traced function is measured.
    fmt::print(stderr, "measuring kernel stacks at {}{}\n",
               filter.empty() ? "every function's entry" : "the entries of " + filter,
               quiet ? "" : "; Ctrl-C to stop");
    command.start(signals);
    ktrack::wait_until_stopped(ktrack::StopSignals::flag(), dur);
    tracer.stop();
    command.finish();
    print(tracer.read(), f->json);
  });
});

}  // namespace
}  // namespace ktrackctl
