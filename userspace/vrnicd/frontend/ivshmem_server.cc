// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "frontend/ivshmem_server.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/config.h"
#include "base/log.h"
#include "base/unix_socket.h"
#include "frontend/keeper.h"

namespace vrnicd {

IvshmemServer::IvshmemServer(EventLoop& loop, int shm_fd, uint32_t num_vectors,
                             uint32_t num_channels, Callbacks cb)
    : loop_(loop),
      shm_fd_(shm_fd),
      num_vectors_(num_vectors),
      num_channels_(num_channels),
      cb_(std::move(cb)) {}

IvshmemServer::~IvshmemServer() {
  drop_client();
  if (listen_) {
    loop_.remove(listen_.get());
    ::unlink(path_.c_str());
  }
}

bool IvshmemServer::listen(const std::string& path, std::string* err) {
  listen_ = listen_unix(path, 4, false, err);
  if (!listen_) {
    return false;
  }
  path_ = path;
  return loop_.add(listen_.get(), EPOLLIN, [this](uint32_t) { on_accept(); });
}

bool IvshmemServer::send_msg(int64_t value, int fd) {
  int64_t le = value;  // x86: already little endian
  iovec iov{&le, sizeof(le)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int))> ctrl{};
  if (fd >= 0) {
    msg.msg_control = ctrl.data();
    msg.msg_controllen = ctrl.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  const ssize_t n = ::sendmsg(client_.get(), &msg, MSG_NOSIGNAL);
  if (n != static_cast<ssize_t>(sizeof(le))) {
    LOG_ERR("ivshmem: send to client failed: %s", n < 0 ? std::strerror(errno) : "short write");
    return false;
  }
  return true;
}

bool IvshmemServer::handshake() {
  for (uint32_t i = 0; i < num_channels_; ++i) {
    doorbells_.emplace_back(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  }
  for (uint32_t i = 0; i < num_vectors_; ++i) {
    irqs_.emplace_back(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  }
  for (const auto& v : {&doorbells_, &irqs_}) {
    for (const UniqueFd& fd : *v) {
      if (!fd) {
        LOG_ERR("eventfd: %s", std::strerror(errno));
        return false;
      }
    }
  }
  if (!send_msg(kProtocolVersion, -1) || !send_msg(kGuestPeerId, -1) || !send_msg(-1, shm_fd_)) {
    return false;
  }
  for (const UniqueFd& fd : doorbells_) {
    if (!send_msg(kDevicePeerId, fd.get())) {
      return false;
    }
  }
  for (const UniqueFd& fd : irqs_) {
    if (!send_msg(kGuestPeerId, fd.get())) {
      return false;
    }
  }
  return true;
}

// Serve the doorbells and watch the connection.
bool IvshmemServer::watch() {
  for (uint32_t ch = 0; ch < doorbells_.size(); ++ch) {
    const int fd = doorbells_[ch].get();
    // QEMU shares these eventfds and may toggle O_NONBLOCK on them; only
    // read after epoll said they are readable.
    if (!loop_.add(fd, EPOLLIN, [this, fd, ch](uint32_t) {
          uint64_t count = 0;
          if (::read(fd, &count, sizeof(count)) == static_cast<ssize_t>(sizeof(count)) &&
              cb_.on_doorbell) {
            cb_.on_doorbell(ch, count);
          }
        })) {
      return false;
    }
  }
  return loop_.add(client_.get(), EPOLLIN | EPOLLRDHUP,
                   [this](uint32_t events) { on_client_event(events); });
}

bool IvshmemServer::adopt(KeptDevice kept) {
  if (kept.doorbells.size() != num_channels_ || kept.irqs.size() != num_vectors_) {
    return false;
  }
  lease_ = std::move(kept.lease);
  client_ = std::move(kept.client);
  doorbells_ = std::move(kept.doorbells);
  irqs_ = std::move(kept.irqs);
  if (!watch()) {
    drop_client();
    return false;
  }
  LOG_INFO("ivshmem: took over QEMU's connection from the keeper");
  return true;
}

void IvshmemServer::on_accept() {
  UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!fd) {
    return;
  }
  if (client_) {
    LOG_WARN("ivshmem: refusing a second client; one QEMU per vrnicd");
    return;
  }
  // The client gets the device's registers, doorbells and interrupts.
  std::string why;
  if (!peer_is_trusted(fd.get(), "ivshmem: " + path_, &why)) {
    LOG_WARN("%s", why.c_str());
    return;
  }
  client_ = std::move(fd);
  if (!handshake() || !watch()) {
    drop_client();
    return;
  }
  LOG_INFO("ivshmem: client connected (%u vectors, %u doorbell channels)", num_vectors_,
           num_channels_);
  std::vector<int> doorbells;
  std::vector<int> irqs;
  for (const UniqueFd& f : doorbells_) {
    doorbells.push_back(f.get());
  }
  for (const UniqueFd& f : irqs_) {
    irqs.push_back(f.get());
  }
  std::string err;
  if (!start_keeper(keeper_path(path_), shm_fd_, client_.get(), doorbells, irqs, &lease_, &err)) {
    LOG_WARN("ivshmem: no keeper (%s): a new vrnicd could not reach this device", err.c_str());
  }
  if (cb_.on_connect) {
    cb_.on_connect();
  }
}

void IvshmemServer::on_client_event(uint32_t events) {
  std::array<char, 256> buf{};
  const ssize_t n = ::recv(client_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
  if (n > 0 && (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0) {
    return;  // clients never send anything; ignore it
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR) &&
      (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) == 0) {
    return;
  }
  LOG_INFO("ivshmem: client disconnected");
  drop_client();
  if (cb_.on_disconnect) {
    cb_.on_disconnect();
  }
}

void IvshmemServer::drop_client() {
  for (const UniqueFd& fd : doorbells_) {
    if (fd) {
      loop_.remove(fd.get());
    }
  }
  doorbells_.clear();
  irqs_.clear();
  lease_.reset();
  if (client_) {
    loop_.remove(client_.get());
    client_.reset();
  }
}

void IvshmemServer::raise(uint32_t vector) noexcept {
  if (vector >= irqs_.size()) {
    return;
  }
  const uint64_t one = 1;
  if (::write(irqs_[vector].get(), &one, sizeof(one)) < 0 && errno != EAGAIN) {
    LOG_WARN("ivshmem: raising vector %u: %s", vector, std::strerror(errno));
  }
}

}  // namespace vrnicd
