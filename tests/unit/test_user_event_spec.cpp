// U probes: user event descriptions parsed as the kernel lays them out
// (format/user_event_format), and U specs resolved against a registered
// event or, before it registers, from the types the user gives (every
// field sent by name, KTRACK_FETCH_F_BY_NAME).
#include <gtest/gtest.h>

#include "format/user_event_format.hpp"
#include "probes/probe_spec.hpp"

using namespace ktrack;

namespace {

class UserEventSymbols : public SymbolSource {
 public:
  std::vector<uint64_t> lookup(const std::string &, const std::string &) override { return {}; }
  std::vector<std::string> filter_functions() override { return {}; }
  bool tracepoint_exists(const std::string &, const std::string &) override { return false; }
  std::vector<std::string> aliases(const std::string &) override { return {}; }
  std::optional<EventFormat> user_event_format(const std::string &name) override {
    if (name != "mylib/req") return std::nullopt;
    return parse_user_event_format("mylib/req u32 id; char[16] tag; char[] path; s64 delta");
  }
};

ProbeSpec resolved(const std::string &text) {
  UserEventSymbols syms;
  ProbeSpec s = parse_probe_spec(text);
  resolve_symbols(s, syms);
  return s;
}

std::string error_of(const std::string &text) {
  try {
    resolved(text);
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(UserEventFormat, LaysFieldsOutPackedInOrder) {
  auto f = parse_user_event_format("mylib/req u32 id; char[16] tag; char[] path; s64 delta");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->subsys, "mylib");
  EXPECT_EQ(f->event, "req");
  ASSERT_EQ(f->fields.size(), 4u);
  EXPECT_EQ(f->fields[0].offset, 0u);
  EXPECT_EQ(f->fields[0].size, 4u);
  EXPECT_EQ(f->fields[1].offset, 4u);
  EXPECT_TRUE(f->fields[1].is_string && f->fields[1].is_array);
  EXPECT_EQ(f->fields[2].offset, 20u);
  EXPECT_TRUE(f->fields[2].is_dynamic);
  EXPECT_EQ(f->fields[3].offset, 24u);
  EXPECT_TRUE(f->fields[3].is_signed);
  auto plain = parse_user_event_format("ping");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->fields.empty());
}

TEST(UserEventFormat, RefusesWhatTheKernelRefuses) {
  for (const char *bad : {"", "a/b/c u8 x", "x u31 a", "x u32", "x u32 a; u32 a", "x char[0] a",
                          "x char[257] a", "x char[01] a", "x u32 a;; u8 b", "x u32 1a"}) {
    std::string why;
    EXPECT_FALSE(parse_user_event_format(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(UserEventSpec, RegisteredEventGivesEveryFieldByName) {
  ProbeSpec s = resolved("U mylib/req");
  EXPECT_EQ(s.name, "req");
  ASSERT_EQ(s.args.size(), 4u);
  for (const auto &a : s.args) {
    EXPECT_EQ(a.src, KTRACK_FETCH_SRC_FIELD);
    EXPECT_TRUE(a.flags & KTRACK_FETCH_F_BY_NAME);
    EXPECT_FALSE(a.flags & (KTRACK_FETCH_F_DATA_LOC | KTRACK_FETCH_F_REL_LOC));
  }
  EXPECT_EQ(s.args[0].type, KTRACK_FETCH_T_U);
  EXPECT_EQ(s.args[0].size, 4);
  EXPECT_EQ(s.args[0].deref, std::vector<int32_t>{0});
  EXPECT_EQ(s.args[1].type, KTRACK_FETCH_T_STRING);
  EXPECT_TRUE(s.args[1].deref.empty());
  EXPECT_EQ(s.args[2].type, KTRACK_FETCH_T_STRING);
  EXPECT_EQ(s.args[3].type, KTRACK_FETCH_T_S);
  EXPECT_EQ(s.args[3].size, 8);
  auto blob = compile_probe(s);
  auto schema = schema_from_desc(blob);
  EXPECT_EQ(schema.kind, (uint32_t)KTRACK_PROBE_UEVENT);
}

TEST(UserEventSpec, UnregisteredEventNeedsTypedFields) {
  ProbeSpec s = resolved("U:w other/ev $n:u64 $s:string if n > 3");
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_TRUE(s.args[0].flags & KTRACK_FETCH_F_BY_NAME);
  EXPECT_FALSE(s.program.empty());
  EXPECT_NE(error_of("U other/ev").find("not registered"), std::string::npos);
  EXPECT_NE(error_of("U other/ev $n").find("give it one"), std::string::npos);
  EXPECT_NE(error_of("U mylib/req $nosuch").find("has no field"), std::string::npos);
  EXPECT_NE(error_of("U mylib/req $path:u32").find("string"), std::string::npos);
  EXPECT_NE(error_of("U mylib/req +0($id)").find("dereferenced"), std::string::npos);
  EXPECT_NE(error_of("U bad-name").find("SYSTEM/"), std::string::npos);
  EXPECT_NE(error_of("U mylib/req $arg1").find("field"), std::string::npos);
}
