// util/: the small tools that exist once (glob, JSON strings).
#include <gtest/gtest.h>

#include "util/error.hpp"
#include "util/glob.hpp"
#include "util/json.hpp"
#include "util/size.hpp"

using namespace ktrack;

TEST(Glob, Match) {
  EXPECT_TRUE(glob_match("vfs_*", "vfs_read"));
  EXPECT_TRUE(glob_match("*read", "vfs_read"));
  EXPECT_TRUE(glob_match("v?s_re[a-c]d", "vfs_read"));
  EXPECT_FALSE(glob_match("v?s_re[!a]d", "vfs_read"));
  EXPECT_TRUE(glob_match("v?s_re[!b]d", "vfs_read"));
  EXPECT_FALSE(glob_match("vfs_*x", "vfs_read"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_FALSE(glob_match("vfs_*", "do_vfs"));
  EXPECT_TRUE(glob_match("*_inode", "alloc_inode"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("ba*", "dash"));
  EXPECT_TRUE(glob_match("bash", "bash"));
  EXPECT_FALSE(glob_match("bash", "bash2"));
}

TEST(Glob, HasGlob) {
  EXPECT_TRUE(has_glob("vfs_*"));
  EXPECT_TRUE(has_glob("a?"));
  EXPECT_TRUE(has_glob("[ab]"));
  EXPECT_FALSE(has_glob("vfs_read"));
}

TEST(Json, Escape) {
  fmt::memory_buffer b;
  json_escape(b, std::string_view("a\"b\\c\n\t\x01\xff", 9));
  EXPECT_EQ("\"a\\\"b\\\\c\\n\\t\\u0001\\u00ff\"", fmt::to_string(b));
  // Runs before, between and after escapes, none at all, only escapes.
  for (auto [in, want] : {std::pair<std::string_view, std::string_view>{"", "\"\""},
                          {"vfs_write+0x4", "\"vfs_write+0x4\""},
                          {"ab\ncd\"ef", "\"ab\\ncd\\\"ef\""},
                          {"\"\"", "\"\\\"\\\"\""},
                          {"x\x7f", "\"x\\u007f\""}}) {
    b.clear();
    json_escape(b, in);
    EXPECT_EQ(want, fmt::to_string(b)) << in;
  }
}

TEST(Size, Parse) {
  EXPECT_EQ(ktrack::parse_size("4096"), 4096u);
  EXPECT_EQ(ktrack::parse_size("64M", "--flight"), 64ull << 20);
  EXPECT_EQ(ktrack::parse_size("1G"), 1ull << 30);
  EXPECT_EQ(ktrack::parse_size("512k"), 512ull << 10);
  EXPECT_EQ(ktrack::parse_size("2MiB"), 2ull << 20);
  for (const char *bad : {"", "M", "0", "0M", "-1", "1.5M", "12Q", "1T", "2048G", "99999999999999999999"})
    EXPECT_THROW(ktrack::parse_size(bad, "--flight"), ktrack::UsageError) << bad;
  try {
    ktrack::parse_size("12Q", "--flight");
  } catch (const ktrack::UsageError &e) {
    EXPECT_NE(std::string(e.what()).find("--flight '12Q': expected a size"), std::string::npos) << e.what();
  }
}
