// Trace event formats through libtraceevent (see host/event_format.hpp).
#include "host/event_format.hpp"

#include <traceevent/event-parse.h>

#include <memory>

#include "host/tracefs.hpp"

namespace ktrack {

const EventField *EventFormat::find(const std::string &name) const {
  for (const auto &f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::string EventFormat::field_names() const {
  std::string out;
  for (const auto &f : fields) {
    if (f.common) continue;
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

static EventField to_field(const tep_format_field &f, bool common) {
  EventField e;
  e.name = f.name ? f.name : "";
  e.type = f.type ? f.type : "";
  e.offset = (uint32_t)f.offset;
  e.size = (uint32_t)f.size;
  e.is_signed = f.flags & TEP_FIELD_IS_SIGNED;
  e.is_array = f.flags & TEP_FIELD_IS_ARRAY;
  e.is_pointer = f.flags & TEP_FIELD_IS_POINTER;
  e.is_string = f.flags & TEP_FIELD_IS_STRING;
  e.is_dynamic = f.flags & TEP_FIELD_IS_DYNAMIC;
  e.is_relative = f.flags & TEP_FIELD_IS_RELATIVE;
  e.common = common;
  if (e.is_array && !e.is_dynamic) {
    e.count = f.arraylen ? f.arraylen : 1;
    e.elem_size = f.elementsize ? f.elementsize : (e.count ? e.size / e.count : e.size);
  } else {
    e.elem_size = e.size;
  }
  return e;
}

std::optional<EventFormat> parse_event_format(const std::string &subsys, const std::string &text) {
  std::unique_ptr<tep_handle, void (*)(tep_handle *)> tep(tep_alloc(), tep_free);
  if (!tep) return std::nullopt;
  tep_set_long_size(tep.get(), sizeof(long));
  // parsed into the handle, which frees it
  if (tep_parse_event(tep.get(), text.data(), text.size(), subsys.c_str()) != 0) return std::nullopt;
  const tep_event *ev = tep_get_first_event(tep.get());
  if (!ev) return std::nullopt;
  EventFormat out;
  out.subsys = subsys;
  out.event = ev->name ? ev->name : "";
  out.id = (uint32_t)ev->id;
  for (const tep_format_field *f = ev->format.common_fields; f; f = f->next)
    out.fields.push_back(to_field(*f, true));
  for (const tep_format_field *f = ev->format.fields; f; f = f->next)
    out.fields.push_back(to_field(*f, false));
  return out;
}

std::optional<EventFormat> read_event_format(const std::string &subsys, const std::string &event) {
  auto text = tracefs_read("events/" + subsys + "/" + event + "/format");
  if (!text) return std::nullopt;
  return parse_event_format(subsys, *text);
}

}  // namespace ktrack
