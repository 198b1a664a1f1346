// Building raw records for tests and benchmarks: headers, payload bytes and
// probe records as ktrack.ko writes them (include/uapi/ktrack.h).
#pragma once

#include <uapi/ktrack.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace ktrack::testing {

inline ktrack_rec_hdr rec_hdr(uint16_t type, uint16_t cpu, uint64_t ts, uint32_t pid, uint32_t tgid) {
  ktrack_rec_hdr h{};
  h.type = type;
  h.cpu = cpu;
  h.ts = ts;
  h.pid = pid;
  h.tgid = tgid;
  return h;
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

}  // namespace ktrack::testing
