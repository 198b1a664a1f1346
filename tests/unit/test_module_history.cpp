// Module load/unload records (issue 12): every address is named by the
// module that held it at the record's time, in the text output and in the
// views that keep addresses and name them at the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analysis/analysis_source.hpp"
#include "format/event.hpp"
#include "format/format.hpp"
#include "format/symbols.hpp"
#include "format/trace_file.hpp"

using namespace ktrack;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kBase = 0xffffffffc0100000ull;  // where both modules load, one after the other

ktrack_rec_hdr hdr(uint16_t type, uint64_t ts) {
  ktrack_rec_hdr h{};
  h.type = type;
  h.ts = ts;
  h.pid = 1;
  h.tgid = 1;
  return h;
}

void module_rec(std::vector<uint8_t> &out, uint64_t ts, uint32_t event, const char *name, uint64_t base,
                uint64_t size, uint32_t nr_syms = 0) {
  ktrack_rec_module m{};
  m.event = event;
  m.nr_syms = nr_syms;
  m.text_base = base;
  m.text_size = size;
  std::strncpy(m.name, name, sizeof(m.name) - 1);
  append_record(out, hdr(KTRACK_REC_MODULE, ts),
                std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(&m), sizeof(m)));
}

struct Sym {
  uint64_t addr;
  uint32_t size;
  const char *name;
};

void syms_rec(std::vector<uint8_t> &out, uint64_t ts, uint64_t base, const std::vector<Sym> &syms) {
  std::vector<uint8_t> p(sizeof(ktrack_rec_module_syms));
  ktrack_rec_module_syms h{};
  h.text_base = base;
  h.nr = static_cast<uint32_t>(syms.size());
  std::memcpy(p.data(), &h, sizeof(h));
  for (const auto &s : syms) {
    ktrack_module_sym e{};
    e.addr = s.addr;
    e.size = s.size;
    e.name_len = static_cast<uint16_t>(std::strlen(s.name) + 1);
    e.type = 't';
    size_t at = p.size();
    p.resize(at + ((sizeof(e) + e.name_len + 7) & ~size_t(7)));
    std::memcpy(p.data() + at, &e, sizeof(e));
    std::memcpy(p.data() + at + sizeof(e), s.name, e.name_len);
  }
  append_record(out, hdr(KTRACK_REC_MODULE_SYMS, ts), p);
}

void probe_rec(std::vector<uint8_t> &out, uint64_t ts, uint64_t ip) {
  ktrack_rec_probe p{};
  p.probe_id = 1;
  p.event = KTRACK_PROBE_EV_ENTRY;
  p.ip = ip;
  p.parent_ip = 0xffffffff81001010ull;
  append_record(out, hdr(KTRACK_REC_PROBE, ts),
                std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(&p), sizeof(p)));
}

// ktrack at its base, 'gone' (loaded before the capture, unloaded during
// it), the core kernel.
const char *kSnapshot =
    "ffffffff81001000 T vfs_write\n"
    "ffffffff81002000 T vfs_read\n"
    "ffffffffc0000000 t ktrack_fn\t[ktrack]\n"
    "ffffffffc0000400 t __SCT__tp_func_ktrack_ring_overflow\t[ktrack]\n"
    "ffffffffc0200000 t gone_fn\t[gone]\n"
    "# module ktrack ffffffffc0000000 8192\n"
    "# module gone ffffffffc0200000 4096\n";

// The capture: mydrv loads at kBase (t=100), is hit (t=200), unloads
// (t=300); a hit in freed text (t=350); otherdrv loads at kBase (t=400)
// and is hit at the same address (t=500); 'gone' is hit (t=150), then
// unloaded (t=600) and its address is hit again (t=700).
std::vector<uint8_t> capture() {
  std::vector<uint8_t> s;
  module_rec(s, 100, KTRACK_MODULE_LOAD, "mydrv", kBase, 0x1000, 2);
  syms_rec(s, 100, kBase, {{kBase + 0x10, 0x40, "mydrv_submit"}, {kBase + 0x100, 0, "mydrv_init"}});
  probe_rec(s, 150, 0xffffffffc0200008ull);
  probe_rec(s, 200, kBase + 0x20);
  module_rec(s, 300, KTRACK_MODULE_UNLOAD, "mydrv", kBase, 0x1000);
  probe_rec(s, 350, kBase + 0x20);
  module_rec(s, 400, KTRACK_MODULE_LOAD, "otherdrv", kBase, 0x800, 1);
  syms_rec(s, 400, kBase, {{kBase, 0x100, "other_xmit"}});
  probe_rec(s, 500, kBase + 0x20);
  module_rec(s, 600, KTRACK_MODULE_UNLOAD, "gone", 0xffffffffc0200000ull, 0x1000);
  probe_rec(s, 700, 0xffffffffc0200008ull);
  return s;
}

Symbolizer ingested() {
  Symbolizer s;
  s.load(kSnapshot);
  auto recs = capture();
  for (size_t off = 0; off < recs.size();) {
    std::span<const uint8_t> r(recs.data() + off, recs.size() - off);
    uint32_t len = check_record(r);
    EXPECT_NE(0u, len);
    if (!len) break;
    s.ingest(r.first(len));
    off += len;
  }
  return s;
}

std::string at(const Symbolizer &s, uint64_t addr, uint64_t ts) {
  fmt::memory_buffer b;
  s.format_to(b, addr, ts);
  return fmt::to_string(b);
}

}  // namespace

TEST(ModuleHistory, NamedByTheModuleThatHeldTheAddressThen) {
  Symbolizer s = ingested();
  EXPECT_TRUE(s.history());
  EXPECT_EQ(at(s, kBase + 0x20, 200), "mydrv_submit+0x10 [mydrv]");
  // Never ktrack's last symbol (the bug of issue 12).
  EXPECT_EQ(at(s, kBase + 0x20, 200).find("__SCT__"), std::string::npos);
  // Past mydrv_submit's size, before the next symbol: raw, module named.
  EXPECT_EQ(at(s, kBase + 0x60, 200), "0xffffffffc0100060 [mydrv]");
  EXPECT_EQ(at(s, kBase + 0x104, 200), "mydrv_init+0x4 [mydrv]");
  // After the unload, before the next load: nobody's.
  EXPECT_EQ(at(s, kBase + 0x20, 350), "0xffffffffc0100020");
  // The same address, another module.
  EXPECT_EQ(at(s, kBase + 0x20, 500), "other_xmit+0x20 [otherdrv]");
  // Past otherdrv's text: not its symbol.
  EXPECT_EQ(at(s, kBase + 0x900, 500), "0xffffffffc0100900");
  // A module of the snapshot, before and after its unload.
  EXPECT_EQ(at(s, 0xffffffffc0200008ull, 150), "gone_fn+0x8 [gone]");
  EXPECT_EQ(at(s, 0xffffffffc0200008ull, 700), "0xffffffffc0200008");
  // The core kernel is unaffected.
  EXPECT_EQ(at(s, 0xffffffff81001010ull, 700), "vfs_write+0x10");
}

TEST(ModuleHistory, PinnedAddressesKeepTheirTime) {
  Symbolizer s = ingested();
  uint64_t a = s.pin(kBase + 0x20, 200), b = s.pin(kBase + 0x20, 500), c = s.pin(kBase + 0x20, 350);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ(s.pin(kBase + 0x24, 210), s.pin(kBase + 0x24, 220));  // one key per (address, module)
  EXPECT_EQ(s.format(a), "mydrv_submit+0x10 [mydrv]");
  EXPECT_EQ(s.format(b), "other_xmit+0x20 [otherdrv]");
  EXPECT_EQ(s.format(c), "0xffffffffc0100020");
  EXPECT_EQ(s.unpin(b), kBase + 0x20);
  // The core kernel's addresses stay themselves.
  EXPECT_EQ(s.pin(0xffffffff81001010ull, 500), 0xffffffff81001010ull);
  EXPECT_EQ(s.pin(0, 500), 0u);
  Symbolizer plain;
  plain.load(kSnapshot);
  EXPECT_EQ(plain.pin(kBase + 0x20, 200), kBase + 0x20);
}

// Through a recorded stream: the text output names each record as at its
// time, and a view that keeps the addresses (as hist and profile do) and
// names them after reading everything gets the same names.
TEST(ModuleHistory, StreamTextAndViews) {
  fs::path p = fs::temp_directory_path() / ("ktrack-modhist-" + std::to_string(::getpid()));
  auto recs = capture();
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char *>(recs.data()), static_cast<std::streamsize>(recs.size()));
  std::vector<std::string> lines;
  {
    TraceReader r(p.string());
    ASSERT_TRUE(r.info().raw_stream);
    r.symbols().load(kSnapshot);
    FormatOptions fo{&r.symbols()};
    Event ev;
    while (r.next(ev)) {
      if (ev.type != KTRACK_REC_PROBE) continue;
      fmt::memory_buffer b;
      format_text(ev, fo, b);
      lines.push_back(fmt::to_string(b));
    }
  }
  ASSERT_EQ(5u, lines.size());
  EXPECT_NE(std::string::npos, lines[0].find("gone_fn+0x8 [gone]")) << lines[0];
  EXPECT_NE(std::string::npos, lines[1].find("mydrv_submit+0x10 [mydrv]")) << lines[1];
  EXPECT_NE(std::string::npos, lines[2].find("0xffffffffc0100020")) << lines[2];
  EXPECT_EQ(std::string::npos, lines[2].find("drv]")) << lines[2];
  EXPECT_NE(std::string::npos, lines[3].find("other_xmit+0x20 [otherdrv]")) << lines[3];
  EXPECT_EQ(std::string::npos, lines[4].find("gone_fn")) << lines[4];

  analysis::FileSource src(p.string());
  src.reader().symbols().load(kSnapshot);
  analysis::Filter all(analysis::FilterSpec{}, src.names());
  std::vector<uint64_t> keys;
  src.run(all, [&](const analysis::Sample &s) {
    if (s.kind == analysis::Kind::Entry) keys.push_back(s.ip);
  });
  ASSERT_EQ(5u, keys.size());
  std::vector<std::string> names;
  for (uint64_t k : keys) names.push_back(src.names().symbolize(k));
  EXPECT_EQ(names[0], "gone_fn+0x8 [gone]");
  EXPECT_EQ(names[1], "mydrv_submit+0x10 [mydrv]");
  EXPECT_EQ(names[2], "0xffffffffc0100020");
  EXPECT_EQ(names[3], "other_xmit+0x20 [otherdrv]");
  EXPECT_EQ(names[4], "0xffffffffc0200008");
  EXPECT_EQ(src.names().address(keys[3]), kBase + 0x20);
  fs::remove(p);
}
