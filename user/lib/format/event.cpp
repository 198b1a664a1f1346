// Decoding records with their schemas (see format/event.hpp).
#include "format/event.hpp"

#include <fmt/core.h>

#include <cstring>
#include <fstream>
#include <map>
#include <mutex>

#include "util/error.hpp"

namespace ktrack {

namespace {

inline uint64_t load_le(const uint8_t *p, uint32_t size) {
  switch (size) {
    case 1:
      return p[0];
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

inline uint64_t sign_extend(uint64_t v, uint32_t size) {
  if (size >= 8) return v;
  unsigned shift = 64 - size * 8;
  return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
}

// Names of record types nobody described ("type_N"); stable storage.
std::string_view unknown_type_name(uint16_t type) {
  static std::mutex mu;
  static std::map<uint16_t, std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = names.try_emplace(type);
  if (inserted) it->second = fmt::format("type_{}", type);
  return it->second;
}

}  // namespace

// ---- values, comms ----------------------------------------------------------

uint64_t FieldValue::at(uint32_t i) const {
  if (!desc || i >= count) return 0;
  uint32_t es = field_elem_size(desc->type);
  uint64_t v = load_le(data + size_t(i) * es, es);
  return field_is_signed(desc->type) ? sign_extend(v, es) : v;
}

void CommTable::set(uint32_t pid, std::string comm) { map_[pid] = std::move(comm); }

std::string_view CommTable::lookup(uint32_t pid) const {
  Slot &cached = cache_[pid % cache_.size()];
  if (cached.comm && cached.pid == pid) return *cached.comm;
  auto it = map_.find(pid);
  if (it == map_.end()) {
    // Unknown pids stay uncached: a later set() may name them.
    if (!resolver_) return {};
    auto c = resolver_(pid);
    it = map_.emplace(pid, c ? std::move(*c) : std::string()).first;
  }
  cached = {pid, &it->second};
  return it->second;
}

std::optional<std::string> proc_comm(uint32_t pid) {
  std::ifstream f(fmt::format("/proc/{}/comm", pid));
  std::string s;
  if (!f || !std::getline(f, s)) return std::nullopt;
  return s;
}

const FieldValue *Event::field(std::string_view n) const {
  for (const auto &f : fields)
    if (f.desc->name == n) return &f;
  return nullptr;
}

// ---- Decoder ----------------------------------------------------------------

uint32_t check_record(std::span<const uint8_t> buf, std::string *error) {
  if (uint32_t len = record_length(buf)) return len;
  if (!error) return 0;
  if (buf.size() < sizeof(ktrack_rec_hdr)) {
    *error = fmt::format("record header truncated: {} of {} bytes", buf.size(), sizeof(ktrack_rec_hdr));
    return 0;
  }
  uint16_t len;
  std::memcpy(&len, buf.data(), 2);
  if (len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN != 0 || len > KTRACK_REC_MAX)
    *error = fmt::format("record length {} is invalid (needs >= 24, a multiple of 8)", len);
  else
    *error = fmt::format("record truncated: length {} but only {} bytes left", len, buf.size());
  return 0;
}

void append_record(std::vector<uint8_t> &out, ktrack_rec_hdr hdr, std::span<const uint8_t> payload) {
  size_t len = (sizeof(hdr) + payload.size() + KTRACK_REC_ALIGN - 1) & ~size_t(KTRACK_REC_ALIGN - 1);
  if (len > KTRACK_REC_MAX)
    throw Error(fmt::format("a {}-byte payload does not fit in one record", payload.size()));
  hdr.len = static_cast<uint16_t>(len);
  size_t at = out.size();
  out.resize(at + len, 0);
  std::memcpy(out.data() + at, &hdr, sizeof(hdr));
  if (!payload.empty()) std::memcpy(out.data() + at + sizeof(hdr), payload.data(), payload.size());
}

void append_record(std::vector<uint8_t> &out, ktrack_rec_hdr hdr, std::string_view payload) {
  append_record(out, hdr,
                std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(payload.data()), payload.size()));
}

const Schema *Decoder::find_schema(uint16_t type, uint32_t probe_id, uint16_t probe_event) const {
  if (cache_generation_ != schemas_->generation()) {
    schema_cache_.fill(SchemaSlot{});
    cache_generation_ = schemas_->generation();
  }
  uint64_t k = (uint64_t(type) << 48) | (uint64_t(probe_event) << 32) | probe_id;
  SchemaSlot &slot = schema_cache_[(type * 7u + probe_id * 31u + probe_event) % schema_cache_.size()];
  if (slot.key != k) {
    slot.key = k;
    slot.schema = schemas_->find(type, probe_id, probe_event);
  }
  return slot.schema;
}

namespace {

// What picks a record's schema and where its fields are: shared by
// decode() and locate().  A probe record's fields index its data[]
// (clamped to the payload); 'probe' points to its ktrack_rec_probe header.
struct PayloadView {
  uint32_t probe_id = 0;
  uint16_t probe_event = 0;
  uint32_t fault_mask = 0;
  std::span<const uint8_t> data;
  const uint8_t *probe = nullptr;
};

inline PayloadView view_payload(uint16_t type, std::span<const uint8_t> payload) {
  PayloadView v;
  v.data = payload;
  if (type == KTRACK_REC_PROBE) {
    constexpr size_t fixed = offsetof(ktrack_rec_probe, data);
    if (payload.size() >= fixed) {
      // Field by field, not through a stack copy of the header read back
      // (the profile's hottest spot in decode; ~2% of hist).
      const uint8_t *q = payload.data();
      uint16_t data_len;
      std::memcpy(&v.probe_id, q + offsetof(ktrack_rec_probe, probe_id), sizeof(v.probe_id));
      std::memcpy(&v.probe_event, q + offsetof(ktrack_rec_probe, event), sizeof(v.probe_event));
      std::memcpy(&data_len, q + offsetof(ktrack_rec_probe, data_len), sizeof(data_len));
      std::memcpy(&v.fault_mask, q + offsetof(ktrack_rec_probe, fault_mask), sizeof(v.fault_mask));
      v.data = payload.subspan(fixed, std::min<size_t>(data_len, payload.size() - fixed));
      v.probe = q;
    } else {
      v.data = {};
    }
  } else if (type == KTRACK_REC_STACK && payload.size() >= 4) {
    std::memcpy(&v.probe_id, payload.data(), 4);
  }
  return v;
}

// An integer field that holds one value (not an array, no length field).
inline bool is_scalar_integer(const FieldDesc &f) {
  return field_is_integer(f.type) && f.size == field_elem_size(f.type) && f.length_index < 0;
}

}  // namespace

bool Decoder::locate(std::span<const uint8_t> rec, RecordFields &out) const {
  uint32_t len = check_record(rec, nullptr);
  if (!len) return false;
  uint16_t type;
  std::memcpy(&type, rec.data() + offsetof(ktrack_rec_hdr, type), sizeof(type));
  PayloadView v = view_payload(type, rec.subspan(sizeof(ktrack_rec_hdr), len - sizeof(ktrack_rec_hdr)));
  out.data = v.data;
  out.fault_mask = v.fault_mask;
  out.schema = find_schema(type, v.probe_id, v.probe_event);
  return true;
}

bool RecordFields::scalar(size_t i, int64_t &out) const {
  if (!schema || i >= schema->fields.size()) return false;
  const FieldDesc &f = schema->fields[i];
  if (!is_scalar_integer(f)) return false;
  const uint32_t es = field_elem_size(f.type);
  if (i < 32 && (fault_mask >> i) & 1) return false;
  if (size_t(f.offset) + es > data.size()) return false;
  uint64_t x = load_le(data.data() + f.offset, es);
  out = static_cast<int64_t>(field_is_signed(f.type) ? sign_extend(x, es) : x);
  return true;
}

bool Decoder::decode(std::span<const uint8_t> rec, Event &ev, std::string *error) const {
  uint32_t len = check_record(rec, error);
  if (!len) return false;
  ktrack_rec_hdr h;
  std::memcpy(&h, rec.data(), sizeof(h));
  ev.type = h.type;
  ev.cpu = h.cpu;
  ev.flags = h.flags;
  ev.len = len;
  ev.ts = h.ts;
  ev.pid = h.pid;
  ev.tgid = h.tgid;
  ev.raw = rec.first(len);
  std::span<const uint8_t> payload = ev.raw.subspan(sizeof(ktrack_rec_hdr));
  const PayloadView v = view_payload(h.type, payload);
  ev.probe_id = v.probe_id;
  ev.probe_event = v.probe_event;
  ev.fault_mask = v.fault_mask;
  ev.data = v.data;
  ev.ip = ev.parent_ip = 0;
  ev.has_ip = false;
  if (v.probe) {
    std::memcpy(&ev.ip, v.probe + offsetof(ktrack_rec_probe, ip), sizeof(ev.ip));
    std::memcpy(&ev.parent_ip, v.probe + offsetof(ktrack_rec_probe, parent_ip), sizeof(ev.parent_ip));
    // an e probe's record names no function: its probe names the event
    ev.has_ip = !(ev.probe_event == KTRACK_PROBE_EV_TP && ev.ip == 0);
  }

  ev.schema = find_schema(h.type, ev.probe_id, ev.probe_event);
  ev.name = ev.schema ? std::string_view(ev.schema->name) : unknown_type_name(h.type);
  if (comms_) {
    ev.comm = comms_->lookup(h.pid);
    if (ev.comm.empty() && h.tgid != h.pid) ev.comm = comms_->lookup(h.tgid);
  } else {
    ev.comm = {};
  }
  if (!ev.schema) {
    ev.fields.clear();
    return true;
  }

  const size_t dsize = ev.data.size();
  const uint8_t *d = ev.data.data();
  // Stores by index into a vector kept at the schema's size (records of
  // one schema come in runs: no resize, no per-field capacity check).
  ev.fields.resize(ev.schema->fields.size());
  FieldValue *out = ev.fields.data();
  size_t idx = 0;
  for (const FieldDesc &f : ev.schema->fields) {
    FieldValue v;
    v.desc = &f;
    v.faulted = idx < 32 && (ev.fault_mask >> idx) & 1;
    const uint32_t es = field_elem_size(f.type);
    if (f.type == FieldType::DynString) {
      if (size_t(f.offset) + 4 <= dsize) {
        uint32_t slot = static_cast<uint32_t>(load_le(d + f.offset, 4));
        uint32_t off = slot >> 16, l = slot & 0xffff;
        if (size_t(off) + l <= dsize) {
          v.valid = true;
          v.data = d + off;
          const void *nul = std::memchr(v.data, 0, l);
          v.len = nul ? static_cast<uint32_t>(static_cast<const uint8_t *>(nul) - v.data) : l;
        }
      }
      out[idx++] = v;
      continue;
    }
    if (is_scalar_integer(f)) {
      if (size_t(f.offset) + es <= dsize) {
        v.valid = true;
        v.data = d + f.offset;
        v.len = es;
        v.count = 1;
        uint64_t x = load_le(v.data, es);
        v.u = field_is_signed(f.type) ? sign_extend(x, es) : x;
      }
      out[idx++] = v;
      continue;
    }
    // Area: [offset, offset+size) or to the end of the data, clamped.
    if (f.offset > dsize) {
      out[idx++] = v;
      continue;
    }
    size_t avail = dsize - f.offset;
    size_t area = f.size ? std::min<size_t>(f.size, avail) : avail;
    if (f.size && f.size > avail && f.length_index < 0) {
      // A fixed-size field the record is too short for.
      out[idx++] = v;
      continue;
    }
    if (f.length_index >= 0) {
      const FieldValue &lv = out[f.length_index];
      if (!lv.valid) {
        out[idx++] = v;
        continue;
      }
      uint64_t want = lv.u * es;
      if (lv.u > (1u << 20)) want = area;
      area = std::min<size_t>(area, want);
    }
    v.valid = true;
    v.data = d + f.offset;
    if (field_is_integer(f.type)) {
      v.is_array = true;
      v.count = static_cast<uint32_t>(area / es);
      v.len = v.count * es;
    } else if (f.type == FieldType::String) {
      const void *nul = std::memchr(v.data, 0, area);
      v.len = static_cast<uint32_t>(nul ? static_cast<const uint8_t *>(nul) - v.data : area);
    } else {
      v.len = static_cast<uint32_t>(area);
    }
    out[idx++] = v;
  }
  return true;
}

}  // namespace ktrack
