// Trace file and raw stream: round trips, CPU merge, symbols and comms,
// truncated and corrupted inputs (clear error, never a crash), formatters.
#include <fcntl.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <tuple>

#include "format/event.hpp"
#include "format/format.hpp"
#include "format/symbols.hpp"
#include "format/trace_file.hpp"
#include "host/kallsyms.hpp"
#include "records.hpp"
#include "util/error.hpp"

using namespace ktrack;
namespace fs = std::filesystem;

namespace {

using ktrack::testing::bytes_of;
using ktrack::testing::probe_payload;

ktrack_rec_hdr hdr(uint16_t type, uint16_t cpu, uint64_t ts, uint32_t pid = 100, uint32_t tgid = 100) {
  return ktrack::testing::rec_hdr(type, cpu, ts, pid, tgid);
}

std::vector<uint8_t> seq_record(uint16_t cpu, uint64_t ts, uint64_t seq) {
  ktrack_rec_test_seq s{};
  s.seq = seq;
  s.run = 1;
  std::vector<uint8_t> out;
  append_record(out, hdr(KTRACK_REC_TEST_SEQ, cpu, ts), bytes_of(s));
  return out;
}

std::string read_file(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const fs::path &p, std::string_view data) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

const char *kKallsyms =
    "ffffffff81000000 T _stext\n"
    "ffffffff81001000 T do_sys_openat2\n"
    "ffffffff81001200 t helper_fn\n"
    "ffffffff81002000 D some_data\n"
    "ffffffffc0001000 t mod_fn\t[mymod]\n"
    "0000000000000000 T zero_sym\n"
    "garbage line\n";

class TraceFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ktrack-ff-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  TraceMeta meta() {
    TraceMeta m;
    m.nr_cpus = 4;
    m.clock = "mono";
    m.kernel_release = "6.12.0-test";
    m.hostname = "testhost";
    m.session = "s1";
    m.extra["mode"] = "discard";
    return m;
  }

  // Writes 'n' test_seq records on 4 CPUs, drained CPU by CPU in rounds
  // (the way the recorder sees them), plus a marker and a probe record.
  fs::path make_file(size_t n, size_t per_round = 50, bool compress = true) {
    // true: the writer's default codec (what 'record' and objtrace write)
    return make_file(n, per_round, compress ? std::nullopt : std::optional(RecordCodec::None));
  }
  fs::path make_file(size_t n, size_t per_round, std::optional<RecordCodec> codec) {
    fs::path p = dir_ / "t.ktrack";
    SchemaRegistry reg;
    Schema s;
    s.rec_type = KTRACK_REC_PROBE;
    s.probe_id = 7;
    s.name = "myprobe";
    s.fields = {make_field("arg", FieldType::U32, 0)};
    reg.add(s);
    TraceWriter w = codec ? TraceWriter(p.string(), meta(), reg, kKallsyms, *codec)
                          : TraceWriter(p.string(), meta(), reg, kKallsyms, true);
    w.set_comm_resolver([](uint32_t pid) -> std::optional<std::string> {
      if (pid == 100) return "proc100";
      return std::nullopt;
    });
    uint64_t seq[4] = {};
    size_t written = 0;
    uint64_t t = 1000;
    while (written < n) {
      std::vector<uint8_t> batch[4];
      for (size_t i = 0; i < per_round && written < n; i++, written++) {
        uint16_t cpu = static_cast<uint16_t>((i * 7 + written) % 4);
        auto r = seq_record(cpu, t++, seq[cpu]++);
        batch[cpu].insert(batch[cpu].end(), r.begin(), r.end());
      }
      for (auto &b : batch) w.write_records(b);
      w.flush();
    }
    std::vector<uint8_t> extra;
    append_record(extra, hdr(KTRACK_REC_MARKER, 2, t++, 100, 100), std::string_view("the end\0", 8));
    uint32_t arg = 33;
    std::string probe =
        probe_payload(7, KTRACK_PROBE_EV_ENTRY, 0xffffffff81001010ull, 0xffffffffc0001004ull, bytes_of(arg));
    append_record(extra, hdr(KTRACK_REC_PROBE, 1, t++, 555, 555), probe);
    w.write_records(extra);
    w.finish("cpu0_written=5\n");
    return p;
  }

  fs::path dir_;
};

}  // namespace

TEST(Crc32, KnownValue) { EXPECT_EQ(crc32(0, "123456789", 9), 0xCBF43926u); }

TEST(Crc32c, KnownValueAndChaining) {
  EXPECT_EQ(crc32c(0, "123456789", 9), 0xE3069283u);
  // Any split gives the same checksum (the 8-byte loop and the tail agree).
  std::string s(1000, '\0');
  for (size_t i = 0; i < s.size(); i++) s[i] = static_cast<char>(i * 7 + 3);
  uint32_t whole = crc32c(0, s.data(), s.size());
  for (size_t cut : {1, 7, 8, 9, 500, 999})
    EXPECT_EQ(crc32c(crc32c(0, s.data(), cut), s.data() + cut, s.size() - cut), whole) << cut;
  // Large buffers take the three-stream path; small pieces the plain one.
  std::string big(3 * 65536 + 13, '\0');
  for (size_t i = 0; i < big.size(); i++) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  for (size_t len : {size_t(3 * 4096), size_t(3 * 4096 + 5), size_t(50001), big.size()}) {
    uint32_t pieces = 0;
    for (size_t at = 0; at < len; at += 1000)
      pieces = crc32c(pieces, big.data() + at, std::min<size_t>(1000, len - at));
    EXPECT_EQ(crc32c(0, big.data(), len), pieces) << len;
    EXPECT_EQ(crc32c(crc32c(0, big.data(), 4), big.data() + 4, len - 4), pieces) << len;
  }
}

TEST(Symbolizer, LookupAndFormat) {
  Symbolizer s;
  s.load(kKallsyms);
  EXPECT_EQ(s.size(), 4u);  // data, zero and garbage lines skipped
  EXPECT_EQ(s.format(0xffffffff81001010ull), "do_sys_openat2+0x10");
  EXPECT_EQ(s.format(0xffffffff81001200ull), "helper_fn+0x0");
  EXPECT_EQ(s.format(0xffffffffc0001004ull), "mod_fn+0x4 [mymod]");
  EXPECT_EQ(s.format(0x1000), "0x1000");
  EXPECT_EQ(s.format(0xffffffffc0001000ull + Symbolizer::kMaxOffset + 1), "0xffffffffc0101001");
  Symbolizer moved = std::move(s);
  EXPECT_EQ(moved.format(0xffffffff81001010ull), "do_sys_openat2+0x10");
}

// A symbol never covers what lies past the next symbol, nor past its
// module's end: an address in a module loaded after the snapshot (right
// after ktrack, say) is shown raw, never as ktrack's last symbol + 0x1310c.
TEST(Symbolizer, BoundedByNextSymbolAndModuleEnd) {
  Symbolizer s;
  s.load(
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 T func_a\n"
      "ffffffff81001100 d a_data\n"
      "ffffffffc0000000 t ktrack_fn\t[ktrack]\n"
      "ffffffffc0000400 t __SCT__tp_func_x\t[ktrack]\n"
      "ffffffffc0004000 t other_fn\t[other]\n"
      "# module ktrack ffffffffc0000000 8192\n"
      "# module other ffffffffc0004000 4096\n");
  EXPECT_EQ(s.format(0xffffffff81001050ull), "func_a+0x50");
  EXPECT_EQ(s.format(0xffffffff81001150ull), "0xffffffff81001150");  // data, not func_a
  EXPECT_EQ(s.format(0xffffffffc0000410ull), "__SCT__tp_func_x+0x10 [ktrack]");
  EXPECT_EQ(s.format(0xffffffffc0001ff0ull), "__SCT__tp_func_x+0x1bf0 [ktrack]");
  EXPECT_EQ(s.format(0xffffffffc0002100ull), "0xffffffffc0002100");  // past ktrack's end
  EXPECT_EQ(s.format(0xffffffffc0004010ull), "other_fn+0x10 [other]");
  EXPECT_EQ(s.format(0xffffffffc0004ff0ull), "other_fn+0xff0 [other]");
  EXPECT_EQ(s.format(0xffffffffc0005000ull), "0xffffffffc0005000");
  // A module's range without a symbol there: raw address, module named.
  Symbolizer m;
  m.load("ffffffffc0000100 t f\t[mod]\nffffffffc0000200 d x\t[mod]\n# module mod ffffffffc0000000 4096\n");
  EXPECT_EQ(m.format(0xffffffffc0000300ull), "0xffffffffc0000300 [mod]");
  EXPECT_EQ(m.format(0xffffffffc0000104ull), "f+0x4 [mod]");
}

TEST(Symbolizer, ReadKallsymsAddsModuleLines) {
  fs::path dir = fs::temp_directory_path() / ("ktrack-syms-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "kallsyms") << "ffffffffc0000000 t mod_fn\t[mymod]\n";
  std::ofstream(dir / "modules") << "mymod 16384 0 - Live 0xffffffffc0000000 (OE)\n"
                                 << "gone 4096 0 - Unloading 0x0000000000000000\n";
  ::setenv("KTRACK_KALLSYMS", (dir / "kallsyms").c_str(), 1);
  ::setenv("KTRACK_MODULES", (dir / "modules").c_str(), 1);
  std::string text = read_kallsyms();
  ::unsetenv("KTRACK_KALLSYMS");
  ::unsetenv("KTRACK_MODULES");
  fs::remove_all(dir);
  EXPECT_NE(std::string::npos, text.find("# module mymod ffffffffc0000000 16384\n")) << text;
  EXPECT_NE(std::string::npos, text.find("# module gone 0000000000000000 4096\n")) << text;
  Symbolizer s;
  s.load(text);
  EXPECT_EQ(s.format(0xffffffffc0003ffcull), "mod_fn+0x3ffc [mymod]");
  EXPECT_EQ(s.format(0xffffffffc0004000ull), "0xffffffffc0004000");
}

TEST_F(TraceFile, RoundTripMergedByTimestamp) {
  fs::path p = make_file(1000);
  TraceReader r(p.string());
  EXPECT_FALSE(r.info().raw_stream);
  EXPECT_EQ(r.info().meta.nr_cpus, 4u);
  EXPECT_EQ(r.info().meta.clock, "mono");
  EXPECT_EQ(r.info().meta.kernel_release, "6.12.0-test");
  EXPECT_EQ(r.info().meta.hostname, "testhost");
  EXPECT_EQ(r.info().meta.session, "s1");
  EXPECT_EQ(r.info().meta.extra.at("mode"), "discard");
  Event ev;
  uint64_t last_ts = 0, count = 0;
  uint64_t next_seq[4] = {};
  bool saw_marker = false, saw_probe = false;
  while (r.next(ev)) {
    EXPECT_GE(ev.ts, last_ts);
    last_ts = ev.ts;
    count++;
    if (ev.type == KTRACK_REC_TEST_SEQ) {
      EXPECT_EQ(ev.field("seq")->u, next_seq[ev.cpu]++);
      EXPECT_EQ(ev.comm, "proc100");
    } else if (ev.type == KTRACK_REC_MARKER) {
      saw_marker = true;
      EXPECT_EQ(ev.field("text")->str(), "the end");
    } else if (ev.type == KTRACK_REC_PROBE) {
      saw_probe = true;
      EXPECT_EQ(ev.name, "myprobe");
      EXPECT_EQ(ev.field("arg")->u, 33u);
      EXPECT_EQ(r.symbols().format(ev.ip), "do_sys_openat2+0x10");
      EXPECT_EQ(ev.comm, "");
    }
  }
  EXPECT_EQ(count, 1002u);
  EXPECT_TRUE(saw_marker);
  EXPECT_TRUE(saw_probe);
  EXPECT_EQ(r.info().totals.at("events"), "1002");
  EXPECT_EQ(r.info().totals.at("cpu0_written"), "5");
}

TEST_F(TraceFile, SmallReorderWindowKeepsPerCpuOrder) {
  fs::path p = make_file(20000, 4000);
  TraceReader r(p.string(), 4096);  // far smaller than one round
  Event ev;
  uint64_t next_seq[4] = {};
  uint64_t count = 0;
  while (r.next(ev)) {
    if (ev.type != KTRACK_REC_TEST_SEQ) continue;
    ASSERT_EQ(ev.field("seq")->u, next_seq[ev.cpu]++);
    count++;
  }
  EXPECT_EQ(count, 20000u);
}

TEST_F(TraceFile, TruncatedAtEveryLengthGivesErrorNotCrash) {
  fs::path p = make_file(40, 10);
  std::string data = read_file(p);
  fs::path t = dir_ / "trunc";
  size_t errors = 0;
  for (size_t len = 1; len < data.size(); len += (len < 600 ? 1 : 41)) {
    write_file(t, std::string_view(data).substr(0, len));
    try {
      TraceReader r(t.string());
      Event ev;
      uint64_t n = 0;
      while (r.next(ev)) n++;
      ADD_FAILURE() << "truncated file of " << len << " bytes decoded without an error (" << n << " events)";
    } catch (const Error &e) {
      errors++;
      EXPECT_GT(std::strlen(e.what()), 10u);
    }
  }
  EXPECT_GT(errors, 100u);
}

TEST_F(TraceFile, TruncationReportsEventsBeforeTheDamage) {
  fs::path p = make_file(400, 100);
  std::string data = read_file(p);
  fs::path t = dir_ / "trunc";
  write_file(t, std::string_view(data).substr(0, data.size() - 100));  // cuts END and part of the last chunk
  TraceReader r(t.string());
  Event ev;
  uint64_t n = 0;
  try {
    while (r.next(ev)) n++;
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  EXPECT_EQ(n, 400u);  // every record chunk is intact; only the last (marker/probe) one is cut
}

TEST_F(TraceFile, CorruptedBytesGiveErrorNotCrash) {
  fs::path p = make_file(200, 50);
  std::string data = read_file(p);
  std::mt19937 rng(7);
  fs::path t = dir_ / "corrupt";
  size_t detected = 0;
  for (int iter = 0; iter < 300; iter++) {
    std::string d = data;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < flips; i++) d[8 + rng() % (d.size() - 8)] ^= static_cast<char>(1 + rng() % 255);
    write_file(t, d);
    try {
      TraceReader r(t.string());
      Event ev;
      while (r.next(ev)) {
      }
    } catch (const Error &) {
      detected++;
      continue;
    }
    for (size_t i = 0; i < d.size(); i++)
      if (d[i] != data[i]) ADD_FAILURE() << "undetected flip at " << i << " of " << d.size();
  }
  // Checksums catch every flip inside a chunk payload or header.
  EXPECT_EQ(detected, 300u);
}

TEST_F(TraceFile, NotATraceFile) {
  fs::path t = dir_ / "junk";
  write_file(t, "hello, this is not a trace\n");
  EXPECT_THROW(TraceReader r(t.string()), Error);
  fs::path e = dir_ / "empty";
  write_file(e, "");
  TraceReader r(e.string());  // an empty raw stream: no events
  Event ev;
  EXPECT_FALSE(r.next(ev));
  EXPECT_THROW(TraceReader(dir_ / "missing" / "x"), FileError);
}

TEST_F(TraceFile, WrongFormatVersionIsExplained) {
  fs::path p = make_file(10, 50, RecordCodec::Zstd);  // the newest format
  std::string data = read_file(p);
  ChunkHeader h;
  std::memcpy(&h, data.data() + 8, sizeof(h));
  std::string meta = data.substr(8 + sizeof(h), h.len);
  size_t at = meta.find(fmt::format("format_version={}", kTraceFormatVersion));
  ASSERT_NE(at, std::string::npos);
  meta[at + 15] = '9';
  h.crc = crc32c(0, meta.data(), meta.size());
  std::memcpy(data.data() + 8, &h, sizeof(h));
  data.replace(8 + sizeof(h), h.len, meta);
  write_file(p, data);
  try {
    TraceReader r(p.string());
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("version 9"), std::string::npos) << e.what();
  }
}

// Format 1 files (IEEE CRC-32 checksums) still decode.
TEST_F(TraceFile, VersionOneFilesStillRead) {
  fs::path p = make_file(50, 50, false);  // written as format 3: no compressed chunks
  uint64_t expected = 0;
  {
    TraceReader r(p.string());
    Event ev;
    while (r.next(ev)) expected++;
  }
  std::string data = read_file(p);
  std::string out = data.substr(0, 8);
  size_t pos = 8;
  while (pos + sizeof(ChunkHeader) <= data.size()) {
    ChunkHeader h;
    std::memcpy(&h, data.data() + pos, sizeof(h));
    std::string payload = data.substr(pos + sizeof(h), h.len);
    if (h.type == static_cast<uint32_t>(ChunkType::Meta)) {
      size_t at = payload.find(fmt::format("format_version={}", kTraceFormatNoLz4));
      ASSERT_NE(at, std::string::npos);
      payload[at + 15] = '1';
    }
    h.crc = crc32(0, payload.data(), payload.size());
    out.append(reinterpret_cast<const char *>(&h), sizeof(h));
    out += payload;
    pos += sizeof(h) + h.len;
  }
  write_file(p, out);
  TraceReader r(p.string());
  Event ev;
  uint64_t n = 0;
  while (r.next(ev)) n++;
  EXPECT_GE(n, 50u);
  EXPECT_EQ(n, expected);
  // A version 1 header with a CRC-32C checksum is a damaged file.
  std::string mixed = out;
  ChunkHeader h;
  std::memcpy(&h, mixed.data() + 8, sizeof(h));
  h.crc = crc32c(0, mixed.data() + 8 + sizeof(h), h.len);
  std::memcpy(mixed.data() + 8, &h, sizeof(h));
  write_file(p, mixed);
  EXPECT_THROW(TraceReader r2(p.string()), Error);
}

namespace {

// Chunk types of a file, in order, and the file rebuilt with 'edit'
// applied to each chunk's (type, payload), checksums redone.
std::vector<uint32_t> chunk_types(const std::string &data) {
  std::vector<uint32_t> types;
  for (size_t pos = 8; pos + sizeof(ChunkHeader) <= data.size();) {
    ChunkHeader h;
    std::memcpy(&h, data.data() + pos, sizeof(h));
    types.push_back(h.type);
    pos += sizeof(h) + h.len;
  }
  return types;
}

template <typename Edit>
std::string rebuild(const std::string &data, Edit edit) {
  std::string out = data.substr(0, 8);
  for (size_t pos = 8; pos + sizeof(ChunkHeader) <= data.size();) {
    ChunkHeader h;
    std::memcpy(&h, data.data() + pos, sizeof(h));
    std::string payload = data.substr(pos + sizeof(h), h.len);
    pos += sizeof(h) + h.len;
    edit(h.type, payload);
    h.len = payload.size();
    h.crc = crc32c(0, payload.data(), payload.size());
    out.append(reinterpret_cast<const char *>(&h), sizeof(h));
    out += payload;
  }
  return out;
}

// Every event of a file as report's text, with its symbols and comms.
std::string decode_all(const fs::path &p) {
  TraceReader r(p.string());
  FormatOptions opt{&r.symbols()};
  fmt::memory_buffer out;
  Event ev;
  while (r.next(ev)) format_text(ev, opt, out);
  return fmt::to_string(out);
}

// What the writer writes (format 6: the records delta-encoded first).
constexpr uint32_t kLz4 = static_cast<uint32_t>(ChunkType::RecordsLz4Delta);
constexpr uint32_t kZstd = static_cast<uint32_t>(ChunkType::RecordsZstdDelta);
constexpr uint32_t kPlain = static_cast<uint32_t>(ChunkType::Records);

}  // namespace

// Record chunks are delta-encoded and LZ4-compressed by default (zstd on
// request), and decode to exactly the events of the same file written
// uncompressed.
TEST_F(TraceFile, CompressedRecordsDecodeAsUncompressed) {
  fs::path plain = dir_ / "plain.ktrack";
  fs::rename(make_file(20000, 2000, false), plain);
  std::string b = read_file(plain);
  auto tb = chunk_types(b);
  EXPECT_EQ(std::count(tb.begin(), tb.end(), kLz4) + std::count(tb.begin(), tb.end(), kZstd), 0);
  // The uncompressed file is format 3, which older readers take.
  EXPECT_NE(b.find(fmt::format("format_version={}\n", kTraceFormatNoLz4)), std::string::npos);
  std::string db = decode_all(plain);
  EXPECT_EQ(std::count(db.begin(), db.end(), '\n'), 20002);
  for (auto [codec, type, version] : {std::tuple{RecordCodec::Zstd, kZstd, kTraceFormatVersion},
                                      std::tuple{RecordCodec::Lz4, kLz4, kTraceFormatVersion}}) {
    fs::path packed = make_file(20000, 2000, codec);
    std::string a = read_file(packed);
    auto ta = chunk_types(a);
    EXPECT_GT(std::count(ta.begin(), ta.end(), type), 5) << version;
    EXPECT_EQ(std::count(ta.begin(), ta.end(), type == kZstd ? kLz4 : kZstd), 0) << version;
    EXPECT_LT(a.size() * 3, b.size()) << "compressed " << a.size() << " plain " << b.size();
    EXPECT_NE(a.find(fmt::format("format_version={}\n", version)), std::string::npos);
    EXPECT_EQ(decode_all(packed), db) << version;
  }
  // The default ('compress' true) is LZ4 of delta-encoded records, format 6.
  std::string d = read_file(make_file(2000, 500, true));
  auto td = chunk_types(d);
  EXPECT_GT(std::count(td.begin(), td.end(), kLz4), 0);
  EXPECT_EQ(std::count(td.begin(), td.end(), kZstd), 0);
  EXPECT_NE(d.find(fmt::format("format_version={}\n", kTraceFormatVersion)), std::string::npos);
}

// Files of formats 4 (LZ4) and 5 (zstd), whose compressed chunks hold the
// records as they are, still read: the same events as the plain file.
TEST_F(TraceFile, Format4And5FilesStillRead) {
  fs::path plain = dir_ / "plain.ktrack";
  fs::rename(make_file(20000, 2000, false), plain);
  const std::string b = read_file(plain);
  const std::string db = decode_all(plain);
  for (uint32_t version : {4u, 5u}) {
    int packed = 0;
    std::string old = rebuild(b, [&](uint32_t &t, std::string &payload) {
      if (t == static_cast<uint32_t>(ChunkType::Meta)) {
        size_t at = payload.find("format_version=3\n");
        ASSERT_NE(at, std::string::npos);
        payload[at + 15] = static_cast<char>('0' + version);
        return;
      }
      if (t != kPlain) return;
      uint64_t raw = payload.size();
      std::string out(reinterpret_cast<const char *>(&raw), sizeof(raw));
      if (version == 4) {
        std::string block(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw))), '\0');
        int n = LZ4_compress_default(payload.data(), block.data(), static_cast<int>(raw),
                                     static_cast<int>(block.size()));
        ASSERT_GT(n, 0);
        out.append(block.data(), static_cast<size_t>(n));
        t = static_cast<uint32_t>(ChunkType::RecordsLz4);
      } else {
        std::string frame(ZSTD_compressBound(raw), '\0');
        size_t n = ZSTD_compress(frame.data(), frame.size(), payload.data(), raw, 1);
        ASSERT_FALSE(ZSTD_isError(n));
        out.append(frame.data(), n);
        t = static_cast<uint32_t>(ChunkType::RecordsZstd);
      }
      payload = out;
      packed++;
    });
    EXPECT_GT(packed, 5) << version;
    fs::path p = dir_ / fmt::format("v{}.ktrack", version);
    write_file(p, old);
    EXPECT_EQ(decode_all(p), db) << version;
    // One version older (3 has no LZ4 chunks, 4 no zstd ones): a damaged file.
    std::string older = rebuild(old, [&](uint32_t &t, std::string &payload) {
      if (t != static_cast<uint32_t>(ChunkType::Meta)) return;
      size_t at = payload.find("format_version=");
      payload[at + 15] = static_cast<char>('0' + version - 1);
    });
    write_file(p, older);
    EXPECT_THROW(decode_all(p), Error) << version - 1;
  }
}

// Records that do not compress by 1/8 are stored as they are.
TEST_F(TraceFile, IncompressibleRecordsStayPlain) {
  fs::path p = dir_ / "noise.ktrack";
  {
    TraceWriter w(p.string(), meta(), SchemaRegistry(), "");
    std::mt19937_64 rng(3);
    std::vector<uint8_t> recs;
    for (int i = 0; i < 2000; i++) {
      std::string payload(200, '\0');  // the headers compress, the payload does not
      for (auto &c : payload) c = static_cast<char>(rng());
      append_record(recs, hdr(KTRACK_REC_MARKER, 0, 1000 + static_cast<uint64_t>(i), 1, 1), payload);
    }
    w.write_records(recs);
    w.finish();
    EXPECT_EQ(w.record_bytes_stored(), w.record_bytes_raw());
  }
  auto types = chunk_types(read_file(p));
  EXPECT_EQ(std::count(types.begin(), types.end(), kLz4) + std::count(types.begin(), types.end(), kZstd), 0);
  EXPECT_EQ(std::count(types.begin(), types.end(), kPlain), 1);
  TraceReader r(p.string());
  Event ev;
  int n = 0;
  while (r.next(ev)) n++;
  EXPECT_EQ(n, 2000);
}

// A compressed chunk whose checksum matches but whose contents do not
// decompress to the length it claims is corruption, reported after the
// events before it; so is one in a file of format 3, which has none.
TEST_F(TraceFile, DamagedCompressedChunkIsAnErrorNotACrash) {
  struct Case {
    const char *what;
    std::function<void(std::string &)> damage;
    const char *says;
  };
  std::vector<Case> cases = {
      {"length too large", [](std::string &p) { p[0] = static_cast<char>(p[0] + 1); }, "does not decompress"},
      {"length too small", [](std::string &p) { p[0] = static_cast<char>(p[0] - 8); }, "does not decompress"},
      {"length absurd", [](std::string &p) { p[7] = 0x40; }, "implausible size"},
      {"length past the cap",
       [](std::string &p) {
         p[2] = 0x01;
         p[3] = 0x01;
       },
       "implausible size"},
      {"length zero", [](std::string &p) { std::memset(p.data(), 0, 8); }, "implausible size"},
      {"stream cut", [](std::string &p) { p.resize(p.size() / 2); }, "does not decompress"},
      {"only the length", [](std::string &p) { p.resize(8); }, "implausible size"},
      {"garbage", [](std::string &p) { std::fill(p.begin() + 8, p.end(), '\xff'); }, "does not decompress"},
      {"bytes flipped mid-stream",
       [](std::string &p) {
         for (size_t i = 8 + (p.size() - 8) / 3; i < p.size(); i += 97) p[i] = static_cast<char>(p[i] ^ 0x5a);
       },
       "does not decompress"},
      {"one byte flipped", [](std::string &p) { p[8 + (p.size() - 8) / 2] ^= 0x01; }, "does not decompress"},
      {"a second frame after it",  // zstd: two frames; LZ4: bytes after the block
       [](std::string &p) { p.append(p.substr(8)); }, "does not decompress"},
  };
  for (auto [codec, type] : {std::pair{RecordCodec::Zstd, kZstd}, std::pair{RecordCodec::Lz4, kLz4}}) {
    std::string data = read_file(make_file(4000, 1000, codec));
    for (const Case &c : cases) {
      int seen = 0;
      std::string bad = rebuild(data, [&](uint32_t t, std::string &payload) {
        if (t == type && ++seen == 2) c.damage(payload);
      });
      ASSERT_EQ(seen, 4) << c.what;
      fs::path t = dir_ / "bad";
      write_file(t, bad);
      TraceReader r(t.string());
      Event ev;
      uint64_t n = 0;
      try {
        while (r.next(ev)) n++;
        // A flipped byte in an LZ4 literal run decodes to other bytes of the
        // right length; the records' own checks may then take it.
        // LZ4 has no checksum of its own (in a real file the chunk's CRC
        // catches what these rebuilt chunks carry past it); zstd's frames do.
        const std::string_view w(c.what);
        if ((w != "bytes flipped mid-stream" && w != "one byte flipped") || type == kZstd) {
          ADD_FAILURE() << c.what << ": no error (" << type << ")";
        }
        continue;
      } catch (const Error &e) {
        if (std::string_view(c.what) != "bytes flipped mid-stream" &&
            std::string_view(c.what) != "one byte flipped") {
          EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.what << ": " << e.what();
        }
      }
      EXPECT_GE(n, 1000u) << c.what;  // the first chunk's events came out
      EXPECT_LT(n, 4000u) << c.what;
    }
    // An older format with this chunk type: a damaged file.
    std::string old = rebuild(data, [&](uint32_t t, std::string &payload) {
      if (t != static_cast<uint32_t>(ChunkType::Meta)) return;
      size_t at = payload.find("format_version=");
      payload[at + 15] = '5';  // format 5 has compressed chunks, not delta-encoded ones
    });
    fs::path t = dir_ / "old";
    write_file(t, old);
    TraceReader r(t.string());
    Event ev;
    EXPECT_THROW(
        {
          while (r.next(ev)) {
          }
        },
        Error)
        << type;
  }
}

// A compressed chunk can stand for 255 times its size: a record that must
// wait (its timestamp is the latest) keeps its whole decompressed buffer.
// The reader's window counts those buffers, so a short crafted file of
// such chunks cannot make it hold more than the window: it reads on in
// order per CPU instead.
TEST_F(TraceFile, PendingRecordsInCompressedChunksDoNotPinMemory) {
  fs::path p = dir_ / "pinned.ktrack";
  constexpr int kChunks = 64;
  {
    TraceWriter w(p.string(), meta(), SchemaRegistry(), "");
    uint64_t t = 1000;
    for (int c = 0; c < kChunks; c++) {
      std::vector<uint8_t> recs;
      std::string payload(4000, 'x');
      for (int i = 0; i < 250; i++) append_record(recs, hdr(KTRACK_REC_MARKER, 0, t++, 1, 1), payload);
      append_record(recs, hdr(KTRACK_REC_MARKER, 1, (1ull << 60) + static_cast<uint64_t>(c), 1, 1),
                    std::string_view("late\0\0\0\0", 8));
      w.write_records(recs);
      w.flush();
    }
    w.finish();
    EXPECT_LT(w.record_bytes_stored() * 50, w.record_bytes_raw());
  }
  ASSERT_LT(fs::file_size(p), 1u << 20);  // 64 MiB of records in under a MiB
  TraceReader r(p.string(), 4u << 20);
  std::span<const uint8_t> rec;
  uint64_t n = 0, late = 0, last_cpu1 = 0;
  size_t most = 0;
  while (r.next_raw(rec)) {
    n++;
    ktrack_rec_hdr h;
    std::memcpy(&h, rec.data(), sizeof(h));
    if (h.cpu == 1) {
      EXPECT_GT(h.ts, last_cpu1);  // each CPU's order is kept
      last_cpu1 = h.ts;
      late++;
    }
    most = std::max(most, r.held_bytes());
  }
  EXPECT_EQ(n, kChunks * 251u);
  EXPECT_EQ(late, static_cast<uint64_t>(kChunks));
  // The window and one chunk's buffer (plus a block's rounding), not 64 MiB.
  EXPECT_LE(most, (4u << 20) + 2 * RecordMerger::kBlockSize) << most;
}

TEST_F(TraceFile, RawStreamDecodesAndMerges) {
  std::vector<uint8_t> raw;
  // CPU 1's batch, then CPU 0's, as a per-CPU reader would return them.
  for (uint64_t i = 0; i < 100; i++) {
    auto r = seq_record(1, 2 * i + 1, i);
    raw.insert(raw.end(), r.begin(), r.end());
  }
  append_record(raw, hdr(KTRACK_REC_PAD, 1, 0), std::string_view());
  for (uint64_t i = 0; i < 100; i++) {
    auto r = seq_record(0, 2 * i, i);
    raw.insert(raw.end(), r.begin(), r.end());
  }
  fs::path p = dir_ / "raw";
  write_file(p, std::string_view(reinterpret_cast<const char *>(raw.data()), raw.size()));
  TraceReader r(p.string());
  EXPECT_TRUE(r.info().raw_stream);
  Event ev;
  uint64_t expect_ts = 0;
  while (r.next(ev)) {
    ASSERT_EQ(ev.ts, expect_ts);
    EXPECT_EQ(ev.cpu, expect_ts % 2);
    expect_ts++;
  }
  EXPECT_EQ(expect_ts, 200u);

  // Truncated raw stream: the events before the cut, then an error.
  write_file(p, std::string_view(reinterpret_cast<const char *>(raw.data()), raw.size() - 5));
  TraceReader t(p.string());
  uint64_t n = 0;
  EXPECT_THROW(
      {
        while (t.next(ev)) n++;
      },
      Error);
  EXPECT_EQ(n, 199u);
}

TEST_F(TraceFile, RawStreamFromPipe) {
  std::vector<uint8_t> raw;
  for (uint64_t i = 0; i < 1000; i++) {
    auto r = seq_record(0, i, i);
    raw.insert(raw.end(), r.begin(), r.end());
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    size_t off = 0;
    while (off < raw.size()) {
      size_t n = std::min<size_t>(333, raw.size() - off);  // records split across reads
      ssize_t w = ::write(fds[1], raw.data() + off, n);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    ::close(fds[1]);
  });
  TraceReader r(fds[0], "pipe");
  Event ev;
  uint64_t n = 0;
  while (r.next(ev)) ASSERT_EQ(ev.field("seq")->u, n++);
  writer.join();
  ::close(fds[0]);
  EXPECT_EQ(n, 1000u);
}

TEST(Format, TextAndJsonOfKnownRecords) {
  SchemaRegistry reg;
  reg.add(ktrack::testing::probe_schema(
      7, "open",
      {make_field("fd", FieldType::S32, 0), make_field("flags", FieldType::X32, 4),
       make_field("name", FieldType::DynString, 8, 4), make_field("v", FieldType::U16, 12, 6)}));
  CommTable comms;
  comms.set(100, "bash");
  Decoder dec(reg, &comms);
  Symbolizer syms;
  syms.load(kKallsyms);
  FormatOptions opt{&syms};
  Event ev;
  fmt::memory_buffer out;

  std::vector<uint8_t> rec;
  append_record(rec, hdr(KTRACK_REC_MARKER, 1, 12000001234ull), std::string_view("hi \"x\"\n\0", 8));
  ASSERT_TRUE(dec.decode(rec, ev));
  format_text(ev, opt, out);
  EXPECT_EQ(fmt::to_string(out),
            "            bash-100     [001] 12.000001234: marker: text=\"hi \\\"x\\\"\\n\"\n");
  out.clear();
  format_json(ev, opt, out);
  EXPECT_EQ(fmt::to_string(out),
            "{\"ts\":12000001234,\"cpu\":1,\"pid\":100,\"tgid\":100,\"comm\":\"bash\",\"ctx\":\"task\","
            "\"event\":\"marker\",\"type\":2,\"fields\":{\"text\":\"hi \\\"x\\\"\\n\"}}\n");

  std::string data(24, '\0');
  int32_t fd = -2;
  uint32_t flags = 0x8001, slot = (18u << 16) | 3u;
  uint16_t v[3] = {1, 2, 3};
  std::memcpy(data.data(), &fd, 4);
  std::memcpy(data.data() + 4, &flags, 4);
  std::memcpy(data.data() + 8, &slot, 4);
  std::memcpy(data.data() + 12, v, 6);
  std::memcpy(data.data() + 18, "a\x01z", 3);
  std::string probe =
      probe_payload(7, KTRACK_PROBE_EV_EXIT, 0xffffffff81001000ull, 0xffffffffc0001004ull, data);
  rec.clear();
  auto h = hdr(KTRACK_REC_PROBE, 0, 5, 9, 9);
  h.flags = KTRACK_RECF_CTX_HARDIRQ;
  append_record(rec, h, probe);
  ASSERT_TRUE(dec.decode(rec, ev));
  out.clear();
  format_text(ev, opt, out);
  EXPECT_EQ(fmt::to_string(out),
            "           <...>-9       [000] 0.000000005: open: (mod_fn+0x4 [mymod] <- do_sys_openat2) fd=-2 "
            "flags=0x8001 name=\"a\\x01z\" v={1,2,3}\n");
  out.clear();
  format_json(ev, opt, out);
  EXPECT_EQ(fmt::to_string(out),
            "{\"ts\":5,\"cpu\":0,\"pid\":9,\"tgid\":9,\"comm\":null,\"ctx\":\"hardirq\",\"event\":\"open\","
            "\"type\":16,\"probe_id\":7,\"probe_event\":\"exit\",\"ip\":\"do_sys_openat2+0x0\","
            "\"parent_ip\":\"mod_fn+0x4 "
            "[mymod]\",\"fields\":{\"fd\":-2,\"flags\":\"0x8001\",\"name\":\"a\\u0001z\","
            "\"v\":[1,2,3]}}\n");

  ktrack_rec_lost l{};
  l.count = 3;
  l.reason = KTRACK_LOST_FULL;
  rec.clear();
  append_record(rec, hdr(KTRACK_REC_LOST, 3, 7, 0, 0), bytes_of(l));
  ASSERT_TRUE(dec.decode(rec, ev));
  out.clear();
  format_text(ev, opt, out);
  EXPECT_EQ(fmt::to_string(out),
            "          <idle>-0       [003] 0.000000007: lost: count=3 first_ts=0 last_ts=0 reason=full\n");

  // A truncated payload prints as such.
  rec.clear();
  append_record(rec, hdr(KTRACK_REC_LOST, 3, 7, 0, 0), std::string_view("\x05\0\0\0\0\0\0\0", 8));
  ASSERT_TRUE(dec.decode(rec, ev));
  out.clear();
  format_json(ev, opt, out);
  EXPECT_NE(fmt::to_string(out).find("\"count\":5,\"first_ts\":null"), std::string::npos)
      << fmt::to_string(out);
}
