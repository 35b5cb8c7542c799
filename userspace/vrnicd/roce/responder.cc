// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The responder of a QP (IBA 9.7.5): requests become memory accesses,
// receive completions and responses.  RC checks every PSN, answers in
// order and keeps its READ and atomic results to answer duplicates; UC
// drops what it cannot place; UD places datagrams behind a GRH.
#include <algorithm>
#include <cstring>

#include "roce/psn.h"
#include "roce/transport.h"
#include "roce/transport_impl.h"

namespace vrnicd::roce {

// Whether responses wait to go out: READ responses, atomic ACKs and the
// answers of ATOMIC WRITEs and FLUSHes still queued in the responder's
// resources.
bool QpTransport::responses_queued() const {
  return std::any_of(resources_.begin(), resources_.end(),
                     [](const Resource& r) { return r.pending; });
}

// An ACK or NAK owed: one at a time, a newer one replacing it, as a NIC
// keeps an ACK pending per QP and coalesces it (ACKs are cumulative).  A
// NAK stays owed over an older ACK (a repeat's).
void QpTransport::owe_ack(const Packet& p) {
  if (!owed_ack_ || !psn_before(p.bth.psn, owed_ack_->bth.psn)) {
    owed_ack_ = p;
  }
}

// An ACK or NAK.  Responses leave in PSN order (IBA 9.7.5.1): one behind
// queued READ responses or atomic ACKs is owed and goes out after them, or
// the requester would take it for the loss of those responses.  One the
// link has no room for is owed too, not dropped: dropping it would leave
// the requester to its timer, and a peer that saw its receive complete and
// tore the connection down would never answer the retry.
void QpTransport::send_response(const Packet& p) {
  if (responses_queued() || env_.transmit(p, Payload{}) == TxStatus::kBusy) {
    owe_ack(p);
    return;
  }
  if (owed_ack_ && !psn_before(p.bth.psn, owed_ack_->bth.psn)) {
    owed_ack_.reset();
  }
}

Packet QpTransport::ack_packet(uint8_t syndrome, uint32_t psn) const {
  Packet p = new_packet(kAcknowledge, psn);
  p.aeth_syndrome = syndrome;
  p.aeth_msn = msn_;
  return p;
}

void QpTransport::send_ack(uint8_t syndrome, uint32_t psn) {
  send_response(ack_packet(syndrome, psn));
}

void QpTransport::send_nak(NakCode code, uint32_t psn) {
  send_ack(aeth_syndrome(kAethNak, code), psn);
}

// A request the QP cannot carry out: RC says why, and the QP goes to error.
void QpTransport::responder_error(NakCode code, uint32_t psn, QpEvent event) {
  if (code == kNakRemoteAccessError) {
    env_.count_refused(Refusal::kKey);
  } else if (code == kNakInvalidRequest) {
    env_.count_refused(Refusal::kInvalid);
  }
  if (cfg_.type == QpType::kRc) {
    // The QP stops here: the NAK goes now, ahead of any queued response.
    (void)env_.transmit(ack_packet(aeth_syndrome(kAethNak, code), psn), Payload{});
  }
  env_.event(event);
  enter_error();
}

void QpTransport::complete_recv(WcStatus status, uint32_t byte_len, const Packet* last) {
  Completion c;
  c.wr_id = recv_.wr_id;
  c.wqe_idx = recv_.index;
  c.opcode = WcOpcode::kRecv;
  c.status = status;
  c.byte_len = byte_len;
  if (last != nullptr) {
    const OpcodeInfo& oi = opcode_info(last->bth.opcode);
    if ((oi.bits & kHasImm) != 0) {
      c.has_imm = true;
      c.imm = last->imm;
    }
    if ((oi.bits & kHasIeth) != 0) {
      c.has_inv = true;
      c.imm = last->ieth;
    }
    if (oi.kind == OpKind::kWrite) {
      c.opcode = WcOpcode::kRecvWriteImm;
    }
    c.solicited = last->bth.solicited;
  }
  env_.complete_recv(c);
}

// The receive WQE in hand completes in error.
void QpTransport::fail_recv(WcStatus status, uint8_t verr) {
  Completion c;
  c.wr_id = recv_.wr_id;
  c.wqe_idx = recv_.index;
  c.opcode = WcOpcode::kRecv;
  c.status = status;
  c.vendor_err = verr;
  env_.complete_recv(c);
}

// Take the receive WQE for a new message; without one, RC answers RNR.
bool QpTransport::take_recv(uint32_t psn) {
  bool bad = false;
  if (env_.take_recv_wqe(&recv_, &bad)) {
    return true;
  }
  if (bad) {
    fail_recv(WcStatus::kLocQpOpErr, VRNIC_VERR_RECV_WQE);
    responder_error(kNakRemoteOperationalError, psn, QpEvent::kFatal);
    return false;
  }
  if (cfg_.type == QpType::kRc) {
    send_ack(aeth_syndrome(kAethRnrNak, cfg_.min_rnr_timer), psn);
    env_.count_rnr_nak(true);
  }
  return false;
}

// UC and UD: the receive WQE for a new message.  Without one the message
// is dropped (and counted); a malformed one completes in error and takes
// the QP with it, as RC's does.
bool QpTransport::take_recv_unreliable() {
  bool bad = false;
  if (env_.take_recv_wqe(&recv_, &bad)) {
    return true;
  }
  if (bad) {
    fail_recv(WcStatus::kLocQpOpErr, VRNIC_VERR_RECV_WQE);
    env_.event(QpEvent::kFatal);
    enter_error();
  } else {
    env_.count_refused(Refusal::kNoBuffer);
  }
  return false;
}

// A READ or atomic carried out, kept to answer a repeat of it.  The oldest
// one goes when there are too many, unless it is a READ still being
// answered for the first time.
void QpTransport::remember(const Resource& r) {
  resources_.push_back(r);
  while (resources_.size() > std::max<size_t>(cfg_.max_dest_rd_atomic, 1) + 4) {
    const auto old = std::find_if(resources_.begin(), resources_.end(),
                                  [](const Resource& x) { return !x.pending || x.replay; });
    if (old == resources_.end()) {
      break;
    }
    resources_.erase(old);
  }
}

void QpTransport::respond_duplicate(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  switch (opcode_info(pkt.bth.opcode).kind) {
    case OpKind::kReadRequest:
      for (Resource& r : resources_) {
        const int32_t d = psn_diff(psn, r.first_psn);
        if (!r.atomic && !r.empty && d >= 0 && d < static_cast<int32_t>(r.npkts)) {
          // A READ still being answered stays one of the requester's
          // outstanding READs; it only starts again from the repeat.
          r.replay = r.replay || !r.pending;
          r.next_pkt = static_cast<uint32_t>(d);
          r.pending = true;
          return;
        }
      }
      return;
    case OpKind::kAtomic:
      for (Resource& r : resources_) {
        if (r.atomic && r.first_psn == psn) {
          // Answered again from what it returned, in order with the rest.
          r.replay = r.replay || !r.pending;
          r.pending = true;
          return;
        }
      }
      return;
    case OpKind::kAtomicWrite:
    case OpKind::kFlush:
      answer_empty(psn);  // it was carried out: only the answer again
      return;
    default:
      // Acknowledge everything received so far again.
      send_ack(kAethAckNoCredits, psn_add(epsn_, kPsnModulo - 1));
      return;
  }
}

// An atomic's ACK, with the value it found (again for a repeat).
bool QpTransport::send_atomic_ack(Resource& r, int* budget) {
  Packet p = new_packet(kAtomicAcknowledge, r.first_psn);
  p.aeth_syndrome = kAethAckNoCredits;
  p.aeth_msn = msn_;
  p.atomic_ack = r.original;
  if (env_.transmit(p, Payload{}) == TxStatus::kBusy) {
    return false;  // on a later round
  }
  r.pending = false;
  --*budget;
  return true;
}

// A resource's responses: an atomic's ACK, a READ's responses, or the
// READ response of no bytes that answers an ATOMIC WRITE or a FLUSH.
bool QpTransport::send_responses(Resource& r, int* budget) {
  if (r.atomic) {
    return send_atomic_ack(r, budget);
  }
  bool progress = false;
  while (r.pending && *budget > 0 && r.next_pkt < r.npkts) {
    const uint32_t k = r.next_pkt;
    const uint64_t off = static_cast<uint64_t>(k) * cfg_.mtu;
    uint8_t o = kReadResponseMiddle;
    if (r.npkts == 1) {
      o = kReadResponseOnly;
    } else if (k == 0) {
      o = kReadResponseFirst;
    } else if (k + 1 == r.npkts) {
      o = kReadResponseLast;
    }
    Packet p = new_packet(o, psn_add(r.first_psn, k));
    p.aeth_syndrome = kAethAckNoCredits;
    p.aeth_msn = msn_;
    Payload payload;  // none for an ATOMIC WRITE's or a FLUSH's answer
    if (!r.empty) {
      payload.source = Payload::Source::kRemote;
      payload.rkey = r.rkey;
      payload.va = r.va + off;
      payload.length = static_cast<size_t>(
          std::min<uint64_t>(cfg_.mtu, r.length - std::min<uint64_t>(off, r.length)));
    }
    const TxStatus st = env_.transmit(p, payload);
    if (st == TxStatus::kBusy) {
      return progress;  // the rest on a later round
    }
    if (st == TxStatus::kNoMemory) {
      r.pending = false;
      if (r.replay) {
        // A repeated READ whose region has gone since (a SEND_WITH_INV
        // after it, say): the requester completed that READ long ago, so
        // the replay stops here, refused and counted, and the QP goes on.
        env_.count_refused(Refusal::kKey);
        return true;
      }
      // The region went away while we read it.
      responder_error(kNakRemoteAccessError, psn_add(r.first_psn, k), QpEvent::kAccessErr);
      return true;
    }
    ++r.next_pkt;
    --*budget;
    progress = true;
  }
  if (r.next_pkt >= r.npkts) {
    r.pending = false;
  }
  return progress;
}

// ---------------------------------------------------------------------------
// RC

// The expected PSN goes on; anything else is answered here.  A gap is
// NAKed once, a duplicate is answered again.
bool QpTransport::in_sequence(const Packet& pkt) {
  const int32_t d = psn_diff(pkt.bth.psn, epsn_);
  if (d > 0) {
    if (!nak_sent_) {
      nak_sent_ = true;
      send_nak(kNakPsnSeqError, epsn_);
      env_.count_seq_nak(true);
    }
    return false;
  }
  if (d < 0) {
    env_.count_duplicate();
    respond_duplicate(pkt);
    return false;
  }
  return true;
}

// The opcode must continue the message in progress or start a new one, and
// only the last packet of a message may be shorter than the MTU.
bool QpTransport::continues_message(const OpcodeInfo& oi, size_t plen) const {
  const bool first = (oi.bits & kIsFirst) != 0;
  const bool last = (oi.bits & kIsLast) != 0;
  if ((recv_active_ && (oi.kind != OpKind::kSend || first)) ||
      (write_active_ && (oi.kind != OpKind::kWrite || first)) ||
      (!recv_active_ && !write_active_ && !first)) {
    return false;
  }
  return (oi.bits & kHasPayload) == 0 || (last ? plen <= cfg_.mtu : plen == cfg_.mtu);
}

void QpTransport::on_request(const Packet& pkt) {
  if (!accepts_requests() || !in_sequence(pkt)) {
    return;
  }
  const uint32_t psn = pkt.bth.psn;
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  if (!continues_message(oi, pkt.payload.size())) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  switch (oi.kind) {
    case OpKind::kSend:
      if (!on_send(pkt, oi)) {
        return;
      }
      break;
    case OpKind::kWrite:
      if (!on_write(pkt, oi)) {
        return;
      }
      break;
    case OpKind::kReadRequest:
      on_read_request(pkt);
      return;
    case OpKind::kAtomic:
      on_atomic(pkt);
      return;
    case OpKind::kAtomicWrite:
      on_atomic_write(pkt);
      return;
    case OpKind::kFlush:
      on_flush(pkt);
      return;
    default:
      responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
      return;
  }
  epsn_ = psn_add(psn, 1);
  nak_sent_ = false;
  if (pkt.bth.ack_req && state_ != QpState::kErr) {
    send_ack(kAethAckNoCredits, psn);
  }
}

// A SEND packet's payload into the receive WQE; the last one completes it.
// false: the QP went to error.
bool QpTransport::place_send(const Packet& pkt, const OpcodeInfo& oi) {
  const size_t plen = pkt.payload.size();
  const uint32_t psn = pkt.bth.psn;
  if (recv_offset_ + plen > recv_.length) {
    fail_recv(WcStatus::kLocLenErr, VRNIC_VERR_RECV_LENGTH);
    recv_active_ = false;
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return false;
  }
  const MemStatus m = plen == 0 ? MemStatus::kOk
                                : env_.scatter_recv(std::span(recv_.sge.data(), recv_.num_sge),
                                                    recv_offset_, pkt.payload);
  if (m != MemStatus::kOk) {
    fail_recv(WcStatus::kLocProtErr, local_memory_verr(m));
    recv_active_ = false;
    responder_error(kNakRemoteOperationalError, psn, QpEvent::kFatal);
    return false;
  }
  recv_offset_ += plen;
  if ((oi.bits & kHasIeth) != 0 && !env_.invalidate_remote(pkt.ieth)) {
    // IBA class J: the receive completes in error, and so does the QP.
    fail_recv(WcStatus::kRemInvReqErr, VRNIC_VERR_INV_RKEY);
    recv_active_ = false;
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return false;
  }
  if ((oi.bits & kIsLast) != 0) {
    recv_active_ = false;
    ++msn_;
    complete_recv(WcStatus::kSuccess, static_cast<uint32_t>(recv_offset_), &pkt);
  }
  return true;
}

// false: not accepted (RNR, or the QP went to error).
bool QpTransport::on_send(const Packet& pkt, const OpcodeInfo& oi) {
  if ((oi.bits & kIsFirst) != 0) {
    if (!take_recv(pkt.bth.psn)) {
      return false;
    }
    recv_active_ = true;
    recv_offset_ = 0;
  }
  return place_send(pkt, oi);
}

// A WRITE's first packet names the region; false if it may not be written.
bool QpTransport::start_write(const Reth& reth) {
  if ((cfg_.access & kAccessRemoteWrite) == 0 ||
      env_.check_remote(reth.rkey, reth.va, reth.length, kAccessRemoteWrite) != MemStatus::kOk) {
    return false;
  }
  write_rkey_ = reth.rkey;
  write_va_ = reth.va;
  write_remaining_ = reth.length;
  write_total_ = reth.length;
  return true;
}

// Whether a WRITE packet's payload fits what its RETH announced.
bool QpTransport::write_fits(size_t plen, bool last) const {
  return plen <= write_remaining_ && (!last || plen == write_remaining_);
}

// false: not accepted (RNR, or the QP went to error).
bool QpTransport::on_write(const Packet& pkt, const OpcodeInfo& oi) {
  const uint32_t psn = pkt.bth.psn;
  const bool first = (oi.bits & kIsFirst) != 0;
  const bool last = (oi.bits & kIsLast) != 0;
  const bool imm = (oi.bits & kHasImm) != 0;
  if (first && !start_write(pkt.reth)) {
    responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
    return false;
  }
  if (!write_fits(pkt.payload.size(), last)) {
    write_active_ = false;
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return false;
  }
  if (imm && !take_recv(psn)) {
    write_active_ = !first || !last;
    return false;
  }
  if (!pkt.payload.empty() &&
      env_.remote_write(write_rkey_, write_va_, pkt.payload) != MemStatus::kOk) {
    write_active_ = false;
    if (imm) {
      fail_recv(WcStatus::kRemAccessErr, VRNIC_VERR_RECV_RKEY);
    }
    responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
    return false;
  }
  write_va_ += pkt.payload.size();
  write_remaining_ -= pkt.payload.size();
  write_active_ = !last;
  if (last) {
    ++msn_;
    if (imm) {
      complete_recv(WcStatus::kSuccess, write_total_, &pkt);
    }
  }
  return true;
}

void QpTransport::on_read_request(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  if ((cfg_.access & kAccessRemoteRead) == 0 ||
      env_.check_remote(pkt.reth.rkey, pkt.reth.va, pkt.reth.length, kAccessRemoteRead) !=
          MemStatus::kOk) {
    responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
    return;
  }
  // The requester's outstanding READs; repeats of answered ones (replays)
  // are not among them.
  const auto busy =
      static_cast<size_t>(std::count_if(resources_.begin(), resources_.end(),
                                        [](const Resource& r) { return r.pending && !r.replay; }));
  if (busy >= std::max<uint8_t>(cfg_.max_dest_rd_atomic, 1)) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  Resource r;
  r.first_psn = psn;
  r.npkts = packets_for(pkt.reth.length, cfg_.mtu);
  r.va = pkt.reth.va;
  r.rkey = pkt.reth.rkey;
  r.length = pkt.reth.length;
  r.pending = true;  // the responses go out in send_step()
  remember(r);
  ++msn_;
  epsn_ = psn_add(psn, r.npkts);
  nak_sent_ = false;
}

void QpTransport::on_atomic(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  const bool cas = operation_of(pkt.bth.opcode) == kCompareSwap;
  if ((pkt.atomic.va & 7) != 0) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  uint64_t orig = 0;
  if ((cfg_.access & kAccessRemoteAtomic) == 0 ||
      env_.remote_atomic(pkt.atomic.rkey, pkt.atomic.va, cas,
                         cas ? pkt.atomic.compare : pkt.atomic.swap_add, pkt.atomic.swap_add,
                         &orig) != MemStatus::kOk) {
    responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
    return;
  }
  Resource r;
  r.atomic = true;
  r.first_psn = psn;
  r.original = orig;
  r.pending = true;  // its ACK goes out in send_step(), behind earlier responses
  remember(r);
  ++msn_;
  epsn_ = psn_add(psn, 1);
  nak_sent_ = false;
}

// ATOMIC WRITE (IBA 1.5): 8 bytes stored in one access at an aligned
// address that the QP and the key open to remote writes.  Another length
// or an unaligned address is an invalid request, as in rxe.  Like FLUSH,
// it is answered with an RDMA READ response of no bytes, as rxe answers
// it, in order behind the READ responses before it; a repeat is answered
// again without being carried out again.
void QpTransport::on_atomic_write(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  if (pkt.reth.length != sizeof(uint64_t) || pkt.payload.size() != sizeof(uint64_t) ||
      (pkt.reth.va & 7) != 0) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  const MemStatus m = (cfg_.access & kAccessRemoteWrite) == 0
                          ? MemStatus::kNoAccess
                          : env_.remote_atomic_write(pkt.reth.rkey, pkt.reth.va,
                                                     pkt.payload.first<sizeof(uint64_t)>());
  if (m == MemStatus::kMisaligned) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  if (m != MemStatus::kOk) {
    responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
    return;
  }
  executed_empty(psn);
}

// FLUSH (IBA 1.5): what earlier requests placed in the range (or in the
// whole region or window of the key, at selectivity level MR) becomes
// visible to every reader, or persistent.  The QP and the key must grant
// the placement type's flush rights, as in rxe; a FLUSH without a type, of
// an unknown one or level, or through a key without the rights is refused
// and takes the QP to error.  It is answered as an ATOMIC WRITE is.
void QpTransport::on_flush(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  const uint32_t feth = pkt.feth & kFethMask;  // the rest is reserved
  const uint32_t type = feth & VRNIC_FLUSH_TYPE_MASK;
  const uint32_t level = (feth & VRNIC_FLUSH_LEVEL_MASK) >> 4;
  const uint32_t need = flush_access(type);
  if (!flush_valid(feth) || (cfg_.access & need) != need) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  if (env_.remote_flush(pkt.reth.rkey, pkt.reth.va, pkt.reth.length, level == VRNIC_FLUSH_LEVEL_MR,
                        type) != MemStatus::kOk) {
    responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
    return;
  }
  executed_empty(psn);
}

// An ATOMIC WRITE or FLUSH at psn carried out: the sequence moves on and
// its answer is queued.
void QpTransport::executed_empty(uint32_t psn) {
  ++msn_;
  epsn_ = psn_add(psn, 1);
  nak_sent_ = false;
  answer_empty(psn);
}

// The READ response of no bytes that answers the ATOMIC WRITE or FLUSH at
// psn, queued with the other responses (a repeat's too).
void QpTransport::answer_empty(uint32_t psn) {
  for (Resource& r : resources_) {
    if (r.empty && r.first_psn == psn) {
      r.replay = true;
      r.next_pkt = 0;
      r.pending = true;
      return;
    }
  }
  Resource r;
  r.empty = true;
  r.first_psn = psn;
  r.pending = true;
  remember(r);
}

// ---------------------------------------------------------------------------
// UC: no acknowledgements and no retransmission.  A message that loses a
// packet is dropped; the receive WQE it had taken serves the next one.

void QpTransport::on_request_uc(const Packet& pkt) {
  if (!accepts_requests()) {
    return;
  }
  const uint32_t psn = pkt.bth.psn;
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  const bool first = (oi.bits & kIsFirst) != 0;
  const bool last = (oi.bits & kIsLast) != 0;
  const size_t plen = pkt.payload.size();
  if (psn_before(psn, epsn_)) {
    env_.count_duplicate();
    return;
  }
  if (psn != epsn_ || first) {
    uc_msg_ = UcMsg::kNone;  // abandon what was in progress
  }
  epsn_ = psn_add(psn, 1);
  const UcMsg kind = oi.kind == OpKind::kSend ? UcMsg::kSend : UcMsg::kWrite;
  if ((!first && uc_msg_ != kind) ||
      ((oi.bits & kHasPayload) != 0 && (last ? plen > cfg_.mtu : plen != cfg_.mtu))) {
    uc_msg_ = UcMsg::kNone;
    env_.count_refused(Refusal::kInvalid);
    return;
  }
  if (kind == UcMsg::kSend) {
    uc_send(pkt, oi);
  } else {
    uc_write(pkt, oi);
  }
}

void QpTransport::uc_send(const Packet& pkt, const OpcodeInfo& oi) {
  if ((oi.bits & kIsFirst) != 0) {
    if (!recv_active_ && !take_recv_unreliable()) {
      return;  // no receive WQE: the message is dropped
    }
    recv_active_ = true;
    recv_offset_ = 0;
    uc_msg_ = UcMsg::kSend;
  }
  if (place_send(pkt, oi) && (oi.bits & kIsLast) != 0) {
    uc_msg_ = UcMsg::kNone;
  }
}

void QpTransport::uc_key_violation() {
  env_.count_refused(Refusal::kKey);
  if (++uc_key_violations_ >= kUcKeyViolationLimit) {
    env_.event(QpEvent::kAccessErr);
    enter_error();
  }
}

void QpTransport::uc_write(const Packet& pkt, const OpcodeInfo& oi) {
  const bool last = (oi.bits & kIsLast) != 0;
  const bool imm = (oi.bits & kHasImm) != 0;
  if ((oi.bits & kIsFirst) != 0) {
    if (!start_write(pkt.reth)) {
      uc_key_violation();
      return;  // UC drops what it cannot place
    }
    uc_msg_ = UcMsg::kWrite;
  }
  if (!write_fits(pkt.payload.size(), last)) {
    uc_msg_ = UcMsg::kNone;
    env_.count_refused(Refusal::kInvalid);
    return;
  }
  if (imm && !recv_active_) {
    if (!take_recv_unreliable()) {
      uc_msg_ = UcMsg::kNone;
      return;
    }
    recv_active_ = true;
  }
  if (!pkt.payload.empty() &&
      env_.remote_write(write_rkey_, write_va_, pkt.payload) != MemStatus::kOk) {
    uc_msg_ = UcMsg::kNone;
    uc_key_violation();
    return;
  }
  write_va_ += pkt.payload.size();
  write_remaining_ -= pkt.payload.size();
  if (last) {
    uc_msg_ = UcMsg::kNone;
    if (imm) {
      recv_active_ = false;
      complete_recv(WcStatus::kSuccess, write_total_, &pkt);
    }
  }
}

// ---------------------------------------------------------------------------
// UD

void QpTransport::on_request_ud(const Packet& pkt) {
  if (!accepts_requests()) {
    return;
  }
  if (pkt.deth.qkey != (cfg_.gsi ? kGsiQkey : cfg_.qkey)) {
    env_.count_refused(Refusal::kQkey);
    return;  // Q_Key violation: silently dropped
  }
  if (!take_recv_unreliable()) {
    return;  // no receive WQE: UD drops the datagram
  }
  const uint64_t total = kGrhSize + pkt.payload.size();
  if (total > recv_.length) {
    fail_recv(WcStatus::kLocLenErr, VRNIC_VERR_RECV_LENGTH);
    return;
  }
  // The GRH: for IPv4 the IP header in its last 20 bytes.
  std::array<std::byte, kGrhSize> grh{};
  if (pkt.l3.size() == kIpv4HdrSize) {
    std::memcpy(grh.data() + (kGrhSize - kIpv4HdrSize), pkt.l3.data(), kIpv4HdrSize);
  } else if (pkt.l3.size() == kIpv6HdrSize) {
    std::memcpy(grh.data(), pkt.l3.data(), kIpv6HdrSize);
  }
  const std::span<const Sge> sges(recv_.sge.data(), recv_.num_sge);
  MemStatus m = env_.scatter_recv(sges, 0, grh);
  if (m == MemStatus::kOk && !pkt.payload.empty()) {
    m = env_.scatter_recv(sges, kGrhSize, pkt.payload);
  }
  if (m != MemStatus::kOk) {
    fail_recv(WcStatus::kLocProtErr, local_memory_verr(m));
    return;
  }
  Completion c;
  c.wr_id = recv_.wr_id;
  c.wqe_idx = recv_.index;
  c.opcode = WcOpcode::kRecv;
  c.byte_len = static_cast<uint32_t>(total);
  c.src_qp = pkt.deth.src_qp;
  c.grh = true;
  c.ipv4 = pkt.path.ipv4;
  c.roce_v1 = pkt.path.roce_v1;
  c.solicited = pkt.bth.solicited;
  if ((opcode_info(pkt.bth.opcode).bits & kHasImm) != 0) {
    c.has_imm = true;
    c.imm = pkt.imm;
  }
  env_.complete_recv(c);
}

}  // namespace vrnicd::roce
