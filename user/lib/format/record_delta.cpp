// See record_delta.hpp for the transform and why it exists.
#include "format/record_delta.hpp"

#include <array>
#include <cstring>

#include <uapi/ktrack.h>

namespace ktrack {
namespace {

constexpr size_t kHdr = sizeof(struct ktrack_rec_hdr);
constexpr size_t kSlots = 64;

struct Kind {
  uint64_t key = ~0ull;  // len | type << 16 | cpu << 32; ~0: empty
  size_t off = 0;        // the kind's previous record in the chunk
};

inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store64(uint8_t *p, uint64_t v) { std::memcpy(p, &v, sizeof(v)); }

// The record at 'off' of the (original) chunk, or 0 if none parses there.
inline size_t record_len(const uint8_t *buf, size_t off, size_t n) {
  if (n - off < kHdr) return 0;
  uint16_t len;
  std::memcpy(&len, buf + off, sizeof(len));
  if (len < kHdr || len % KTRACK_REC_ALIGN || len > n - off) return 0;
  return len;
}

// The previous record of the kind of the record at 'off' (whose first 8
// bytes are 'word'), or SIZE_MAX; records 'off' as the kind's latest.
inline size_t previous_of_kind(std::array<Kind, kSlots> &table, uint64_t word, size_t off) {
  uint64_t key = word & 0xffffffffffffull;  // len, type, cpu
  Kind &k = table[(key ^ key >> 16 ^ key >> 29) % kSlots];
  size_t prev = k.key == key ? k.off : SIZE_MAX;
  k.key = key;
  k.off = off;
  return prev;
}

}  // namespace

void record_delta_encode(const uint8_t *in, uint8_t *out, size_t n) {
  std::array<Kind, kSlots> table;
  size_t off = 0;
  for (size_t len; off < n && (len = record_len(in, off, n)) != 0; off += len) {
    const uint8_t *r = in + off;
    uint8_t *o = out + off;
    size_t prev = previous_of_kind(table, load64(r), off);
    if (prev == SIZE_MAX) {
      std::memcpy(o, r, len);
      continue;
    }
    const uint8_t *p = in + prev;
    store64(o, load64(r));
    store64(o + 8, load64(r + 8) - load64(p + 8));
    for (size_t i = 16; i < len; i += 8) store64(o + i, load64(r + i) ^ load64(p + i));
  }
  if (off < n) std::memcpy(out + off, in + off, n - off);
}

void record_delta_decode(uint8_t *buf, size_t n) {
  std::array<Kind, kSlots> table;
  for (size_t off = 0, len; off < n && (len = record_len(buf, off, n)) != 0; off += len) {
    uint8_t *r = buf + off;
    size_t prev = previous_of_kind(table, load64(r), off);
    if (prev == SIZE_MAX) continue;
    const uint8_t *p = buf + prev;  // already decoded
    store64(r + 8, load64(r + 8) + load64(p + 8));
    for (size_t i = 16; i < len; i += 8) store64(r + i, load64(r + i) ^ load64(p + i));
  }
}

}  // namespace ktrack
