// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/frame_router.h"

#include <algorithm>

#include "engine/counters.h"
#include "engine/object_table.h"
#include "engine/port.h"

namespace vrnicd {
namespace {

constexpr size_t kMaxFramePool = 256;

}  // namespace

FrameRouter::FrameRouter(const ObjectTable& objects, const Port& port, Counters& counters)
    : objects_(objects), port_(port), counters_(counters) {}

void FrameRouter::reset() {
  for (; looped_ > 0; --looped_) {
    recycle(std::move(ring_[head_]->frame));
    head_ = (head_ + 1) % ring_.size();
  }
  head_ = 0;
}

FrameRouter::Looped& FrameRouter::loop_tail() {
  if (looped_ == ring_.size()) {
    // Full (or never used): twice the slots, the queue's order kept.
    std::vector<std::unique_ptr<Looped>> bigger(std::max<size_t>(64, 2 * ring_.size()));
    for (size_t i = 0; i < ring_.size(); ++i) {
      bigger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    }
    ring_ = std::move(bigger);
    head_ = 0;
  }
  std::unique_ptr<Looped>& slot = ring_[(head_ + looped_) % ring_.size()];
  if (!slot) {
    slot = std::make_unique<Looped>();
  }
  return *slot;
}

void FrameRouter::loop_push(std::vector<std::byte>&& frame, const roce::Packet& pkt,
                            const roce::FrameLayout& layout) {
  Looped& l = loop_tail();
  l.frame = std::move(frame);
  l.sent = pkt;
  l.layout = layout;
  ++looped_;
}

std::vector<std::byte> FrameRouter::take_buffer() {
  if (pool_.empty()) {
    return {};
  }
  std::vector<std::byte> frame = std::move(pool_.back());
  pool_.pop_back();
  return frame;
}

void FrameRouter::recycle(std::vector<std::byte>&& frame) {
  if (pool_.size() < kMaxFramePool) {
    pool_.push_back(std::move(frame));
  }
}

bool FrameRouter::is_local(const roce::Gid& gid) const { return port_.is_local(gid); }

bool FrameRouter::has_room(const roce::Gid& dgid) const {
  if (looped_ + 1 < kMaxLoopback) {
    return true;  // room even for a multicast frame's two copies
  }
  const bool loops_back =
      is_local(dgid) || (roce::gid_is_multicast(dgid) && objects_.group(dgid) != nullptr);
  return !loops_back;
}

void FrameRouter::send(std::vector<std::byte>&& frame, const roce::FrameLayout& layout,
                       const roce::Packet& pkt) {
  const roce::Gid& dgid = pkt.path.dgid;
  if (is_local(dgid)) {
    loop_push(std::move(frame), pkt, layout);
    return;
  }
  roce::seal_frame(frame, layout);
  if (roce::gid_is_multicast(dgid) && objects_.group(dgid) != nullptr) {
    // Members on this port get a copy too.
    std::vector<std::byte> copy = take_buffer();
    copy.assign(frame.begin(), frame.end());
    loop_push(std::move(copy), pkt, layout);
  }
  if (port_.state() != VRNIC_PORT_ACTIVE) {
    // The link is down: the frame is lost, as on a pulled cable.
  } else if (wire_) {
    wire_(frame);
  } else {
    counters_.add(VRNIC_STAT_RX_DROPPED);
  }
  recycle(std::move(frame));
}

bool FrameRouter::receive(std::span<const std::byte> frame) {
  // Decoded once: the ICRC check is the costly part.
  roce::Packet pkt;
  const roce::DecodeStatus st = roce::decode_frame(frame, &pkt);
  if (st == roce::DecodeStatus::kNotRoce) {
    return false;
  }
  deliver(frame, st, pkt, false);
  return true;
}

bool FrameRouter::poll_loopback(int budget) {
  bool progress = false;
  for (int i = 0; i < budget && looped_ > 0; ++i) {
    // Delivered from its slot, which stays taken meanwhile: what the
    // delivery sends back goes behind it, and a growing ring moves the
    // slot's pointer, not the slot.
    Looped* l = ring_[head_].get();
    deliver(l->frame, roce::DecodeStatus::kOk, roce::received_view(l->sent, l->frame, l->layout),
            true);
    recycle(std::move(l->frame));
    l->frame = {};
    head_ = (head_ + 1) % ring_.size();
    --looped_;
    progress = true;
  }
  return progress;
}

void FrameRouter::deliver(std::span<const std::byte> frame, roce::DecodeStatus st,
                          const roce::Packet& pkt, bool looped) {
  if (st != roce::DecodeStatus::kOk) {
    counters_.add(st == roce::DecodeStatus::kBadIcrc ? VRNIC_STAT_ICRC_ERRORS
                                                     : VRNIC_STAT_RX_DROPPED);
    return;
  }
  counters_.add(VRNIC_STAT_RX_PACKETS);
  counters_.add(VRNIC_STAT_RX_BYTES, frame.size());
  if (roce::gid_is_multicast(pkt.path.dgid)) {
    deliver_multicast(pkt, frame.size(), looped);
    return;
  }
  // A looped-back frame's GID is looked up again, as the receiver sees it:
  // an IPv4 frame carries only the last 4 bytes of the GID it was sent to.
  Qp* qp = is_local(pkt.path.dgid) ? objects_.find_qp(pkt.bth.dest_qp) : nullptr;
  if (qp == nullptr) {
    counters_.add(VRNIC_STAT_RX_DROPPED);
    return;
  }
  qp->receive(pkt, frame.size());
}

// A multicast datagram: a copy to every UD QP attached to the group.  Only
// QPN 0xFFFFFF addresses a group (IBA 10.5.2.1).  A member created with
// BLOCK_SELF_MCAST_LB gets no copy of what it sent itself; a datagram from
// the wire is never its own, whatever QPN the sender has.
void FrameRouter::deliver_multicast(const roce::Packet& pkt, size_t frame_size, bool looped) {
  const std::vector<uint32_t>* members = objects_.group(pkt.path.dgid);
  if (members == nullptr || pkt.bth.dest_qp != roce::kMulticastQpn ||
      roce::transport_of(pkt.bth.opcode) != roce::Transport::kUd) {
    counters_.add(VRNIC_STAT_RX_DROPPED);
    return;
  }
  for (const uint32_t qpn : *members) {
    Qp* qp = objects_.find_qp(qpn);
    if (qp == nullptr || (looped && qpn == pkt.deth.src_qp && qp->blocks_self_mcast_lb())) {
      continue;
    }
    qp->receive(pkt, frame_size);
  }
}

}  // namespace vrnicd
