// The one home of tracefs reads: where it is mounted, the traceable
// functions (available_filter_functions[_addrs]) and the event directory.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ktrack {

// The text of tracefs file 'rel' ("available_filter_functions"), from
// /sys/kernel/tracing or the older /sys/kernel/debug/tracing; nullopt when
// neither has it (tracefs not mounted, not root).
std::optional<std::string> tracefs_read(const std::string &rel);

// True when SUBSYS/EVENT (any subsystem when 'subsys' is empty) is in the
// events directory; true also when tracefs is not mounted, so that the
// kernel gives the verdict.
bool tracefs_event_exists(const std::string &subsys, const std::string &event);

// True when tracefs file or directory 'rel' ("events/sched/sched_switch/enable") exists.
bool tracefs_has(const std::string &rel);

// Every event of tracefs as "SUBSYS/EVENT", sorted (empty without tracefs).
std::vector<std::string> tracefs_events();

}  // namespace ktrack
