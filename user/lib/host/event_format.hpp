// The one home of trace event formats: the fields of SUBSYS/EVENT as the
// kernel describes them in tracefs (events/SUBSYS/EVENT/format), parsed by
// the field's own library, libtraceevent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ktrack {

struct EventField {
  std::string name;
  std::string type;  // the C type as the format writes it ("pid_t", "char[16]")
  uint32_t offset = 0;
  uint32_t size = 0;       // bytes of the field (an array: all of it)
  uint32_t elem_size = 0;  // arrays: bytes of one element
  uint32_t count = 1;      // arrays: elements
  bool is_signed = false;
  bool is_array = false;
  bool is_pointer = false;
  bool is_string = false;    // char[N], __data_loc char[]
  bool is_dynamic = false;   // __data_loc: a u32 locates the data
  bool is_relative = false;  // __rel_loc: the same, relative to the field's end
  bool common = false;       // common_pid and the other header fields
};

struct EventFormat {
  std::string subsys;
  std::string event;
  uint32_t id = 0;
  std::vector<EventField> fields;  // common fields first, then the event's own

  const EventField *find(const std::string &name) const;
  // The event's own fields' names, comma-separated (for error messages).
  std::string field_names() const;
};

// Parses the text of a format file (subsys names the event's system).
// nullopt when libtraceevent cannot parse it.
std::optional<EventFormat> parse_event_format(const std::string &subsys, const std::string &text);

// The running system's format of SUBSYS/EVENT; nullopt when tracefs does
// not have it (no such event, tracefs not mounted, not root).
std::optional<EventFormat> read_event_format(const std::string &subsys, const std::string &event);

}  // namespace ktrack
