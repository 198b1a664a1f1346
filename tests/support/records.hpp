// Building raw records for tests and benchmarks: headers, payload bytes and
// probe records as ktrack.ko writes them (include/uapi/ktrack.h).
#pragma once

#include <uapi/ktrack.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/event.hpp"

namespace ktrack::testing {

inline ktrack_rec_hdr rec_hdr(uint16_t type, uint16_t cpu, uint64_t ts, uint32_t pid, uint32_t tgid) {
  return {.len = 0, .type = type, .cpu = cpu, .flags = 0, .ts = ts, .pid = pid, .tgid = tgid};
}

// The bytes of a struct, as a payload.
template <typename T>
std::string_view bytes_of(const T &v) {
  return {reinterpret_cast<const char *>(&v), sizeof(v)};
}

// A probe record's payload: struct ktrack_rec_probe, then 'data'.
inline std::string probe_payload(uint32_t probe_id, uint16_t event, uint64_t ip, uint64_t parent_ip,
                                 std::string_view data, uint32_t fault_mask = 0) {
  ktrack_rec_probe p{};
  p.probe_id = probe_id;
  p.event = event;
  p.data_len = static_cast<uint16_t>(data.size());
  p.ip = ip;
  p.parent_ip = parent_ip;
  p.fault_mask = fault_mask;
  std::string payload(offsetof(ktrack_rec_probe, data), '\0');
  std::memcpy(payload.data(), &p, payload.size());
  payload += data;
  return payload;
}

// The schema of a probe's records, as its compiled description gives it
// (event 0: every event of the probe; else KTRACK_PROBE_EV_*).
inline Schema probe_schema(uint32_t probe_id, std::string name, std::vector<FieldDesc> fields,
                           uint16_t event = 0) {
  return make_schema(KTRACK_REC_PROBE, std::move(name), std::move(fields), probe_id, event);
}

}  // namespace ktrack::testing
