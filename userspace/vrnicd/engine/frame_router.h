// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Where RoCEv2 frames go.  Frames QPs build leave through the wire hook,
// sealed with their ICRC, or loop back unsealed when they are for one of
// the port's own GIDs; a multicast frame does both (sealed) when local QPs
// are members of its group.  Frames from
// the wire and from the loopback queue are decoded once and delivered to
// their QP, or to every member of their multicast group.  The router also
// keeps a pool of frame buffers, so the data path allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "roce/packet.h"

namespace vrnicd {

class Counters;
class ObjectTable;
class Port;

class FrameRouter {
 public:
  using Wire = std::function<void(std::span<const std::byte>)>;

  FrameRouter(const ObjectTable& objects, const Port& port, Counters& counters);

  // Device reset: the loopback queue is dropped.
  void reset();
  void set_wire(Wire tx) { wire_ = std::move(tx); }

  // A buffer for a new frame (its contents are to be replaced).
  std::vector<std::byte> take_buffer();
  // A buffer that was not sent, back to the pool.
  void recycle(std::vector<std::byte>&& frame);
  // Whether a frame to dgid can go now: frames that loop back wait in a
  // bounded queue, and senders wait for room in it (backpressure).
  [[nodiscard]] bool has_room(const roce::Gid& dgid) const;
  // Send frame, which build_frame() built from pkt at layout, to
  // pkt.path.dgid (has_room() said yes).  The router seals it (its ICRC) if
  // it leaves the device.  A frame that only loops back is never seen
  // outside the device: it goes unsealed, as a NIC's internal loopback
  // carries no ICRC, and is delivered without being parsed again.
  void send(std::vector<std::byte>&& frame, const roce::FrameLayout& layout,
            const roce::Packet& pkt);

  // A frame from the wire.  false if it is not RoCEv2 (for the NIC).
  bool receive(std::span<const std::byte> frame);
  // Deliver up to budget looped-back frames; true if there were any.
  bool poll_loopback(int budget);
  [[nodiscard]] bool has_loopback() const { return looped_ != 0; }
  [[nodiscard]] size_t loopback_depth() const { return looped_; }
  // Frames the loopback queue holds at most.
  static constexpr size_t kMaxLoopback = 1024;

 private:
  // A frame on the loopback queue, with the packet it was built from.
  struct Looped {
    std::vector<std::byte> frame;
    roce::Packet sent;  // its payload and l3 views are not used
    roce::FrameLayout layout;
  };

  [[nodiscard]] bool is_local(const roce::Gid& gid) const;
  // The loopback queue: a ring of slots that keep their place in memory,
  // so that a frame is delivered from its slot while the delivery queues
  // more (an ACK), and nothing is allocated per frame once the slots
  // exist.  It grows (twice the slots) only when full.
  Looped& loop_tail();
  void loop_push(std::vector<std::byte>&& frame, const roce::Packet& pkt,
                 const roce::FrameLayout& layout);
  // looped: the frame was sent by a QP of this device.
  void deliver(std::span<const std::byte> frame, roce::DecodeStatus st, const roce::Packet& pkt,
               bool looped);
  void deliver_multicast(const roce::Packet& pkt, size_t frame_size, bool looped);

  const ObjectTable& objects_;
  const Port& port_;
  Counters& counters_;
  Wire wire_;
  std::vector<std::unique_ptr<Looped>> ring_;
  size_t head_ = 0;    // the oldest looped frame's slot
  size_t looped_ = 0;  // frames in the ring
  std::vector<std::vector<std::byte>> pool_;
};

}  // namespace vrnicd
