// The analysis views over the decoder (event.hpp) and the trace file
// reader (trace_file.hpp): Names backed by a schema registry, symbolizer
// and comm table, the Event -> Sample adapter, and a file driver.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ktrack/analysis.hpp"
#include "ktrack/event.hpp"
#include "ktrack/filter.hpp"
#include "ktrack/symbols.hpp"
#include "ktrack/trace_file.hpp"

namespace ktrack::analysis {

// Fills 's' from a decoded event; s.origin points to 'ev' (field access).
void sample_from_event(const Event &ev, Sample &s);

class EventNames : public Names {
 public:
  EventNames(const SchemaRegistry &schemas, const Symbolizer *symbols, const CommTable *comms)
      : schemas_(&schemas), symbols_(symbols), comms_(comms) {}

  std::string probe_name(uint32_t probe_id) const override;
  Symbol symbol(uint64_t ip) const override;
  std::string comm(uint32_t pid) const override;
  int field_id(std::string_view name) const override;
  bool field_value(const Sample &s, int id, int64_t &out) const override;
  bool field_string(const Sample &s, int id, std::string &out) const override;

 private:
  const FieldValue *lookup(const Sample &s, int id) const;

  const SchemaRegistry *schemas_;
  const Symbolizer *symbols_;
  const CommTable *comms_;
  mutable std::vector<std::string> field_names_;
  mutable FlatMap<int32_t> index_cache_{64};  // (schema, field id) -> index + 1, or -1
};

// A recorded file (or raw /dev/ktrack stream) feeding the views.
class FileSource {
 public:
  explicit FileSource(const std::string &path);
  TraceReader &reader() { return reader_; }
  EventNames &names() { return names_; }

  // Calls fn(sample) for every record that passes 'filter', in time order.
  // Returns the number of records read.  Throws Error on a damaged input
  // (after the records before the damage were delivered).
  template <typename F>
  uint64_t run(Filter &filter, F &&fn) {
    Sample s;
    uint64_t n = 0;
    bool more = primed_;
    primed_ = false;
    if (!more) more = reader_.next(ev_);
    while (more) {
      ++n;
      sample_from_event(ev_, s);
      if (filter.matches(s)) fn(s);
      more = reader_.next(ev_);
    }
    return n;
  }

 private:
  TraceReader reader_;
  EventNames names_;
  // The first record is read by the constructor, so the schemas (and
  // symbols, comms) in the chunks before it are known to --where/--field.
  Event ev_;
  bool primed_ = false;
};

}  // namespace ktrack::analysis
