// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The real vrnicd process, driven by a harness that plays both QEMU (the
// ivshmem client) and the driver, on a plain file standing in for guest
// RAM.  No VM involved.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "fake_driver.h"
#include "ivshmem_client.h"

extern char** environ;

namespace {

using vrnic_test::FakeDriver;
using vrnic_test::make_cmd;

constexpr size_t kRamSize = 4U << 20;
constexpr uint32_t kVectors = 4;

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

class VrnicdHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/vrnicd-harness-" + std::to_string(getpid());
    mkdir(dir_.c_str(), 0700);
    ram_path_ = dir_ + "/ram";
    const int fd = open(ram_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, kRamSize), 0);
    ram_ =
        static_cast<std::byte*>(mmap(nullptr, kRamSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    ASSERT_NE(ram_, MAP_FAILED);

    const std::string sock = dir_ + "/ivshmem.sock";
    std::vector<std::string> args = {VRNICD_PATH,
                                     "--socket",
                                     sock,
                                     "--guest-mem",
                                     ram_path_,
                                     "--vectors",
                                     std::to_string(kVectors),
                                     "--mac",
                                     "52:54:00:ab:cd:ef",
                                     "--limit",
                                     "max_qp=77",
                                     "--info-file",
                                     dir_ + "/info",
                                     "--log-file",
                                     dir_ + "/log"};
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0);

    for (int i = 0; i < 200 && sock_ < 0; ++i) {
      sock_ = vrnic_test::ivshmem_connect(sock);
      if (sock_ < 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    ASSERT_GE(sock_, 0) << "vrnicd did not start listening";
    ASSERT_TRUE(vrnic_test::ivshmem_setup(sock_, VRNIC_DB_NUM_CHANNELS, kVectors, &setup_));
    struct stat st {};
    ASSERT_EQ(fstat(setup_.shm_fd, &st), 0);
    bar_size_ = static_cast<size_t>(st.st_size);
    bar_ = static_cast<std::byte*>(
        mmap(nullptr, bar_size_, PROT_READ | PROT_WRITE, MAP_SHARED, setup_.shm_fd, 0));
    ASSERT_NE(bar_, MAP_FAILED);
    drv_ = std::make_unique<FakeDriver>(bar_, ram_, kRamSize, [this] {
      const uint64_t one = 1;
      ASSERT_EQ(write(setup_.doorbell_fds[VRNIC_DB_CHANNEL_CTRL], &one, 8), 8);
    });
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (sock_ >= 0) {
      close(sock_);
    }
    if (bar_ != nullptr) {
      munmap(bar_, bar_size_);
    }
    if (ram_ != nullptr) {
      munmap(ram_, kRamSize);
    }
    std::string cmd = "rm -rf " + dir_;
    (void)!system(cmd.c_str());
  }

  // Drain vector v's eventfd; true if it had fired.
  bool take_irq(uint32_t v, int timeout_ms = 2000) {
    if (!wait_readable(setup_.irq_fds[v], timeout_ms)) {
      return false;
    }
    uint64_t n = 0;
    return read(setup_.irq_fds[v], &n, 8) == 8 && n > 0;
  }

  std::string dir_;
  std::string ram_path_;
  std::byte* ram_ = nullptr;
  std::byte* bar_ = nullptr;
  size_t bar_size_ = 0;
  pid_t pid_ = -1;
  int sock_ = -1;
  vrnic_test::IvshmemSetup setup_;
  std::unique_ptr<FakeDriver> drv_;
};

TEST_F(VrnicdHarness, BringUpQueryAndInterrupt) {
  EXPECT_EQ(drv_->reg(VRNIC_REG_MAGIC), VRNIC_MAGIC);
  ASSERT_TRUE(drv_->reset());
  ASSERT_EQ(drv_->enable(), VRNIC_STATE_READY);

  auto c = make_cmd(VRNIC_AQ_OP_QUERY_DEVICE);
  c.query_device.resp.addr = FakeDriver::kResp;
  c.query_device.resp.len = sizeof(vrnic_device_attr);
  auto cqe = drv_->exec(c);
  ASSERT_TRUE(cqe);
  EXPECT_EQ(vrnic::field_get<VRNIC_AQ_CQE_STATUS_MASK>(cqe->info), VRNIC_AQ_STATUS_OK);
  EXPECT_TRUE(take_irq(0)) << "admin completion raised no MSI-X vector 0";
  vrnic_device_attr attr{};
  std::memcpy(&attr, drv_->ram(FakeDriver::kResp), sizeof(attr));
  EXPECT_EQ(attr.max_qp, 77U);
  const uint8_t mac[6] = {0x52, 0x54, 0x00, 0xab, 0xcd, 0xef};
  EXPECT_EQ(0, std::memcmp(attr.mac, mac, 6));

  // A completion EQ on vector 2, armed, gets a NOP event and interrupts.
  auto* dbrec = reinterpret_cast<vrnic_eq_dbrec*>(drv_->ram(FakeDriver::kEqDbrec));
  auto ce = make_cmd(VRNIC_AQ_OP_CREATE_EQ);
  ce.create_eq.eqn = 1;
  ce.create_eq.vector = 2;
  ce.create_eq.log_depth = 4;
  ce.create_eq.ring_addr = FakeDriver::kEqRing;
  ce.create_eq.dbrec_addr = FakeDriver::kEqDbrec;
  ASSERT_EQ(drv_->exec_status(ce), VRNIC_AQ_STATUS_OK);
  dbrec->arm_sn = dbrec->arm_sn + 1;
  auto nop = make_cmd(VRNIC_AQ_OP_NOP, VRNIC_AQ_NOP_F_EVENT);
  nop.nop.eqn = 1;
  nop.nop.cookie = 42;
  ASSERT_EQ(drv_->exec_status(nop), VRNIC_AQ_STATUS_OK);
  EXPECT_TRUE(take_irq(2)) << "completion EQ raised no MSI-X vector 2";
  auto* eqe = reinterpret_cast<vrnic_eqe*>(drv_->ram(FakeDriver::kEqRing));
  EXPECT_EQ(eqe[0].data[0], 42U);
}

TEST_F(VrnicdHarness, HeartbeatTicks) {
  const uint32_t hb = drv_->reg(VRNIC_REG_HEARTBEAT);
  const uint32_t period = drv_->reg(VRNIC_REG_HEARTBEAT_MS);
  ASSERT_GT(period, 0U);
  std::this_thread::sleep_for(std::chrono::milliseconds(period * 4));
  EXPECT_GE(drv_->reg(VRNIC_REG_HEARTBEAT) - hb, 2U);
}

TEST_F(VrnicdHarness, SurvivesGarbageAndReportsShutdown) {
  ASSERT_TRUE(drv_->reset());
  ASSERT_EQ(drv_->enable(), VRNIC_STATE_READY);
  // Garbage in every register and the whole admin SQ, then doorbells.
  for (uint32_t off = 0x40; off < 0x80; off += 4) {
    drv_->set_reg(off, 0xdeadbeef * off);
  }
  std::memset(drv_->ram(FakeDriver::kAqSq), 0xa5, 4096);
  for (int i = 0; i < 50; ++i) {
    drv_->ring();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(waitpid(pid_, nullptr, WNOHANG), 0) << "vrnicd died";
  // It is recoverable by reset.
  ASSERT_TRUE(drv_->reset());
  ASSERT_EQ(drv_->enable(), VRNIC_STATE_READY);
  EXPECT_EQ(drv_->exec_status(make_cmd(VRNIC_AQ_OP_NOP)), VRNIC_AQ_STATUS_OK);
  while (take_irq(0, 0)) {
  }

  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(drv_->reg(VRNIC_REG_STATE), VRNIC_STATE_GONE);
  EXPECT_EQ(drv_->reg(VRNIC_REG_FATAL_CODE), VRNIC_FATAL_SHUTDOWN);
  EXPECT_TRUE(take_irq(0)) << "shutdown raised no interrupt";
}

TEST_F(VrnicdHarness, InfoFileListsWhatTheDeviceReports) {
  std::ifstream f(dir_ + "/info");
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string info = ss.str();
  EXPECT_NE(info.find("max_qp: 77\n"), std::string::npos) << info;
  EXPECT_NE(info.find("node_guid: 5054:00ff:feab:cdef\n"), std::string::npos) << info;
  EXPECT_NE(info.find("vendor_id: 0x1af4\n"), std::string::npos) << info;
}

}  // namespace
