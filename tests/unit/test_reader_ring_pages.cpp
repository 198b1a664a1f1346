// The ring size of a capture's own session when no --buffer-pages is given
// (device/capture.hpp): 1,024 pages a CPU where the budget allows, halved
// until it fits, never below the kernel's default.
#include <gtest/gtest.h>

#include <uapi/ktrack.h>

#include "device/capture.hpp"

using ktrack::reader_ring_pages;

namespace {
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kPage = 4096;
}  // namespace

TEST(ReaderRingPages, FourMiBPerCpuWhereTheBudgetAllows) {
  EXPECT_EQ(1024u, reader_ring_pages(2, kPage, 1 * kGiB, 0, 0));    // a test VM: 8 MiB of 16
  EXPECT_EQ(1024u, reader_ring_pages(16, kPage, 64 * kGiB, 0, 0));  // 64 MiB of 128
  EXPECT_EQ(1024u, reader_ring_pages(0, kPage, 1 * kGiB, 0, 0));    // no CPU count: as one
}

TEST(ReaderRingPages, HalvedPast128MiBOrASixtyFourthOfTheRam) {
  EXPECT_EQ(512u, reader_ring_pages(4, kPage, 1 * kGiB, 0, 0));    // 16 MiB of RAM/64
  EXPECT_EQ(512u, reader_ring_pages(32, kPage, 64 * kGiB, 0, 0));  // 128 MiB cap
  EXPECT_EQ(256u, reader_ring_pages(64, kPage, 64 * kGiB, 0, 0));
  // never below the kernel's default, whatever the budget
  EXPECT_EQ(uint32_t(KTRACK_DEFAULT_BUF_PAGES), reader_ring_pages(512, kPage, 64 * kGiB, 0, 0));
  EXPECT_EQ(uint32_t(KTRACK_DEFAULT_BUF_PAGES), reader_ring_pages(2, kPage, 0, 0, 0));
}

TEST(ReaderRingPages, TheCapIsInBytesWhateverThePageSize) {
  // 64 KiB pages: 1,024 of them are 64 MiB a CPU, past 128 MiB with 2 CPUs
  EXPECT_EQ(512u, reader_ring_pages(2, 65536, 64 * kGiB, 0, 0));
  EXPECT_EQ(1024u, reader_ring_pages(1, 65536, 64 * kGiB, 0, 0));
}

TEST(ReaderRingPages, WithinTheModulesLimits) {
  // max_pages_per_session counts every CPU's pages and control page
  EXPECT_EQ(512u, reader_ring_pages(2, kPage, 64 * kGiB, 2 * 1025 - 1, 0));
  EXPECT_EQ(1024u, reader_ring_pages(2, kPage, 64 * kGiB, 2 * 1025, 0));
  // a quarter of max_total_pages, so other sessions still fit
  EXPECT_EQ(256u, reader_ring_pages(2, kPage, 64 * kGiB, 0, 4 * 2 * 513 - 1));
  EXPECT_EQ(512u, reader_ring_pages(2, kPage, 64 * kGiB, 0, 4 * 2 * 513));
}
