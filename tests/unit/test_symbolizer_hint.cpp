// Symbolizer's last-answer hint (a report names the same functions record
// after record): whatever order the lookups come in, and after more lines
// are added, every answer is the one a fresh Symbolizer gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "format/symbols.hpp"

using namespace ktrack;

namespace {

const char *kSnapshot =
    "ffffffff81001000 T vfs_write\n"
    "ffffffff81001000 T vfs_write_alias\n"
    "ffffffff81002000 T vfs_read\n"
    "ffffffff81002800 d some_data\n"
    "ffffffff81003000 T ksys_write\n"
    "ffffffffc0000000 t ktrack_fn\t[ktrack]\n"
    "# module ktrack ffffffffc0000000 8192\n";

const char *kMore = "ffffffff81001800 T vfs_write_tail\nffffffff80fff000 T early_fn\n";

// "name+off" or "-" from one lookup.
std::string answer(const Symbolizer &s, uint64_t addr) {
  uint64_t off = 0;
  const Symbolizer::Symbol *sym = s.lookup(addr, &off);
  return sym ? std::string(sym->name) + "+" + std::to_string(off) : std::string("-");
}

// The same lines in a Symbolizer that answered nothing before.
std::string fresh_answer(uint64_t addr, bool more = false) {
  Symbolizer s;
  s.load(kSnapshot);
  if (more) s.add(kMore);
  return answer(s, addr);
}

const std::vector<uint64_t> kAddrs = {
    0xffffffff81001004, 0xffffffff81001004, 0xffffffff81001fff, 0xffffffff81002000,
    0xffffffff81002004, 0xffffffff81002900, 0xffffffff81001004, 0xffffffff81000fff,
    0xffffffff81003010, 0xffffffff81003010, 0xffffffffc0000010, 0xffffffffc0003000,
    0xffffffff81001000, 0xffffffff81001900, 0xffffffff80fff010, 0,
    UINT64_MAX,         0xffffffff81001004};

}  // namespace

TEST(SymbolizerHint, SameAnswersInAnyOrder) {
  Symbolizer s;
  s.load(kSnapshot);
  for (uint64_t a : kAddrs) EXPECT_EQ(answer(s, a), fresh_answer(a)) << std::hex << a;
  for (auto it = kAddrs.rbegin(); it != kAddrs.rend(); ++it)
    EXPECT_EQ(answer(s, *it), fresh_answer(*it)) << std::hex << *it;
  // An alias at the same address: the later line, as before the hint.
  EXPECT_EQ(answer(s, 0xffffffff81001004), "vfs_write_alias+4");
}

TEST(SymbolizerHint, AddedLinesAfterLookups) {
  Symbolizer s;
  s.load(kSnapshot);
  for (uint64_t a : kAddrs) answer(s, a);  // leave a hint behind
  s.add(kMore);
  for (uint64_t a : kAddrs) EXPECT_EQ(answer(s, a), fresh_answer(a, true)) << std::hex << a;
  EXPECT_EQ(answer(s, 0xffffffff81001900), "vfs_write_tail+256");
}
