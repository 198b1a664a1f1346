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

std::string_view as_sv(std::span<const uint8_t> s) {
  return {reinterpret_cast<const char *>(s.data()), s.size()};
}

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
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    kv[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return kv;
}

std::string TraceMeta::to_text() const {
  auto clean = [](std::string s) {
    for (auto &c : s)
      if (c == '\n') c = ' ';
    return s;
  };
  std::string out = fmt::format(
      "format_version={}\nabi_version={}\nnr_cpus={}\nclock={}\nkernel_release={}\nhostname={}\nsession={}\n",
      kTraceFormatVersion, abi_version, nr_cpus, clean(clock), clean(kernel_release), clean(hostname),
      clean(session));
  for (const auto &[k, v] : extra) out += fmt::format("{}={}\n", clean(k), clean(v));
  return out;
}

// ---- TraceWriter ------------------------------------------------------------

TraceWriter::TraceWriter(const std::string &path, const TraceMeta &meta, const SchemaRegistry &schemas,
                         std::string_view kallsyms)
    : path_(path), resolver_(proc_comm) {
  if (path == "-") {
    fd_ = STDOUT_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw SysError("create " + path, errno);
    own_fd_ = true;
  }
  chunk_.reserve(1 << 20);
  write_all(kTraceMagic, sizeof(kTraceMagic));
  write_chunk(ChunkType::Meta, meta.to_text());
  write_chunk(ChunkType::Schemas, schemas.serialize());
  if (!kallsyms.empty()) write_chunk(ChunkType::Ksyms, kallsyms);
}

TraceWriter::~TraceWriter() {
  if (!finished_) {
    try {
      finish();
    } catch (const Error &) {
      // Best effort from a destructor; callers that care call finish().
    }
  }
  if (own_fd_ && fd_ >= 0) ::close(fd_);
}

void TraceWriter::write_all(const void *p, size_t n) {
  const char *c = static_cast<const char *>(p);
  while (n) {
    ssize_t w = ::write(fd_, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw SysError("write " + path_, errno);
    }
    c += w;
    n -= static_cast<size_t>(w);
    bytes_ += static_cast<uint64_t>(w);
  }
}

void TraceWriter::write_chunk(ChunkType type, std::span<const uint8_t> payload) {
  ChunkHeader h{static_cast<uint32_t>(type), crc32c(0, payload.data(), payload.size()), payload.size()};
  write_all(&h, sizeof(h));
  if (!payload.empty()) write_all(payload.data(), payload.size());
}

void TraceWriter::write_chunk(ChunkType type, std::string_view payload) {
  write_chunk(type,
              std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(payload.data()), payload.size()));
}

void TraceWriter::set_comm(uint32_t pid, std::string_view comm) {
  seen_pids_.insert(pid);
  std::string c(comm);
  for (auto &ch : c)
    if (ch == '\n') ch = ' ';
  pending_comms_ += fmt::format("{} {}\n", pid, c);
}

void TraceWriter::note_pid(uint32_t pid) {
  if (pid == last_pid_ || pid == 0) return;
  last_pid_ = pid;
  if (!seen_pids_.insert(pid).second) return;
  if (!resolver_) return;
  if (auto c = resolver_(pid)) {
    for (auto &ch : *c)
      if (ch == '\n') ch = ' ';
    pending_comms_ += fmt::format("{} {}\n", pid, *c);
  }
}

void TraceWriter::add_schemas(const SchemaRegistry &schemas) {
  flush();
  write_chunk(ChunkType::Schemas, schemas.serialize());
}

void TraceWriter::write_records(std::span<const uint8_t> recs) {
  std::string err;
  while (!recs.empty()) {
    uint32_t len = check_record(recs, &err);
    if (!len) throw Error("cannot record a malformed ring record: " + err);
    ktrack_rec_hdr h;
    std::memcpy(&h, recs.data(), sizeof(h));
    if (h.type != KTRACK_REC_PAD) {
      note_pid(h.pid);
      if (h.tgid != h.pid) note_pid(h.tgid);
      if (h.type == KTRACK_REC_LOST && len >= sizeof(h) + 8) {
        uint64_t count;
        std::memcpy(&count, recs.data() + sizeof(h), 8);
        lost_ += count;
      }
      if (chunk_.size() + len > (1u << 20)) flush();
      chunk_.insert(chunk_.end(), recs.data(), recs.data() + len);
      records_++;
    }
    recs = recs.subspan(len);
  }
}

void TraceWriter::flush() {
  if (!pending_comms_.empty()) {
    write_chunk(ChunkType::Comms, pending_comms_);
    pending_comms_.clear();
  }
  if (!chunk_.empty()) {
    write_chunk(ChunkType::Records, chunk_);
    chunk_.clear();
  }
}

void TraceWriter::finish(std::string_view totals) {
  if (finished_) return;
  finished_ = true;
  flush();
  std::string end = fmt::format("events={}\nlost={}\n", records_, lost_);
  end += totals;
  write_chunk(ChunkType::End, end);
  if (own_fd_) {
    if (::fsync(fd_) < 0 && errno != EINVAL) throw SysError("fsync " + path_, errno);
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) < 0) throw SysError("close " + path_, errno);
  }
}

// ---- TraceReader ------------------------------------------------------------

TraceReader::TraceReader(const std::string &path, size_t window)
    : name_(path == "-" ? "<stdin>" : path), window_(window), decoder_(schemas_, &comms_) {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw SysError("open " + path, errno);
    own_fd_ = true;
  }
  try {
    open_input();
  } catch (...) {
    if (own_fd_) ::close(fd_);
    throw;
  }
}

TraceReader::TraceReader(int fd, std::string name, size_t window)
    : fd_(fd), name_(std::move(name)), window_(window), decoder_(schemas_, &comms_) {
  open_input();
}

TraceReader::~TraceReader() {
  if (own_fd_ && fd_ >= 0) ::close(fd_);
}

size_t TraceReader::read_some(uint8_t *p, size_t n, bool exact) {
  size_t got = 0;
  while (got < n) {
    if (in_pos_ == in_len_) {
      if (inbuf_.empty()) inbuf_.resize(1 << 20);
      // Large requests, and exact ones (no read-ahead wanted), bypass the
      // read-ahead buffer: no copy.
      if (exact || n - got >= (64u << 10)) {
        ssize_t r = ::read(fd_, p + got, n - got);
        if (r < 0) {
          if (errno == EINTR) continue;
          throw SysError("read " + name_, errno);
        }
        if (r == 0) break;
        got += static_cast<size_t>(r);
        offset_ += static_cast<uint64_t>(r);
        continue;
      }
      ssize_t r = ::read(fd_, inbuf_.data(), inbuf_.size());
      if (r < 0) {
        if (errno == EINTR) continue;
        throw SysError("read " + name_, errno);
      }
      if (r == 0) break;
      in_pos_ = 0;
      in_len_ = static_cast<size_t>(r);
    }
    size_t take = std::min(n - got, in_len_ - in_pos_);
    std::memcpy(p + got, inbuf_.data() + in_pos_, take);
    in_pos_ += take;
    got += take;
    offset_ += take;
  }
  return got;
}

bool TraceReader::read_exact(void *p, size_t n, const char *what, bool exact) {
  uint64_t at = offset_;
  size_t got = read_some(static_cast<uint8_t *>(p), n, exact);
  if (got == n) return true;
  if (got == 0 && std::strcmp(what, "chunk header") == 0) return false;
  fail(
      fmt::format("{} is truncated at byte {}: the {} needs {} bytes but only {} remain (was the recording "
                  "interrupted?)",
                  name_, at, what, n, got));
  return false;
}

void TraceReader::fail(std::string msg) {
  if (!error_) error_ = std::move(msg);
  eof_ = true;
}

void TraceReader::open_input() {
  uint8_t magic[8];
  size_t got = read_some(magic, sizeof(magic));
  if (got == sizeof(magic) && std::memcmp(magic, kTraceMagic, sizeof(magic)) == 0) {
    info_.raw_stream = false;
    // Header chunks up to the first records.
    ChunkHeader h;
    size_t n = read_some(reinterpret_cast<uint8_t *>(&h), sizeof(h));
    if (n != sizeof(h) || h.type != static_cast<uint32_t>(ChunkType::Meta) || h.len > kMaxChunk)
      throw Error(fmt::format(
          "{} is a ktrack file with a damaged header (no metadata chunk); it cannot be decoded", name_));
    std::string text(h.len, '\0');
    if (read_some(reinterpret_cast<uint8_t *>(text.data()), h.len) != h.len)
      throw Error(fmt::format("{} is a ktrack file with a truncated header; it cannot be decoded", name_));
    // The checksum that matches tells the format generation (the version
    // inside is checked against it below).
    if (crc32c(0, text.data(), h.len) == h.crc)
      castagnoli_ = true;
    else if (crc32(0, text.data(), h.len) == h.crc)
      castagnoli_ = false;
    else
      throw Error(fmt::format(
          "{} is a ktrack file with a damaged header (metadata checksum); it cannot be decoded", name_));
    auto kv = parse_kv(text);
    auto num = [&](const char *k) -> uint32_t {
      auto it = kv.find(k);
      if (it == kv.end()) return 0;
      return static_cast<uint32_t>(std::strtoul(it->second.c_str(), nullptr, 10));
    };
    uint32_t fv = num("format_version");
    if (fv < kTraceFormatOldest || fv > kTraceFormatVersion)
      throw Error(
          fmt::format("{} uses trace format version {}, this ktrackctl reads versions {} to {}; use a "
                      "matching ktrackctl",
                      name_, fv, kTraceFormatOldest, kTraceFormatVersion));
    if (castagnoli_ != (fv >= 2))
      throw Error(fmt::format(
          "{} is a ktrack file with a damaged header (checksum kind does not match format version {}); it "
          "cannot be decoded",
          name_, fv));
    info_.meta.abi_version = num("abi_version");
    info_.meta.nr_cpus = num("nr_cpus");
    for (auto &[k, v] : kv) {
      if (k == "clock")
        info_.meta.clock = v;
      else if (k == "kernel_release")
        info_.meta.kernel_release = v;
      else if (k == "hostname")
        info_.meta.hostname = v;
      else if (k == "session")
        info_.meta.session = v;
      else if (k != "format_version" && k != "abi_version" && k != "nr_cpus")
        info_.meta.extra[k] = v;
    }
    schemas_ = SchemaRegistry(false);
    return;
  }
  // A raw record stream: the first record header must make sense.
  info_.raw_stream = true;
  if (got == 0) return;  // empty stream: no events
  carry_.assign(magic, magic + got);
  uint16_t len = 0, type = 0xffff, cpu = 0;
  if (got >= 2) std::memcpy(&len, magic, 2);
  if (got >= 4) std::memcpy(&type, magic + 2, 2);
  if (got >= 6) std::memcpy(&cpu, magic + 4, 2);
  // Record types are small numbers and CPUs below 8192: text and other
  // files fail these checks on their first bytes.
  if (got < 8 || len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN || len > KTRACK_REC_MAX ||
      type > 255 || cpu >= 8192)
    throw Error(fmt::format("{} is neither a ktrack trace file nor a raw /dev/ktrack record stream", name_));
}

void TraceReader::push_records(ByteBuffer &&recs, uint64_t base) {
  std::string err;
  size_t off = 0;
  std::optional<std::string> bad;
  while (off < recs.size()) {
    uint32_t len = check_record(std::span<const uint8_t>(recs).subspan(off), &err);
    if (!len) {
      bad = fmt::format("{} is corrupted at byte {}: {}", name_, base + off, err);
      break;
    }
    uint16_t cpu;
    std::memcpy(&cpu, recs.data() + off + offsetof(ktrack_rec_hdr, cpu), 2);
    if (cpu >= RecordMerger::kMaxCpus) {
      bad = fmt::format("{} is corrupted at byte {}: record claims CPU {}", name_, base + off, cpu);
      break;
    }
    off += len;
  }
  recs.resize(off);  // the valid records before any damage
  merger_.push_buffer(std::move(recs));
  if (bad) fail(std::move(*bad));
}

bool TraceReader::fill() {
  if (eof_) return false;
  if (info_.raw_stream) {
    size_t have = carry_.size();
    carry_.resize(have + (1 << 20));
    size_t got = read_some(carry_.data() + have, 1 << 20);
    carry_.resize(have + got);
    uint64_t base = offset_ - carry_.size();
    if (got == 0) {
      eof_ = true;
      if (!carry_.empty())
        fail(fmt::format("{} is truncated at byte {}: the last record is incomplete ({} bytes)", name_, base,
                         carry_.size()));
      return false;
    }
    // Push whole records; keep a trailing partial one.
    size_t whole = 0;
    while (carry_.size() - whole >= sizeof(ktrack_rec_hdr)) {
      uint16_t len;
      std::memcpy(&len, carry_.data() + whole, 2);
      if (len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN) break;  // push_records reports it
      if (whole + len > carry_.size()) break;
      whole += len;
    }
    bool bad = whole < carry_.size() && carry_.size() - whole >= sizeof(ktrack_rec_hdr);
    if (bad) {
      uint16_t len;
      std::memcpy(&len, carry_.data() + whole, 2);
      bad = len < sizeof(ktrack_rec_hdr) || len % KTRACK_REC_ALIGN;
    }
    ByteBuffer recs = merger_.take_buffer();
    recs.assign(carry_.begin(), carry_.begin() + static_cast<std::ptrdiff_t>(bad ? carry_.size() : whole));
    carry_.erase(carry_.begin(), carry_.begin() + static_cast<std::ptrdiff_t>(whole));
    push_records(std::move(recs), base);
    return !eof_;
  }

  ChunkHeader h;
  uint64_t at = offset_;
  if (!read_exact(&h, sizeof(h), "chunk header", true)) {
    if (!error_ && !info_.totals.count("events"))
      fail(
          fmt::format("{} ends at byte {} without its end marker: the recording was interrupted; the events "
                      "before it were decoded",
                      name_, at));
    eof_ = true;
    return false;
  }
  if (h.len > kMaxChunk) {
    fail(fmt::format("{} is corrupted at byte {}: chunk length {} is implausible", name_, at, h.len));
    return false;
  }
  // Every buffer gets at least a block's capacity, so recycled buffers fit
  // the next chunk (a reallocation would touch fresh pages).
  if (chunk_.capacity() < h.len) chunk_.reserve(std::max<size_t>(h.len, RecordMerger::kBlockSize));
  chunk_.resize(h.len);
  if (!read_exact(chunk_.data(), h.len, "chunk", true)) return false;
  if (checksum(chunk_.data(), chunk_.size()) != h.crc) {
    fail(fmt::format("{} is corrupted at byte {}: chunk checksum mismatch", name_, at));
    return false;
  }
  // The checksum covers the payload, not the type: a damaged type must not
  // make a chunk silently skipped or read as another kind.  Formats 1 and 2
  // have exactly these types (a newer type comes with a newer format
  // version, refused above), one metadata chunk (read by open_input()) and
  // at most one symbol snapshot.
  if (h.type == static_cast<uint32_t>(ChunkType::Meta) ||
      (h.type == static_cast<uint32_t>(ChunkType::Ksyms) && seen_ksyms_) || h.type < 1 ||
      h.type > static_cast<uint32_t>(ChunkType::End)) {
    fail(fmt::format("{} is corrupted at byte {}: unexpected chunk type {}", name_, at, h.type));
    return false;
  }
  switch (static_cast<ChunkType>(h.type)) {
    case ChunkType::Meta:
      break;
    case ChunkType::Schemas:
      try {
        SchemaRegistry more = SchemaRegistry::parse(as_sv(chunk_));
        for (const Schema *s : more.all()) schemas_.add(*s);
      } catch (const Error &e) {
        fail(fmt::format("{} is corrupted at byte {}: {}", name_, at, e.what()));
        return false;
      }
      break;
    case ChunkType::Ksyms:
      symbols_.load(std::string(as_sv(chunk_)));
      seen_ksyms_ = true;
      break;
    case ChunkType::Comms: {
      std::string_view t = as_sv(chunk_);
      size_t pos = 0;
      while (pos < t.size()) {
        size_t nl = t.find('\n', pos);
        if (nl == std::string_view::npos) nl = t.size();
        std::string_view line = t.substr(pos, nl - pos);
        pos = nl + 1;
        size_t sp = line.find(' ');
        if (sp == std::string_view::npos) continue;
        comms_.set(static_cast<uint32_t>(std::strtoul(std::string(line.substr(0, sp)).c_str(), nullptr, 10)),
                   std::string(line.substr(sp + 1)));
      }
      break;
    }
    case ChunkType::Records:
      push_records(std::move(chunk_), at + sizeof(h));
      chunk_ = merger_.take_buffer();
      break;
    case ChunkType::End:
      info_.totals = parse_kv(as_sv(chunk_));
      break;
    default:
      break;
  }
  return true;
}

bool TraceReader::next_raw(std::span<const uint8_t> &rec) {
  while (!eof_ && merger_.buffered_bytes() < window_) fill();
  if (!merger_.pop(rec)) {
    if (error_) {
      std::string e = std::move(*error_);
      error_.reset();
      throw Error(e);
    }
    return false;
  }
  events_++;
  // push_records() validated the length: a LOST payload is whole.
  uint16_t type;
  std::memcpy(&type, rec.data() + offsetof(ktrack_rec_hdr, type), sizeof(type));
  if (type == KTRACK_REC_LOST && rec.size() >= sizeof(ktrack_rec_hdr) + sizeof(uint64_t)) {
    uint64_t count;
    std::memcpy(&count, rec.data() + sizeof(ktrack_rec_hdr) + offsetof(ktrack_rec_lost, count),
                sizeof(count));
    lost_ += count;
  } else if (type == KTRACK_REC_MODULE || type == KTRACK_REC_MODULE_SYMS) {
    symbols_.ingest(rec);  // names the records after it (Symbolizer::ingest)
  }
  return true;
}

bool TraceReader::next(Event &ev) {
  std::span<const uint8_t> cur;
  if (!next_raw(cur)) return false;
  decoder_.decode(cur, ev);
  return true;
}

}  // namespace ktrack
