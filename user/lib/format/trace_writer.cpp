// Writing trace files (see format/trace_file.hpp).
#include "format/trace_file.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <lz4.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "format/record_delta.hpp"
#include "util/error.hpp"

namespace ktrack {

// ---- TraceWriter ------------------------------------------------------------

uint32_t format_version_for(RecordCodec codec) {
  return codec == RecordCodec::None ? kTraceFormatNoLz4 : kTraceFormatVersion;
}

TraceWriter::TraceWriter(const std::string &path, const TraceMeta &meta, const SchemaRegistry &schemas,
                         std::string_view kallsyms, RecordCodec codec)
    : path_(path), codec_(codec), resolver_(proc_comm), schemas_(schemas) {
  if (codec == RecordCodec::Zstd) {
    zstd_ = {ZSTD_createCCtx(), [](void *c) { ZSTD_freeCCtx(static_cast<ZSTD_CCtx *>(c)); }};
    auto *cc = static_cast<ZSTD_CCtx *>(zstd_.get());
    // Level 1, and the frame's own checksum: a reader checks it besides the
    // chunk's CRC, so no damaged frame decodes to other records.
    if (!cc || ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)))
      throw Error("cannot set up the zstd compressor");
  }
  if (path == "-") {
    fd_ = STDOUT_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw FileError("create " + path, errno);
    own_fd_ = true;
  }
  chunk_.reserve(1 << 20);
  write_all(kTraceMagic, sizeof(kTraceMagic));
  write_chunk(ChunkType::Meta, meta.to_text(format_version_for(codec)));
  write_chunk(ChunkType::Schemas, schemas.serialize());
  if (!kallsyms.empty()) {
    subset_ = std::make_unique<SymbolSubset>(kallsyms);
    std::string modules = subset_->take();
    if (!modules.empty()) write_chunk(ChunkType::Ksyms, modules);
  }
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

void TraceWriter::abandon() {
  finished_ = true;
  if (own_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TraceWriter::write_all(const void *p, size_t n) {
  const char *c = static_cast<const char *>(p);
  while (n) {
    ssize_t w = ::write(fd_, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw FileError("write " + path_, errno);
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

void TraceWriter::note_symbols(std::span<const uint8_t> rec) {
  ktrack_rec_hdr h;
  std::memcpy(&h, rec.data(), sizeof(h));
  uint32_t probe_id = 0;
  uint16_t event = 0;
  if (h.type == KTRACK_REC_PROBE) {
    constexpr size_t fixed = offsetof(ktrack_rec_probe, data);
    if (rec.size() < sizeof(h) + fixed) return;
    ktrack_rec_probe p;
    std::memcpy(&p, rec.data() + sizeof(h), fixed);
    subset_->need(p.ip);
    subset_->need(p.parent_ip);
    probe_id = p.probe_id;
    event = p.event;
  }
  // Decoded (the costly part) only when its schema has a symbol field: most
  // records have none.  A small cache, as schemas change rarely.
  if (schemas_.generation() != sym_generation_) {
    sym_cache_.fill(SymSlot{});
    sym_generation_ = schemas_.generation();
  }
  uint64_t key = (uint64_t(h.type) << 48) | (uint64_t(event) << 32) | probe_id;
  SymSlot &slot = sym_cache_[(h.type * 7u + probe_id * 31u + event) % sym_cache_.size()];
  if (slot.key != key) {
    const Schema *s = schemas_.find(h.type, probe_id, event);
    slot.key = key;
    slot.has_symbols = s && std::any_of(s->fields.begin(), s->fields.end(),
                                        [](const FieldDesc &f) { return f.type == FieldType::Symbol; });
  }
  if (!slot.has_symbols || !decoder_.decode(rec, ev_)) return;
  for (const FieldValue &f : ev_.fields) {
    if (f.desc->type != FieldType::Symbol || !f.valid) continue;
    if (f.is_array) {
      for (uint32_t i = 0; i < f.count; i++) subset_->need(f.at(i));
    } else {
      subset_->need(f.u);
    }
  }
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
      if (subset_) note_symbols(recs.first(len));
      chunk_.insert(chunk_.end(), recs.data(), recs.data() + len);
      records_++;
    }
    recs = recs.subspan(len);
  }
}

void TraceWriter::note_tasks(std::span<const uint8_t> recs) {
  while (recs.size() >= sizeof(ktrack_rec_hdr)) {
    ktrack_rec_hdr h;
    std::memcpy(&h, recs.data(), sizeof(h));
    if (h.len < sizeof(h) || h.len > recs.size()) break;
    if (h.type != KTRACK_REC_PAD) {
      note_pid(h.pid);
      if (h.tgid != h.pid) note_pid(h.tgid);
    }
    recs = recs.subspan(h.len);
  }
}

void TraceWriter::flush() {
  // Symbols and comms before the records that need them: a reader streams.
  if (subset_) {
    std::string syms = subset_->take();
    if (!syms.empty()) write_chunk(ChunkType::Ksyms, syms);
  }
  if (!pending_comms_.empty()) {
    write_chunk(ChunkType::Comms, pending_comms_);
    pending_comms_.clear();
  }
  if (!chunk_.empty()) {
    write_record_chunk();
    chunk_.clear();
  }
}

// One RECORDS chunk, or a compressed one (records delta-encoded first,
// format/record_delta.hpp) when compressing saves at least 1/8.
void TraceWriter::write_record_chunk() {
  rec_raw_ += chunk_.size();
  if (codec_ != RecordCodec::None && chunk_.size() >= 256) {
    uint64_t raw = chunk_.size();
    size_t n = 0;
    ChunkType type;
    delta_.resize(chunk_.size());
    record_delta_encode(chunk_.data(), delta_.data(), chunk_.size());
    if (codec_ == RecordCodec::Lz4) {
      int bound = LZ4_compressBound(static_cast<int>(delta_.size()));
      packed_.resize(sizeof(raw) + static_cast<size_t>(bound));
      int r = LZ4_compress_default(reinterpret_cast<const char *>(delta_.data()),
                                   reinterpret_cast<char *>(packed_.data() + sizeof(raw)),
                                   static_cast<int>(delta_.size()), bound);
      n = r > 0 ? static_cast<size_t>(r) : 0;
      type = ChunkType::RecordsLz4Delta;
    } else {
      packed_.resize(sizeof(raw) + ZSTD_compressBound(delta_.size()));
      size_t r = ZSTD_compress2(static_cast<ZSTD_CCtx *>(zstd_.get()), packed_.data() + sizeof(raw),
                                packed_.size() - sizeof(raw), delta_.data(), delta_.size());
      n = ZSTD_isError(r) ? 0 : r;
      type = ChunkType::RecordsZstdDelta;
    }
    std::memcpy(packed_.data(), &raw, sizeof(raw));
    size_t stored = sizeof(raw) + n;
    if (n > 0 && stored <= chunk_.size() - chunk_.size() / 8) {
      write_chunk(type, std::span<const uint8_t>(packed_.data(), stored));
      rec_stored_ += stored;
      return;
    }
  }
  write_chunk(ChunkType::Records, chunk_);
  rec_stored_ += chunk_.size();
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

}  // namespace ktrack
