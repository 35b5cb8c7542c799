// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Bounds checks on guest-physical translation: every byte of an access must
// be inside one RAM region, whatever the address and length.
#include <gtest/gtest.h>

#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/guest_memory.h"

namespace {

using vrnicd::GuestMemory;

constexpr uint64_t kGiB = 1ULL << 30;

TEST(GuestMemory, Q35LayoutSmallRamIsOneRegion) {
  auto l = GuestMemory::q35_layout(2 * kGiB);
  ASSERT_EQ(l.size(), 1U);
  EXPECT_EQ(l[0].gpa, 0U);
  EXPECT_EQ(l[0].size, 2 * kGiB);
}

TEST(GuestMemory, Q35LayoutLargeRamSplitsAt2G) {
  auto l = GuestMemory::q35_layout(6 * kGiB);
  ASSERT_EQ(l.size(), 2U);
  EXPECT_EQ(l[0].size, 2 * kGiB);
  EXPECT_EQ(l[1].gpa, 4 * kGiB);
  EXPECT_EQ(l[1].file_offset, 2 * kGiB);
  EXPECT_EQ(l[1].size, 4 * kGiB);
  // Just below the q35 threshold everything stays low.
  EXPECT_EQ(GuestMemory::q35_layout(0xb0000000ULL - 4096).size(), 1U);
  EXPECT_EQ(GuestMemory::q35_layout(0xb0000000ULL).size(), 2U);
}

class GuestMemoryTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kLow = 64 * 1024;
  static constexpr uint64_t kHigh = 32 * 1024;
  static constexpr uint64_t kHighBase = 4 * kGiB;

  GuestMemoryTest()
      : low_(kLow),
        high_(kHigh),
        mem_({{0, kLow, low_.data()}, {kHighBase, kHigh, high_.data()}}) {}

  std::vector<std::byte> low_;
  std::vector<std::byte> high_;
  GuestMemory mem_;
};

TEST_F(GuestMemoryTest, InsideRegions) {
  EXPECT_EQ(mem_.translate(0, kLow), low_.data());
  EXPECT_EQ(mem_.translate(100, 1), low_.data() + 100);
  EXPECT_EQ(mem_.translate(kLow - 1, 1), low_.data() + kLow - 1);
  EXPECT_EQ(mem_.translate(kHighBase, kHigh), high_.data());
  EXPECT_EQ(mem_.translate(kHighBase + 8, 8), high_.data() + 8);
  EXPECT_EQ(mem_.ram_size(), kLow + kHigh);
}

TEST_F(GuestMemoryTest, ZeroLengthNeedsAnAddressInRam) {
  EXPECT_NE(mem_.translate(0, 0), nullptr);
  EXPECT_NE(mem_.translate(kLow - 1, 0), nullptr);
  EXPECT_EQ(mem_.translate(kLow, 0), nullptr);
}

TEST_F(GuestMemoryTest, RefusesAnythingOutside) {
  EXPECT_EQ(mem_.translate(kLow, 1), nullptr);                     // first byte after RAM
  EXPECT_EQ(mem_.translate(kLow - 1, 2), nullptr);                 // straddles the end
  EXPECT_EQ(mem_.translate(0, kLow + 1), nullptr);                 // one byte too long
  EXPECT_EQ(mem_.translate(kLow, kHighBase - kLow + 1), nullptr);  // the hole
  EXPECT_EQ(mem_.translate(kLow - 8, kHighBase), nullptr);         // across the hole
  EXPECT_EQ(mem_.translate(kHighBase - 1, 2), nullptr);
  EXPECT_EQ(mem_.translate(kHighBase + kHigh, 1), nullptr);
}

TEST_F(GuestMemoryTest, RefusesWrapAround) {
  EXPECT_EQ(mem_.translate(UINT64_MAX, 1), nullptr);
  EXPECT_EQ(mem_.translate(UINT64_MAX - 7, 16), nullptr);
  EXPECT_EQ(mem_.translate(8, UINT64_MAX), nullptr);
  EXPECT_EQ(mem_.translate(kHighBase + 8, UINT64_MAX - 4), nullptr);
  EXPECT_EQ(mem_.translate(1ULL << 63, 1ULL << 63), nullptr);
}

TEST_F(GuestMemoryTest, ReadWriteCopyOnlyWhenInside) {
  const uint32_t v = 0xdeadbeef;
  ASSERT_TRUE(mem_.write(16, &v, sizeof(v)));
  uint32_t r = 0;
  ASSERT_TRUE(mem_.read(16, &r, sizeof(r)));
  EXPECT_EQ(r, v);
  // A refused write leaves memory untouched.
  std::vector<std::byte> big(kLow, std::byte{0x5a});
  EXPECT_FALSE(mem_.write(kLow - 16, big.data(), 32));
  for (uint64_t i = kLow - 16; i < kLow; ++i) {
    EXPECT_EQ(low_[i], std::byte{0}) << i;
  }
  EXPECT_FALSE(mem_.read(kLow - 2, &r, sizeof(r)));
}

TEST(GuestMemoryFile, MapsAFileWithTheQ35Layout) {
  char path[] = "/tmp/vrnic-guestmem-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
  const uint64_t marker = 0x1122334455667788ULL;
  ASSERT_EQ(pwrite(fd, &marker, sizeof(marker), 4096), static_cast<ssize_t>(sizeof(marker)));
  close(fd);

  std::string err;
  auto mem = GuestMemory::map_file(path, 0, &err);
  ASSERT_TRUE(mem) << err;
  uint64_t got = 0;
  ASSERT_TRUE(mem->read(4096, &got, sizeof(got)));
  EXPECT_EQ(got, marker);
  EXPECT_EQ(mem->translate(1 << 20, 1), nullptr);

  // A file smaller than the stated RAM size is refused.
  EXPECT_FALSE(GuestMemory::map_file(path, 2 << 20, &err));
  unlink(path);
  EXPECT_FALSE(GuestMemory::map_file(path, 0, &err));
  EXPECT_NE(err.find(path), std::string::npos);
}

// FLUSH's persistence needs guest RAM in a file that outlives a power cut:
// a file in tmpfs (/dev/shm) is not one, and persist() refuses; a file on
// a disk file system is, and persist() writes a range through.
TEST(GuestMemoryFile, PersistentOnlyOnADiskFileSystem) {
  std::string err;
  for (const std::string dir : {"/dev/shm", "."}) {
    std::string path = dir + "/vrnic-guestmem-XXXXXX";
    const int fd = mkstemp(path.data());
    ASSERT_GE(fd, 0) << dir;
    ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
    struct statfs fs {};
    ASSERT_EQ(fstatfs(fd, &fs), 0);
    close(fd);
    auto mem = GuestMemory::map_file(path, 0, &err);
    unlink(path.c_str());
    ASSERT_TRUE(mem) << err;
    const bool tmpfs = static_cast<unsigned long>(fs.f_type) == TMPFS_MAGIC;
    if (dir == "/dev/shm") {
      ASSERT_TRUE(tmpfs) << "/dev/shm is tmpfs on Debian";
    } else if (tmpfs) {
      GTEST_SKIP() << "the build directory is on tmpfs: no disk file system to try";
    }
    EXPECT_EQ(mem->persistent(), !tmpfs) << dir;
    std::byte* p = mem->translate(8192 + 100, 5000);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(mem->persist(p, 5000), !tmpfs) << dir;
  }
}

// Another user's RAM file is refused (issue 24, defect 7): a user who
// created the file before QEMU would own the guest's memory.
TEST(GuestMemoryFile, AnotherUsersFileIsRefused) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root, to give the file to another user";
  }
  char path[] = "/tmp/vrnic-guestmem-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 20), 0);
  ASSERT_EQ(fchown(fd, 65534, 65534), 0);
  close(fd);
  std::string err;
  EXPECT_FALSE(GuestMemory::map_file(path, 0, &err));
  EXPECT_NE(err.find("owned by uid 65534"), std::string::npos) << err;
  unlink(path);
}

}  // namespace
