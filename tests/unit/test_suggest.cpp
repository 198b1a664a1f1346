// util/suggest: edit distance and the closest names of "did you mean".
#include <gtest/gtest.h>

#include "util/suggest.hpp"

using namespace ktrack;

TEST(Suggest, EditDistance) {
  EXPECT_EQ(0u, edit_distance("abc", "abc"));
  EXPECT_EQ(3u, edit_distance("", "abc"));
  EXPECT_EQ(1u, edit_distance("sched_swich", "sched_switch"));
  EXPECT_EQ(2u, edit_distance("strat", "start"));
  EXPECT_EQ(3u, edit_distance("kitten", "sitting"));
}

TEST(Suggest, ClosestNamesAndSentence) {
  std::vector<std::string> c = {"sched_switch", "sched_wakeup", "sched_waking", "irq_handler_entry"};
  EXPECT_EQ((std::vector<std::string>{"sched_switch"}), closest_names("sched_swich", c));
  EXPECT_EQ((std::vector<std::string>{"sched_wakeup", "sched_waking"}), closest_names("sched_wakeu", c));
  EXPECT_TRUE(closest_names("totally_else", c).empty());
  EXPECT_EQ((std::vector<std::string>{"sched_wakeup"}), closest_names("sched_wakeu", c, 1));
  EXPECT_EQ("", did_you_mean({}));
  EXPECT_EQ(" (did you mean a?)", did_you_mean({"a"}));
  EXPECT_EQ(" (did you mean a, b or c?)", did_you_mean({"a", "b", "c"}));
}
