// ktrackctl events [GLOB]: the tracepoints and trace events of the kernel
// and the loaded modules, with what t ($argN, BTF names) and e ($FIELD) may
// name in each.
#include <fmt/core.h>

#include "command.hpp"
#include "probes/event_list.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

struct EventsOptions {
  std::string glob;
  bool json = false;
  bool names = false;
};

const Command events_cmd(33, [](CLI::App &app) {
  auto o = std::make_shared<EventsOptions>();
  auto *cmd = app.add_subcommand(
      "events", "List tracepoints and trace events, with the arguments t and the fields e may name");
  cmd->add_option("glob", o->glob,
                  "SUBSYS/EVENT, SUBSYS:EVENT or EVENT (globs: * ? [..]); MOD:SUBSYS/EVENT keeps module "
                  "MOD's (default: all)");
  auto *json = cmd->add_flag("--json", o->json,
                             "One JSON array: {name, subsys, event, module, t, e, args[{index, name, type, "
                             "readable}], fields[{name, type, offset, size, signed}]}");
  cmd->add_flag("-l,--names", o->names, "Only the names, one per line (reads no format and no BTF)")
      ->excludes(json);
  cmd->footer(
      "Each match: its name, where it lives (the kernel or a loaded module), the tracepoint's\n"
      "arguments for t probes ($argN and, from BTF, the C declaration: 't sched/sched_switch\n"
      "prev->pid' or '$arg2'; t reads $arg1..$arg5) and the trace event's own fields for e probes\n"
      "($FIELD, C type, offset and size in the record, as in its tracefs format file).\n"
      "Syscall events (syscalls/*) have fields only: they ride on raw_syscalls/sys_enter and\n"
      "sys_exit. Tracepoints without a trace event have arguments only: t names them EVENT.\n"
      "A module's events are listed while it is loaded; name its tracepoint 't MOD:SUBSYS/EVENT'\n"
      "for its BTF names. ftrace's internal events (ftrace/*: no 'enable' file) are left out.\n"
      "JSON: args is null when BTF does not describe the tracepoint, subsys null for a tracepoint\n"
      "without a trace event, module null for the kernel.\n"
      "Nothing matching GLOB is a usage error (exit 1) that names the closest events.\n"
      "Examples:\n"
      "  sudo ktrackctl events 'sched/sched_switch'\n"
      "  sudo ktrackctl events 'syscalls:sys_enter_open*'\n"
      "  sudo ktrackctl events -l 'block/*'\n"
      "  sudo ktrackctl events 'mydrv:*/*'          # every event of module mydrv\n"
      "  sudo ktrackctl events --json 'sched/*' | jq '.[].name'");
  cmd->callback([o] {
    ktrack::EventQuery q = ktrack::parse_event_query(o->glob);
    q.details = !o->names;
    auto src = ktrack::system_event_source();
    auto events = ktrack::list_events(*src, q);
    if (o->names) {
      for (const auto &e : events) fmt::print("{}\n", e.name());
    } else if (o->json) {
      fmt::print("{}", ktrack::format_events_json(events));
    } else {
      fmt::print("{}", ktrack::format_events_text(events));
    }
  });
});

}  // namespace
}  // namespace ktrackctl
