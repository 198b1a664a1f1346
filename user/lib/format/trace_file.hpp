// The ktrack trace file: self-describing, streamed, bounded memory.
//
// Layout: the 8-byte magic "KTRACKF1", then chunks, each a 16-byte header
// {u32 type, u32 checksum of the payload, u64 payload length} and the
// payload.  The checksum is CRC-32C (Castagnoli, one instruction per 8
// bytes on x86-64 with SSE4.2) in format version 2, CRC-32 (IEEE) in
// version 1 files, which are still read.  Chunks:
//   META     "key=value" lines: format_version, abi_version, nr_cpus, clock,
//            kernel_release, hostname, session, mode, buf_pages, ...
//   SCHEMAS  SchemaRegistry::serialize() text (record and probe schemas);
//            later SCHEMAS chunks add to/replace earlier ones
//   KSYMS    lines of a /proc/kallsyms snapshot plus "# module NAME BASE SIZE"
//            lines from /proc/modules (host/kallsyms.hpp: read_kallsyms).
//            Format 3: only the lines the records need (format/symbol_subset.hpp),
//            in as many KSYMS chunks as it takes, each before the records
//            that need it; formats 1 and 2: the whole snapshot in one chunk
//            (or none)
//   COMMS    "pid comm" lines, written before the records that need them
//   RECORDS  raw records (struct ktrack_rec_hdr + payload), any CPUs, each
//            CPU's records in ring order
//   RECORDS_LZ4 (format 4) the same, compressed: a u64 (little endian) of
//            the uncompressed length, then one LZ4 block.  Written when it
//            saves at least 1/8 (records of one workload repeat their ip,
//            task and args: 4-11x smaller); at most kMaxRecordsRaw bytes
//            uncompressed.  Decompressing costs a reader about what copying
//            the bytes from the page cache costs
//   RECORDS_ZSTD (format 5) the same with one zstd frame (level 1, with its
//            content size and checksum; nothing else is read) for the
//            LZ4 block ('record --compress zstd'): 2.2x smaller than LZ4 on
//            a real recording (2.7 against 6.2 bytes per vfs_write event;
//            trace-cmd's zstd trace.dat: 3.6)
//   RECORDS_LZ4_DELTA, RECORDS_ZSTD_DELTA (format 6, what 'record' writes
//            unless --no-compress) the same, with the records delta-encoded
//            (format/record_delta.hpp) before compressing: LZ4 1.6x and
//            zstd 2.1x smaller again on a vfs_write recording
//   END      "key=value" totals (events, bytes, lost, per-CPU stats)
// A chunk type the file's format version does not have is corruption: a
// new type comes with a new version, which older readers refuse by name.
//
// TraceReader also accepts the raw stream `cat /dev/ktrack > FILE` produces
// (records back to back, no magic): built-in schemas, no symbols/comms.
//
// Readers merge the CPUs by timestamp with a bounded reorder window (each
// CPU's order is always kept), so files larger than memory stream through.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "format/event.hpp"
#include "format/merge.hpp"
#include "format/symbol_subset.hpp"
#include "format/symbols.hpp"

namespace ktrack {

inline constexpr char kTraceMagic[8] = {'K', 'T', 'R', 'A', 'C', 'K', 'F', '1'};
inline constexpr uint32_t kTraceFormatVersion = 6;
inline constexpr uint32_t kTraceFormatOldest = 1;  // oldest version read

enum class ChunkType : uint32_t {
  Meta = 1,
  Schemas = 2,
  Ksyms = 3,
  Comms = 4,
  Records = 5,
  End = 6,
  RecordsLz4 = 7,
  RecordsZstd = 8,
  RecordsLz4Delta = 9,
  RecordsZstdDelta = 10,
};

// How record chunks are stored: as they are (format 3), or delta-encoded
// and then in LZ4 blocks (the default) or zstd frames (2.6x smaller than
// LZ4 on a real recording, but more CPU to write; under emulation that was
// enough for a recorder's drain thread to fall behind where LZ4 did not).
enum class RecordCodec { None, Lz4, Zstd };

struct ChunkHeader {
  uint32_t type;
  uint32_t crc;
  uint64_t len;
};
static_assert(sizeof(ChunkHeader) == 16);

inline constexpr uint64_t kMaxChunk = 256ull << 20;
// The uncompressed size of one compressed record chunk at most (writers
// flush at 1 MiB): LZ4 expands up to 255 times, zstd far more, so this
// bounds what a short file can make a reader allocate.
inline constexpr uint64_t kMaxRecordsRaw = 16ull << 20;
// Format 4 adds RECORDS_LZ4, format 5 RECORDS_ZSTD, format 6 the delta
// chunks, which the writer writes whenever it compresses (6); with no
// compression it writes format 3, which older readers take.
inline constexpr uint32_t kTraceFormatNoLz4 = 3;
uint32_t format_version_for(RecordCodec codec);

uint32_t crc32(uint32_t crc, const void *data, size_t len);   // IEEE (format 1)
uint32_t crc32c(uint32_t crc, const void *data, size_t len);  // Castagnoli (format 2)

// Parses "key=value" lines (later keys win; lines without '=' are ignored).
std::map<std::string, std::string> parse_kv(std::string_view text);

struct TraceMeta {
  uint32_t nr_cpus = 0;
  uint32_t abi_version = KTRACK_ABI_VERSION;
  std::string clock;           // "local", "mono", "boot"
  std::string kernel_release;  // of the traced machine
  std::string hostname;
  std::string session;                       // session name, empty for anonymous
  std::map<std::string, std::string> extra;  // more key=value pairs
  // The META chunk's text; 'format_version' is what the file is written as.
  std::string to_text(uint32_t format_version = kTraceFormatVersion) const;
};

// Streams records into a trace file.  Memory: one chunk (1 MiB), the comm
// table and the kallsyms snapshot it picks symbols from.  Throws
// SysError/Error on I/O failure.
class TraceWriter {
 public:
  // 'path' "-" writes to stdout.  'kallsyms' is a /proc/kallsyms snapshot
  // (may be empty): the file keeps the lines that name the addresses its
  // records hold (probe ip and parent_ip, every field of type symbol,
  // stacks).  The header chunks are written immediately.
  // 'codec': how record chunks are compressed, each only where that saves
  // an eighth (RecordCodec::None: never; the file is then format 3, as
  // older readers take).  'compress' true is the default codec, LZ4.
  TraceWriter(const std::string &path, const TraceMeta &meta, const SchemaRegistry &schemas,
              std::string_view kallsyms, RecordCodec codec);
  TraceWriter(const std::string &path, const TraceMeta &meta, const SchemaRegistry &schemas,
              std::string_view kallsyms, bool compress = true)
      : TraceWriter(path, meta, schemas, kallsyms, compress ? RecordCodec::Lz4 : RecordCodec::None) {}
  ~TraceWriter();
  TraceWriter(const TraceWriter &) = delete;
  TraceWriter &operator=(const TraceWriter &) = delete;

  // Resolves a pid's comm the first time a record carries it (default:
  // /proc/PID/comm); set an empty function to record no comms.
  void set_comm_resolver(std::function<std::optional<std::string>(uint32_t)> r) { resolver_ = std::move(r); }
  void set_comm(uint32_t pid, std::string_view comm);
  // Appends whole records (a ring drain); PAD records are dropped.  Throws
  // Error if 'records' does not hold whole valid records.
  void write_records(std::span<const uint8_t> records);
  // Resolves the comms of the tasks of whole records now (see
  // set_comm_resolver) without writing them: for records written later,
  // when their tasks may be gone.
  void note_tasks(std::span<const uint8_t> records);
  // Writes buffered records out as one chunk.
  void flush();
  // Flushes, writes the END chunk with 'totals' ("key=value" lines) and
  // closes the file.  The destructor finishes a file that was not finished.
  void finish(std::string_view totals = {});
  // Closes the file as it is, with no END chunk: readers then say it was
  // interrupted (its records are not all there).
  void abandon();

  uint64_t records() const { return records_; }
  uint64_t bytes_written() const { return bytes_; }
  // Record bytes before compression, and as stored (chunk payloads).
  uint64_t record_bytes_raw() const { return rec_raw_; }
  uint64_t record_bytes_stored() const { return rec_stored_; }
  uint64_t lost() const { return lost_; }  // sum of LOST record counts
  // Symbol lines stored so far, of the snapshot's.
  size_t symbols_kept() const { return subset_ ? subset_->kept() : 0; }
  size_t symbols_offered() const { return subset_ ? subset_->lines() : 0; }

 private:
  void write_chunk(ChunkType type, std::span<const uint8_t> payload);
  void write_chunk(ChunkType type, std::string_view payload);
  void write_record_chunk();
  void note_pid(uint32_t pid);
  void note_symbols(std::span<const uint8_t> rec);
  void write_all(const void *p, size_t n);

  int fd_ = -1;
  bool own_fd_ = false;
  bool finished_ = false;
  std::string path_;
  std::vector<uint8_t> chunk_;
  ByteBuffer packed_;  // compression output, reused (resize() does not zero it)
  ByteBuffer delta_;   // the chunk delta-encoded, reused
  RecordCodec codec_ = RecordCodec::Lz4;
  std::unique_ptr<void, void (*)(void *)> zstd_{nullptr, nullptr};  // ZSTD_CCtx, reused
  uint64_t rec_raw_ = 0, rec_stored_ = 0;
  std::string pending_comms_;
  std::unordered_set<uint32_t> seen_pids_;
  uint32_t last_pid_ = ~0u;
  std::function<std::optional<std::string>(uint32_t)> resolver_;
  uint64_t records_ = 0, bytes_ = 0, lost_ = 0;
  // Which fields of a record are addresses: the schemas, as the readers
  // will decode them.
  SchemaRegistry schemas_;
  Decoder decoder_{schemas_};
  Event ev_;
  struct SymSlot {
    uint64_t key = ~0ull;
    bool has_symbols = false;
  };
  std::array<SymSlot, 16> sym_cache_{};
  uint64_t sym_generation_ = ~0ull;
  std::unique_ptr<SymbolSubset> subset_;
};

struct TraceInfo {
  bool raw_stream = false;  // a `cat /dev/ktrack` stream, not a trace file
  TraceMeta meta;
  std::map<std::string, std::string> totals;  // END chunk, once reached
};

// Reads a trace file or raw stream and yields Events merged by timestamp.
class TraceReader {
 public:
  // 'path' "-" reads stdin.  Throws SysError when it cannot be opened and
  // Error when it is neither a trace file nor a raw record stream.
  explicit TraceReader(const std::string &path, size_t reorder_window = 16u << 20);
  // Reads from an already open descriptor (not closed by the reader).
  TraceReader(int fd, std::string name, size_t reorder_window = 16u << 20);
  ~TraceReader();
  TraceReader(const TraceReader &) = delete;
  TraceReader &operator=(const TraceReader &) = delete;

  // The next event in timestamp order.  'ev' refers to the reader's buffer
  // and stays valid until the next call.  Returns false at the end; throws
  // Error on a truncated or corrupted input, after every event before the
  // damage was returned.
  bool next(Event &ev);
  // The same, undecoded: the next record's bytes (valid until the next
  // call), for views that read a few header fields and decode the rest
  // only when they need it (decoder()).
  bool next_raw(std::span<const uint8_t> &rec);
  const Decoder &decoder() const { return decoder_; }

  const TraceInfo &info() const { return info_; }
  const SchemaRegistry &schemas() const { return schemas_; }
  // Registers more schemas (e.g. probe schemas for a raw stream).
  void add_schema(Schema s) { schemas_.add(std::move(s)); }
  const Symbolizer &symbols() const { return symbols_; }
  Symbolizer &symbols() { return symbols_; }
  CommTable &comms() { return comms_; }
  uint64_t events() const { return events_; }
  uint64_t lost() const { return lost_; }  // sum of LOST record counts seen
  // Bytes the reader holds for records not returned yet (RecordMerger).
  size_t held_bytes() const { return merger_.held_bytes(); }

 private:
  void open_input();
  // 'exact' reads no further than asked: a chunk header reads only itself,
  // so the payload after it goes straight from the kernel into its buffer.
  size_t read_some(uint8_t *p, size_t n, bool exact = false);  // 0 at EOF
  bool read_exact(void *p, size_t n, const char *what, bool exact = false);
  uint32_t checksum(const void *p, size_t n) const { return castagnoli_ ? crc32c(0, p, n) : crc32(0, p, n); }
  bool fill();  // reads one chunk / block; false at end of input
  void preload_symbols();
  // 'base_offset': the file offset of the records; 'packed_at': of the
  // compressed chunk they came from (errors name that and an offset in it).
  void push_records(ByteBuffer &&recs, uint64_t base_offset, std::optional<uint64_t> packed_at = {});
  void fail(std::string msg);

  int fd_ = -1;
  bool own_fd_ = false;
  std::string name_;
  size_t window_;
  TraceInfo info_;
  SchemaRegistry schemas_;
  Symbolizer symbols_;
  CommTable comms_;
  Decoder decoder_;

  std::vector<uint8_t> inbuf_;  // read-ahead
  size_t in_pos_ = 0, in_len_ = 0;
  uint64_t offset_ = 0;  // bytes consumed from the input
  bool eof_ = false;
  std::optional<std::string> error_;
  bool castagnoli_ = true;  // chunk checksums: CRC-32C (v2) or IEEE (v1)
  uint32_t format_version_ = 0;
  std::unique_ptr<void, void (*)(void *)> zstd_{nullptr, nullptr};  // ZSTD_DCtx, made on first use
  bool seen_ksyms_ = false;
  // Format 3, a regular file: every KSYMS chunk up to this offset was read
  // at open (preload_symbols()), so views name addresses from the first
  // record on; later ones (a file still being written) are added as met.
  uint64_t preloaded_to_ = 0;
  ByteBuffer chunk_;
  std::vector<uint8_t> carry_;  // raw stream: partial record between blocks

  RecordMerger merger_;
  uint64_t events_ = 0, lost_ = 0;
};

}  // namespace ktrack
