// What t and e probes may name ('ktrackctl events [GLOB]'): the trace
// events of tracefs and the tracepoints of kallsyms (core kernel and loaded
// modules), each with where it lives, its TP_PROTO arguments from BTF (t)
// and its format fields (e).  The inputs come through EventSource, so the
// listing logic runs on synthetic systems in the tests.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host/event_format.hpp"
#include "probes/btf_resolver.hpp"

namespace ktrack {

// t probes receive $arg1..$arg5 of a tracepoint (KT_TP_NR_ARGS in
// kmod/probe_internal.h: the kernel refuses $arg6).
constexpr int kTracepointArgs = 5;

struct EventInfo {
  std::string subsys;  // empty: a tracepoint without a trace event
  std::string event;
  std::string module;        // empty: the core kernel
  bool tracepoint = false;   // t may name it
  bool trace_event = false;  // e may name it (it has a format)
  bool args_known = false;   // args come from BTF
  std::vector<TracepointArg> args;
  std::vector<EventField> fields;  // the event's own fields (common_* left out)
  std::string args_note;           // why the args are unknown or none
  std::string fields_note;         // why there are no fields

  // "SUBSYS/EVENT", or "EVENT" for a tracepoint without a trace event.
  std::string name() const { return subsys.empty() ? event : subsys + "/" + event; }
};

// Where the listing reads the system (SystemEventSource: tracefs, kallsyms
// and BTF of the running kernel).
class EventSource {
 public:
  virtual ~EventSource() = default;
  // Every trace event a probe can attach to, "SUBSYS/EVENT"; nullopt when
  // tracefs cannot be read.
  virtual std::optional<std::vector<std::string>> events() = 0;
  // Every tracepoint: (name, module), module "" for the core kernel.
  virtual std::vector<std::pair<std::string, std::string>> tracepoints() = 0;
  // Is module 'name' loaded?  (To say so when a MOD: lists nothing.)
  virtual bool module_loaded(const std::string &name) = 0;
  virtual std::optional<EventFormat> format(const std::string &subsys, const std::string &event) = 0;
  // TP_PROTO of tracepoint 'event' in 'module' ("" the kernel); nullopt
  // when BTF does not describe it.
  virtual std::optional<std::vector<TracepointArg>> args(const std::string &module,
                                                         const std::string &event) = 0;
  // Why args() knows nothing (no BTF at all, ...); empty when it may know.
  virtual std::string no_args_reason(const std::string &module) = 0;
};

// The running system.
std::unique_ptr<EventSource> system_event_source();

// What 'ktrackctl events GLOB' selects.  GLOB: SUBSYS/EVENT, SUBSYS:EVENT
// (ftrace's spelling) or EVENT, each part a glob; MOD:SUBSYS/EVENT or
// MOD:SUBSYS:EVENT keeps the events of module MOD.  Without a '/' or ':',
// the glob matches the event name or the whole name.
struct EventQuery {
  std::string module;   // a glob over module names; empty: anywhere
  std::string glob;     // empty: everything
  bool details = true;  // read formats and BTF (false: names only)

  bool matches(const EventInfo &e) const;
};

// Parses GLOB as above; throws UsageError on a malformed one.
EventQuery parse_event_query(const std::string &glob);

// Every event and tracepoint that 'q' selects, sorted by name.  Throws
// Error when tracefs cannot be read, UsageError when nothing matches (with
// the closest names, or the module that is not loaded).
std::vector<EventInfo> list_events(EventSource &src, const EventQuery &q);

// The listing as text (one block per event) and as a JSON array.
std::string format_events_text(const std::vector<EventInfo> &events);
std::string format_events_json(const std::vector<EventInfo> &events);

}  // namespace ktrack
