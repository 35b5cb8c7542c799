// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The Ethernet port's wire as one frame per datagram: a host TAP device
// (--wire tap:NAME), or a UDP tunnel (--wire udp:LOCAL,REMOTE) in the
// format of QEMU's -netdev dgram: each UDP datagram carries one whole
// Ethernet frame and nothing else.  Either reaches past this machine: a TAP
// can join a Linux bridge, a UDP tunnel another host's vrnicd or QEMU.
//
// Neither has a link partner to lose, so the cable is up while the link is
// open.  A frame the kernel will not take now is dropped and counted, as a
// NIC drops when its transmit ring is full.  From a UDP tunnel only
// datagrams from REMOTE are taken.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/fd.h"

namespace vrnicd {

// host:port, [v6host]:port; false with *err when it does not parse or
// resolve.
bool parse_udp_endpoint(const std::string& text, sockaddr_storage* addr, socklen_t* len,
                        std::string* err);

class DatagramLink {
 public:
  using RxHandler = std::function<void(std::span<const std::byte> frame)>;
  static constexpr size_t kMaxFrame = 65536;

  DatagramLink(EventLoop& loop, RxHandler rx);
  ~DatagramLink();
  DatagramLink(const DatagramLink&) = delete;
  DatagramLink& operator=(const DatagramLink&) = delete;
  DatagramLink(DatagramLink&&) = delete;
  DatagramLink& operator=(DatagramLink&&) = delete;

  // Attach to the TAP device name (created if it does not exist; it needs
  // CAP_NET_ADMIN, or a persistent TAP this user owns).
  bool open_tap(const std::string& name, std::string* err);
  // A UDP socket bound to local, exchanging frames with remote.
  bool open_udp(const std::string& local, const std::string& remote, std::string* err);

  bool send(std::span<const std::byte> frame);
  // Over UDP, hold the frames sent from now on (up to kMaxBatch at a
  // time) and send them with one sendmmsg() at release(): the frames of
  // one engine round leave together.  A TAP takes one frame a write.
  void hold() noexcept { held_ = udp_; }
  void release();
  static constexpr size_t kMaxBatch = 64;
  [[nodiscard]] bool open() const noexcept { return fd_.valid(); }
  [[nodiscard]] const std::string& describe() const noexcept { return what_; }

  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t tx_dropped = 0;
  uint64_t rx_foreign = 0;  // UDP datagrams not from the remote end

 private:
  void on_readable();
  void send_held();
  [[nodiscard]] bool from_remote(const sockaddr_storage& from, socklen_t len) const;

  EventLoop& loop_;
  RxHandler rx_;
  UniqueFd fd_;
  bool udp_ = false;
  sockaddr_storage remote_{};
  socklen_t remote_len_ = 0;
  std::string what_;
  std::vector<std::byte> buf_;
  bool held_ = false;
  // Held frames: the first held_n_ of batch_, whose buffers are kept.
  std::vector<std::vector<std::byte>> batch_;
  size_t held_n_ = 0;
};

}  // namespace vrnicd
