// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The ivshmem server protocol, checked from the client side: message order,
// the fds that come with them, doorbells, interrupts and disconnects.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/bar2.h"
#include "base/config.h"
#include "base/event_loop.h"
#include "frontend/ivshmem_server.h"
#include "frontend/keeper.h"
#include "ivshmem_client.h"
#include "vrnic-hw.h"

namespace {

using vrnic_test::IvshmemSetup;

class IvshmemServerTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kVectors = 4;
  static constexpr uint32_t kChannels = 2;

  IvshmemServerTest()
      : path_("/tmp/vrnic-ivshmem-test-" + std::to_string(::getpid()) + ".sock"),
        bar_(make_bar()),
        server_(loop_, bar_->fd(), kVectors, kChannels,
                vrnicd::IvshmemServer::Callbacks{
                    .on_connect = [this] { ++connects_; },
                    .on_disconnect = [this] { ++disconnects_; },
                    .on_doorbell = [this](uint32_t ch,
                                          uint64_t /*count*/) { doorbells_.push_back(ch); },
                }) {
    std::string err;
    EXPECT_TRUE(server_.listen(path_, &err)) << err;
  }

  static std::optional<vrnicd::Bar2> make_bar() {
    std::string err;
    return vrnicd::Bar2::create(64 * 1024, &err);
  }

  void pump(int rounds = 3) {
    for (int i = 0; i < rounds; ++i) {
      loop_.run_once(50);
    }
  }

  std::string path_;
  vrnicd::EventLoop loop_;
  std::optional<vrnicd::Bar2> bar_;
  int connects_ = 0;
  int disconnects_ = 0;
  std::vector<uint32_t> doorbells_;
  vrnicd::IvshmemServer server_;
};

TEST_F(IvshmemServerTest, SetupMessagesDoorbellsAndInterrupts) {
  const int s = vrnic_test::ivshmem_connect(path_);
  ASSERT_GE(s, 0);
  pump();
  IvshmemSetup setup;
  ASSERT_TRUE(vrnic_test::ivshmem_setup(s, kChannels, kVectors, &setup));
  EXPECT_EQ(setup.version, vrnicd::IvshmemServer::kProtocolVersion);
  EXPECT_EQ(setup.own_id, vrnicd::kGuestPeerId);
  EXPECT_EQ(setup.device_id, vrnicd::kDevicePeerId);
  EXPECT_EQ(connects_, 1);
  EXPECT_TRUE(server_.connected());

  // The shared memory is BAR2: same size, same contents.
  struct stat st {};
  ASSERT_EQ(fstat(setup.shm_fd, &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), bar_->size());
  bar_->set_reg(VRNIC_REG_MAGIC, VRNIC_MAGIC);
  uint32_t magic = 0;
  ASSERT_EQ(pread(setup.shm_fd, &magic, 4, VRNIC_REG_MAGIC), 4);
  EXPECT_EQ(magic, VRNIC_MAGIC);

  // A doorbell on channel 1 reaches the device as channel 1.
  const uint64_t one = 1;
  ASSERT_EQ(write(setup.doorbell_fds[1], &one, 8), 8);
  pump();
  ASSERT_EQ(doorbells_.size(), 1U);
  EXPECT_EQ(doorbells_[0], 1U);

  // Raising vector 3 signals our fourth eventfd and no other.
  server_.raise(3);
  server_.raise(kVectors);  // out of range: ignored
  for (uint32_t v = 0; v < kVectors; ++v) {
    pollfd p{setup.irq_fds[v], POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), v == 3 ? 1 : 0) << v;
  }

  close(s);
  pump();
  EXPECT_EQ(disconnects_, 1);
  EXPECT_FALSE(server_.connected());
}

TEST_F(IvshmemServerTest, SecondClientIsRefusedFirstKeepsWorking) {
  const int a = vrnic_test::ivshmem_connect(path_);
  ASSERT_GE(a, 0);
  pump();
  IvshmemSetup setup;
  ASSERT_TRUE(vrnic_test::ivshmem_setup(a, kChannels, kVectors, &setup));

  const int b = vrnic_test::ivshmem_connect(path_);
  ASSERT_GE(b, 0);
  pump();
  vrnic_test::IvshmemMsg m;
  EXPECT_FALSE(vrnic_test::ivshmem_recv(b, &m));  // closed without a word
  close(b);
  EXPECT_EQ(connects_, 1);

  const uint64_t one = 1;
  ASSERT_EQ(write(setup.doorbell_fds[0], &one, 8), 8);
  pump();
  EXPECT_EQ(doorbells_.size(), 1U);
  close(a);
  pump();
}

TEST_F(IvshmemServerTest, ReconnectGetsFreshEventfds) {
  for (int round = 0; round < 2; ++round) {
    const int s = vrnic_test::ivshmem_connect(path_);
    ASSERT_GE(s, 0);
    pump();
    IvshmemSetup setup;
    ASSERT_TRUE(vrnic_test::ivshmem_setup(s, kChannels, kVectors, &setup)) << round;
    close(s);
    pump();
  }
  EXPECT_EQ(connects_, 2);
  EXPECT_EQ(disconnects_, 2);
}

// vrnicd dies, a new one starts: the keeper, forked when QEMU connected,
// hands the new server the same BAR2, connection and eventfds, and to the
// client nothing has changed.  Not while the first server lives, though.
// When the client goes, so does the keeper.
TEST(IvshmemKeeper, HandsTheDeviceToTheNextServer) {
  const std::string path = "/tmp/vrnic-keeper-test-" + std::to_string(::getpid()) + ".sock";
  const std::string kp = vrnicd::keeper_path(path);
  std::string err;
  auto bar0 = vrnicd::Bar2::create(64 * 1024, &err);
  ASSERT_TRUE(bar0) << err;
  bar0->set_reg(VRNIC_REG_MAGIC, VRNIC_MAGIC);
  vrnicd::EventLoop loop0;
  auto first = std::make_unique<vrnicd::IvshmemServer>(loop0, bar0->fd(), 4, 2,
                                                       vrnicd::IvshmemServer::Callbacks{});
  ASSERT_TRUE(first->listen(path, &err)) << err;
  const int s = vrnic_test::ivshmem_connect(path);
  ASSERT_GE(s, 0);
  loop0.run_once(50);
  IvshmemSetup setup;
  ASSERT_TRUE(vrnic_test::ivshmem_setup(s, 2, 4, &setup));

  EXPECT_FALSE(vrnicd::adopt_from_keeper(kp, 2, 4, &err));
  EXPECT_NE(err.find("another vrnicd"), std::string::npos) << err;
  first.reset();  // the first vrnicd dies; QEMU stays connected
  std::optional<vrnicd::KeptDevice> kept;
  for (int i = 0; i < 100 && !kept; ++i) {
    kept = vrnicd::adopt_from_keeper(kp, 2, 4, &err);
    usleep(10000);
  }
  ASSERT_TRUE(kept) << err;
  auto bar = vrnicd::Bar2::adopt(std::move(kept->shm), &err);
  ASSERT_TRUE(bar) << err;
  EXPECT_EQ(bar->size(), bar0->size());
  EXPECT_EQ(bar->reg(VRNIC_REG_MAGIC), VRNIC_MAGIC);  // the same memory

  vrnicd::EventLoop loop;
  std::vector<uint32_t> rung;
  vrnicd::IvshmemServer next(
      loop, bar->fd(), 4, 2,
      vrnicd::IvshmemServer::Callbacks{
          .on_connect = [] {},
          .on_disconnect = [] {},
          .on_doorbell = [&rung](uint32_t ch, uint64_t /*count*/) { rung.push_back(ch); },
      });
  ASSERT_TRUE(next.adopt(std::move(*kept)));
  EXPECT_TRUE(next.connected());
  EXPECT_FALSE(vrnicd::adopt_from_keeper(kp, 2, 4, &err));  // next holds the lease
  const uint64_t one = 1;
  ASSERT_EQ(write(setup.doorbell_fds[1], &one, 8), 8);
  loop.run_once(50);
  ASSERT_EQ(rung.size(), 1U);
  EXPECT_EQ(rung[0], 1U);
  next.raise(2);
  for (uint32_t v = 0; v < 4; ++v) {
    pollfd p{setup.irq_fds[v], POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), v == 2 ? 1 : 0) << v;
  }

  close(s);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    struct stat st {};
    gone = stat(kp.c_str(), &st) != 0;
    usleep(20000);
  }
  EXPECT_TRUE(gone) << "the keeper outlived its client";
  EXPECT_FALSE(vrnicd::adopt_from_keeper(kp, 2, 4, &err));
  EXPECT_EQ(err, "");  // no keeper: a device of one's own
}

// A vrnicd that dies with its device READY: the keeper writes FATAL with
// code DIED into BAR2 and raises vector 0, as a NIC reports dead firmware,
// so that the driver knows at once.  A device that had shut down (GONE)
// keeps what it said, and nothing is raised.
TEST(IvshmemKeeper, ReportsTheDeathOfAReadyDevice) {
  for (const uint32_t before : {VRNIC_STATE_READY, VRNIC_STATE_GONE}) {
    SCOPED_TRACE(before);
    const std::string path = "/tmp/vrnic-keeper-death-" + std::to_string(::getpid()) + ".sock";
    std::string err;
    auto bar = vrnicd::Bar2::create(64 * 1024, &err);
    ASSERT_TRUE(bar) << err;
    bar->set_reg(VRNIC_REG_STATE, before);
    bar->set_reg(VRNIC_REG_FATAL_CODE, VRNIC_FATAL_NONE);
    vrnicd::EventLoop loop;
    auto server = std::make_unique<vrnicd::IvshmemServer>(loop, bar->fd(), 4, 2,
                                                          vrnicd::IvshmemServer::Callbacks{});
    ASSERT_TRUE(server->listen(path, &err)) << err;
    const int s = vrnic_test::ivshmem_connect(path);
    ASSERT_GE(s, 0);
    loop.run_once(50);
    IvshmemSetup setup;
    ASSERT_TRUE(vrnic_test::ivshmem_setup(s, 2, 4, &setup));
    usleep(50000);
    EXPECT_EQ(bar->reg(VRNIC_REG_STATE), before) << "nothing while vrnicd lives";
    server.reset();  // vrnicd dies; QEMU stays connected
    pollfd p{setup.irq_fds[0], POLLIN, 0};
    const int raised = poll(&p, 1, 2000);
    if (before == VRNIC_STATE_READY) {
      EXPECT_EQ(raised, 1) << "vector 0";
      EXPECT_EQ(bar->reg(VRNIC_REG_STATE), static_cast<uint32_t>(VRNIC_STATE_FATAL));
      EXPECT_EQ(bar->reg(VRNIC_REG_FATAL_CODE), static_cast<uint32_t>(VRNIC_FATAL_DIED));
    } else {
      EXPECT_EQ(raised, 0) << "vector 0";
      EXPECT_EQ(bar->reg(VRNIC_REG_STATE), before);
      EXPECT_EQ(bar->reg(VRNIC_REG_FATAL_CODE), static_cast<uint32_t>(VRNIC_FATAL_NONE));
    }
    for (uint32_t v = 1; v < 4; ++v) {
      pollfd q{setup.irq_fds[v], POLLIN, 0};
      EXPECT_EQ(poll(&q, 1, 0), 0) << v;
    }
    close(s);  // QEMU goes: the keeper with it
    const std::string kp = vrnicd::keeper_path(path);
    for (int i = 0; i < 100 && access(kp.c_str(), F_OK) == 0; ++i) {
      usleep(20000);
    }
    unlink(path.c_str());
  }
}

// A keeper socket whose listener runs as another user is not adopted
// (issue 24, defect 7): whoever listens there first would hand vrnicd a
// device and guest memory of its choosing.
TEST(IvshmemKeeper, AnotherUsersKeeperIsRefused) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root, to run a keeper as another user";
  }
  char dir[] = "/tmp/vrnic-keeper-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  ASSERT_EQ(chmod(dir, 0777), 0);
  const std::string kp = vrnicd::keeper_path(std::string(dir) + "/ivshmem.sock");
  std::array<int, 2> qemu{};  // the keeper lives while its "QEMU" end is open
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, qemu.data()), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(qemu[1]);
    if (setgid(65534) != 0 || setuid(65534) != 0) {
      _exit(2);
    }
    const int shm = memfd_create("bar", MFD_CLOEXEC);
    std::vector<int> doorbells = {eventfd(0, EFD_CLOEXEC), eventfd(0, EFD_CLOEXEC)};
    std::vector<int> irqs;
    for (int i = 0; i < 4; ++i) {
      irqs.push_back(eventfd(0, EFD_CLOEXEC));
    }
    vrnicd::UniqueFd lease;
    std::string err;
    // Its lease closes as this process exits: the device is up for grabs.
    _exit(vrnicd::start_keeper(kp, shm, qemu[0], doorbells, irqs, &lease, &err) ? 0 : 1);
  }
  close(qemu[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::string err;
  std::optional<vrnicd::KeptDevice> kept;
  for (int i = 0; i < 20 && !kept && err.empty(); ++i) {
    kept = vrnicd::adopt_from_keeper(kp, 2, 4, &err);
    usleep(10000);
  }
  EXPECT_FALSE(kept) << "adopted a device from uid 65534's keeper";
  EXPECT_NE(err.find("uid 65534"), std::string::npos) << err;
  close(qemu[1]);  // the keeper goes
  for (int i = 0; i < 100 && access(kp.c_str(), F_OK) == 0; ++i) {
    usleep(20000);
  }
  unlink(kp.c_str());
  rmdir(dir);
}

}  // namespace
