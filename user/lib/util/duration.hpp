// The one duration grammar of ktrackctl (-d, --since, --until, -i, --where):
// a non-negative number with an optional unit, ns us ms s m min h; no unit
// means seconds.  "500us", "250ms", "1.5s", "10", "2m", "1h".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

namespace ktrack {

// Nanoseconds; 'what' names the option in the error ("-d/--duration").
// Throws UsageError.
uint64_t parse_duration_ns(std::string_view text, std::string_view what = "duration");

// For a capture's length: positive, rounded up to whole milliseconds.
std::chrono::milliseconds parse_duration(std::string_view text);

// Sleeps until 'stop' is set or 'limit' has passed (0: no limit), looking
// at 'stop' every 50 ms: a live command's "run for -d, or until Ctrl-C".
void wait_until_stopped(const std::atomic<bool> &stop, std::chrono::milliseconds limit);

}  // namespace ktrack
