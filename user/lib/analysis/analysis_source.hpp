// The analysis views over the decoder (event.hpp) and the trace file
// reader (trace_file.hpp): Names backed by a schema registry, symbolizer
// and comm table, the Event -> Sample adapter, and a file driver.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/filter.hpp"
#include "format/event.hpp"
#include "format/symbols.hpp"
#include "format/trace_file.hpp"

namespace ktrack::analysis {

// What Sample::origin points to: one record, decoded into an Event only
// when a view asks for a payload field (most records never are).
class RecordRef {
 public:
  explicit RecordRef(const Decoder &decoder) : decoder_(&decoder) {}
  void reset(std::span<const uint8_t> raw) {
    raw_ = raw;
    decoded_ = false;
    located_ = false;
  }
  std::span<const uint8_t> raw() const { return raw_; }
  // Scratch for a sample's pinned stack (sample_from_ref).
  std::vector<uint64_t> &stack_buf() const { return stack_; }
  // The decoded record (null when its header is malformed).
  const Event *event() const {
    if (!decoded_) {
      decoded_ = true;
      ok_ = decoder_->decode(raw_, ev_);
    }
    return ok_ ? &ev_ : nullptr;
  }
  // Where the record's fields are, without decoding them (null when its
  // header is malformed): enough for an integer field.
  const RecordFields *fields() const {
    if (!located_) {
      located_ = true;
      located_ok_ = decoder_->locate(raw_, fields_);
    }
    return located_ok_ ? &fields_ : nullptr;
  }

 private:
  const Decoder *decoder_;
  std::span<const uint8_t> raw_;
  mutable Event ev_;
  mutable bool decoded_ = false, ok_ = false;
  mutable RecordFields fields_;
  mutable bool located_ = false, located_ok_ = false;
  mutable std::vector<uint64_t> stack_;
};

// Fills 's' from the record 'ref' holds; s.origin points to 'ref' (field
// access) and s.comm comes from 'comms' (the pid's, else the tgid's).  With
// 'symbols', the addresses (ip, parent_ip, stack) are pinned to the record's
// time (Symbolizer::pin) so views that name them later name the module that
// held them then; the pinned stack lives in 'ref'.
void sample_from_ref(const RecordRef &ref, const CommTable *comms, Sample &s, Symbolizer *symbols = nullptr);

class EventNames : public Names {
 public:
  EventNames(const SchemaRegistry &schemas, const Symbolizer *symbols, const CommTable *comms)
      : schemas_(&schemas), symbols_(symbols), comms_(comms) {}

  std::string probe_name(uint32_t probe_id) const override;
  Symbol symbol(uint64_t ip) const override;
  uint64_t address(uint64_t ip) const override { return symbols_ ? symbols_->unpin(ip) : ip; }
  std::string comm(uint32_t pid) const override;
  int field_id(std::string_view name) const override;
  bool field_value(const Sample &s, int id, int64_t &out) const override;
  bool field_string(const Sample &s, int id, std::string &out) const override;
  // Called with each sample: a u/ur probe's ip is a user address, named
  // later by the probe's site (Schema::user_site), never a kernel symbol.
  void note_user_ip(const Sample &s) {
    if (s.kind == Kind::Entry || s.kind == Kind::Exit) note_probe_ip(s);
  }

 private:
  const FieldValue *lookup(const Sample &s, int id) const;
  // Index + 1 of field 'id' in 'schema', or -1 when it has none.
  int32_t field_slot(const Schema *schema, int id) const;
  void note_probe_ip(const Sample &s);

  const SchemaRegistry *schemas_;
  const Symbolizer *symbols_;
  const CommTable *comms_;
  mutable std::vector<std::string> field_names_;
  mutable FlatMap<int32_t> index_cache_{64};  // (schema, field id) -> index + 1, or -1
  // In front of it, by field id: the last two schemas asked and their
  // answers (a view asks the same field of runs of records of one schema,
  // or of two interleaved: a probe's entries and exits, events of two
  // kinds); a third replaces the older.
  struct SlotMemo {
    const Schema *schema[2] = {nullptr, nullptr};
    int32_t idx[2] = {0, 0};
    uint8_t older = 0;
  };
  mutable std::vector<SlotMemo> slot_memo_;
  // Both are keyed by Schema pointer, and SchemaRegistry::add() replaces a
  // probe's schema in place (a file's later schemas chunk, a live session's
  // new probe under a reused id): they hold for one registry generation.
  mutable uint64_t slots_generation_ = ~0ull;
  std::vector<uint8_t> user_probe_;                  // by probe id: 0 unknown, 1 kernel, 2 user
  std::unordered_map<uint64_t, Symbol> user_sites_;  // a user ip -> its probe's site
};

// 'path', when it names a file that can be read (or "-"); else an Error
// that says so and what to give instead.
const std::string &checked_input(const std::string &path);

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
    std::span<const uint8_t> raw = first_;
    bool more = primed_;
    primed_ = false;
    if (!more) more = reader_.next_raw(raw);
    while (more) {
      ++n;
      ref_.reset(raw);
      sample_from_ref(ref_, &reader_.comms(), s, &reader_.symbols());
      names_.note_user_ip(s);
      if (filter.matches(s)) fn(s);
      more = reader_.next_raw(raw);
    }
    return n;
  }

 private:
  TraceReader reader_;
  EventNames names_;
  RecordRef ref_;
  // The first record is read by the constructor, so the schemas (and
  // symbols, comms) in the chunks before it are known to --where/--field.
  std::span<const uint8_t> first_;
  bool primed_ = false;
};

}  // namespace ktrack::analysis
