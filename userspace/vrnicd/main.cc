// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd: the vrnic soft RNIC.  One process is one device, attached to one
// QEMU through ivshmem-doorbell.
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "base/bar2.h"
#include "base/config.h"
#include "base/event_loop.h"
#include "base/guest_memory.h"
#include "base/log.h"
#include "board.h"
#include "control/control.h"
#include "device/device.h"
#include "frontend/keeper.h"
#include "info_file.h"
#include "options.h"

namespace vrnicd {
namespace {

// How the engine waits for work; see "Doorbell suppression" in
// Documentation/hw-spec.rst.
struct PollPolicy {
  std::chrono::microseconds spin;       // poll continuously this long after work
  std::chrono::microseconds doze;       // then poll every tick until this long
  std::chrono::microseconds doze_tick;  // after work; then sleep for a doorbell
  bool doze_ring;                       // producers ring while it dozes
};

// The dispatch loop, with three speeds.  After work the engine spins on
// its doorbell records; then it dozes, polling them every tick while
// yielding the CPU (the guest's vCPUs need it: this machine may have as
// few cores as busy threads); only then does it set the asleep flag and
// sleep until a doorbell, a timer or any other event.  While it spins or
// dozes, producers see the flag clear and write no doorbell; with
// doze_ring, the flag is set while it dozes too, and new work rings and
// ends the tick at once.  The frames of one engine round (and of the events
// handled right after it) leave for the wire together.
void run_dispatch(EventLoop& loop, Device& dev, EthPort& port, const PollPolicy& p) {
  using Clock = std::chrono::steady_clock;
  auto last_work = Clock::now();
  while (!loop.stopped()) {
    port.hold_wire();
    const bool work = dev.engine_poll_st();
    if (work) {
      last_work = Clock::now();
      loop.run_once(0);
    }
    port.release_wire();
    if (work) {
      continue;
    }
    const auto idle = Clock::now() - last_work;
    if (idle < p.spin) {
      loop.run_once(0);
      continue;
    }
    if (idle < p.doze) {
      if (!p.doze_ring) {
        loop.run_once_for(p.doze_tick);
      } else if (dev.engine_prepare_sleep_st(true)) {
        loop.run_once_for(p.doze_tick);
        dev.engine_wake_st();
      }
      continue;
    }
    if (!dev.engine_prepare_sleep_st()) {
      last_work = Clock::now();
      continue;
    }
    int timeout_ms = -1;
    const uint64_t deadline = dev.engine_next_deadline_us();
    if (deadline != UINT64_MAX) {
      const uint64_t now = dev.engine().now_us();
      timeout_ms = deadline <= now
                       ? 0
                       : static_cast<int>(std::min<uint64_t>((deadline - now + 999) / 1000, 60000));
    }
    loop.run_once(timeout_ms);
    dev.engine_wake_st();
    // Whatever woke us (a doorbell, a timer, the heartbeat), the next poll
    // says whether there is work; without any, sleep again at once rather
    // than spin and doze for nothing.
    last_work = Clock::now() - p.doze;
  }
}

// SIGTERM and SIGINT stop the loop; *signo says which came.  SIGUSR1
// stalls the admin queue (fault injection for the driver's recovery).
bool watch_signals(EventLoop& loop, Device& dev, UniqueFd* fd, int* signo) {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGUSR1);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  fd->reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!*fd) {
    LOG_ERR("signalfd: %s", std::strerror(errno));
    return false;
  }
  loop.add(fd->get(), EPOLLIN, [&loop, &dev, fd, signo](uint32_t) {
    signalfd_siginfo si{};
    if (::read(fd->get(), &si, sizeof(si)) != static_cast<ssize_t>(sizeof(si))) {
      return;
    }
    if (si.ssi_signo == SIGUSR1) {
      dev.stall_admin_st();
      return;
    }
    *signo = static_cast<int>(si.ssi_signo);
    loop.stop();
  });
  return true;
}

// The info file, if asked for, and the log lines that say the device is up.
bool announce(const Options& o, const Device& dev, const GuestMemory& mem, const std::string& ctl) {
  if (!o.info_file.empty() && !write_info_file(o.info_file, dev)) {
    LOG_ERR("%s: %s", o.info_file.c_str(), std::strerror(errno));
    return false;
  }
  LOG_INFO("control socket %s", ctl.c_str());
  LOG_INFO("vrnic device ready: socket %s, guest RAM %s (%llu MiB), MAC %s, %u vectors",
           o.socket_path.c_str(), o.guest_mem_path.c_str(),
           static_cast<unsigned long long>(mem.ram_size() >> 20), format_mac(o.dev.mac).c_str(),
           o.dev.num_vectors);
  return true;
}

// The device, served to QEMU: everything runs on the dispatch loop.
int serve(const Options& o, Bar2& bar, const GuestMemory& mem, EventLoop& loop,
          std::optional<KeptDevice> kept) {
  Board board(o.dev, bar, mem, loop);
  Device& dev = board.device();
  std::string err;
  if (!board.start(o.socket_path, std::move(kept), o.port, &err)) {
    LOG_ERR("%s", err.c_str());
    return 1;
  }
  UniqueFd sfd;
  int signo = 0;
  if (!watch_signals(loop, dev, &sfd, &signo)) {
    return 1;
  }
  ControlServer control(loop, dev, board.port());
  const std::string ctl = o.control_path.empty() ? control_path_for(o.socket_path) : o.control_path;
  if (!control.listen(ctl, &err)) {
    LOG_ERR("%s", err.c_str());
    return 1;
  }
  loop.add_timer(o.dev.heartbeat_ms, [&dev] { dev.on_heartbeat_st(); });
  if (!announce(o, dev, mem, ctl)) {
    return 1;
  }
  run_dispatch(loop, dev, board.port(),
               {std::chrono::microseconds(o.poll_us), std::chrono::microseconds(o.doze_us),
                std::chrono::microseconds(o.doze_tick_us), o.doze_ring});
  LOG_INFO("exiting on %s", signo != 0 ? strsignal(signo) : "error");
  dev.shutdown_st();
  return signo != 0 ? 0 : 1;
}

int run(const Options& o) {
  std::string err;
  // A keeper still holding this socket's device: the guest's device is
  // ours to take over, once the vrnicd before us is gone (give one that is
  // dying a moment).
  std::optional<KeptDevice> kept;
  bool busy = false;
  for (int tries = 0; tries < 30; ++tries) {
    kept = adopt_from_keeper(keeper_path(o.socket_path), VRNIC_DB_NUM_CHANNELS, o.dev.num_vectors,
                             &err, &busy);
    if (!busy) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!kept && !err.empty()) {
    LOG_ERR("%s", err.c_str());
    return 1;
  }
  auto bar = kept ? Bar2::adopt(std::move(kept->shm), &err) : Bar2::create(o.bar_size, &err);
  if (!bar) {
    LOG_ERR("%s", err.c_str());
    return 1;
  }
  auto mem = GuestMemory::map_file(o.guest_mem_path, o.guest_mem_size, &err);
  if (!mem) {
    LOG_ERR("guest memory: %s", err.c_str());
    return 1;
  }
  EventLoop loop;
  if (!loop.valid()) {
    return 1;
  }
  // Doze ticks need timer precision finer than the default 50 us slack.
  if (::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) != 0) {
    LOG_WARN("cannot reduce the timer slack: %s", std::strerror(errno));
  }
  return serve(o, *bar, *mem, loop, std::move(kept));
}

}  // namespace
}  // namespace vrnicd

int main(int argc, char** argv) {
  vrnicd::Options opts;
  const int rc = vrnicd::parse_options(argc, argv, &opts);
  if (rc != 0) {
    return rc - 1;
  }
  if (!opts.log_file.empty() && !vrnicd::log_open_file(opts.log_file.c_str())) {
    std::fprintf(stderr, "vrnicd: cannot open log file %s: %s\n", opts.log_file.c_str(),
                 std::strerror(errno));
    return 2;
  }
  return vrnicd::run(opts);
}
