// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// An Ethernet link over a UNIX stream socket in QEMU's "-netdev stream"
// framing: each frame is preceded by its length, 32 bits big endian.  One
// end listens, the other connects; either end may be QEMU or another
// vrnicd.  The peer is untrusted: a bad length drops the connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/fd.h"

namespace vrnicd {

// Split a QEMU stream into frames: calls on_frame for each complete frame
// at the start of buf and returns the bytes consumed, or nullopt when the
// stream carries a length QEMU would never send.
std::optional<size_t> parse_stream_frames(
    std::span<const std::byte> buf,
    const std::function<void(std::span<const std::byte>)>& on_frame);

class StreamLink {
 public:
  using RxHandler = std::function<void(std::span<const std::byte> frame)>;
  using StateHandler = std::function<void(bool connected)>;
  static constexpr size_t kMaxFrame = 65536 + 4096;  // QEMU's NET_BUFSIZE
  // Frames queued while the socket is full; beyond this they are dropped,
  // as a NIC drops when its transmit ring is full.
  static constexpr size_t kMaxQueued = size_t{8} << 20;
  // The queue's memory, sent bytes not yet reclaimed included: the sent
  // head is reclaimed once it is half the buffer, so a peer that reads
  // steadily but slower than the offered load holds at most this.
  static constexpr size_t kMaxHeld = 2 * kMaxQueued;
  // The receive buffer: what one recv() may take, with room left after a
  // partial frame (less than kMaxFrame + 4 bytes) for several more.
  static constexpr size_t kRxBuffer = 4 * (kMaxFrame + 4);

  StreamLink(EventLoop& loop, std::string name, RxHandler rx, StateHandler state = nullptr);
  ~StreamLink();
  StreamLink(const StreamLink&) = delete;
  StreamLink& operator=(const StreamLink&) = delete;
  StreamLink(StreamLink&&) = delete;
  StreamLink& operator=(StreamLink&&) = delete;

  // Accept one peer at a time on path.
  bool listen(const std::string& path, std::string* err);
  // Connect to path, and keep trying (every retry_ms) whenever there is
  // no connection.
  bool connect(const std::string& path, uint32_t retry_ms, std::string* err);
  // Send a frame to the peer; false (frame dropped) when not connected or
  // too much is queued already.
  bool send(std::span<const std::byte> frame);
  // Hold the frames sent from now on, and write them all with one system
  // call at release(): the frames of one engine round leave together.
  void hold() noexcept { held_ = true; }
  void release();
  [[nodiscard]] bool connected() const noexcept { return conn_.valid(); }
  // Bytes waiting for the socket, and the memory the queue holds.
  [[nodiscard]] size_t queued_bytes() const noexcept { return out_.size() - out_off_; }
  [[nodiscard]] size_t held_bytes() const noexcept { return out_.capacity(); }

  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t tx_dropped = 0;

 private:
  void on_accept();
  void try_connect();
  void adopt(UniqueFd fd);
  void on_events(uint32_t events);
  void on_readable();
  void flush();
  void queue(std::span<const std::byte> bytes);
  void watch_out(bool on);
  void drop_conn(const char* why);

  EventLoop& loop_;
  std::string name_;
  RxHandler rx_;
  StateHandler state_;
  std::string path_;
  bool listening_ = false;
  int retry_timer_ = -1;
  UniqueFd listen_;
  UniqueFd conn_;
  std::vector<std::byte> buf_;  // received bytes: the first rx_len_
  size_t rx_len_ = 0;
  std::vector<std::byte> out_;  // bytes the socket did not take yet
  size_t out_off_ = 0;
  bool held_ = false;
  bool out_watched_ = false;  // EPOLLOUT is in conn_'s epoll events
};

}  // namespace vrnicd
