// Record schemas: the field layouts of the built-in record types and of
// each probe, their registry, and the text form trace files keep them in
// (see format/event.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstring>

#include "format/event.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace ktrack {

namespace {

struct TypeInfo {
  FieldType type;
  const char *name;
  uint32_t size;
};

constexpr TypeInfo kTypes[] = {
    {FieldType::U8, "u8", 1},
    {FieldType::U16, "u16", 2},
    {FieldType::U32, "u32", 4},
    {FieldType::U64, "u64", 8},
    {FieldType::S8, "s8", 1},
    {FieldType::S16, "s16", 2},
    {FieldType::S32, "s32", 4},
    {FieldType::S64, "s64", 8},
    {FieldType::X8, "x8", 1},
    {FieldType::X16, "x16", 2},
    {FieldType::X32, "x32", 4},
    {FieldType::X64, "x64", 8},
    {FieldType::Symbol, "symbol", 8},
    {FieldType::String, "string", 1},
    {FieldType::DynString, "dynstring", 4},
    {FieldType::Bytes, "bytes", 1},
};

// field_elem_size() (inline in event.hpp) says the same as this table.
constexpr bool elem_sizes_agree() {
  for (const auto &i : kTypes)
    if (i.size != field_elem_size(i.type)) return false;
  return true;
}
static_assert(elem_sizes_agree());

bool valid_name(std::string_view n) {
  if (n.empty() || n.size() > 128) return false;
  return std::all_of(n.begin(), n.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
}

// Percent-encoding for the schema text form: keeps [A-Za-z0-9_.+-:/].
std::string enc(std::string_view s) {
  if (s.empty()) return "%";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '+' || c == '-' || c == ':' || c == '/')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02x}", c);
  }
  return out;
}

std::string dec(std::string_view s) {
  if (s == "%") return {};
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) throw Error("schema text: truncated %-escape");
    auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (r.ec != std::errc() || r.ptr != s.data() + i + 3) throw Error("schema text: bad %-escape");
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

template <typename T>
T num(std::string_view s, const char *what) {
  T v{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    throw Error(fmt::format("schema text: {} '{}' is not a number", what, s));
  return v;
}

FieldDesc fd(std::string name, FieldType t, uint32_t off, uint32_t size, std::string len_field = {},
             std::vector<EnumName> enums = {}) {
  FieldDesc f;
  f.name = std::move(name);
  f.type = t;
  f.offset = off;
  f.size = size;
  f.length_field = std::move(len_field);
  f.enums = std::move(enums);
  return f;
}

}  // namespace

Schema make_schema(uint16_t rec_type, std::string name, std::vector<FieldDesc> fields, uint32_t probe_id,
                   uint16_t probe_event) {
  return {.rec_type = rec_type,
          .probe_id = probe_id,
          .probe_event = probe_event,
          .name = std::move(name),
          .fields = std::move(fields),
          .user_ip = false,
          .user_site = {}};
}

FieldDesc make_field(std::string name, FieldType type, uint32_t offset, uint32_t size,
                     std::string length_field) {
  if (size == 0 && field_is_integer(type)) size = field_elem_size(type);
  return fd(std::move(name), type, offset, size, std::move(length_field));
}

std::string_view field_type_name(FieldType t) {
  for (const auto &i : kTypes)
    if (i.type == t) return i.name;
  return "?";
}

std::optional<FieldType> parse_field_type(std::string_view name) {
  for (const auto &i : kTypes)
    if (name == i.name) return i.type;
  return std::nullopt;
}

bool integer_field(const Event &ev, std::string_view name, uint64_t &out) {
  const FieldValue *f = ev.field(name);
  if (!f || !f->valid || !f->desc || !field_is_integer(f->desc->type)) return false;
  out = f->u;
  return true;
}
std::string_view context_name(uint32_t ctx) {
  static constexpr std::string_view names[] = {"task", "softirq", "hardirq", "nmi"};
  return names[ctx & KTRACK_RECF_CTX_MASK];
}

std::string_view probe_event_name(uint16_t ev) {
  switch (ev) {
    case KTRACK_PROBE_EV_ENTRY:
      return "entry";
    case KTRACK_PROBE_EV_EXIT:
      return "exit";
    case KTRACK_PROBE_EV_TP:
      return "tp";
    default:
      return "";
  }
}

// ---- Schema -----------------------------------------------------------------

void Schema::validate() {
  if (!valid_name(name))
    throw Error(
        fmt::format("record type {}: the event name '{}' must be 1-128 printable characters "
                    "without spaces",
                    rec_type, name));
  if (rec_type != KTRACK_REC_PROBE && (probe_id != 0 || probe_event != 0))
    throw Error(fmt::format("schema '{}': probe_id/probe_event are only meaningful for probe records", name));
  for (size_t i = 0; i < fields.size(); i++) {
    FieldDesc &f = fields[i];
    if (!valid_name(f.name))
      throw Error(fmt::format(
          "schema '{}': field name '{}' must be 1-128 printable characters without spaces", name, f.name));
    for (size_t j = 0; j < i; j++)
      if (fields[j].name == f.name)
        throw Error(fmt::format("schema '{}': field '{}' appears twice", name, f.name));
    uint32_t es = field_elem_size(f.type);
    if (f.type == FieldType::DynString) {
      if (f.size != 0 && f.size != 4)
        throw Error(
            fmt::format("schema '{}': dynstring field '{}' is a 4-byte slot (size 4 or 0)", name, f.name));
      f.size = 4;
    } else if (f.size % es != 0) {
      throw Error(fmt::format("schema '{}': field '{}' size {} is not a multiple of its {}-byte {} elements",
                              name, f.name, f.size, es, field_type_name(f.type)));
    }
    if (uint64_t(f.offset) + f.size > KTRACK_REC_MAX)
      throw Error(fmt::format("schema '{}': field '{}' ends beyond the largest record", name, f.name));
    f.length_index = -1;
    if (!f.length_field.empty()) {
      int idx = -1;
      for (size_t j = 0; j < i; j++)
        if (fields[j].name == f.length_field) idx = static_cast<int>(j);
      if (idx < 0 || !field_is_integer(fields[idx].type) ||
          fields[idx].size != field_elem_size(fields[idx].type))
        throw Error(
            fmt::format("schema '{}': length field '{}' of '{}' must be an earlier scalar integer field",
                        name, f.length_field, f.name));
      f.length_index = idx;
    }
  }
}

int Schema::field_index(std::string_view n) const {
  for (size_t i = 0; i < fields.size(); i++)
    if (fields[i].name == n) return static_cast<int>(i);
  return -1;
}

std::vector<Schema> builtin_schemas() {
  using F = FieldType;
  std::vector<Schema> v;
  v.push_back(make_schema(KTRACK_REC_PAD, "pad", {}));
  v.push_back(
      make_schema(KTRACK_REC_LOST, "lost",
                  {fd("count", F::U64, 0, 8), fd("first_ts", F::U64, 8, 8), fd("last_ts", F::U64, 16, 8),
                   fd("reason", F::U32, 24, 4, {},
                      {{KTRACK_LOST_FULL, "full"},
                       {KTRACK_LOST_OVERWRITTEN, "overwritten"},
                       {KTRACK_LOST_TOO_BIG, "too_big"}})}));
  v.push_back(make_schema(KTRACK_REC_MARKER, "marker", {fd("text", F::String, 0, 0)}));
  v.push_back(
      make_schema(KTRACK_REC_EMIT, "emit",
                  {fd("id", F::U32, 0, 4), fd("size", F::U32, 4, 4), fd("data", F::Bytes, 8, 0, "size")}));
  v.push_back(make_schema(KTRACK_REC_PRINTF, "printf", {fd("text", F::String, 0, 0)}));
  v.push_back(make_schema(KTRACK_REC_TEST_SEQ, "test_seq",
                          {fd("seq", F::U64, 0, 8),
                           fd("context", F::U32, 8, 4, {},
                              {{KTRACK_RECF_CTX_TASK, "task"},
                               {KTRACK_RECF_CTX_SOFTIRQ, "softirq"},
                               {KTRACK_RECF_CTX_HARDIRQ, "hardirq"},
                               {KTRACK_RECF_CTX_NMI, "nmi"}}),
                           fd("run", F::U32, 12, 4)}));
  // Module load/unload: what names the other records (Symbolizer::ingest).
  v.push_back(make_schema(
      KTRACK_REC_MODULE, "module",
      {fd("event", F::U32, 0, 4, {}, {{KTRACK_MODULE_LOAD, "load"}, {KTRACK_MODULE_UNLOAD, "unload"}}),
       fd("nr_syms", F::U32, 4, 4), fd("text_base", F::X64, 8, 8), fd("text_size", F::U64, 16, 8),
       fd("init_base", F::X64, 24, 8), fd("init_size", F::U64, 32, 8),
       fd("name", F::String, 40, KTRACK_MODULE_NAME_MAX)}));
  // A probe's action ran (=> stop/start/stack): marks the moment.
  v.push_back(make_schema(KTRACK_REC_TRIGGER, "trigger",
                          {fd("probe_id", F::U32, 0, 4),
                           fd("action", F::U16, 4, 2, {},
                              {{KTRACK_ACT_STOP, "stop"},
                               {KTRACK_ACT_START, "start"},
                               {KTRACK_ACT_STACK, "stack"},
                               {KTRACK_ACT_SNAPSHOT, "snapshot"}}),
                           fd("nth", F::U64, 8, 8)}));
  // (the symbols themselves are the Symbolizer's: not printed as bytes)
  v.push_back(make_schema(KTRACK_REC_MODULE_SYMS, "module_syms",
                          {fd("text_base", F::X64, 0, 8), fd("nr", F::U32, 8, 4)}));
  // Probes without a registered schema: the fetched data as bytes.
  v.push_back(make_schema(KTRACK_REC_PROBE, "probe", {fd("data", F::Bytes, 0, 0)}));
  v.push_back(
      make_schema(KTRACK_REC_STACK, "stack",
                  {fd("probe_id", F::U32, 0, 4), fd("nr", F::U32, 4, 4), fd("ips", F::Symbol, 8, 0, "nr")}));
  // The object tracker (issue 5) replaces these with its layouts.
  v.push_back(make_schema(KTRACK_REC_OBJ_HIT, "obj_hit", {fd("data", F::Bytes, 0, 0)}));
  v.push_back(make_schema(KTRACK_REC_OBJ_TRACK, "obj_track", {fd("data", F::Bytes, 0, 0)}));
  v.push_back(make_schema(KTRACK_REC_OBJ_UNTRACK, "obj_untrack", {fd("data", F::Bytes, 0, 0)}));
  return v;
}

// ---- SchemaRegistry ---------------------------------------------------------

namespace {
uint64_t next_generation() {
  static std::atomic<uint64_t> g{1};
  return g.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

SchemaRegistry::SchemaRegistry(bool builtins) : generation_(next_generation()) {
  if (builtins)
    for (auto &s : builtin_schemas()) add(std::move(s));
}

SchemaRegistry::SchemaRegistry(const SchemaRegistry &other) { *this = other; }

SchemaRegistry &SchemaRegistry::operator=(const SchemaRegistry &other) {
  if (this == &other) return *this;
  store_ = other.store_;
  index_.clear();
  for (auto &s : store_) index_[key(s.rec_type, s.probe_id, s.probe_event)] = &s;
  generation_ = next_generation();
  return *this;
}

void SchemaRegistry::add(Schema s) {
  s.validate();
  generation_ = next_generation();
  uint64_t k = key(s.rec_type, s.probe_id, s.probe_event);
  auto it = index_.find(k);
  if (it != index_.end()) {
    *it->second = std::move(s);
    return;
  }
  store_.push_back(std::move(s));
  index_[k] = &store_.back();
}

const Schema *SchemaRegistry::find(uint16_t type, uint32_t probe_id, uint16_t ev) const {
  if (type == KTRACK_REC_PROBE) {
    if (ev) {
      auto it = index_.find(key(type, probe_id, ev));
      if (it != index_.end()) return it->second;
    }
    auto it = index_.find(key(type, probe_id, 0));
    if (it != index_.end()) return it->second;
  }
  auto it = index_.find(key(type, 0, 0));
  return it == index_.end() ? nullptr : it->second;
}

std::vector<const Schema *> SchemaRegistry::all() const {
  std::vector<const Schema *> v;
  for (const auto &s : store_) v.push_back(&s);
  return v;
}

// Text form, one line per schema and per field:
//   S <type> <probe_id> <probe_event> <name> <nfields>
//   F <name> <type> <offset> <size> <length_field|%> <value=name,...|%>
std::string SchemaRegistry::serialize() const {
  std::string out;
  for (const auto &s : store_) {
    // a user probe's schema has a 7th word, its site (files without one
    // read as before)
    out += fmt::format("S {} {} {} {} {}{}\n", s.rec_type, s.probe_id, s.probe_event, enc(s.name),
                       s.fields.size(), s.user_ip ? " u:" + enc(s.user_site) : "");
    for (const auto &f : s.fields) {
      std::string enums;
      for (const auto &e : f.enums) {
        if (!enums.empty()) enums += ',';
        enums += fmt::format("{}={}", e.value, enc(e.name));
      }
      out += fmt::format("F {} {} {} {} {} {}\n", enc(f.name), field_type_name(f.type), f.offset, f.size,
                         enc(f.length_field), enums.empty() ? "%" : enums);
    }
  }
  return out;
}

SchemaRegistry SchemaRegistry::parse(std::string_view text) {
  SchemaRegistry reg(false);
  size_t pos = 0;
  auto next_line = [&](std::string_view &line) {
    if (pos >= text.size()) return false;
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    line = text.substr(pos, nl - pos);
    pos = nl + 1;
    return true;
  };
  std::string_view line;
  while (next_line(line)) {
    if (line.empty()) continue;
    auto t = split_ws(line);
    if ((t.size() != 6 && t.size() != 7) || t[0] != "S" || (t.size() == 7 && t[6].substr(0, 2) != "u:"))
      throw Error(fmt::format("schema text: bad schema line '{}'", line));
    Schema s;
    s.rec_type = num<uint16_t>(t[1], "record type");
    s.probe_id = num<uint32_t>(t[2], "probe id");
    s.probe_event = num<uint16_t>(t[3], "probe event");
    s.name = dec(t[4]);
    if (t.size() == 7) {
      s.user_ip = true;
      s.user_site = dec(t[6].substr(2));
    }
    auto n = num<uint32_t>(t[5], "field count");
    if (n > 4096) throw Error("schema text: too many fields");
    for (uint32_t i = 0; i < n; i++) {
      if (!next_line(line)) throw Error(fmt::format("schema text: '{}' ends before its fields", s.name));
      auto ft = split_ws(line);
      if (ft.size() != 7 || ft[0] != "F") throw Error(fmt::format("schema text: bad field line '{}'", line));
      FieldDesc f;
      f.name = dec(ft[1]);
      auto type = parse_field_type(ft[2]);
      if (!type) throw Error(fmt::format("schema text: unknown field type '{}'", ft[2]));
      f.type = *type;
      f.offset = num<uint32_t>(ft[3], "offset");
      f.size = num<uint32_t>(ft[4], "size");
      f.length_field = dec(ft[5]);
      if (ft[6] != "%") {
        std::string_view e = ft[6];
        while (!e.empty()) {
          size_t comma = e.find(',');
          std::string_view item = e.substr(0, comma);
          size_t eq = item.find('=');
          if (eq == std::string_view::npos) throw Error(fmt::format("schema text: bad enum '{}'", item));
          f.enums.push_back({num<uint64_t>(item.substr(0, eq), "enum value"), dec(item.substr(eq + 1))});
          e = comma == std::string_view::npos ? std::string_view{} : e.substr(comma + 1);
        }
      }
      s.fields.push_back(std::move(f));
    }
    reg.add(std::move(s));
  }
  return reg;
}

}  // namespace ktrack
