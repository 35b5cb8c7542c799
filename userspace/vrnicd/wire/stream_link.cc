// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "wire/stream_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "base/unix_socket.h"

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

StreamLink::StreamLink(EventLoop& loop, std::string name, RxHandler rx, StateHandler state)
    : loop_(loop), name_(std::move(name)), rx_(std::move(rx)), state_(std::move(state)) {}

StreamLink::~StreamLink() {
  if (retry_timer_ >= 0) {
    loop_.remove_timer(retry_timer_);
  }
  if (conn_) {
    loop_.remove(conn_.get());
  }
  if (listen_) {
    loop_.remove(listen_.get());
    ::unlink(path_.c_str());
  }
}

bool StreamLink::listen(const std::string& path, std::string* err) {
  listen_ = listen_unix(path, 2, false, err);
  if (!listen_) {
    return false;
  }
  path_ = path;
  listening_ = true;
  return loop_.add(listen_.get(), EPOLLIN, [this](uint32_t) { on_accept(); });
}

bool StreamLink::connect(const std::string& path, uint32_t retry_ms, std::string* err) {
  sockaddr_un addr{};
  if (!unix_socket_addr(path, &addr, err)) {
    return false;
  }
  path_ = path;
  retry_timer_ = loop_.add_timer(retry_ms, [this] {
    if (!conn_) {
      try_connect();
    }
  });
  if (retry_timer_ < 0) {
    *err = "cannot create the reconnect timer";
    return false;
  }
  try_connect();
  return true;
}

void StreamLink::try_connect() {
  sockaddr_un addr{};
  std::string err;
  if (!unix_socket_addr(path_, &addr, &err)) {
    return;
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  // A blocking connect to a UNIX socket returns at once.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return;  // not there yet: the timer tries again
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK);
  adopt(std::move(fd));
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
  adopt(std::move(fd));
}

void StreamLink::adopt(UniqueFd fd) {
  conn_ = std::move(fd);
  rx_len_ = 0;
  out_.clear();
  out_off_ = 0;
  // Room for bursts: a full send ring of jumbo frames.
  const int sndbuf = 4 << 20;
  ::setsockopt(conn_.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  out_watched_ = false;
  loop_.add(conn_.get(), EPOLLIN | EPOLLRDHUP, [this](uint32_t ev) { on_events(ev); });
  LOG_INFO("%s: peer connected", name_.c_str());
  if (state_) {
    state_(true);
  }
}

void StreamLink::drop_conn(const char* why) {
  LOG_INFO("%s: peer disconnected (%s)", name_.c_str(), why);
  loop_.remove(conn_.get());
  conn_.reset();
  rx_len_ = 0;
  out_.clear();
  out_off_ = 0;
  if (state_) {
    state_(false);
  }
}

void StreamLink::on_events(uint32_t events) {
  if ((events & EPOLLOUT) != 0) {
    flush();
    if (!conn_) {
      return;
    }
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    on_readable();
  }
}

// Straight into the receive buffer's free tail, frames handed on where
// they lie: the bytes are copied once, by recv().  Only a partial frame at
// the end moves, to the front, for the rest of it to follow.
void StreamLink::on_readable() {
  if (buf_.empty()) {
    buf_.resize(kRxBuffer);
  }
  const ssize_t n = ::recv(conn_.get(), buf_.data() + rx_len_, buf_.size() - rx_len_, 0);
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
  rx_len_ += static_cast<size_t>(n);
  bool alive = true;
  const auto consumed =
      parse_stream_frames(std::span(buf_.data(), rx_len_), [&](std::span<const std::byte> frame) {
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
  // What is left is less than one frame and its length: it fits.
  rx_len_ -= *consumed;
  if (rx_len_ > 0 && *consumed > 0) {
    std::memmove(buf_.data(), buf_.data() + *consumed, rx_len_);
  }
}

// Write what is queued; watch for EPOLLOUT while anything is left.
void StreamLink::flush() {
  while (out_off_ < out_.size()) {
    const ssize_t n = ::send(conn_.get(), out_.data() + out_off_, out_.size() - out_off_,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        break;
      }
      drop_conn(std::strerror(errno));
      return;
    }
    out_off_ += static_cast<size_t>(n);
  }
  if (out_off_ == out_.size()) {
    out_.clear();
    out_off_ = 0;
    watch_out(false);
    return;
  }
  // A reader that never quite catches up never empties the queue: reclaim
  // the sent head once it is half of it, so the queue holds at most twice
  // what is pending, and each byte moves at most once more.
  if (out_off_ >= out_.size() / 2) {
    out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(out_off_));
    out_off_ = 0;
  }
  watch_out(true);
}

// Watch for room in the socket, or stop: an epoll_ctl only when that
// changes, not once per released batch.
void StreamLink::watch_out(bool on) {
  if (on != out_watched_) {
    out_watched_ = on;
    loop_.modify(conn_.get(), EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0U));
  }
}

// Append to the queue, whose memory is reserved once, at its bound, the
// first time the socket falls behind: it never reallocates after.
void StreamLink::queue(std::span<const std::byte> bytes) {
  if (out_.capacity() < kMaxHeld) {
    out_.reserve(kMaxHeld);
  }
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

bool StreamLink::send(std::span<const std::byte> frame) {
  if (!conn_ || frame.empty() || frame.size() > kMaxFrame ||
      queued_bytes() + frame.size() + 4 > kMaxQueued || out_.size() + frame.size() + 4 > kMaxHeld) {
    ++tx_dropped;
    return false;
  }
  uint32_t be_len = htonl(static_cast<uint32_t>(frame.size()));
  if (out_.empty() && !held_) {
    // The usual case: straight to the socket.
    std::array<iovec, 2> iov = {
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): sendmsg does not write
        {{&be_len, 4}, {const_cast<std::byte*>(frame.data()), frame.size()}}};
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = iov.size();
    ssize_t n = ::sendmsg(conn_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno != EAGAIN && errno != EINTR) {
        drop_conn(std::strerror(errno));
        ++tx_dropped;
        return false;
      }
      n = 0;
    }
    ++tx_frames;
    const auto sent = static_cast<size_t>(n);
    if (sent == frame.size() + 4) {
      return true;
    }
    // Keep the rest, so that the stream stays whole.
    const auto hdr = std::as_bytes(std::span(&be_len, 1));
    if (sent < 4) {
      queue(hdr.subspan(sent));
    }
    queue(frame.subspan(sent > 4 ? sent - 4 : 0));
    out_off_ = 0;
    watch_out(true);
    return true;
  }
  queue(std::as_bytes(std::span(&be_len, 1)));
  queue(frame);
  ++tx_frames;
  return true;
}

void StreamLink::release() {
  held_ = false;
  if (conn_ && queued_bytes() > 0) {
    flush();
  }
}

}  // namespace vrnicd
