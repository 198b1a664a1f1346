#include "analysis/analysis_source.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "util/error.hpp"

namespace ktrack::analysis {

void sample_from_ref(const RecordRef &ref, const CommTable *comms, Sample &s, Symbolizer *symbols) {
  std::span<const uint8_t> raw = ref.raw();
  // A payload too short for its type still fills the header fields (the
  // reader validated the header): the record counts as Kind::Other.
  sample_from_record(raw.data(), raw.size(), s);
  if (symbols && symbols->history()) {
    s.ip = symbols->pin(s.ip, s.ts);
    s.parent_ip = symbols->pin(s.parent_ip, s.ts);
    if (s.stack_nr) {
      std::vector<uint64_t> &st = ref.stack_buf();
      st.assign(s.stack, s.stack + s.stack_nr);
      for (uint64_t &ip : st) ip = symbols->pin(ip, s.ts);
      s.stack = st.data();
    }
  }
  if (comms) {
    s.comm = comms->lookup(s.pid);
    if (s.comm.empty() && s.tgid != s.pid) s.comm = comms->lookup(s.tgid);
  } else {
    s.comm = {};
  }
  s.origin = &ref;
}

std::string EventNames::probe_name(uint32_t probe_id) const {
  const Schema *sc = schemas_->find(KTRACK_REC_PROBE, probe_id);
  if (sc && sc->probe_id == probe_id && !sc->name.empty()) return sc->name;
  return fmt::format("probe{}", probe_id);
}

void EventNames::note_probe_ip(const Sample &s) {
  if (s.probe_id >= user_probe_.size()) {
    if (s.probe_id >= (1u << 20)) return;  // ids are small: beyond, no cache (and no name)
    user_probe_.resize(s.probe_id + 1);
  }
  uint8_t &kind = user_probe_[s.probe_id];
  const Schema *sc = nullptr;
  if (kind == 0) {
    sc = schemas_->find(KTRACK_REC_PROBE, s.probe_id);
    if (!sc || sc->probe_id != s.probe_id) return;  // not described (yet)
    kind = sc->user_ip ? 2 : 1;
  }
  if (kind != 2 || user_sites_.count(s.ip)) return;
  if (!sc) sc = schemas_->find(KTRACK_REC_PROBE, s.probe_id);
  // "SYM+0xOFF" (u), "SYM" (ur), "" (by address: the ip in hex)
  Symbol site{fmt::format("{:#x}", address(s.ip)), 0, ""};
  if (sc && !sc->user_site.empty()) {
    size_t plus = sc->user_site.find("+0x");
    site.name = sc->user_site.substr(0, plus);
    if (plus != std::string::npos) {
      const char *b = sc->user_site.data() + plus + 3, *e = sc->user_site.data() + sc->user_site.size();
      std::from_chars(b, e, site.offset, 16);
    }
  }
  user_sites_.emplace(s.ip, std::move(site));
}

Symbol EventNames::symbol(uint64_t ip) const {
  if (!user_sites_.empty())
    if (auto it = user_sites_.find(ip); it != user_sites_.end()) return it->second;
  uint64_t off = 0;
  const Symbolizer::Symbol *sym = symbols_ ? symbols_->lookup(ip, &off) : nullptr;
  if (!sym) {
    Symbol raw = Names::symbol(address(ip));
    if (symbols_) raw.module = std::string(symbols_->module_of(ip));
    return raw;
  }
  return Symbol{std::string(sym->name), off, std::string(sym->module)};
}

std::string EventNames::comm(uint32_t pid) const {
  if (!comms_) return "";
  return std::string(comms_->lookup(pid));
}

int EventNames::field_id(std::string_view name) const {
  for (size_t i = 0; i < field_names_.size(); ++i)
    if (field_names_[i] == name) return static_cast<int>(i);
  // Only names some schema has (a typo is an error, not an empty view).
  bool known = false;
  for (const Schema *sc : schemas_->all()) {
    if (sc->field_index(name) >= 0 || (name == "duration" && sc->field_index("$duration") >= 0)) {
      known = true;
      break;
    }
  }
  if (!known || field_names_.size() >= 255) return -1;
  field_names_.emplace_back(name);
  return static_cast<int>(field_names_.size() - 1);
}

int32_t EventNames::field_slot(const Schema *schema, int id) const {
  const size_t at = static_cast<size_t>(id);
  if (slots_generation_ != schemas_->generation()) {
    slots_generation_ = schemas_->generation();
    index_cache_.clear();
    slot_memo_.clear();
  }
  if (at >= slot_memo_.size()) slot_memo_.resize(std::max(at + 1, field_names_.size()));
  SlotMemo &memo = slot_memo_[at];
  if (memo.schema[0] == schema) {
    memo.older = 1;
    return memo.idx[0];
  }
  if (memo.schema[1] == schema) {
    memo.older = 0;
    return memo.idx[1];
  }
  uint64_t key = (reinterpret_cast<uintptr_t>(schema) << 8) | static_cast<uint64_t>(id);
  int32_t &idx = index_cache_[key];
  if (!idx) {
    const std::string &n = field_names_[at];
    int i = schema->field_index(n);
    if (i < 0 && n == "duration") i = schema->field_index("$duration");
    idx = i < 0 ? -1 : i + 1;
  }
  memo.schema[memo.older] = schema;
  memo.idx[memo.older] = idx;
  memo.older ^= 1;
  return idx;
}

const FieldValue *EventNames::lookup(const Sample &s, int id) const {
  if (id < 0 || !s.origin) return nullptr;
  const Event *ev = static_cast<const RecordRef *>(s.origin)->event();
  if (!ev || !ev->schema) return nullptr;
  int32_t idx = field_slot(ev->schema, id);
  if (idx < 0 || static_cast<size_t>(idx - 1) >= ev->fields.size()) return nullptr;
  const FieldValue &v = ev->fields[static_cast<size_t>(idx - 1)];
  return v.valid && !v.faulted ? &v : nullptr;
}

// Only scalar integers have a value here: read the one field from the
// record, with no decode of the others (hist -f, --where on a number).
bool EventNames::field_value(const Sample &s, int id, int64_t &out) const {
  if (id < 0 || !s.origin) return false;
  const RecordFields *rf = static_cast<const RecordRef *>(s.origin)->fields();
  if (!rf || !rf->schema) return false;
  int32_t idx = field_slot(rf->schema, id);
  return idx > 0 && rf->scalar(static_cast<size_t>(idx - 1), out);
}

bool EventNames::field_string(const Sample &s, int id, std::string &out) const {
  const FieldValue *v = lookup(s, id);
  if (!v) return false;
  if (v->desc->type == FieldType::String || v->desc->type == FieldType::DynString) {
    out.assign(v->str());
    return true;
  }
  if (v->desc->type == FieldType::Symbol && !v->is_array) {
    out = func_name(v->u);
    return true;
  }
  return false;
}

// A missing or unreadable file gets a sentence about the file itself.
const std::string &checked_input(const std::string &path) {
  if (path == "-") return path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(
        fmt::format("cannot read {}: {}; give a file written by 'ktrackctl record -o FILE' (or a raw "
                    "/dev/ktrack stream)",
                    path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw Error(fmt::format("{} is a directory; give a file written by 'ktrackctl record -o FILE'", path));
  return path;
}

FileSource::FileSource(const std::string &path)
    : reader_(checked_input(path)),
      names_(reader_.schemas(), &reader_.symbols(), &reader_.comms()),
      ref_(reader_.decoder()) {
  primed_ = reader_.next_raw(first_);
}

}  // namespace ktrack::analysis
