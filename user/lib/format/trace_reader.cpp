// Reading trace files and raw streams (see format/trace_file.hpp).
#include "format/trace_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <lz4.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "format/record_delta.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace ktrack {

namespace {

std::string_view as_sv(std::span<const uint8_t> s) {
  return {reinterpret_cast<const char *>(s.data()), s.size()};
}

}  // namespace

// ---- TraceReader ------------------------------------------------------------

TraceReader::TraceReader(const std::string &path, size_t window)
    : name_(path == "-" ? "<stdin>" : path), window_(window), decoder_(schemas_, &comms_) {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw FileError("open " + path, errno);
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
    format_version_ = fv;
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
    if (fv >= 3) preload_symbols();
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

// A format-3 file spreads its symbols over KSYMS chunks ahead of the
// records that need them.  A view that asks for names before the end (a
// report prints as it reads, with a reorder window) must see them all: on a
// regular file they are read here, by chunk header and pread(), without
// moving the stream.  A damaged or short chunk ends the scan (the stream
// reports it in order).
void TraceReader::preload_symbols() {
  struct stat st;
  if (::fstat(fd_, &st) < 0 || !S_ISREG(st.st_mode)) return;
  uint64_t pos = offset_;
  std::string text, payload;
  while (true) {
    ChunkHeader h;
    ssize_t r = ::pread(fd_, &h, sizeof(h), static_cast<off_t>(pos));
    if (r != static_cast<ssize_t>(sizeof(h)) || h.len > kMaxChunk) break;
    if (h.type == static_cast<uint32_t>(ChunkType::Ksyms)) {
      payload.resize(h.len);
      if (::pread(fd_, payload.data(), h.len, static_cast<off_t>(pos + sizeof(h))) !=
              static_cast<ssize_t>(h.len) ||
          crc32c(0, payload.data(), payload.size()) != h.crc)
        break;
      text += payload;
    }
    pos += sizeof(h) + h.len;
    preloaded_to_ = pos;
  }
  if (!text.empty()) symbols_.add(std::move(text));
}

void TraceReader::push_records(ByteBuffer &&recs, uint64_t base, std::optional<uint64_t> packed_at) {
  std::string err;
  size_t off = 0;
  std::optional<std::string> bad;
  auto where = [&] {
    return packed_at ? fmt::format("in the compressed chunk at byte {} ({} bytes into its records)",
                                   *packed_at, off)
                     : fmt::format("at byte {}", base + off);
  };
  while (off < recs.size()) {
    uint32_t len = record_length(std::span<const uint8_t>(recs).subspan(off));
    if (!len) {
      check_record(std::span<const uint8_t>(recs).subspan(off), &err);
      bad = fmt::format("{} is corrupted {}: {}", name_, where(), err);
      break;
    }
    uint16_t cpu;
    std::memcpy(&cpu, recs.data() + off + offsetof(ktrack_rec_hdr, cpu), 2);
    if (cpu >= RecordMerger::kMaxCpus) {
      bad = fmt::format("{} is corrupted {}: record claims CPU {}", name_, where(), cpu);
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
  // at most one symbol snapshot before format 3, which adds symbols as the
  // records come.
  if (h.type == static_cast<uint32_t>(ChunkType::Meta) ||
      (h.type == static_cast<uint32_t>(ChunkType::Ksyms) && seen_ksyms_ && format_version_ < 3) ||
      h.type < 1 || h.type > static_cast<uint32_t>(ChunkType::RecordsZstdDelta) ||
      (h.type == static_cast<uint32_t>(ChunkType::RecordsLz4) && format_version_ < 4) ||
      (h.type == static_cast<uint32_t>(ChunkType::RecordsZstd) && format_version_ < 5) ||
      (h.type >= static_cast<uint32_t>(ChunkType::RecordsLz4Delta) && format_version_ < 6)) {
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
      if (at >= preloaded_to_) symbols_.add(std::string(as_sv(chunk_)));
      seen_ksyms_ = true;
      break;
    case ChunkType::Comms: {
      std::string_view t = as_sv(chunk_);
      while (!t.empty()) {
        std::string_view line = next_line(t);
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
    case ChunkType::RecordsLz4:
    case ChunkType::RecordsZstd:
    case ChunkType::RecordsLz4Delta:
    case ChunkType::RecordsZstdDelta: {
      const auto type = static_cast<ChunkType>(h.type);
      uint64_t raw = 0;
      if (chunk_.size() > sizeof(raw)) std::memcpy(&raw, chunk_.data(), sizeof(raw));
      if (chunk_.size() <= sizeof(raw) || raw == 0 || raw > kMaxRecordsRaw) {
        fail(fmt::format("{} is corrupted at byte {}: compressed chunk of implausible size {}", name_, at,
                         raw));
        return false;
      }
      ByteBuffer recs = merger_.take_buffer();
      if (recs.capacity() < raw) recs.reserve(std::max<size_t>(raw, RecordMerger::kBlockSize));
      recs.resize(raw);
      const uint8_t *src = chunk_.data() + sizeof(raw);
      const size_t src_len = chunk_.size() - sizeof(raw);
      bool ok;
      if (type == ChunkType::RecordsLz4 || type == ChunkType::RecordsLz4Delta) {
        int n =
            LZ4_decompress_safe(reinterpret_cast<const char *>(src), reinterpret_cast<char *>(recs.data()),
                                static_cast<int>(src_len), static_cast<int>(raw));
        ok = n >= 0 && static_cast<uint64_t>(n) == raw;
      } else {
        // Exactly one current-format frame that says its size is 'raw'
        // (libzstd also takes concatenated, skippable and pre-1.0 frames).
        uint32_t magic = 0;
        if (src_len >= 4) std::memcpy(&magic, src, 4);
        ok = magic == ZSTD_MAGICNUMBER && ZSTD_findFrameCompressedSize(src, src_len) == src_len &&
             ZSTD_getFrameContentSize(src, src_len) == raw;
        if (ok && !zstd_)
          zstd_ = {ZSTD_createDCtx(), [](void *c) { ZSTD_freeDCtx(static_cast<ZSTD_DCtx *>(c)); }};
        if (ok) {
          size_t n = zstd_ ? ZSTD_decompressDCtx(static_cast<ZSTD_DCtx *>(zstd_.get()), recs.data(), raw, src,
                                                 src_len)
                           : ZSTD_decompress(recs.data(), raw, src, src_len);
          ok = !ZSTD_isError(n) && n == raw;
        }
      }
      if (!ok) {
        merger_.recycle(std::move(recs));
        fail(fmt::format("{} is corrupted at byte {}: a compressed record chunk does not decompress", name_,
                         at));
        return false;
      }
      if (type == ChunkType::RecordsLz4Delta || type == ChunkType::RecordsZstdDelta)
        record_delta_decode(recs.data(), recs.size());
      push_records(std::move(recs), at + sizeof(h), at);
      break;
    }
    case ChunkType::End:
      info_.totals = parse_kv(as_sv(chunk_));
      break;
    default:
      break;
  }
  return true;
}

bool TraceReader::next_raw(std::span<const uint8_t> &rec) {
  // The buffer of the record returned last counts until the next pop: an
  // empty merger always reads on.
  while (!eof_ && (merger_.empty() || merger_.held_bytes() < window_)) fill();
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
