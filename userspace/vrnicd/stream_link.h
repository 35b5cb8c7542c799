// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// An Ethernet link to a QEMU "-netdev stream" peer over a UNIX socket, with
// vrnicd as the listening side.  QEMU frames each packet with a 32-bit
// big-endian length.  The peer is untrusted: a bad length drops the
// connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "event_loop.h"
#include "fd.h"

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
  static constexpr size_t kMaxFrame = 65536 + 4096;  // QEMU's NET_BUFSIZE

  StreamLink(EventLoop& loop, std::string name, RxHandler rx);
  ~StreamLink();
  StreamLink(const StreamLink&) = delete;
  StreamLink& operator=(const StreamLink&) = delete;
  StreamLink(StreamLink&&) = delete;
  StreamLink& operator=(StreamLink&&) = delete;

  bool listen(const std::string& path, std::string* err);
  // Queue a frame to the peer; false (frame dropped) when not connected or
  // the socket is full.
  bool send(std::span<const std::byte> frame);
  [[nodiscard]] bool connected() const noexcept { return conn_.valid(); }

  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t tx_dropped = 0;

 private:
  void on_accept();
  void on_readable();
  void drop_conn(const char* why);

  EventLoop& loop_;
  std::string name_;
  RxHandler rx_;
  std::string path_;
  UniqueFd listen_;
  UniqueFd conn_;
  std::vector<std::byte> buf_;
};

}  // namespace vrnicd
