// Shell globs (* ? [abc] [a-z] [!x]) over names: function names, comms,
// event names.  The one matcher of the library: probe specs, objtrace
// function sets and the analysis filters all use it, so a pattern means the
// same wherever a user types it.  No allocation: it runs per record in -c.
#pragma once

#include <string_view>

namespace ktrack {

// True when 'pattern' matches all of 'text'.
bool glob_match(std::string_view pattern, std::string_view text);

// True when 's' has a glob metacharacter (* ? [).
bool has_glob(std::string_view s);

}  // namespace ktrack
