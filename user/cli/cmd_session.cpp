// ktrackctl session create|list|destroy|start|stop, stats, marker: named
// sessions and their counters.
#include <fmt/core.h>

#include <memory>
#include <optional>

#include "command.hpp"
#include "device/session.hpp"
#include "format/format.hpp"
#include "host/kallsyms.hpp"
#include "host/sysfs.hpp"
#include "util/error.hpp"

namespace ktrackctl {
namespace {

struct CreateOpts {
  std::string name;
  uint32_t buf_pages = 0;
  std::string mode, clock;
  bool dump_on_oops = false;
  bool group = false;
};

const Command session_cmd(35, [](CLI::App &app) {
  auto *cmd = app.add_subcommand("session", "Create, list, start, stop and destroy named sessions");
  cmd->require_subcommand(1);
  cmd->footer(
      "A named session outlives the command that created it: record, trace, stats and\n"
      "probe attach to it with -s NAME; it ends with 'session destroy'.\n"
      "Examples:\n"
      "  sudo ktrackctl session create web --buffer-pages 1024 --mode overwrite\n"
      "  sudo ktrackctl session list\n"
      "  sudo ktrackctl record -s web -o web.ktrack -d 10s\n"
      "  sudo ktrackctl session destroy web\n"
      "  sudo ktrackctl session destroy --all");

  auto co = std::make_shared<CreateOpts>();
  auto *create = cmd->add_subcommand("create", "Create a named session (configured, not started)");
  create->add_option("name", co->name, "Session name: 1-31 of [A-Za-z0-9_.-]")->required();
  create->add_option("--buffer-pages", co->buf_pages, "Ring buffer pages per CPU (power of two)");
  create->add_option("--mode", co->mode, "discard or overwrite");
  create->add_option("--clock", co->clock, "local, mono or boot");
  create->add_flag(
      "--dump-on-oops", co->dump_on_oops,
      "On an oops or a panic, print the session's newest records to the console (then pause it)");
  create->add_flag("--group", co->group,
                   "Share it with the ktrack group (module loaded with group_access=1): members may record "
                   "it and write markers into it, and name its addresses from the symbols saved in "
                   "/run/ktrack/kallsyms (docs/ACCESS.md)");
  create->footer(
      "Examples:\n  sudo ktrackctl session create web --mode overwrite\n"
      "  sudo ktrackctl session create crash --mode overwrite --dump-on-oops\n"
      "  sudo ktrackctl session create lab --group    # then, as a member: ktrackctl record -s lab");
  create->callback([co] {
    ktrack::validate_session_name(co->name);
    if (co->buf_pages & (co->buf_pages - 1))
      throw ktrack::UsageError(fmt::format("--buffer-pages {} is not a power of two", co->buf_pages));
    uint32_t mode = co->mode.empty() ? KTRACK_MODE_DISCARD : ktrack::parse_mode(co->mode);
    uint32_t clock = co->clock.empty() ? KTRACK_CLOCK_LOCAL : ktrack::parse_clock(co->clock);
    ktrack::Session s = ktrack::Session::create(co->name);
    if (co->buf_pages || !co->mode.empty() || !co->clock.empty() || co->dump_on_oops || co->group) {
      if (co->group && !(s.device().version().features & KTRACK_FEAT_GROUP)) {
        ktrack::Session::destroy(co->name);
        throw ktrack::Error(
            "the loaded ktrack.ko cannot share sessions with the ktrack group: unload it and run 'ktrackctl "
            "load' to load the module that matches this ktrackctl");
      }
      if (co->dump_on_oops && !(s.device().version().features & KTRACK_FEAT_DUMP_ON_OOPS)) {
        ktrack::Session::destroy(co->name);
        throw ktrack::Error(
            "the loaded ktrack.ko cannot dump on oops: unload it and run 'ktrackctl load' to load the module "
            "that "
            "matches this ktrackctl");
      }
      ktrack::SessionConfig cfg = s.config();
      cfg.dump_on_oops = co->dump_on_oops;
      cfg.group = co->group;
      if (co->buf_pages) cfg.buf_pages = co->buf_pages;
      cfg.mode = mode;
      cfg.clock = clock;
      try {
        s.configure(cfg);
        // the members' ktrackctl reads /proc/kallsyms as zeros: root's snapshot names addresses
        if (co->group) ktrack::save_group_kallsyms(ktrack::kDevicePath);
      } catch (const ktrack::Error &) {
        ktrack::Session::destroy(co->name);  // changes nothing on error
        throw;
      }
    }
    fmt::print("session '{}' created{}\n", co->name, co->group ? ", shared with the ktrack group" : "");
    if (co->group && ktrack::read_sysfs_string("module/ktrack/parameters/group_access").value_or("N") != "Y")
      fmt::print(stderr,
                 "note: ktrack was loaded without group_access=1, so no member can open /dev/ktrack yet: "
                 "reload it with 'sudo ktrackctl unload && sudo ktrackctl load --param group_access=1'\n");
  });

  auto *list = cmd->add_subcommand("list", "List the named sessions");
  list->footer("Example:\n  sudo ktrackctl session list");
  list->callback([] {
    auto sessions = ktrack::Session::list();
    if (sessions.empty()) {
      fmt::print("no named sessions\n");
      return;
    }
    fmt::print("{:<32} {:>6} {:<8} {:>4} {:>7} {:>10}\n", "NAME", "ID", "STATE", "FDS", "PROBES",
               "BUF_PAGES");
    for (const auto &s : sessions)
      fmt::print("{:<32} {:>6} {:<8} {:>4} {:>7} {:>10}\n", s.name, s.id, ktrack::state_name(s.state),
                 s.nr_fds, s.nr_probes, s.buf_pages);
  });

  auto dname = std::make_shared<std::string>();
  auto all = std::make_shared<bool>(false);
  auto *destroy = cmd->add_subcommand("destroy", "Destroy a named session (or --all)");
  destroy->add_option("name", *dname, "Session name");
  destroy->add_flag("--all", *all, "Destroy every named session (lets 'ktrackctl unload' succeed)");
  destroy->footer("Examples:\n  sudo ktrackctl session destroy web\n  sudo ktrackctl session destroy --all");
  destroy->callback([dname, all] {
    if (*all == !dname->empty())
      throw ktrack::UsageError("give either a session name or --all to 'session destroy'");
    if (*all) {
      ktrack::Session::destroy_all();
      fmt::print("every named session destroyed\n");
    } else {
      ktrack::Session::destroy(*dname);
      fmt::print("session '{}' destroyed\n", *dname);
    }
  });

  auto sname = std::make_shared<std::string>();
  auto *start = cmd->add_subcommand("start", "Start recording into a named session's buffers");
  start->add_option("name", *sname, "Session name")->required();
  start->footer(
      "Records stay in the buffers until read: 'cat /dev/ktrack' (session 'default'),\n"
      "'ktrackctl trace -s NAME' or 'record -s NAME'.\nExample:\n  sudo ktrackctl session start web");
  start->callback([sname] {
    ktrack::Session::attach(*sname).start();
    fmt::print("session '{}' started\n", *sname);
  });
  auto *stop = cmd->add_subcommand("stop", "Stop a named session (its buffers stay readable)");
  stop->add_option("name", *sname, "Session name")->required();
  stop->footer("Example:\n  sudo ktrackctl session stop web");
  stop->callback([sname] {
    ktrack::Session s = ktrack::Session::attach(*sname);
    s.flush();
    s.stop();
    fmt::print("session '{}' stopped\n", *sname);
  });
});

struct StatsOpts {
  std::string session = KTRACK_DEFAULT_SESSION;
  bool json = false;
};

const Command stats_cmd(36, [](CLI::App &app) {
  auto o = std::make_shared<StatsOpts>();
  auto *cmd = app.add_subcommand("stats", "Per-CPU counters of a named session");
  cmd->add_option("-s,--session", o->session, "Session name (default: 'default')");
  cmd->add_flag("--json", o->json, "One JSON object");
  cmd->footer(
      "Columns: records written to the ring, dropped because it was full (discard mode)\n"
      "or too big, overwritten before being read (overwrite mode), bytes written, records\n"
      "consumed through read(), records rejected by the pid/CPU filters, wake-ups sent to\n"
      "readers (one per watermark of records a reader waits for, not one per record).\n"
      "Examples:\n  sudo ktrackctl stats -s web\n  sudo ktrackctl stats --json");
  cmd->callback([o] {
    ktrack::Session s = ktrack::Session::attach(o->session);
    ktrack::SessionStats st = s.stats();
    ktrack_cpu_stats t = st.total();
    if (o->json) {
      fmt::memory_buffer b;
      fmt::format_to(std::back_inserter(b), "{{\"session\":");
      ktrack::json_escape(b, o->session);
      fmt::format_to(std::back_inserter(b), ",\"state\":\"{}\",\"cpus\":[", ktrack::state_name(st.state));
      auto one = [&](const ktrack_cpu_stats &c, std::optional<uint64_t> wakeups) {
        fmt::format_to(std::back_inserter(b),
                       "\"written\":{},\"lost_full\":{},\"lost_too_big\":{},\"lost\":{},\"overwritten\":{},"
                       "\"bytes\":{},\"read\":{},\"filtered\":{}",
                       c.written, c.lost_full, c.lost_too_big, c.lost_full + c.lost_too_big, c.overwritten,
                       c.bytes, c.read, c.filtered);
        if (wakeups) fmt::format_to(std::back_inserter(b), ",\"wakeups\":{}", *wakeups);
        b.push_back('}');
      };
      const bool has_wakeups = !st.wakeups.empty();
      for (size_t i = 0; i < st.cpus.size(); i++) {
        const auto &c = st.cpus[i];
        if (i) b.push_back(',');
        fmt::format_to(std::back_inserter(b), "{{\"cpu\":{},\"online\":{},", c.cpu,
                       c.online ? "true" : "false");
        one(c, has_wakeups ? std::optional<uint64_t>(st.wakeups[i]) : std::nullopt);
      }
      fmt::format_to(std::back_inserter(b), "],\"total\":{{");
      one(t, has_wakeups ? std::optional<uint64_t>(st.total_wakeups()) : std::nullopt);
      fmt::format_to(std::back_inserter(b), "}}\n");
      fmt::print("{}", fmt::to_string(b));
      return;
    }
    fmt::print("session '{}': {}\n", o->session, ktrack::state_name(st.state));
    const bool has_wakeups = !st.wakeups.empty();
    fmt::print("{:>5} {:>12} {:>10} {:>8} {:>12} {:>14} {:>12} {:>10}{}\n", "CPU", "WRITTEN", "LOST_FULL",
               "TOO_BIG", "OVERWRITTEN", "BYTES", "READ", "FILTERED", has_wakeups ? "    WAKEUPS" : "");
    auto row = [&](std::string_view label, const ktrack_cpu_stats &c, uint64_t wakeups) {
      fmt::print("{:>5} {:>12} {:>10} {:>8} {:>12} {:>14} {:>12} {:>10}{}\n", label, c.written, c.lost_full,
                 c.lost_too_big, c.overwritten, c.bytes, c.read, c.filtered,
                 has_wakeups ? fmt::format(" {:>10}", wakeups) : "");
    };
    for (size_t i = 0; i < st.cpus.size(); i++) {
      const auto &c = st.cpus[i];
      row(std::to_string(c.cpu) + (c.online ? "" : "*"), c, has_wakeups ? st.wakeups[i] : 0);
    }
    row("total", t, st.total_wakeups());
  });
});

struct MarkerOpts {
  std::string session = KTRACK_DEFAULT_SESSION;
  std::vector<std::string> words;
};

const Command marker_cmd(37, [](CLI::App &app) {
  auto o = std::make_shared<MarkerOpts>();
  auto *cmd = app.add_subcommand("marker", "Write a user marker record into a running named session");
  cmd->add_option("-s,--session", o->session, "Session name (default: 'default')");
  cmd->add_option("text", o->words, "Marker text (words are joined with spaces)")->required();
  cmd->footer(
      "Programs can do the same with write() on a session fd.\n"
      "Example:\n  sudo ktrackctl marker -s web 'request 42 begins'");
  cmd->callback([o] {
    std::string text;
    for (const auto &w : o->words) text += (text.empty() ? "" : " ") + w;
    ktrack::Session s = ktrack::Session::attach(o->session);
    if (!s.write_marker(text))
      throw ktrack::Error(fmt::format(
          "the marker was dropped: session '{}' did not record it (its buffer is full: read it or "
          "use --mode overwrite; or its pid/CPU filters exclude this process)",
          o->session));
  });
});

}  // namespace
}  // namespace ktrackctl
