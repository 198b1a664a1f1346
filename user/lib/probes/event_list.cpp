// What t and e probes may name (see probes/event_list.hpp).
#include "probes/event_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "host/kallsyms.hpp"
#include "host/module_loader.hpp"
#include "host/tracefs.hpp"
#include "util/error.hpp"
#include "util/glob.hpp"
#include "util/json.hpp"
#include "util/suggest.hpp"

namespace ktrack {

// ---- the running system ----------------------------------------------------------

namespace {

class SystemEventSource : public EventSource {
 public:
  std::optional<std::vector<std::string>> events() override {
    auto all = tracefs_events();
    if (all.empty()) return std::nullopt;
    // ftrace's own events (ftrace/function, ftrace/print, ...) have no
    // 'enable': nothing attaches to them.
    std::vector<std::string> out;
    for (auto &e : all)
      if (tracefs_has("events/" + e + "/enable")) out.push_back(std::move(e));
    return out;
  }

  std::vector<std::pair<std::string, std::string>> tracepoints() override {
    // Every tracepoint has its iterator function __traceiter_NAME (text:
    // listed without CONFIG_KALLSYMS_ALL too) and its struct tracepoint
    // __tracepoint_NAME (data).
    std::set<std::pair<std::string, std::string>> seen;
    KallsymsIndex ksyms = KallsymsIndex::system();
    for (const auto &s : ksyms.symbols()) {
      std::string_view n = s.name;
      for (std::string_view prefix : {"__traceiter_", "__tracepoint_"})
        if (n.size() > prefix.size() && n.substr(0, prefix.size()) == prefix) {
          std::string_view tp = n.substr(prefix.size());
          if (tp.substr(0, 4) == "ptr_") continue;  // __tracepoint_ptr_NAME: its pointer
          seen.emplace(std::string(tp), std::string(s.module));
        }
    }
    return {seen.begin(), seen.end()};
  }

  bool module_loaded(const std::string &name) override { return module_status(name).loaded; }

  std::optional<EventFormat> format(const std::string &subsys, const std::string &event) override {
    return read_event_format(subsys, event);
  }

  std::optional<std::vector<TracepointArg>> args(const std::string &module,
                                                 const std::string &event) override {
    if (!opened_) {
      opened_ = true;
      protos_ = TracepointProtos::open_system(&why_);
    }
    if (!protos_) return std::nullopt;
    return protos_->args(module, event);
  }

  std::string no_args_reason(const std::string &module) override {
    if (!protos_) return why_.empty() ? "no BTF" : why_;
    if (!module.empty() && !protos_->module_has_btf(module))
      return fmt::format("module {} has no BTF", module);  // no /sys/kernel/btf/MODULE
    return "BTF has no prototype for it";
  }

 private:
  bool opened_ = false;
  std::unique_ptr<TracepointProtos> protos_;
  std::string why_;
};

}  // namespace

std::unique_ptr<EventSource> system_event_source() { return std::make_unique<SystemEventSource>(); }

// ---- what GLOB selects -------------------------------------------------------------

EventQuery parse_event_query(const std::string &glob) {
  auto bad = [&](const std::string &why) {
    throw UsageError(fmt::format("bad event glob '{}': {}", glob, why));
  };
  EventQuery q;
  std::string s = glob;
  size_t slash = s.find('/'), colon = s.find(':');
  if (slash != std::string::npos) {  // [MOD:]SUBSYS/EVENT
    if (colon != std::string::npos && colon < slash) {
      q.module = s.substr(0, colon);
      s = s.substr(colon + 1);
      if (q.module.empty()) bad("MOD: names no module");
    }
    if (s.find(':') != std::string::npos || s.find('/') != s.rfind('/'))
      bad("write SUBSYS/EVENT, SUBSYS:EVENT, MOD:SUBSYS/EVENT or EVENT");
  } else if (colon != std::string::npos) {  // [MOD:]SUBSYS:EVENT
    size_t second = s.find(':', colon + 1);
    if (second != std::string::npos) {
      if (s.find(':', second + 1) != std::string::npos)
        bad("write SUBSYS/EVENT, SUBSYS:EVENT, MOD:SUBSYS/EVENT or EVENT");
      q.module = s.substr(0, colon);
      if (q.module.empty()) bad("MOD: names no module");
      s = s.substr(colon + 1);
    }
    s[s.find(':')] = '/';
  }
  for (char &c : q.module) {
    if (c == '-') c = '_';  // module names are written either way
    if (!std::isalnum((unsigned char)c) && c != '_' && !std::strchr("*?[]!", c))
      bad(fmt::format("'{}' is not a module name", q.module));
  }
  // "sched/" and "sched:" are every event of sched
  slash = s.find('/');
  if (slash != std::string::npos) {
    if (slash == 0) s.insert(0, "*");
    if (s.back() == '/') s += '*';
  }
  q.glob = s;
  return q;
}

bool EventQuery::matches(const EventInfo &e) const {
  if (!module.empty() && (e.module.empty() || !glob_match(module, e.module))) return false;
  if (glob.empty()) return true;
  if (glob.find('/') != std::string::npos) return !e.subsys.empty() && glob_match(glob, e.name());
  return glob_match(glob, e.event) || glob_match(glob, e.name());
}

// ---- the listing ---------------------------------------------------------------------

namespace {

[[noreturn]] void nothing_matched(const EventQuery &q, const std::string &what, EventSource &src,
                                  const std::vector<EventInfo> &all) {
  if (!q.module.empty() && !has_glob(q.module) && !src.module_loaded(q.module))
    throw UsageError(fmt::format(
        "module {} is not loaded: its tracepoints and events are listed while it is (t {}:SUBSYS/EVENT "
        "waits for it)",
        q.module, q.module));
  std::vector<std::string> names, keys;
  bool by_event = q.glob.find('/') == std::string::npos;
  for (const auto &e : all)
    if (q.module.empty() || (!e.module.empty() && glob_match(q.module, e.module))) {
      names.push_back(e.name());
      keys.push_back(by_event ? e.event : e.name());
    }
  std::vector<std::string> close;
  if (!has_glob(q.glob))
    for (const auto &k : closest_names(q.glob, keys))
      for (size_t i = 0; i < keys.size(); i++)
        if (keys[i] == k && std::find(close.begin(), close.end(), names[i]) == close.end())
          close.push_back(names[i]);
  if (close.size() > 3) close.resize(3);
  std::string where = q.module.empty() ? "" : fmt::format(" in module {}", q.module);
  throw UsageError(fmt::format("no tracepoint or trace event{} matches '{}'{}{}", where, what,
                               did_you_mean(close),
                               close.empty() && q.module.empty()
                                   ? " (a module's are listed while it is loaded; see 'ktrackctl events')"
                                   : ""));
}

}  // namespace

std::vector<EventInfo> list_events(EventSource &src, const EventQuery &q) {
  auto events = src.events();
  if (!events)
    throw Error(
        "cannot read the trace events in tracefs: run as root, with tracefs mounted "
        "(mount -t tracefs nodev /sys/kernel/tracing)");
  std::map<std::string, std::string> tp_module;  // tracepoint -> its module ("" first: the kernel's)
  for (const auto &[name, mod] : src.tracepoints()) {
    auto [it, inserted] = tp_module.emplace(name, mod);
    if (!inserted && mod.empty()) it->second = mod;
  }
  std::vector<EventInfo> all;
  std::set<std::string> with_event;
  for (const auto &e : *events) {
    size_t slash = e.find('/');
    if (slash == std::string::npos) continue;
    EventInfo info;
    info.subsys = e.substr(0, slash);
    info.event = e.substr(slash + 1);
    info.trace_event = true;
    auto it = tp_module.find(info.event);
    if (it != tp_module.end()) {
      info.tracepoint = true;
      info.module = it->second;
      with_event.insert(info.event);
    } else {
      info.args_note = info.subsys == "syscalls"
                           ? "no tracepoint of its own (syscall events ride on raw_syscalls/sys_enter and "
                             "sys_exit): e only"
                           : "no tracepoint: e only";
    }
    all.push_back(std::move(info));
  }
  for (const auto &[name, mod] : tp_module) {
    if (with_event.count(name)) continue;
    EventInfo info;
    info.event = name;
    info.module = mod;
    info.tracepoint = true;
    info.fields_note = "no trace event: t only";
    all.push_back(std::move(info));
  }
  std::vector<EventInfo> out;
  for (const auto &e : all)
    if (q.matches(e)) out.push_back(e);
  if (out.empty()) {
    std::string what = q.module.empty() ? q.glob : q.module + ":" + q.glob;
    nothing_matched(q, what.empty() ? "*" : what, src, all);
  }
  std::sort(out.begin(), out.end(), [](const EventInfo &a, const EventInfo &b) {
    return a.name() != b.name() ? a.name() < b.name() : a.module < b.module;
  });
  if (!q.details) return out;
  for (auto &e : out) {
    if (e.trace_event) {
      if (auto f = src.format(e.subsys, e.event)) {
        for (auto &field : f->fields)
          if (!field.common) e.fields.push_back(std::move(field));
      } else {
        e.fields_note = "its format cannot be read or parsed";
      }
    }
    if (e.tracepoint) {
      if (auto a = src.args(e.module, e.event)) {
        e.args_known = true;
        e.args = std::move(*a);
      } else {
        e.args_note = fmt::format("unknown ({}): $arg1..$arg{} in TP_PROTO order",
                                  src.no_args_reason(e.module), kTracepointArgs);
      }
    }
  }
  return out;
}

// ---- output ----------------------------------------------------------------------------

std::string format_events_text(const std::vector<EventInfo> &events) {
  fmt::memory_buffer b;
  auto out = std::back_inserter(b);
  for (const auto &e : events) {
    fmt::format_to(out, "{} ({})\n", e.name(), e.module.empty() ? "kernel" : "module " + e.module);
    if (!e.tracepoint || !e.args_known) {
      fmt::format_to(out, "  t args:   {}\n", e.args_note);
    } else if (e.args.empty()) {
      fmt::format_to(out, "  t args:   none\n");
    } else {
      fmt::format_to(out, "  t args:\n");
      for (const auto &a : e.args)
        fmt::format_to(
            out, "    $arg{:<3} {}{}\n", a.index, a.decl,
            a.index > kTracepointArgs ? fmt::format("  (t reads $arg1..$arg{} only)", kTracepointArgs) : "");
    }
    if (!e.fields_note.empty()) {
      fmt::format_to(out, "  e fields: {}\n", e.fields_note);
    } else if (e.fields.empty()) {
      fmt::format_to(out, "  e fields: none\n");
    } else {
      size_t wn = 0, wt = 0;
      for (const auto &f : e.fields) {
        wn = std::max(wn, f.name.size() + 1);
        wt = std::max(wt, f.type.size());
      }
      fmt::format_to(out, "  e fields:\n");
      for (const auto &f : e.fields)
        fmt::format_to(out, "    {:<{}}  {:<{}}  offset {:<4} size {}\n", "$" + f.name, wn, f.type, wt,
                       f.offset, f.size);
    }
  }
  return fmt::to_string(b);
}

std::string format_events_json(const std::vector<EventInfo> &events) {
  fmt::memory_buffer b;
  auto out = std::back_inserter(b);
  auto str_or_null = [&](const std::string &s) {
    if (s.empty())
      fmt::format_to(out, "null");
    else
      json_escape(b, s);
  };
  b.push_back('[');
  bool first = true;
  for (const auto &e : events) {
    fmt::format_to(out, "{}\n{{\"name\":", first ? "" : ",");
    first = false;
    json_escape(b, e.name());
    fmt::format_to(out, ",\"subsys\":");
    str_or_null(e.subsys);
    fmt::format_to(out, ",\"event\":");
    json_escape(b, e.event);
    fmt::format_to(out, ",\"module\":");
    str_or_null(e.module);
    fmt::format_to(out, ",\"t\":{},\"e\":{},\"args\":", e.tracepoint, e.trace_event);
    if (e.tracepoint && !e.args_known) {
      fmt::format_to(out, "null");
    } else {
      b.push_back('[');
      for (size_t i = 0; i < e.args.size(); i++) {
        const auto &a = e.args[i];
        fmt::format_to(out, "{}{{\"index\":{},\"name\":", i ? "," : "", a.index);
        str_or_null(a.name);
        fmt::format_to(out, ",\"type\":");
        json_escape(b, a.type);
        fmt::format_to(out, ",\"readable\":{}}}", a.index <= kTracepointArgs);
      }
      b.push_back(']');
    }
    fmt::format_to(out, ",\"fields\":[");
    for (size_t i = 0; i < e.fields.size(); i++) {
      const auto &f = e.fields[i];
      fmt::format_to(out, "{}{{\"name\":", i ? "," : "");
      json_escape(b, f.name);
      fmt::format_to(out, ",\"type\":");
      json_escape(b, f.type);
      fmt::format_to(out, ",\"offset\":{},\"size\":{},\"signed\":{}}}", f.offset, f.size, f.is_signed);
    }
    fmt::format_to(out, "]}}");
  }
  fmt::format_to(out, "{}]\n", events.empty() ? "" : "\n");
  return fmt::to_string(b);
}

}  // namespace ktrack
