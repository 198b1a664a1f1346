// The description a program registers for a typed user event
// (include/ktrack/ktrack_user.h): "NAME TYPE FIELD; TYPE FIELD ...", as the
// kernel checks it (kmod/user_event.c) and returns it in canonical form.
#pragma once

#include <optional>
#include <string>

#include "host/event_format.hpp"

namespace ktrack {

// The fields of a user event as an EventFormat (packed in order, a char[]
// as a __data_loc): subsys/event split at the '/' of NAME.  nullopt, with
// the reason in *error, when 'text' does not follow the grammar of
// uapi/ktrack.h.
std::optional<EventFormat> parse_user_event_format(const std::string &text, std::string *error = nullptr);

}  // namespace ktrack
