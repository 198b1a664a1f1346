// SymbolSource of the running system: kallsyms and tracefs through host/.
#include "device/device.hpp"
#include "device/user_events.hpp"
#include "format/user_event_format.hpp"
#include "host/kallsyms.hpp"
#include "host/module_loader.hpp"
#include "host/tracefs.hpp"
#include "probes/probe_spec.hpp"
#include "util/text.hpp"

namespace ktrack {

SystemSymbols::SystemSymbols(bool globs_in_kernel) : globs_in_kernel_(globs_in_kernel) {}
SystemSymbols::~SystemSymbols() = default;

const KallsymsIndex &SystemSymbols::kallsyms() {
  if (!kallsyms_) kallsyms_ = std::make_unique<KallsymsIndex>(KallsymsIndex::system());
  return *kallsyms_;
}

std::vector<uint64_t> SystemSymbols::lookup(const std::string &module, const std::string &name) {
  return kallsyms().lookup(module, name);
}

std::vector<std::string> SystemSymbols::aliases(const std::string &name) { return kallsyms().aliases(name); }

std::vector<std::string> SystemSymbols::filter_functions() {
  if (loaded_) return funcs_;
  loaded_ = true;
  if (auto text = tracefs_read("available_filter_functions")) {
    std::string_view rest = *text;
    while (!rest.empty()) {
      std::string_view line = next_line(rest);
      if (!line.empty()) funcs_.emplace_back(line);
    }
  }
  return funcs_;
}

std::optional<EventFormat> SystemSymbols::event_format(const std::string &subsys, const std::string &event) {
  return read_event_format(subsys, event);
}

std::optional<EventFormat> SystemSymbols::user_event_format(const std::string &name) {
  Device dev;
  auto info = query_user_event(dev, name);
  if (!info) return std::nullopt;
  std::string why;
  auto ef = parse_user_event_format(info->format, &why);
  if (!ef) throw Error("the kernel describes user event " + name + " as '" + info->format + "': " + why);
  return ef;
}

bool SystemSymbols::tracepoint_exists(const std::string &subsys, const std::string &event) {
  if (tracefs_event_exists(subsys, event)) return true;
  // A tracepoint without a trace event (DECLARE_TRACE: sched/'s
  // sched_update_nr_running_tp) has no subsystem: t names it EVENT.
  return subsys.empty() &&
         (!lookup("", "__traceiter_" + event).empty() || !lookup("", "__tracepoint_" + event).empty());
}

std::vector<std::string> SystemSymbols::tracepoint_names() { return tracefs_events(); }

bool SystemSymbols::module_loaded(const std::string &name) { return module_status(name).loaded; }

}  // namespace ktrack
