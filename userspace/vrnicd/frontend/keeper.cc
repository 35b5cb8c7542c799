// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "frontend/keeper.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>

#include "base/unix_socket.h"
#include "hw_access.h"
#include "vrnic-hw.h"

namespace vrnicd {
namespace {

// The keeper's one message: this header, with every fd attached
// (SCM_RIGHTS) in the order shm, client, doorbells, irqs.
struct Header {
  uint32_t magic;
  uint32_t version;
  uint32_t num_channels;
  uint32_t num_vectors;
  uint32_t busy;  // another vrnicd holds the device: no fds come
  uint32_t pad;
};
constexpr uint32_t kMagic = 0x504b5256;  // "VRKP"
constexpr uint32_t kVersion = 2;
constexpr size_t kMaxFds = 128;

// Close every fd but the (sorted) keep list.
void close_all_but(const std::vector<int>& keep) {
  unsigned int from = 0;
  for (const int fd : keep) {
    if (static_cast<unsigned int>(fd) > from) {
      ::close_range(from, static_cast<unsigned int>(fd) - 1, 0);
    }
    from = static_cast<unsigned int>(fd) + 1;
  }
  ::close_range(from, UINT_MAX, 0);
}

void send_fds(int sock, const Header& h, const std::vector<int>& fds) {
  Header copy = h;
  iovec iov{&copy, sizeof(copy)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kMaxFds)> ctrl{};
  if (!fds.empty()) {
    msg.msg_control = ctrl.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  (void)::sendmsg(sock, &msg, MSG_NOSIGNAL);
}

// The keeper's message: false unless the header came whole, with every fd.
bool receive_fds(int sock, Header* h, std::vector<UniqueFd>* fds) {
  const timeval tv{5, 0};
  ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  iovec iov{h, sizeof(*h)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kMaxFds)> ctrl{};
  msg.msg_control = ctrl.data();
  msg.msg_controllen = ctrl.size();
  const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n >= 0 && c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds->emplace_back(fd);
      }
    }
  }
  return n == static_cast<ssize_t>(sizeof(*h)) && (msg.msg_flags & MSG_CTRUNC) == 0;
}

// A device whose vrnicd died, told to its driver as a NIC's health report
// tells it that the firmware died: STATE FATAL with code DIED, and the
// control vector (0) raised, so that the driver knows now and not only when
// the heartbeat has been missing for seconds.  Only a device that was
// READY: one that shut down said GONE itself, and one in RESET has a
// driver waiting on it anyway.  Stores and a write(2): async-signal-safe.
struct Health {
  std::byte* regs = nullptr;  // BAR2's register page
  int ctrl_irq = -1;          // MSI-X vector 0's eventfd
};

Health map_health(const Header& h, const std::vector<int>& fds) {
  Health health;
  // Not past the end of the memory: a read there would kill the keeper.
  struct stat st {};
  if (::fstat(fds.at(0), &st) == 0 && st.st_size >= VRNIC_BAR2_MIN_SIZE) {
    void* map = ::mmap(nullptr, VRNIC_BAR2_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds.at(0),
                       VRNIC_BAR2_REG_PAGE);
    health.regs = map == MAP_FAILED ? nullptr : static_cast<std::byte*>(map);
  }
  health.ctrl_irq = h.num_vectors > 0 ? fds.at(2 + h.num_channels) : -1;
  return health;
}

void report_death(const Health& health) {
  std::byte* regs = health.regs;
  if (regs == nullptr || vrnic::load_acquire32(regs + VRNIC_REG_STATE) != VRNIC_STATE_READY) {
    return;
  }
  vrnic::store_release32(regs + VRNIC_REG_FATAL_CODE, VRNIC_FATAL_DIED);
  vrnic::store_release32(regs + VRNIC_REG_STATE, VRNIC_STATE_FATAL);
  if (health.ctrl_irq >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(health.ctrl_irq, &one, sizeof(one));
  }
}

// The keeper process: hand the fds to the next vrnicd (of vrnicd's own
// user) once the current one (whose end of the lease is owner) is gone,
// until QEMU hangs up.  A
// fork of vrnicd, so only async-signal-safe calls from here on.
[[noreturn]] void keeper_main(int listen_fd, int owner, const char* path, ino_t ino,
                              const Header& h, const std::vector<int>& fds,
                              const std::vector<int>& keep) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // vrnicd blocks SIGTERM/SIGINT
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    ::dup2(null_fd, 0);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
  }
  close_all_but(keep);
  ::prctl(PR_SET_NAME, "vrnicd-keeper", 0, 0, 0);
  const int client = fds.at(1);
  const Health health = map_health(h, fds);  // to report the device's death
  Header busy = h;
  busy.busy = 1;
  for (;;) {
    std::array<pollfd, 3> p = {{{listen_fd, POLLIN, 0},
                                {client, POLLRDHUP, 0},
                                {owner, POLLRDHUP, 0}}};  // ignored while -1
    if (::poll(p.data(), p.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    if ((p[1].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
      break;  // QEMU is gone, and the device with it
    }
    if ((p[2].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
      ::close(owner);  // that vrnicd is gone: the next may take over
      owner = -1;
      report_death(health);
    }
    if ((p[0].revents & POLLIN) != 0) {
      const int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      const std::optional<ucred> cred = c >= 0 ? peer_cred(c) : std::nullopt;
      if (!cred || !trusted_uid(cred->uid)) {
        if (c >= 0) {
          ::close(c);  // the device goes only to vrnicd's own user
        }
      } else if (owner >= 0) {
        send_fds(c, busy, {});
        ::close(c);
      } else {
        send_fds(c, h, fds);
        owner = c;  // the new vrnicd's lease
      }
    }
  }
  struct stat st {};
  if (::stat(path, &st) == 0 && st.st_ino == ino) {
    ::unlink(path);  // still ours
  }
  ::_exit(0);
}

}  // namespace

std::string keeper_path(const std::string& ivshmem_socket) { return ivshmem_socket + ".keeper"; }

namespace {

// The keeper's listening socket at path, which only vrnicd's user may
// connect to (the keeper hands out guest RAM); ino is its inode, for the
// keeper to tell later whether the path is still its own.
UniqueFd listen_private(const std::string& path, ino_t* ino, std::string* err) {
  sockaddr_un addr{};
  if (!unix_socket_addr(path, &addr, err)) {
    return {};
  }
  UniqueFd lfd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!lfd) {
    *err = std::string("socket: ") + std::strerror(errno);
    return {};
  }
  ::unlink(path.c_str());
  struct stat st {};
  const mode_t old_mask = ::umask(0077);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  const int bound = ::bind(lfd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::umask(old_mask);
  if (bound != 0 || ::listen(lfd.get(), 4) != 0 || ::stat(path.c_str(), &st) != 0) {
    *err = path + ": " + std::strerror(errno);
    return {};
  }
  *ino = st.st_ino;
  return lfd;
}

// Fork the keeper twice removed, so that it is nobody's zombie: init (or
// a subreaper) adopts it and it outlives vrnicd.  Everything it needs is
// ready before the fork; it keeps the descriptors in keep and closes the
// rest.
bool fork_keeper(int lfd, int lease, const std::string& path, ino_t ino, const Header& h,
                 const std::vector<int>& fds, const std::vector<int>& keep, std::string* err) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    *err = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    const pid_t keeper = ::fork();
    if (keeper == 0) {
      keeper_main(lfd, lease, path.c_str(), ino, h, fds, keep);
    }
    ::_exit(keeper < 0 ? 1 : 0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *err = "fork of the keeper failed";
    return false;
  }
  return true;
}

}  // namespace

bool start_keeper(const std::string& path, int shm, int client, const std::vector<int>& doorbells,
                  const std::vector<int>& irqs, UniqueFd* lease, std::string* err) {
  std::vector<int> fds = {shm, client};
  fds.insert(fds.end(), doorbells.begin(), doorbells.end());
  fds.insert(fds.end(), irqs.begin(), irqs.end());
  if (fds.size() > kMaxFds) {
    *err = "too many eventfds to keep";
    return false;
  }
  ino_t ino = 0;
  const UniqueFd lfd = listen_private(path, &ino, err);
  if (!lfd) {
    return false;
  }
  // The lease: the keeper hands the device to nobody while we hold our end.
  std::array<int, 2> pair{};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair.data()) != 0) {
    *err = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  UniqueFd ours(pair[0]);
  const UniqueFd theirs(pair[1]);
  std::vector<int> keep = fds;
  keep.insert(keep.end(), {lfd.get(), theirs.get(), 0, 1, 2});
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  const Header h{
      kMagic, kVersion, static_cast<uint32_t>(doorbells.size()), static_cast<uint32_t>(irqs.size()),
      0,      0};
  if (!fork_keeper(lfd.get(), theirs.get(), path, ino, h, fds, keep, err)) {
    ::unlink(path.c_str());
    return false;
  }
  *lease = std::move(ours);
  return true;
}

std::optional<KeptDevice> adopt_from_keeper(const std::string& path, uint32_t num_channels,
                                            uint32_t num_vectors, std::string* err, bool* busy) {
  err->clear();
  if (busy != nullptr) {
    *busy = false;
  }
  sockaddr_un addr{};
  if (!unix_socket_addr(path, &addr, err)) {
    return std::nullopt;
  }
  UniqueFd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock) {
    *err = std::string("socket: ") + std::strerror(errno);
    return std::nullopt;
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    if (errno != ENOENT && errno != ECONNREFUSED) {
      *err = path + ": " + std::strerror(errno);
    }
    return std::nullopt;  // no keeper: a device of our own
  }
  if (!peer_is_trusted(sock.get(), path, err)) {
    return std::nullopt;  // someone else's listener: not our device
  }
  return keeper_handshake(std::move(sock), path, num_channels, num_vectors, err, busy);
}

std::optional<KeptDevice> keeper_handshake(UniqueFd sock, const std::string& path,
                                           uint32_t num_channels, uint32_t num_vectors,
                                           std::string* err, bool* busy) {
  Header h{};
  std::vector<UniqueFd> fds;
  const bool whole = receive_fds(sock.get(), &h, &fds);
  if (!whole || h.magic != kMagic || h.version != kVersion) {
    *err = path + ": not a vrnicd keeper";
    return std::nullopt;
  }
  if (h.busy != 0) {
    *err = path + ": another vrnicd is serving this device";
    if (busy != nullptr) {
      *busy = true;
    }
    return std::nullopt;
  }
  if (h.num_channels != num_channels || h.num_vectors != num_vectors ||
      fds.size() != size_t{2} + num_channels + num_vectors) {
    *err = path + ": the kept device has " + std::to_string(h.num_vectors) + " vectors and " +
           std::to_string(h.num_channels) + " channels, not " + std::to_string(num_vectors) +
           " and " + std::to_string(num_channels);
    return std::nullopt;
  }
  KeptDevice d;
  d.lease = std::move(sock);
  d.shm = std::move(fds[0]);
  d.client = std::move(fds[1]);
  for (size_t i = 0; i < num_channels; ++i) {
    d.doorbells.push_back(std::move(fds[2 + i]));
  }
  for (size_t i = 0; i < num_vectors; ++i) {
    d.irqs.push_back(std::move(fds[2 + num_channels + i]));
  }
  return d;
}

}  // namespace vrnicd
