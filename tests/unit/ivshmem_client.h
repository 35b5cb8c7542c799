// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The client side of the ivshmem server protocol, as QEMU speaks it, for
// host tests.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace vrnic_test {

struct IvshmemMsg {
  int64_t value = 0;
  int fd = -1;
};

inline int ivshmem_connect(const std::string& path) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    return -1;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(s);
    return -1;
  }
  timeval tv{5, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return s;
}

// Read one 8-byte message and the fd that came with it; false on EOF or
// timeout.
inline bool ivshmem_recv(int s, IvshmemMsg* m) {
  int64_t v = 0;
  iovec iov{&v, sizeof(v)};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> ctrl{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctrl.data();
  msg.msg_controllen = ctrl.size();
  const ssize_t n = ::recvmsg(s, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  if (n != static_cast<ssize_t>(sizeof(v))) {
    return false;
  }
  m->value = v;
  m->fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&m->fd, CMSG_DATA(c), sizeof(int));
    }
  }
  return true;
}

// What a connected client has after the setup messages.
struct IvshmemSetup {
  int64_t version = -1;
  int64_t own_id = -1;
  int shm_fd = -1;
  int64_t device_id = -1;
  std::vector<int> doorbell_fds;  // the device's, to notify it
  std::vector<int> irq_fds;       // our own, for our interrupts

  ~IvshmemSetup() {
    for (int fd : doorbell_fds) {
      ::close(fd);
    }
    for (int fd : irq_fds) {
      ::close(fd);
    }
    if (shm_fd >= 0) {
      ::close(shm_fd);
    }
  }
};

// Receive version, ID, shared memory, then n_doorbells + n_irqs eventfds.
inline bool ivshmem_setup(int s, size_t n_doorbells, size_t n_irqs, IvshmemSetup* out) {
  IvshmemMsg m;
  if (!ivshmem_recv(s, &m) || m.fd >= 0) {
    return false;
  }
  out->version = m.value;
  if (!ivshmem_recv(s, &m) || m.fd >= 0) {
    return false;
  }
  out->own_id = m.value;
  if (!ivshmem_recv(s, &m) || m.value != -1 || m.fd < 0) {
    return false;
  }
  out->shm_fd = m.fd;
  for (size_t i = 0; i < n_doorbells + n_irqs; ++i) {
    if (!ivshmem_recv(s, &m) || m.fd < 0) {
      return false;
    }
    if (m.value == out->own_id) {
      out->irq_fds.push_back(m.fd);
    } else {
      out->device_id = m.value;
      out->doorbell_fds.push_back(m.fd);
    }
  }
  return out->doorbell_fds.size() == n_doorbells && out->irq_fds.size() == n_irqs;
}

}  // namespace vrnic_test
