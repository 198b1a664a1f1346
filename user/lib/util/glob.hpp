// Globs over names (function names, comms, event names): '*', '?' and
// classes [abc] [a-z] [!x]; no backslash escapes and no POSIX classes (no
// kernel or task name needs them).  The one matcher of the library: probe
// specs, objtrace function sets and the analysis filters use it, and it is
// the algorithm of the kernel's filter glob (kmod/probe_fetch.c kt_glob), so
// a pattern means the same wherever a user types it, in a probe's 'if' or
// in --where.  No allocation: it runs per record in -c.
#pragma once

#include <string_view>

namespace ktrack {

// True when 'pattern' matches all of 'text'.
bool glob_match(std::string_view pattern, std::string_view text);

// True when 's' has a glob metacharacter (* ? [).
bool has_glob(std::string_view s);

}  // namespace ktrack
