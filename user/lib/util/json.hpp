// JSON string output: the one escaper of the library (report --json, the
// analysis views' JSON, exports, session list --json).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace ktrack {

// Appends 's' as a quoted JSON string.  Control characters and bytes >= 0x7f
// become \u00XX (kernel strings need not be UTF-8), so every line stays
// valid JSON.
void json_escape(fmt::memory_buffer &out, std::string_view s);

}  // namespace ktrack
