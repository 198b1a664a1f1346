// A trace file stores only the kallsyms lines its records need
// (format/symbol_subset.hpp): every address a record holds must be named
// exactly as the whole snapshot names it, and the file must stay small.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format/symbol_subset.hpp"
#include "format/symbols.hpp"
#include "format/trace_file.hpp"
#include "records.hpp"

using namespace ktrack;
namespace fs = std::filesystem;

namespace {

// A kallsyms snapshot with what makes naming hard: aliases at one address,
// data symbols between functions (they end the function before them), a
// tracepoint's data symbol (named: t probes record it), a gap longer than
// Symbolizer::kMaxOffset, lines at address 0 and garbage, and two modules,
// one cut at its end.
std::string snapshot(size_t nfuncs) {
  std::string t;
  uint64_t a = 0xffffffff81000000ull;
  for (size_t i = 0; i < nfuncs; i++) {
    t += fmt::format("{:016x} {} fn_{}\n", a, i % 3 ? 't' : 'T', i);
    if (i % 17 == 0) t += fmt::format("{:016x} T alias_{}\n", a, i);  // same address, read after
    if (i % 29 == 0) t += fmt::format("{:016x} d data_{}\n", a + 0x40, i);
    if (i % 31 == 0) t += fmt::format("{:016x} D __tracepoint_ev_{}\n", a + 0x80, i);
    if (i == nfuncs / 2) a += 3ull << 20;  // far more than kMaxOffset
    a += 0x100 + (i % 7) * 0x10;
  }
  t += "0000000000000000 T zero_sym\ngarbage line\n";
  t += "# module mod_a ffffffffc0000000 8192\n# module mod_b ffffffffc0010000 4096\n";
  t += "ffffffffc0000000 t a_init\t[mod_a]\nffffffffc0000800 t a_fn\t[mod_a]\n";
  t += "ffffffffc0010000 t b_fn\t[mod_b]\nffffffffc0010100 T b_fn2\t[mod_b]\n";
  return t;
}

std::vector<uint64_t> probe_addresses(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out = {0xffffffff80000000ull, 0xffffffff81000000ull, 0xffffffffc0000000ull,
                               0xffffffffc0001ffcull, 0xffffffffc0002000ull, 0xffffffffc0010180ull,
                               0xffffffffc0011000ull, 0xffffffffd0000000ull};
  for (size_t i = 0; i < n; i++) {
    uint64_t base = i % 4 ? 0xffffffff81000000ull : 0xffffffffc0000000ull;
    out.push_back(base + rng() % (i % 4 ? (2ull << 20) + (3ull << 20) : 0x12000));
  }
  return out;
}

// A scratch directory for one test's file, removed at the end.
struct ScratchFile {
  fs::path dir, path;
  explicit ScratchFile(const std::string &tag)
      : dir(fs::temp_directory_path() / fmt::format("ktrack-subset-{}-{}", tag, ::getpid())),
        path(dir / "t.ktrack") {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~ScratchFile() { fs::remove_all(dir); }
};

TraceMeta one_cpu_meta() {
  TraceMeta m;
  m.nr_cpus = 1;
  m.clock = "mono";
  return m;
}

}  // namespace

TEST(SymbolSubset, NamesEveryNeededAddressAsTheWholeSnapshotDoes) {
  const std::string text = snapshot(4000);
  Symbolizer whole;
  whole.load(text);
  SymbolSubset subset(text);
  Symbolizer part;
  part.add(subset.take());  // the module lines, before any record
  std::vector<uint64_t> addrs = probe_addresses(3000, 1);
  // Several chunks, as a recorder flushes them, and every address needed
  // twice: the second time adds nothing.
  for (size_t i = 0; i < addrs.size(); i++) {
    subset.need(addrs[i]);
    subset.need(addrs[(i * 7) % addrs.size()]);
    if (i % 500 == 499) part.add(subset.take());
  }
  part.add(subset.take());
  EXPECT_EQ(subset.take(), "");
  size_t named = 0;
  for (uint64_t a : addrs) {
    ASSERT_EQ(part.format(a), whole.format(a)) << fmt::format("{:#x}", a);
    uint64_t o1 = 0, o2 = 0;
    const auto *s1 = whole.lookup(a, &o1);
    const auto *s2 = part.lookup(a, &o2);
    ASSERT_EQ(s1 == nullptr, s2 == nullptr);
    if (s1) {
      named++;
      EXPECT_EQ(s1->end, s2->end) << s1->name;
      EXPECT_EQ(o1, o2);
    }
  }
  // The test means something: most addresses have a name, some do not
  // (past kMaxOffset, past a module's end, below the first symbol).
  EXPECT_GT(named, addrs.size() / 3);
  EXPECT_LT(named, addrs.size());
  EXPECT_EQ(part.format(0xffffffffc0001ffcull), "a_fn+0x17fc [mod_a]");
  EXPECT_EQ(part.format(0xffffffffc0002000ull), "0xffffffffc0002000");
  EXPECT_LT(subset.kept(), subset.lines());
}

TEST(SymbolSubset, AliasesKeepTheirOrderWhicheverIsNeededFirst) {
  // fn_1's end bound is alias line "x" (the first line at the next address);
  // needing fn_1 first keeps "x" alone, then needing that address keeps "y":
  // the last one read ("y") must name it, as in the whole snapshot.
  const std::string text =
      "ffffffff81000000 t fn_1\nffffffff81000100 t x\nffffffff81000100 t y\nffffffff81000200 t fn_3\n";
  Symbolizer whole;
  whole.load(text);
  SymbolSubset subset(text);
  Symbolizer part;
  subset.need(0xffffffff81000010ull);
  part.add(subset.take());
  subset.need(0xffffffff81000110ull);
  part.add(subset.take());
  EXPECT_EQ(whole.format(0xffffffff81000110ull), "y+0x10");
  EXPECT_EQ(part.format(0xffffffff81000110ull), "y+0x10");
  EXPECT_EQ(part.format(0xffffffff81000010ull), "fn_1+0x10");
  EXPECT_EQ(subset.kept(), 4u);  // fn_1, x, y and fn_3 (y's bound)
}

// A recorded file: the records' addresses are named as with the whole
// snapshot, probe ip/parent_ip, a symbol-typed probe field and a stack,
// including a function first seen after the first flush; and the file
// holds a few kilobytes of symbols, not the snapshot.
TEST(SymbolSubset, RecordedFileKeepsOnlyWhatItsRecordsName) {
  ScratchFile f("file");
  const fs::path &p = f.path;
  const std::string text = snapshot(40000);
  Symbolizer whole;
  whole.load(text);
  SchemaRegistry reg;
  reg.add(ktrack::testing::probe_schema(3, "p3", {make_field("cb", FieldType::Symbol, 0)}));
  TraceMeta m = one_cpu_meta();
  std::vector<uint64_t> named;
  size_t written = 0;
  {
    TraceWriter w(p.string(), m, reg, text);
    w.set_comm_resolver({});
    uint64_t ts = 1;
    std::vector<uint64_t> addrs = probe_addresses(400, 2);
    for (size_t round = 0; round < 2; round++) {
      std::vector<uint8_t> recs;
      for (size_t i = round; i + 3 < addrs.size(); i += 4) {
        uint64_t cb = addrs[i + 2];
        append_record(recs, ktrack::testing::rec_hdr(KTRACK_REC_PROBE, 0, ts++, 1, 1),
                      ktrack::testing::probe_payload(3, KTRACK_PROBE_EV_ENTRY, addrs[i], addrs[i + 1],
                                                     ktrack::testing::bytes_of(cb)));
        uint32_t stack_hdr[2] = {3, 2};
        uint64_t frames[2] = {addrs[i + 3], addrs[i + 1] + 1};
        std::string st(reinterpret_cast<const char *>(stack_hdr), 8);
        st.append(reinterpret_cast<const char *>(frames), 16);
        append_record(recs, ktrack::testing::rec_hdr(KTRACK_REC_STACK, 0, ts++, 1, 1), st);
        written += 2;
        for (uint64_t a : {addrs[i], addrs[i + 1], cb, addrs[i + 3], addrs[i + 1] + 1}) named.push_back(a);
      }
      w.write_records(recs);
      w.flush();
    }
    EXPECT_LT(w.symbols_kept(), w.symbols_offered() / 20);
    w.finish();
  }
  TraceReader r(p.string());
  Event ev;
  size_t n = 0;
  fmt::memory_buffer got;
  while (r.next(ev)) {
    n++;
    if (ev.type == KTRACK_REC_PROBE) {
      EXPECT_EQ(r.symbols().format(ev.ip), whole.format(ev.ip));
      EXPECT_EQ(r.symbols().format(ev.parent_ip), whole.format(ev.parent_ip));
    }
  }
  EXPECT_EQ(n, written);
  EXPECT_GT(written, 400u);
  for (uint64_t a : named) ASSERT_EQ(r.symbols().format(a), whole.format(a)) << fmt::format("{:#x}", a);
  // 40,000 functions are over 1 MB of kallsyms; 406 records name a few
  // hundred of them.
  EXPECT_GT(text.size(), 1000000u);
  EXPECT_LT(fs::file_size(p), 64u * 1024) << fs::file_size(p);
}

// The symbols of a format-3 file come with the records that need them; a
// view that names an address before the reader got that far (report prints
// as it reads) must still get the name: on a regular file every KSYMS chunk
// is read at open.  Through a pipe, each is read when reached, before its
// records.
TEST(SymbolSubset, SymbolsOfLaterRecordsAreKnownFromTheFirstRecord) {
  ScratchFile f("late");
  const fs::path &p = f.path;
  const std::string text = snapshot(1000);
  Symbolizer whole;
  whole.load(text);
  SchemaRegistry reg;
  reg.add(ktrack::testing::probe_schema(3, "p3", {}));
  TraceMeta m = one_cpu_meta();
  const uint64_t ip = 0xffffffff81000000ull + 0x100 * 40 + 0x10;
  {
    TraceWriter w(p.string(), m, reg, text);
    w.set_comm_resolver({});
    uint64_t ts = 1;
    for (int chunk = 0; chunk < 3; chunk++) {
      std::vector<uint8_t> recs;
      for (int i = 0; i < 20000; i++)
        append_record(recs, ktrack::testing::rec_hdr(KTRACK_REC_MARKER, 0, ts++, 1, 1),
                      std::string_view("a marker\0", 9));
      w.write_records(recs);
      w.flush();
    }
    std::vector<uint8_t> recs;
    append_record(recs, ktrack::testing::rec_hdr(KTRACK_REC_PROBE, 0, ts++, 1, 1),
                  ktrack::testing::probe_payload(3, KTRACK_PROBE_EV_ENTRY, ip, ip + 0x300, {}));
    w.write_records(recs);
    w.finish();
  }
  ASSERT_NE(whole.format(ip), fmt::format("{:#x}", ip));
  {
    TraceReader r(p.string(), 4096);  // a window far smaller than the markers
    Event ev;
    ASSERT_TRUE(r.next(ev));
    EXPECT_EQ(ev.type, KTRACK_REC_MARKER);
    EXPECT_EQ(r.symbols().format(ip), whole.format(ip));
    EXPECT_EQ(r.symbols().format(ip + 0x300), whole.format(ip + 0x300));
    size_t probes = 0;
    while (r.next(ev))
      if (ev.type == KTRACK_REC_PROBE) probes++;
    EXPECT_EQ(probes, 1u);
  }
  {
    // Through a pipe: named by the time its record is.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::string data;
    {
      std::ifstream f(p, std::ios::binary);
      data.assign(std::istreambuf_iterator<char>(f), {});
    }
    pid_t child = ::fork();
    if (child == 0) {
      ::close(fds[0]);
      size_t off = 0;
      while (off < data.size()) {
        ssize_t w = ::write(fds[1], data.data() + off, data.size() - off);
        if (w <= 0) ::_exit(1);
        off += static_cast<size_t>(w);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    TraceReader r(fds[0], "<pipe>", 4096);
    Event ev;
    size_t probes = 0;
    while (r.next(ev)) {
      if (ev.type != KTRACK_REC_PROBE) continue;
      probes++;
      EXPECT_EQ(r.symbols().format(ev.ip), whole.format(ip));
    }
    EXPECT_EQ(probes, 1u);
    ::close(fds[0]);
    int st = 0;
    ::waitpid(child, &st, 0);
  }
}
