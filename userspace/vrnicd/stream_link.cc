// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "stream_link.h"

#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "log.h"

namespace vrnicd {

std::optional<size_t> parse_stream_frames(
    std::span<const std::byte> buf,
    const std::function<void(std::span<const std::byte>)>& on_frame) {
  size_t off = 0;
  while (buf.size() - off >= 4) {
    uint32_t be_len = 0;
    std::memcpy(&be_len, buf.data() + off, 4);
    const uint32_t len = ntohl(be_len);
    if (len == 0 || len > StreamLink::kMaxFrame) {
      return std::nullopt;
    }
    if (buf.size() - off - 4 < len) {
      break;
    }
    on_frame(buf.subspan(off + 4, len));
    off += 4 + len;
  }
  return off;
}

StreamLink::StreamLink(EventLoop& loop, std::string name, RxHandler rx)
    : loop_(loop), name_(std::move(name)), rx_(std::move(rx)) {}

StreamLink::~StreamLink() {
  if (conn_) {
    loop_.remove(conn_.get());
  }
  if (listen_) {
    loop_.remove(listen_.get());
    ::unlink(path_.c_str());
  }
}

bool StreamLink::listen(const std::string& path, std::string* err) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    *err = path + ": socket path too long";
    return false;
  }
  listen_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listen_) {
    *err = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_.get(), 2) != 0) {
    *err = path + ": " + std::strerror(errno);
    listen_.reset();
    return false;
  }
  path_ = path;
  return loop_.add(listen_.get(), EPOLLIN, [this](uint32_t) { on_accept(); });
}

void StreamLink::on_accept() {
  UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  if (!fd) {
    return;
  }
  if (conn_) {
    LOG_WARN("%s: refusing a second connection", name_.c_str());
    return;
  }
  conn_ = std::move(fd);
  buf_.clear();
  loop_.add(conn_.get(), EPOLLIN | EPOLLRDHUP, [this](uint32_t) { on_readable(); });
  LOG_INFO("%s: peer connected", name_.c_str());
}

void StreamLink::drop_conn(const char* why) {
  LOG_INFO("%s: peer disconnected (%s)", name_.c_str(), why);
  loop_.remove(conn_.get());
  conn_.reset();
  buf_.clear();
}

void StreamLink::on_readable() {
  std::byte chunk[16384];
  const ssize_t n = ::recv(conn_.get(), chunk, sizeof(chunk), 0);
  if (n == 0) {
    drop_conn("end of stream");
    return;
  }
  if (n < 0) {
    if (errno != EAGAIN && errno != EINTR) {
      drop_conn(std::strerror(errno));
    }
    return;
  }
  buf_.insert(buf_.end(), chunk, chunk + n);
  bool alive = true;
  const auto consumed = parse_stream_frames(buf_, [&](std::span<const std::byte> frame) {
    if (alive) {
      ++rx_frames;
      rx_(frame);
      alive = conn_.valid();  // the handler may drop the link
    }
  });
  if (!alive) {
    return;
  }
  if (!consumed) {
    log_guest_error("%s: bad frame length", name_.c_str());
    drop_conn("protocol error");
    return;
  }
  buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(*consumed));
}

bool StreamLink::send(std::span<const std::byte> frame) {
  if (!conn_ || frame.empty() || frame.size() > kMaxFrame) {
    ++tx_dropped;
    return false;
  }
  uint32_t be_len = htonl(static_cast<uint32_t>(frame.size()));
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast)
  iovec iov[2] = {{&be_len, 4}, {const_cast<std::byte*>(frame.data()), frame.size()}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = 2;
  const ssize_t n = ::sendmsg(conn_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) {
    ++tx_dropped;
    return false;
  }
  if (static_cast<size_t>(n) != frame.size() + 4) {
    // A partial frame would desynchronise the stream: give up on the peer.
    drop_conn("short write");
    ++tx_dropped;
    return false;
  }
  ++tx_frames;
  return true;
}

}  // namespace vrnicd
