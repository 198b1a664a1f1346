// doctor checks against fake /sys and /proc trees.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "host/doctor.hpp"
#include "host/sysfs.hpp"

namespace fs = std::filesystem;

namespace {

class FakeRoots : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() / fs::path("ktrack-doctor-" + std::to_string(::getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "sys/module");
    fs::create_directories(root_ / "proc");
    setenv("KTRACK_SYSFS_ROOT", (root_ / "sys").c_str(), 1);
    setenv("KTRACK_PROCFS_ROOT", (root_ / "proc").c_str(), 1);
    write("proc/mounts", "tracefs /sys/kernel/tracing tracefs rw 0 0\n");
  }
  void TearDown() override {
    unsetenv("KTRACK_SYSFS_ROOT");
    unsetenv("KTRACK_PROCFS_ROOT");
    fs::remove_all(root_);
  }
  void write(const std::string &rel, const std::string &text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  ktrack::CheckResult find(const std::string &name) {
    for (auto &r : ktrack::run_doctor_checks())
      if (r.name == name) return r;
    ADD_FAILURE() << "no check named " << name;
    return {};
  }
  fs::path root_;
};

TEST_F(FakeRoots, TracefsMountedIsOk) { EXPECT_EQ(find("tracefs").level, ktrack::CheckLevel::Ok); }

TEST_F(FakeRoots, TracefsMissingFailsWithMountCommand) {
  write("proc/mounts", "proc /proc proc rw 0 0\n");
  auto r = find("tracefs");
  EXPECT_EQ(r.level, ktrack::CheckLevel::Fail);
  EXPECT_NE(r.fix.find("mount -t tracefs"), std::string::npos);
}

TEST_F(FakeRoots, LockdownIntegrityWarnsOfSignedModulesOnly) {
  write("sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
  EXPECT_EQ(ktrack::read_lockdown_mode(), "integrity");
  // not loaded: an unsigned ktrack.ko will not load
  auto r = find("lockdown");
  EXPECT_EQ(r.level, ktrack::CheckLevel::Fail);
  EXPECT_NE(r.message.find("only signed modules"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("not loaded"), std::string::npos) << r.message;
  // loaded: everything works
  write("sys/module/ktrack/initstate", "live\n");
  r = find("lockdown");
  EXPECT_EQ(r.level, ktrack::CheckLevel::Warn);
  EXPECT_NE(r.message.find("every probe"), std::string::npos) << r.message;
}

TEST_F(FakeRoots, LockdownConfidentialityFailsAndSaysWhatIsRefused) {
  write("sys/kernel/security/lockdown", "none integrity [confidentiality]\n");
  auto r = find("lockdown");
  EXPECT_EQ(r.level, ktrack::CheckLevel::Fail);
  EXPECT_NE(r.message.find("'confidentiality'"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("EPERM"), std::string::npos) << r.message;
  EXPECT_NE(r.fix.find("boot without lockdown"), std::string::npos) << r.fix;
}

TEST_F(FakeRoots, LockdownNoneIsOk) {
  write("sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
  EXPECT_EQ(find("lockdown").level, ktrack::CheckLevel::Ok);
}

TEST_F(FakeRoots, SigEnforceFails) {
  write("sys/module/module/parameters/sig_enforce", "Y\n");
  EXPECT_EQ(find("sig_enforce").level, ktrack::CheckLevel::Fail);
}

TEST_F(FakeRoots, OutOfTreeUnsignedTaintIsFine) {
  write("sys/module/mydrv/taint", "OE\n");
  EXPECT_EQ(find("module_taint").level, ktrack::CheckLevel::Ok);
}

TEST_F(FakeRoots, ProprietaryTaintIsNamed) {
  write("sys/module/mydrv/taint", "POE\n");
  write("sys/module/good/taint", "O\n");
  auto r = find("module_taint");
  EXPECT_EQ(r.level, ktrack::CheckLevel::Warn);
  EXPECT_NE(r.message.find("mydrv (POE)"), std::string::npos);
  EXPECT_EQ(r.message.find("good"), std::string::npos);
}

TEST_F(FakeRoots, KtrackNotLoadedWarns) {
  auto r = find("ktrack");
  EXPECT_EQ(r.level, ktrack::CheckLevel::Warn);
  EXPECT_NE(r.fix.find("ktrackctl load"), std::string::npos);
}

TEST(ProbeMisses, NoneIsOk) {
  EXPECT_EQ(ktrack::check_probe_misses({}).level, ktrack::CheckLevel::Ok);
  EXPECT_EQ(ktrack::check_probe_misses({{"web", "rd", 10, 0}}).level, ktrack::CheckLevel::Ok);
}

TEST(ProbeMisses, MissesAreNamedWithTheFix) {
  auto r = ktrack::check_probe_misses({{"web", "rd", 10, 0}, {"misses", "sl", 6, 3}});
  EXPECT_EQ(r.level, ktrack::CheckLevel::Warn);
  EXPECT_NE(r.message.find("sl in session 'misses' (3 missed, 6 hit)"), std::string::npos);
  EXPECT_EQ(r.message.find("rd in"), std::string::npos);
  EXPECT_NE(r.fix.find("probe list"), std::string::npos);
}

}  // namespace
