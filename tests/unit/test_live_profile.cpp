// profile --live: the probe spec a target becomes, and what it refuses
// before anything reaches the kernel.
#include <gtest/gtest.h>

#include "probes/live_profile.hpp"
#include "util/error.hpp"

TEST(LiveProfile, TargetBecomesAnFProbeOnEntriesAndExits) {
  EXPECT_EQ(ktrack::live_profile_spec("vfs_*", 0), "f:profile0 vfs_*%both");
  EXPECT_EQ(ktrack::live_profile_spec("ext4:ext4_*", 3), "f:profile3 ext4:ext4_*%both");
}

TEST(LiveProfile, BadTargetsAreUsageErrors) {
  for (const char *t : {"", "vfs_read vfs_write", "vfs_read%return", "a\tb"})
    EXPECT_THROW(ktrack::live_profile_spec(t, 0), ktrack::UsageError) << "'" << t << "'";
  std::atomic<bool> stop{false};
  EXPECT_THROW(ktrack::run_live_profile({}, stop), ktrack::UsageError);
}
