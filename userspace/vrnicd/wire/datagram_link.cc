// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "wire/datagram_link.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/log.h"

namespace vrnicd {

bool parse_udp_endpoint(const std::string& text, sockaddr_storage* addr, socklen_t* len,
                        std::string* err) {
  std::string host;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *err = "'" + text + "': want [ADDRESS]:PORT";
      return false;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon) {
      *err = "'" + text + "': want HOST:PORT (or [IPv6]:PORT)";
      return false;
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  const bool digits = !port.empty() && port.size() <= 5 &&
                      port.find_first_not_of("0123456789") == std::string::npos;
  if (host.empty() || !digits || std::stoul(port) == 0 || std::stoul(port) > 65535) {
    *err = "'" + text + "': want HOST:PORT, the port 1 to 65535";
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    *err = "'" + text + "': " + ::gai_strerror(rc);
    return false;
  }
  std::memcpy(addr, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  ::freeaddrinfo(res);
  return true;
}

DatagramLink::DatagramLink(EventLoop& loop, RxHandler rx)
    : loop_(loop), rx_(std::move(rx)), buf_(kMaxFrame) {}

DatagramLink::~DatagramLink() {
  if (fd_) {
    loop_.remove(fd_.get());
  }
}

bool DatagramLink::open_tap(const std::string& name, std::string* err) {
  ifreq ifr{};
  if (name.empty() || name.size() >= sizeof(ifr.ifr_name)) {
    *err = "tap:" + name + ": not a network device name";
    return false;
  }
  UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd) {
    *err = std::string("/dev/net/tun: ") + std::strerror(errno);
    return false;
  }
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::memcpy(ifr.ifr_name, name.data(), name.size());
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) {
    *err = "tap:" + name + ": " + std::strerror(errno) +
           (errno == EPERM ? " (needs CAP_NET_ADMIN, or a TAP this user owns: ip tuntap add)" : "");
    return false;
  }
  fd_ = std::move(fd);
  udp_ = false;
  what_ = "tap:" + name;
  return loop_.add(fd_.get(), EPOLLIN, [this](uint32_t) { on_readable(); });
}

bool DatagramLink::open_udp(const std::string& local, const std::string& remote, std::string* err) {
  sockaddr_storage laddr{};
  socklen_t llen = 0;
  if (!parse_udp_endpoint(local, &laddr, &llen, err) ||
      !parse_udp_endpoint(remote, &remote_, &remote_len_, err)) {
    return false;
  }
  if (laddr.ss_family != remote_.ss_family) {
    *err = "udp:" + local + "," + remote + ": both ends must be IPv4, or both IPv6";
    return false;
  }
  UniqueFd fd(::socket(laddr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    *err = std::string("UDP socket: ") + std::strerror(errno);
    return false;
  }
  // Room for bursts, as a NIC's receive ring has: a 64 KiB message is
  // dozens of frames at once, and a slow peer takes them late.  The
  // default (net.core.rmem_default, 208 KiB) holds some 25 jumbo frames;
  // beyond net.core.rmem_max only with CAP_NET_ADMIN.
  const int bufsz = 16 << 20;
  for (const auto& [force, plain] :
       {std::pair{SO_RCVBUFFORCE, SO_RCVBUF}, std::pair{SO_SNDBUFFORCE, SO_SNDBUF}}) {
    if (::setsockopt(fd.get(), SOL_SOCKET, force, &bufsz, sizeof(bufsz)) != 0) {
      ::setsockopt(fd.get(), SOL_SOCKET, plain, &bufsz, sizeof(bufsz));
    }
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&laddr), llen) != 0) {
    *err = "udp: bind " + local + ": " + std::strerror(errno);
    return false;
  }
  fd_ = std::move(fd);
  udp_ = true;
  what_ = "udp:" + local + "," + remote;
  return loop_.add(fd_.get(), EPOLLIN, [this](uint32_t) { on_readable(); });
}

bool DatagramLink::from_remote(const sockaddr_storage& from, socklen_t len) const {
  if (len != remote_len_ || from.ss_family != remote_.ss_family) {
    return false;
  }
  if (from.ss_family == AF_INET) {
    sockaddr_in a{};
    sockaddr_in b{};
    std::memcpy(&a, &from, sizeof(a));
    std::memcpy(&b, &remote_, sizeof(b));
    return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr;
  }
  sockaddr_in6 a{};
  sockaddr_in6 b{};
  std::memcpy(&a, &from, sizeof(a));
  std::memcpy(&b, &remote_, sizeof(b));
  return a.sin6_port == b.sin6_port &&
         std::memcmp(&a.sin6_addr, &b.sin6_addr, sizeof(a.sin6_addr)) == 0;
}

// Up to a batch of frames per wakeup, so that a flood cannot starve the
// rest of the loop.
void DatagramLink::on_readable() {
  for (int i = 0; i < 64; ++i) {
    ssize_t n = 0;
    if (udp_) {
      sockaddr_storage from{};
      socklen_t flen = sizeof(from);
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
      n = ::recvfrom(fd_.get(), buf_.data(), buf_.size(), 0, reinterpret_cast<sockaddr*>(&from),
                     &flen);
      if (n >= 0 && !from_remote(from, flen)) {
        ++rx_foreign;
        continue;
      }
    } else {
      n = ::read(fd_.get(), buf_.data(), buf_.size());
    }
    if (n < 0) {
      if (errno != EAGAIN && errno != EINTR) {
        LOG_WARN("%s: %s", what_.c_str(), std::strerror(errno));
      }
      return;
    }
    // Shorter than an Ethernet header: nothing a NIC would take.
    if (n < 14) {
      continue;
    }
    ++rx_frames;
    rx_(std::span(buf_.data(), static_cast<size_t>(n)));
  }
}

bool DatagramLink::send(std::span<const std::byte> frame) {
  if (!fd_ || frame.empty() || frame.size() > kMaxFrame) {
    ++tx_dropped;
    return false;
  }
  if (held_) {
    if (batch_.size() == held_n_) {
      batch_.emplace_back();
    }
    batch_[held_n_++].assign(frame.begin(), frame.end());
    if (held_n_ == kMaxBatch) {
      send_held();
    }
    return true;
  }
  ssize_t n = 0;
  if (udp_) {
    // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast)
    n = ::sendto(fd_.get(), frame.data(), frame.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&remote_), remote_len_);
    // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  } else {
    n = ::write(fd_.get(), frame.data(), frame.size());
  }
  if (n != static_cast<ssize_t>(frame.size())) {
    ++tx_dropped;
    return false;
  }
  ++tx_frames;
  return true;
}

void DatagramLink::release() {
  held_ = false;
  send_held();
}

// The held frames in one sendmmsg(); those the kernel does not take now
// are dropped and counted, as send() drops one.
void DatagramLink::send_held() {
  std::array<iovec, kMaxBatch> iov{};
  std::array<mmsghdr, kMaxBatch> msgs{};
  for (size_t i = 0; i < held_n_; ++i) {
    iov.at(i) = {batch_[i].data(), batch_[i].size()};
    msghdr& h = msgs.at(i).msg_hdr;
    h.msg_iov = &iov.at(i);
    h.msg_iovlen = 1;
    h.msg_name = &remote_;
    h.msg_namelen = remote_len_;
  }
  size_t sent = 0;
  while (fd_ && sent < held_n_) {
    const int n = ::sendmmsg(fd_.get(), msgs.data() + sent,
                             static_cast<unsigned int>(held_n_ - sent), MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) {
        continue;
      }
      break;
    }
    sent += static_cast<size_t>(n);
  }
  tx_frames += sent;
  tx_dropped += held_n_ - sent;
  held_n_ = 0;
}

}  // namespace vrnicd
