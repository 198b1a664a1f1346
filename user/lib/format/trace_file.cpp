// The trace file's common ground: chunk checksums (CRC-32C, and CRC-32 of
// format 1) and the metadata text (see format/trace_file.hpp).
#include "format/trace_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "util/error.hpp"
#include "util/text.hpp"

namespace ktrack {

namespace {

// Reflected CRC-32 tables for slicing-by-8 (IEEE 0xEDB88320, Castagnoli
// 0x82F63B78).
struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  explicit CrcTables(uint32_t poly) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? poly ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
      for (int s = 1; s < 8; s++) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

const CrcTables &crc_tables() {
  static const CrcTables tables(0xEDB88320u);
  return tables;
}

const CrcTables &crc32c_tables() {
  static const CrcTables tables(0x82F63B78u);
  return tables;
}

uint32_t crc_sliced(const CrcTables &tables, uint32_t crc, const uint8_t *p, size_t len) {
  const auto &t = tables.t;
  crc = ~crc;
  while (len >= 8) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + 4, 4);
    a ^= crc;
    crc = t[7][a & 0xff] ^ t[6][(a >> 8) & 0xff] ^ t[5][(a >> 16) & 0xff] ^ t[4][a >> 24] ^ t[3][b & 0xff] ^
          t[2][(b >> 8) & 0xff] ^ t[1][(b >> 16) & 0xff] ^ t[0][b >> 24];
    p += 8;
    len -= 8;
  }
  while (len--) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// GF(2) arithmetic for joining CRCs (as zlib's crc32_combine): a * b
// modulo the reflected polynomial, and x^(8n) modulo it.
constexpr uint32_t kCastagnoli = 0x82F63B78u;

uint32_t multmodp(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = b & 1 ? (b >> 1) ^ kCastagnoli : b >> 1;
  }
  return p;
}

uint32_t x8nmodp(uint64_t n) {
  static const std::array<uint32_t, 32> x2n = [] {
    std::array<uint32_t, 32> t{};
    uint32_t p = 1u << 30;  // x^1
    t[0] = p;
    for (size_t k = 1; k < t.size(); k++) t[k] = p = multmodp(p, p);
    return t;
  }();
  uint32_t p = 1u << 31;  // x^0
  unsigned k = 3;         // 8n = n * 2^3
  while (n) {
    if (n & 1) p = multmodp(x2n[k & 31], p);
    n >>= 1;
    k++;
  }
  return p;
}

// CRC of A||B from crc(A), crc(B) and B's length.
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return multmodp(x8nmodp(len_b), crc_a) ^ crc_b;
}

#if defined(__x86_64__)
// SSE4.2's crc32 instruction computes CRC-32C 8 bytes at a time; three
// independent streams hide its 3-cycle latency, and the three CRCs are
// joined at the end: the checksum then costs far less than decoding the
// records it protects.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len) {
  if (len >= 3 * 4096) {
    size_t part = (len / 3) & ~size_t(7);
    const uint8_t *a = p, *b = p + part, *c = p + 2 * part;
    uint64_t ca = ~crc, cb = 0xffffffffu, cc = 0xffffffffu;
    for (size_t i = 0; i < part; i += 8) {
      uint64_t va, vb, vc;
      std::memcpy(&va, a + i, 8);
      std::memcpy(&vb, b + i, 8);
      std::memcpy(&vc, c + i, 8);
      ca = __builtin_ia32_crc32di(ca, va);
      cb = __builtin_ia32_crc32di(cb, vb);
      cc = __builtin_ia32_crc32di(cc, vc);
    }
    crc = crc32c_combine(~static_cast<uint32_t>(ca), ~static_cast<uint32_t>(cb), part);
    crc = crc32c_combine(crc, ~static_cast<uint32_t>(cc), part);
    p += 3 * part;
    len -= 3 * part;
  }
  uint64_t c = static_cast<uint32_t>(~crc);
  while (len >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    len -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (len--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}

bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2");
  return yes;
}
#endif

}  // namespace

uint32_t crc32(uint32_t crc, const void *data, size_t len) {
  return crc_sliced(crc_tables(), crc, static_cast<const uint8_t *>(data), len);
}

uint32_t crc32c(uint32_t crc, const void *data, size_t len) {
  const auto *p = static_cast<const uint8_t *>(data);
#if defined(__x86_64__)
  if (have_sse42()) return crc32c_sse42(crc, p, len);
#endif
  return crc_sliced(crc32c_tables(), crc, p, len);
}

std::map<std::string, std::string> parse_kv(std::string_view text) {
  std::map<std::string, std::string> kv;
  while (!text.empty()) {
    std::string_view line = next_line(text);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    kv[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return kv;
}

std::string TraceMeta::to_text(uint32_t format_version) const {
  auto clean = [](std::string s) {
    for (auto &c : s)
      if (c == '\n') c = ' ';
    return s;
  };
  std::string out = fmt::format(
      "format_version={}\nabi_version={}\nnr_cpus={}\nclock={}\nkernel_release={}\nhostname={}\nsession={}\n",
      format_version, abi_version, nr_cpus, clean(clock), clean(kernel_release), clean(hostname),
      clean(session));
  for (const auto &[k, v] : extra) out += fmt::format("{}={}\n", clean(k), clean(v));
  return out;
}

}  // namespace ktrack
