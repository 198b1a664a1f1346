// The decoded-record model every view uses (text, JSON, histograms, exports).
//
// A record (struct ktrack_rec_hdr + payload, see include/uapi/ktrack.h) is
// described by a Schema: an event name and a list of typed fields at fixed
// offsets.  The SchemaRegistry holds one schema per record type and, for
// KTRACK_REC_PROBE records, one per probe_id (optionally per probe event:
// entry/exit).  Adding a record type means registering its Schema once;
// every formatter, the file format and the analyses then handle it.
//
// The Decoder turns raw record bytes into an Event without copying: field
// values point into the record buffer, so an Event is valid only as long as
// the bytes it was decoded from.  Reuse one Event across decode() calls to
// avoid per-record allocations.
//
//   ktrack::SchemaRegistry reg;             // built-in schemas
//   ktrack::Decoder dec(reg);
//   ktrack::Event ev;
//   if (dec.decode(record_bytes, ev)) {
//     if (auto *f = ev.field("text")) puts(std::string(f->str()).c_str());
//   }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <uapi/ktrack.h>

namespace ktrack {

enum class FieldType : uint8_t {
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  X8,  // unsigned, printed in hex
  X16,
  X32,
  X64,
  Symbol,     // u64 kernel address, printed as sym+off [module]
  String,     // inline text, ends at the first NUL or the end of the field
  DynString,  // u32 slot (offset << 16 | length) relative to the data area (probe strings)
  Bytes,      // raw bytes, printed as hex
};

// "u8".."x64", "symbol", "string", "dynstring", "bytes"; parse_field_type
// returns nullopt for an unknown name.
std::string_view field_type_name(FieldType t);
std::optional<FieldType> parse_field_type(std::string_view name);
// Bytes of one element: 1/2/4/8 for integers and Symbol, 4 for DynString,
// 1 for String and Bytes.  Inline: the decoder asks per field of every
// record.
constexpr uint32_t field_elem_size(FieldType t) {
  switch (t) {
    case FieldType::U16:
    case FieldType::S16:
    case FieldType::X16:
      return 2;
    case FieldType::U32:
    case FieldType::S32:
    case FieldType::X32:
    case FieldType::DynString:
      return 4;
    case FieldType::U64:
    case FieldType::S64:
    case FieldType::X64:
    case FieldType::Symbol:
      return 8;
    default:
      return 1;
  }
}
constexpr bool field_is_integer(FieldType t) { return t <= FieldType::Symbol; }  // U*, S*, X*, Symbol
struct Event;
// The raw bits of integer field 'name' of 'ev'; false (out untouched) when
// it has no such field, or it is not an integer, or it faulted.
bool integer_field(const Event &ev, std::string_view name, uint64_t &out);
constexpr bool field_is_signed(FieldType t) { return t >= FieldType::S8 && t <= FieldType::S64; }  // S*

// A symbolic name for one value of an integer field (e.g. LOST reasons).
struct EnumName {
  uint64_t value;
  std::string name;
};

struct FieldDesc {
  std::string name;
  FieldType type = FieldType::U64;
  // Bytes from the start of the schema's data area (the payload, or the
  // data[] of a probe record).
  uint32_t offset = 0;
  // Bytes the field spans.  Integers/Symbol: the element size (a scalar) or
  // a multiple of it (a fixed array); String/Bytes: the area; 0 = up to the
  // end of the data (a variable array / text / blob).
  uint32_t size = 0;
  // Optional: name of an earlier integer field whose value is the element
  // count (arrays) or byte length (String/Bytes) actually used; bounded by
  // 'size' and by the end of the data.
  std::string length_field;
  std::vector<EnumName> enums;  // optional value names (integers)

  // Resolved by Schema::validate(): index of length_field, or -1.
  int length_index = -1;
};

// Shorthand: make_field("ret", FieldType::S64, 0, 8).  size 0 for a scalar
// integer/Symbol means one element.
FieldDesc make_field(std::string name, FieldType type, uint32_t offset, uint32_t size = 0,
                     std::string length_field = {});

struct Schema {
  uint16_t rec_type = 0;  // enum ktrack_rec_type
  // KTRACK_REC_PROBE only: the probe this schema describes, and the probe
  // event (KTRACK_PROBE_EV_*) it applies to, 0 = every event of the probe.
  uint32_t probe_id = 0;
  uint16_t probe_event = 0;
  std::string name;  // event name: "marker", "lost", a probe's name...
  std::vector<FieldDesc> fields;
  // A u/ur probe's records: ip and parent_ip are user addresses, never
  // named from kernel symbols; the ip is shown as user_site ("malloc+0x0",
  // ur "malloc") when the probe names a symbol, else in hex.
  bool user_ip = false;
  std::string user_site;

  // Checks names, types, sizes, length fields; resolves length_index.
  // Throws ktrack::Error with a sentence naming the bad field.
  void validate();
  int field_index(std::string_view name) const;  // -1 when absent
};

// Shorthand: make_schema(KTRACK_REC_PROBE, "open", {make_field(...)}, 7).
Schema make_schema(uint16_t rec_type, std::string name, std::vector<FieldDesc> fields, uint32_t probe_id = 0,
                   uint16_t probe_event = 0);

// Schemas by record type and probe id.  Pointers returned stay valid for the
// registry's lifetime (re-registering a key replaces the schema in place,
// so they must not be held across add() of the same key).
class SchemaRegistry {
 public:
  // Starts with the built-in schemas (LOST, MARKER, EMIT, PRINTF, TEST_SEQ,
  // PROBE, STACK, OBJ_*) unless 'builtins' is false.
  explicit SchemaRegistry(bool builtins = true);
  SchemaRegistry(const SchemaRegistry &other);
  SchemaRegistry &operator=(const SchemaRegistry &other);

  // Registers (or replaces) a schema; validates it first.
  void add(Schema s);
  // The schema for a record: for KTRACK_REC_PROBE the (probe_id, event)
  // schema, else the probe_id's any-event schema, else the generic one.
  const Schema *find(uint16_t rec_type, uint32_t probe_id = 0, uint16_t probe_event = 0) const;
  // Every schema, built-ins first, then in registration order.
  std::vector<const Schema *> all() const;

  // Compact text form (one schema per line) stored in recorded files;
  // parse() throws ktrack::Error on malformed text.
  std::string serialize() const;
  static SchemaRegistry parse(std::string_view text);

  // Changes whenever the registry does (unique across registries): lookup
  // caches compare it to know they are still right.
  uint64_t generation() const { return generation_; }

 private:
  static uint64_t key(uint16_t type, uint32_t probe_id, uint16_t ev) {
    return (uint64_t(type) << 48) | (uint64_t(ev) << 32) | probe_id;
  }
  std::deque<Schema> store_;
  std::unordered_map<uint64_t, Schema *> index_;
  uint64_t generation_ = 0;
};

// The built-in schemas, as registered by SchemaRegistry's constructor.
std::vector<Schema> builtin_schemas();

// One decoded field.  Integers: 'u' holds the value (sign-extended for
// signed types); arrays: 'count' elements at 'data'; String/DynString: str();
// Bytes: 'data'/'len'.  'valid' is false when the record is too short for
// the field (a truncated or malformed record): print it as such.
struct FieldValue {
  const FieldDesc *desc = nullptr;
  bool valid = false;
  bool is_array = false;
  bool faulted = false;  // probe fetch faulted (fault_mask bit): the value is filler
  uint64_t u = 0;
  const uint8_t *data = nullptr;
  uint32_t len = 0;    // bytes at data
  uint32_t count = 0;  // elements (arrays)

  int64_t s() const { return static_cast<int64_t>(u); }
  std::string_view str() const { return {reinterpret_cast<const char *>(data), len}; }
  // Element i of an integer array (sign-extended for signed types).
  uint64_t at(uint32_t i) const;
};

// pid -> command name.  Recorded files carry one; live views fill it from
// /proc on first sight of a pid (set_resolver).
class CommTable {
 public:
  void set(uint32_t pid, std::string comm);
  // The comm for 'pid', asking the resolver on a miss (cached, including
  // misses); empty when unknown.
  std::string_view lookup(uint32_t pid) const;
  void set_resolver(std::function<std::optional<std::string>(uint32_t)> r) { resolver_ = std::move(r); }
  const std::unordered_map<uint32_t, std::string> &entries() const { return map_; }
  void clear() {
    map_.clear();
    cache_.fill(Slot{});
  }

 private:
  mutable std::unordered_map<uint32_t, std::string> map_;
  // Direct-mapped by pid in front of the map (a lookup per record); map
  // nodes never move, so the pointers stay valid until clear().
  struct Slot {
    uint32_t pid = 0;
    const std::string *comm = nullptr;
  };
  mutable std::array<Slot, 256> cache_{};
  std::function<std::optional<std::string>(uint32_t)> resolver_;
};

// Reads /proc/PID/comm (nullopt when the task is gone).
std::optional<std::string> proc_comm(uint32_t pid);

struct Event {
  // Header (struct ktrack_rec_hdr).
  uint16_t type = 0, cpu = 0, flags = 0;
  uint32_t len = 0;
  uint64_t ts = 0;
  uint32_t pid = 0, tgid = 0;

  const Schema *schema = nullptr;  // null for a record type nobody described
  std::string_view name;           // schema name, or "type_N" for unknown types
  std::string_view comm;           // empty when unknown

  // KTRACK_REC_PROBE / KTRACK_REC_STACK.
  uint32_t probe_id = 0;
  uint16_t probe_event = 0;  // KTRACK_PROBE_EV_*
  bool has_ip = false;
  uint64_t ip = 0;
  uint64_t parent_ip = 0;
  uint32_t fault_mask = 0;  // bit i: field i's fetch faulted

  std::span<const uint8_t> raw;    // the whole record
  std::span<const uint8_t> data;   // the schema's data area
  std::vector<FieldValue> fields;  // in schema order; reused across decodes

  uint32_t context() const { return flags & KTRACK_RECF_CTX_MASK; }
  const FieldValue *field(std::string_view name) const;
};

// "task", "softirq", "hardirq", "nmi".
std::string_view context_name(uint32_t ctx);
// "entry", "exit", "tp", or "" for other values.
std::string_view probe_event_name(uint16_t ev);

// The length of the record at the start of 'buf' when its header is valid
// (len >= header, 8-aligned, <= KTRACK_REC_MAX and <= buf.size()), else 0.
// Inline: readers run it once per record.
inline uint32_t record_length(std::span<const uint8_t> buf) {
  if (buf.size() < sizeof(ktrack_rec_hdr)) return 0;
  uint16_t len;
  std::memcpy(&len, buf.data(), sizeof(len));
  if (len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN != 0 || len > KTRACK_REC_MAX || len > buf.size())
    return 0;
  return len;
}

// record_length(), and when it is 0 sets 'error' (when non-null) to a
// sentence that says what is wrong.
uint32_t check_record(std::span<const uint8_t> buf, std::string *error = nullptr);

// Appends one record (header fields from 'hdr' except len, which is computed,
// payload padded with zeros to 8 bytes) to 'out'.  For tests, benchmarks and
// tools that synthesize records; throws ktrack::Error past KTRACK_REC_MAX.
void append_record(std::vector<uint8_t> &out, ktrack_rec_hdr hdr, std::span<const uint8_t> payload);
void append_record(std::vector<uint8_t> &out, ktrack_rec_hdr hdr, std::string_view payload);

// Where a record's fields are, without decoding them (Decoder::locate):
// the views that ask one integer field of each record (hist, filters)
// read it here instead of decoding every field.
struct RecordFields {
  const Schema *schema = nullptr;  // null for a record type nobody described
  std::span<const uint8_t> data;   // what the schema's field offsets index
  uint32_t fault_mask = 0;
  // Field 'i' of the schema when it is a scalar integer, as decode()'s
  // FieldValue::s() gives it.  False (out untouched) when the field is
  // not a scalar integer, lies beyond the record or faulted.
  bool scalar(size_t i, int64_t &out) const;
};

class Decoder {
 public:
  explicit Decoder(const SchemaRegistry &schemas, const CommTable *comms = nullptr)
      : schemas_(&schemas), comms_(comms) {}

  // Decodes the record at the start of 'rec' (which may hold more bytes
  // after it).  Returns false with 'error' set when the header is malformed;
  // a payload too short for a field only marks that field invalid.
  bool decode(std::span<const uint8_t> rec, Event &ev, std::string *error = nullptr) const;

  // The schema, data area and fault mask decode() would give the record at
  // 'rec'; false when its header is malformed (as decode()).
  bool locate(std::span<const uint8_t> rec, RecordFields &out) const;

  const SchemaRegistry &schemas() const { return *schemas_; }
  void set_comms(const CommTable *comms) { comms_ = comms; }

 private:
  const Schema *find_schema(uint16_t type, uint32_t probe_id, uint16_t probe_event) const;

  const SchemaRegistry *schemas_;
  const CommTable *comms_;
  // A small direct-mapped cache in front of the registry's hash map: a
  // trace uses a handful of schemas, looked up once per record.
  struct SchemaSlot {
    uint64_t key = ~0ull;
    const Schema *schema = nullptr;
  };
  mutable std::array<SchemaSlot, 32> schema_cache_{};
  mutable uint64_t cache_generation_ = ~0ull;
};

}  // namespace ktrack
