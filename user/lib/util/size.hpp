// The one size grammar of ktrackctl (--flight): a positive whole number
// of bytes with an optional binary unit, K M G (KiB MiB GiB; "B", "iB" and
// lower case allowed).  "64M", "1G", "512K", "4096".
#pragma once

#include <cstdint>
#include <string_view>

namespace ktrack {

// Bytes; 'what' names the option in the error ("--flight").  Throws
// UsageError for anything else, zero, or more than 1 TiB.
uint64_t parse_size(std::string_view text, std::string_view what = "size");

}  // namespace ktrack
