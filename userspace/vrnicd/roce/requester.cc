// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The requester and completer of a QP (IBA 9.7): send WQEs become packets,
// responses (ACK, NAK, READ response, atomic ACK) become completions, and
// the ACK and RNR timers drive retransmission, go-back-N from the oldest
// packet not yet acknowledged.
#include <algorithm>
#include <cstring>

#include "roce/psn.h"
#include "roce/transport.h"
#include "roce/transport_impl.h"

namespace vrnicd::roce {
namespace {

// Outstanding requester state is bounded well below the PSN window.
constexpr size_t kMaxOutstandingOps = 4096;
constexpr int32_t kMaxPsnWindow = 1 << 20;
// Ask for an ACK at least this often within a long message: the
// responder acknowledges once per this many packets, not each one.
constexpr uint32_t kAckReqInterval = 32;
// Go-back-N window: packets sent beyond the oldest unacknowledged one.  A
// loss costs up to this many retransmitted packets, so it is kept small
// enough for lossy links and large enough (4 ACK intervals) to keep the
// link busy while ACKs are on their way.
constexpr int32_t kTxWindow = 4 * kAckReqInterval;
// WQEs flushed at once when the QP enters the error state; send_step()
// flushes the rest, its budget at a time.
constexpr int kFlushBudget = 64;
// Packets send_owed_responses() may send: 4 MiB of READ responses at the
// largest MTU.
constexpr int kOwedResponsesBudget = 1024;

WcOpcode wc_opcode_for(WrOpcode op) {
  switch (op) {
    case WrOpcode::kWrite:
    case WrOpcode::kWriteImm:
      return WcOpcode::kWrite;
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
    case WrOpcode::kSendInv:
      return WcOpcode::kSend;
    case WrOpcode::kRead:
      return WcOpcode::kRead;
    case WrOpcode::kCompareSwap:
      return WcOpcode::kCompareSwap;
    case WrOpcode::kFetchAdd:
      return WcOpcode::kFetchAdd;
    case WrOpcode::kAtomicWrite:
      return WcOpcode::kAtomicWrite;
    case WrOpcode::kFlush:
      return WcOpcode::kFlush;
    case WrOpcode::kLocalInv:
      return WcOpcode::kLocalInv;
    case WrOpcode::kBindMw:
      return WcOpcode::kBindMw;
    case WrOpcode::kRegMr:
      return WcOpcode::kRegMr;
  }
  return WcOpcode::kSend;
}

// The opcodes of the packets of a SEND or a WRITE message.
struct MessageOpcodes {
  uint8_t first, middle, last, last_imm, only, only_imm;
};
constexpr MessageOpcodes kSendOpcodes{kSendFirst,   kSendMiddle, kSendLast,
                                      kSendLastImm, kSendOnly,   kSendOnlyImm};
constexpr MessageOpcodes kWriteOpcodes{kWriteFirst,   kWriteMiddle, kWriteLast,
                                       kWriteLastImm, kWriteOnly,   kWriteOnlyImm};
// SEND_WITH_INV: the IETH rides on the last packet.
constexpr MessageOpcodes kSendInvOpcodes{kSendFirst,   kSendMiddle,  kSendLastInv,
                                         kSendLastInv, kSendOnlyInv, kSendOnlyInv};

uint8_t message_opcode(const MessageOpcodes& o, bool first, bool last, bool imm) {
  if (first && last) {
    return imm ? o.only_imm : o.only;
  }
  if (first) {
    return o.first;
  }
  if (last) {
    return imm ? o.last_imm : o.last;
  }
  return o.middle;
}

}  // namespace

// READs, atomics and ATOMIC WRITEs count until they complete, in order:
// the responder keeps what it needs to answer a repeat of any of them.
size_t QpTransport::outstanding_rd_atomic() const {
  return static_cast<size_t>(std::count_if(ops_.begin(), ops_.end(),
                                           [](const SendOp& op) { return op.takes_resource(); }));
}

// Responses come in order: one for a later PSN while the oldest READ or
// atomic still waits for its own means that one was lost.  Ask again, once
// per gap.
bool QpTransport::check_implied_nak(uint32_t psn) {
  for (const SendOp& op : ops_) {
    if (op.done) {
      continue;
    }
    if (!op.is_read() && !op.is_atomic()) {
      return false;
    }
    if (!psn_after(psn, op.last_psn())) {
      return false;  // a response of this very operation
    }
    rerequest_from(psn_add(op.first_psn, op.done_pkts));
    return true;
  }
  return false;
}

// Go back to expected for a gap in the responses, once per gap.
void QpTransport::rerequest_from(uint32_t expected) {
  if (!read_rerequested_ || rerequest_psn_ != expected) {
    read_rerequested_ = true;
    rerequest_psn_ = expected;
    rewind_to(expected);
  }
}

// Whether the QP's type allows the WQE's operation.
bool QpTransport::opcode_allowed(const SendWqe& w) const {
  switch (w.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
    case WrOpcode::kLocalInv:
    case WrOpcode::kRegMr:
      return true;
    case WrOpcode::kSendInv:
      return cfg_.type == QpType::kRc;  // IETH exists in RC only
    case WrOpcode::kBindMw:             // windows serve RDMA
    case WrOpcode::kWrite:
    case WrOpcode::kWriteImm:
      return cfg_.type != QpType::kUd;
    case WrOpcode::kRead:
    case WrOpcode::kCompareSwap:
    case WrOpcode::kFetchAdd:
    case WrOpcode::kAtomicWrite:
    case WrOpcode::kFlush:
      return cfg_.type == QpType::kRc && !w.is_inline;
  }
  return false;
}

// What the IB spec forbids the WQE on this QP, as its completion status
// and vendor error.
bool QpTransport::validate_wqe(SendOp& op, WcStatus* status, uint8_t* verr) {
  const SendWqe& w = op.wqe;
  if (!opcode_allowed(w)) {
    *status = WcStatus::kLocQpOpErr;
    *verr = VRNIC_VERR_WQE_QP_TYPE;
    return false;
  }
  if (w.length > (1ULL << 31) || (cfg_.type == QpType::kUd && w.length > cfg_.mtu)) {
    *status = WcStatus::kLocLenErr;
    *verr = VRNIC_VERR_WQE_LENGTH;
    return false;
  }
  if (op.is_atomic() && w.length < sizeof(uint64_t)) {
    *status = WcStatus::kLocLenErr;
    *verr = VRNIC_VERR_WQE_ATOMIC_LENGTH;
    return false;
  }
  if (op.is_flush() && !flush_valid(w.imm)) {
    *status = WcStatus::kLocQpOpErr;
    *verr = VRNIC_VERR_WQE_FLUSH;
    return false;
  }
  if (!w.is_inline) {
    const uint32_t need = (op.is_read() || op.is_atomic()) ? kAccessLocalWrite : 0;
    const MemStatus m = env_.check_local(std::span(w.sge.data(), w.num_sge), need);
    if (m != MemStatus::kOk) {
      *status = WcStatus::kLocProtErr;
      *verr = local_memory_verr(m);
      return false;
    }
  }
  return true;
}

// RC keeps its outstanding work well within the PSN window.
bool QpTransport::window_has_room() const {
  if (cfg_.type != QpType::kRc || ops_.empty()) {
    return true;
  }
  const SendOp& oldest = ops_.front();
  return ops_.size() < kMaxOutstandingOps &&
         psn_diff(next_psn_, psn_add(oldest.first_psn, oldest.done_pkts)) <= kMaxPsnWindow;
}

// RC starts a READ or atomic only within its depth, and a fenced WQE only
// once the READs and atomics before it are done.
bool QpTransport::rd_atomic_allows(const SendOp& op) const {
  if (cfg_.type != QpType::kRc) {
    return true;
  }
  if (op.wqe.fence && outstanding_rd_atomic() > 0) {
    return false;
  }
  return !op.takes_resource() || outstanding_rd_atomic() < std::max<uint8_t>(cfg_.max_rd_atomic, 1);
}

// A WQE that cannot run completes with an error, after the older work.
bool QpTransport::fail_wqe(SendOp op, WcStatus status, uint8_t verr) {
  if (!ops_.empty()) {
    return false;
  }
  op.wqe.index = sq_next_;
  op.first_psn = next_psn_;
  ++sq_next_;
  ops_.push_back(std::move(op));
  tx_op_ = ops_.size();
  fail_op(ops_.back(), status, verr);
  return true;
}

bool QpTransport::start_next_wqe() {
  if (sq_next_ == env_.send_producer() || !window_has_room()) {
    return false;
  }
  SendOp op;
  bool bad = false;
  if (!env_.read_send_wqe(sq_next_, &op.wqe, &bad)) {
    // Posted but unusable: an error completion.
    const uint8_t verr = op.wqe.vendor_err;
    return bad && fail_wqe(std::move(op), WcStatus::kLocQpOpErr, verr);
  }
  op.wqe.index = sq_next_;
  if (!rd_atomic_allows(op)) {
    return false;
  }
  WcStatus st = WcStatus::kSuccess;
  uint8_t verr = 0;
  if (!validate_wqe(op, &st, &verr)) {
    return fail_wqe(std::move(op), st, verr);
  }
  if (op.wqe.is_local()) {
    return start_local(std::move(op));
  }
  op.first_psn = next_psn_;
  op.npkts = op.is_atomic() || op.answered_empty() || cfg_.type == QpType::kUd
                 ? 1
                 : packets_for(op.wqe.length, cfg_.mtu);
  if (op.is_atomic_write()) {
    // The bytes as they were in the poster's memory (compare_add holds
    // them as a little-endian number).
    const uint64_t le = vrnic::to_le64(op.wqe.compare_add);
    std::memcpy(op.atomic_write.data(), &le, sizeof(le));
  }
  next_psn_ = psn_add(next_psn_, op.npkts);
  ++sq_next_;
  ops_.push_back(std::move(op));
  env_.count_wqe();
  return true;
}

// REG_MR, LOCAL_INV and BIND_MW take effect when the send queue reaches them, so
// every WQE after them sees it; they complete in order with the others.  A
// failing one changes nothing, and completes in error once the work before
// it has completed.
bool QpTransport::start_local(SendOp op) {
  uint8_t verr = 0;
  const WcStatus st = env_.local_op(op.wqe, &verr);
  if (st != WcStatus::kSuccess) {
    return fail_wqe(std::move(op), st, verr);
  }
  op.first_psn = next_psn_;
  op.npkts = 0;
  op.sent = true;
  op.done = true;
  ++sq_next_;
  if (tx_op_ == ops_.size()) {
    ++tx_op_;  // nothing to transmit before it
  }
  ops_.push_back(std::move(op));
  env_.count_wqe();
  complete_ops();
  return true;
}

Packet QpTransport::new_packet(uint8_t op, uint32_t psn) const {
  Packet p;
  p.path = cfg_.path;
  p.bth.opcode = opcode(transport_for(cfg_.type), op);
  p.bth.pkey = cfg_.pkey;
  p.bth.dest_qp = cfg_.dest_qpn;
  p.bth.psn = psn & kPsnMask;
  return p;
}

// The one packet of an atomic or an ATOMIC WRITE (whose 8 bytes are its
// payload).
Packet QpTransport::atomic_packet(const SendOp& op, uint32_t psn, Payload* payload) const {
  const SendWqe& w = op.wqe;
  if (w.opcode == WrOpcode::kAtomicWrite) {
    Packet p = new_packet(kAtomicWrite, psn);
    p.reth = {w.remote_addr, w.rkey, static_cast<uint32_t>(op.atomic_write.size())};
    payload->source = Payload::Source::kBytes;
    payload->bytes = op.atomic_write;
    payload->length = op.atomic_write.size();
    return p;
  }
  const bool cas = w.opcode == WrOpcode::kCompareSwap;
  Packet p = new_packet(cas ? kCompareSwap : kFetchAdd, psn);
  p.atomic = {w.remote_addr, w.rkey, cas ? w.swap : w.compare_add, w.compare_add};
  return p;
}

// Packet k of op, without its payload; *payload says where that comes from.
// Whether packet k of a message asks for an ACK: the last, every
// kAckReqInterval-th, and on a paced QP every one (its next packet may wait
// longer than the ACK timeout, which must not run out on a message half
// sent).
bool QpTransport::wants_ack(uint32_t k, bool last) const {
  return cfg_.type == QpType::kRc && (last || (k + 1) % kAckReqInterval == 0 || pacer_.active());
}

Packet QpTransport::request_packet(const SendOp& op, uint32_t k, Payload* payload) const {
  const SendWqe& w = op.wqe;
  const uint32_t psn = psn_add(op.first_psn, k);
  const bool first = k == 0;
  const bool last = k + 1 == op.npkts;
  const bool imm = w.opcode == WrOpcode::kSendImm || w.opcode == WrOpcode::kWriteImm;
  const uint64_t off = static_cast<uint64_t>(k) * cfg_.mtu;
  const auto remote = static_cast<uint32_t>(w.length - std::min(off, w.length));
  Packet p;
  switch (w.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
      p = new_packet(message_opcode(kSendOpcodes, first, last, imm), psn);
      *payload = wqe_payload(w, off, std::min<uint64_t>(cfg_.mtu, w.length - off));
      break;
    case WrOpcode::kSendInv:
      p = new_packet(message_opcode(kSendInvOpcodes, first, last, false), psn);
      p.ieth = w.imm;
      *payload = wqe_payload(w, off, std::min<uint64_t>(cfg_.mtu, w.length - off));
      break;
    case WrOpcode::kWrite:
    case WrOpcode::kWriteImm:
      p = new_packet(message_opcode(kWriteOpcodes, first, last, imm), psn);
      if (first) {
        p.reth = {w.remote_addr, w.rkey, static_cast<uint32_t>(w.length)};
      }
      *payload = wqe_payload(w, off, std::min<uint64_t>(cfg_.mtu, w.length - off));
      break;
    case WrOpcode::kRead:
      // One request asks for everything from packet k on.
      p = new_packet(kReadRequest, psn);
      p.reth = {w.remote_addr + off, w.rkey, remote};
      break;
    case WrOpcode::kCompareSwap:
    case WrOpcode::kFetchAdd:
    case WrOpcode::kAtomicWrite:
      p = atomic_packet(op, psn, payload);
      break;
    case WrOpcode::kFlush:
      p = new_packet(kFlush, psn);
      p.feth = w.imm;
      p.reth = {w.remote_addr, w.rkey, static_cast<uint32_t>(w.length)};
      break;
    case WrOpcode::kLocalInv:
    case WrOpcode::kRegMr:
    case WrOpcode::kBindMw:
      break;  // no packets (start_local)
  }
  p.bth.ack_req = wants_ack(k, last);
  p.bth.solicited = last && w.solicited;
  if (imm && last) {
    p.imm = w.imm;
  }
  if (cfg_.type == QpType::kUd) {
    address_datagram(w, &p);
  }
  return p;
}

// Where the bytes [off, off + len) of a WQE's message are.
Payload QpTransport::wqe_payload(const SendWqe& w, uint64_t off, uint64_t len) {
  Payload pl;
  pl.source = w.is_inline ? Payload::Source::kBytes : Payload::Source::kLocal;
  pl.bytes = w.inline_data;
  pl.sges = std::span(w.sge.data(), w.num_sge);
  pl.offset = off;
  pl.length = static_cast<size_t>(len);
  return pl;
}

// UD: the WQE's own address, destination QP and Q_Key.
void QpTransport::address_datagram(const SendWqe& w, Packet* p) const {
  p->path = w.ud_path;
  p->bth.dest_qp = w.remote_qpn;
  p->bth.solicited = w.solicited;
  // A Q_Key with the high bit set means "use the QP's own".
  p->deth.qkey = (w.remote_qkey & 0x80000000U) != 0 ? cfg_.qkey : w.remote_qkey;
  if (cfg_.gsi) {
    p->deth.qkey = kGsiQkey;
  }
  p->deth.src_qp = cfg_.qpn;
}

TxStatus QpTransport::transmit_packet(SendOp& op) {
  const uint32_t k = op.next_pkt;
  Payload payload;
  const Packet p = request_packet(op, k, &payload);
  const TxStatus st = env_.transmit(p, payload);
  if (st != TxStatus::kSent) {
    return st;
  }
  if (pacer_.active()) {
    pacer_.sent(frame_size(p, payload.length));  // unpaced QPs skip the sum
  }
  if (op.sent || op.next_pkt < op.done_pkts) {
    env_.count_retransmit();
  }
  op.next_pkt = op.is_read() ? op.npkts : k + 1;
  if (cfg_.type == QpType::kRc) {
    arm_retry_timer();
  }
  return TxStatus::kSent;
}

bool QpTransport::window_open(const SendOp& op) const {
  if (cfg_.type != QpType::kRc) {
    return true;
  }
  return psn_diff(psn_add(op.first_psn, op.next_pkt), psn_add(acked_psn(), 1)) < kTxWindow;
}

// Responses owed to the other side go first: the responder works from
// RTR on, whatever the send queue is doing.  They leave in PSN order: the
// queued READ responses, atomic ACKs and ATOMIC WRITE and FLUSH answers, oldest
// first, with the owed ACK or NAK among them where its PSN falls.
bool QpTransport::respond_step(int* budget) {
  if (!accepts_requests()) {
    return false;
  }
  bool progress = false;
  for (Resource& r : resources_) {
    if (!r.pending) {
      continue;
    }
    // An owed ACK of an earlier PSN goes before this one's responses.
    if (owed_ack_ && psn_before(owed_ack_->bth.psn, r.first_psn)) {
      if (!send_owed_ack(budget)) {
        return progress;
      }
      progress = true;
    }
    if (*budget <= 0) {
      return progress;
    }
    progress |= send_responses(r, budget);
    if (state_ == QpState::kErr) {
      return true;
    }
    if (r.pending) {
      return progress;  // the rest, in order, on a later round
    }
  }
  if (owed_ack_ && send_owed_ack(budget)) {
    progress = true;
  }
  return progress;
}

// The responses the QP owes for requests it carried out (queued READ
// responses and atomic ACKs, an owed ACK or NAK) leave before the driver
// moves it to ERR or RESET or destroys it, as far as the link takes them.
// On an RNIC they leave microseconds after their request, long before
// software can ask for anything; here the engine may not have run since,
// and the requester of a SEND whose receive completed would wait for an
// ACK that never came (its peer saw the message and tore the QP down).
void QpTransport::send_owed_responses() {
  int budget = kOwedResponsesBudget;
  while (budget > 0 && respond_step(&budget)) {
  }
}

// The owed ACK or NAK, if the budget and the link have room for it.
bool QpTransport::send_owed_ack(int* budget) {
  if (*budget <= 0 || env_.transmit(*owed_ack_, Payload{}) == TxStatus::kBusy) {
    return false;
  }
  owed_ack_.reset();
  --*budget;
  return true;
}

bool QpTransport::send_step(int budget) {
  if (state_ == QpState::kErr) {
    return flush_step(budget);
  }
  bool progress = respond_step(&budget);
  if (state_ == QpState::kErr) {
    return true;
  }
  if (state_ == QpState::kSqe) {
    return flush_step(budget) || progress;
  }
  if (state_ != QpState::kRts && state_ != QpState::kSqd) {
    return progress;
  }
  while (budget > 0 && rnr_deadline_ == UINT64_MAX) {
    if (tx_op_ < ops_.size()) {
      const int sent = transmit_step();
      if (sent < 0) {
        return true;  // the op failed
      }
      if (sent == 0) {
        break;  // until ACKs move the window (or the retry timer fires)
      }
      progress = true;
      --budget;
      continue;
    }
    if (state_ == QpState::kSqd || !start_next_wqe()) {
      break;
    }
    progress = true;
    if (state_ == QpState::kErr) {
      break;
    }
  }
  return progress;
}

// One packet of the op at tx_op_: 1 sent, 0 window closed or the device
// busy (it goes out on a later round), -1 failed.
int QpTransport::transmit_step() {
  SendOp& op = ops_[tx_op_];
  if (op.wqe.is_local()) {
    ++tx_op_;  // done when it started
    return 1;
  }
  if (!window_open(op) || !pacer_.may_send(env_.now_us())) {
    return 0;
  }
  const TxStatus st = transmit_packet(op);
  if (st == TxStatus::kBusy) {
    return 0;
  }
  if (st == TxStatus::kNoMemory) {
    // Its memory went away under it.
    fail_op(op, WcStatus::kLocProtErr, VRNIC_VERR_LKEY);
    return -1;
  }
  if (op.next_pkt >= op.npkts) {
    op.sent = true;
    ++tx_op_;
    if (cfg_.type != QpType::kRc) {
      op.done = true;  // UC and UD complete once sent
      complete_ops();
    }
  }
  return 1;
}

bool QpTransport::has_send_work() {
  if (accepts_requests() &&
      (owed_ack_ || std::any_of(resources_.begin(), resources_.end(),
                                [](const Resource& r) { return r.pending; }))) {
    return true;
  }
  if (state_ == QpState::kErr || state_ == QpState::kSqe) {
    return sq_next_ != env_.send_producer() ||
           (state_ == QpState::kErr && !env_.has_srq() && env_.recv_pending());
  }
  if ((state_ != QpState::kRts && state_ != QpState::kSqd) || rnr_deadline_ != UINT64_MAX) {
    return false;
  }
  if (tx_op_ < ops_.size()) {
    return window_open(ops_[tx_op_]) && pacer_.may_send(env_.now_us());
  }
  return state_ == QpState::kRts && sq_next_ != env_.send_producer();
}

// Completions go out in WQE order.  Every WQE that completes gives its
// ring slot back first; a signaled one (or a failed one) then gets its CQE.
void QpTransport::complete_ops() {
  while (!ops_.empty() && ops_.front().done) {
    const SendOp& op = ops_.front();
    env_.retire_send(op.wqe.index + 1);
    if (op.status != WcStatus::kSuccess || op.wqe.signaled || cfg_.sq_sig_all) {
      Completion c;
      c.wr_id = op.wqe.wr_id;
      c.wqe_idx = op.wqe.index;
      c.opcode = wc_opcode_for(op.wqe.opcode);
      c.status = op.status;
      c.vendor_err = op.vendor_err;
      if (op.status == WcStatus::kSuccess && op.takes_resource()) {
        // READ and FLUSH: their length (as rxe); atomics: the 8 bytes.
        c.byte_len =
            static_cast<uint32_t>(op.is_read() || op.is_flush() ? op.wqe.length : sizeof(uint64_t));
      }
      env_.complete_send(c);
    }
    ops_.pop_front();
    if (tx_op_ > 0) {
      --tx_op_;
    }
  }
  if (ops_.empty()) {
    retry_deadline_ = UINT64_MAX;
    if (state_ == QpState::kSqd) {
      env_.event(QpEvent::kSqDrained);
    }
  }
}

void QpTransport::fail_op(SendOp& op, WcStatus status, uint8_t verr) {
  op.done = true;
  op.status = status;
  op.vendor_err = verr;
  if (cfg_.type == QpType::kRc) {
    enter_error();
  } else {
    enter_sq_error();
  }
}

// UC and UD (IBA 10.3.1): a send WQE that fails takes the send queue to
// SQE, not the QP to ERR.  It completes in error and the send WQEs after
// it are flushed, while the receive queue goes on; MODIFY_QP to RTS sends
// again.  (ib_mad recovers its QPs so.)
void QpTransport::enter_sq_error() {
  state_ = QpState::kSqe;
  flush_ops();
  flush_step(kFlushBudget);
}

// The work requests started and not done complete with WR_FLUSH_ERR.
void QpTransport::flush_ops() {
  for (SendOp& op : ops_) {
    if (!op.done) {
      op.done = true;
      op.status = WcStatus::kWrFlushErr;
    }
  }
  complete_ops();
  tx_op_ = 0;
}

void QpTransport::enter_error() {
  state_ = QpState::kErr;
  retry_deadline_ = rnr_deadline_ = UINT64_MAX;
  flush_ops();
  for (Resource& r : resources_) {
    r.pending = false;
  }
  owed_ack_.reset();
  if (recv_active_) {
    complete_recv(WcStatus::kWrFlushErr, 0, nullptr);
    recv_active_ = false;
  }
  write_active_ = false;
  if (env_.has_srq()) {
    env_.event(QpEvent::kLastWqe);
  }
  flush_step(kFlushBudget);
}

// In error, every posted WQE completes with WR_FLUSH_ERR: at most budget
// of each ring per call.  The producer indices are the guest's, and one
// that runs away must not keep the device here; the rest is flushed on the
// next rounds.
bool QpTransport::flush_step(int budget) {
  bool progress = false;
  const uint32_t producer = env_.send_producer();
  for (int n = 0; n < budget && sq_next_ != producer; ++n) {
    SendWqe w;
    bool bad = false;
    if (!env_.read_send_wqe(sq_next_, &w, &bad) && !bad) {
      break;
    }
    env_.retire_send(sq_next_ + 1);
    Completion c;
    c.wr_id = w.wr_id;
    c.wqe_idx = sq_next_;
    c.opcode = wc_opcode_for(w.opcode);
    c.status = WcStatus::kWrFlushErr;
    env_.complete_send(c);
    ++sq_next_;
    progress = true;
  }
  if (state_ == QpState::kErr && !env_.has_srq()) {
    RecvWqe r;
    bool bad = false;
    for (int n = 0; n < budget && (env_.take_recv_wqe(&r, &bad) || bad); ++n) {
      Completion c;
      c.wr_id = r.wr_id;
      c.wqe_idx = r.index;
      c.opcode = WcOpcode::kRecv;
      c.status = WcStatus::kWrFlushErr;
      env_.complete_recv(c);
      bad = false;
      progress = true;
    }
  }
  return progress;
}

// The timer runs while a packet awaits its answer: ops not yet sent (the
// pacer holds them back, say) have nothing to time out.
void QpTransport::arm_retry_timer() {
  const uint64_t t = ack_timeout_us(cfg_.timeout);
  if (t != 0 && retry_deadline_ == UINT64_MAX && in_flight()) {
    retry_deadline_ = env_.now_us() + t;
  }
}

// Whether a packet sent awaits its acknowledgement or response: every op
// before tx_op_ went out whole, and the one at tx_op_ may have in part.
bool QpTransport::in_flight() const {
  if (tx_op_ > 0 && tx_op_ <= ops_.size()) {
    return true;
  }
  return tx_op_ < ops_.size() && ops_[tx_op_].next_pkt > ops_[tx_op_].done_pkts;
}

// Everything up to and including psn is acknowledged.
void QpTransport::ack_up_to(uint32_t psn) {
  for (SendOp& op : ops_) {
    if (op.done) {
      continue;
    }
    if (psn_before(psn, op.first_psn)) {
      break;
    }
    if (op.is_read() || op.is_atomic()) {
      break;  // those complete with their responses only
    }
    if (!psn_before(psn, op.last_psn())) {
      if (!op.sent) {
        break;  // acknowledges something never sent: ignore the rest
      }
      op.done_pkts = op.npkts;
      op.done = true;
    } else {
      op.done_pkts = static_cast<uint32_t>(psn_diff(psn, op.first_psn)) + 1;
      break;
    }
  }
  complete_ops();
}

// Go back and send again from psn.
void QpTransport::rewind_to(uint32_t psn) {
  for (size_t i = 0; i < ops_.size(); ++i) {
    SendOp& op = ops_[i];
    if (op.done) {
      continue;
    }
    const int32_t d = psn_diff(psn, op.first_psn);
    if (d < 0 || d >= static_cast<int32_t>(op.npkts)) {
      continue;
    }
    tx_op_ = i;
    op.next_pkt = op.is_read() ? op.done_pkts : static_cast<uint32_t>(d);
    op.sent = true;  // what follows is retransmission
    for (size_t j = i + 1; j < ops_.size(); ++j) {
      ops_[j].next_pkt = ops_[j].is_read() ? ops_[j].done_pkts : 0;
    }
    return;
  }
}

// ---------------------------------------------------------------------------
// Completer: the responses to our requests.

void QpTransport::on_response(const Packet& pkt) {
  if (state_ != QpState::kRts && state_ != QpState::kSqd) {
    return;
  }
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  bool progress = false;
  switch (oi.kind) {
    case OpKind::kAck:
      if (aeth_type(pkt.aeth_syndrome) != kAethAck) {
        on_nak(pkt);
        return;
      }
      progress = on_ack(pkt.bth.psn);
      break;
    case OpKind::kReadResponse:
      progress = on_read_response(pkt, oi);
      break;
    case OpKind::kAtomicAck:
      progress = on_atomic_ack(pkt);
      break;
    default:
      return;
  }
  if (progress) {
    retries_left_ = cfg_.retry_cnt;
    rnr_retries_left_ = cfg_.rnr_retry;
    nak_retry_ = false;
    retry_deadline_ = UINT64_MAX;
    arm_retry_timer();
  }
}

// The oldest incomplete op whose PSNs include psn, or nullptr.
QpTransport::SendOp* QpTransport::op_at(uint32_t psn) {
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const SendOp& op) {
    return !op.done && !psn_before(psn, op.first_psn) && !psn_after(psn, op.last_psn());
  });
  return it == ops_.end() ? nullptr : &*it;
}

bool QpTransport::on_ack(uint32_t psn) {
  const uint32_t before = acked_psn();
  ack_up_to(psn);
  const bool progress = acked_psn() != before;
  check_implied_nak(psn);
  return progress;
}

// A NAK names the PSN that failed; everything before it is good.
void QpTransport::on_nak(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  const uint32_t before = acked_psn();
  ack_up_to(psn_add(psn, kPsnModulo - 1));
  if (acked_psn() != before) {
    retries_left_ = cfg_.retry_cnt;  // it moved: the count starts again
    nak_retry_ = false;
  }
  SendOp* op = op_at(psn);
  if (op == nullptr) {
    env_.count_duplicate();
    return;
  }
  if (aeth_type(pkt.aeth_syndrome) == kAethRnrNak) {
    on_rnr_nak(*op, psn, aeth_value(pkt.aeth_syndrome));
    return;
  }
  switch (aeth_value(pkt.aeth_syndrome)) {
    case kNakPsnSeqError:
      env_.count_seq_nak(false);
      // One loss, one retry: while the retry a NAK started runs (until
      // something new is acknowledged, or the timer fires), a NAK that
      // moves nothing is the same loss told again (duplicated, or late
      // behind a later response on the wire) and neither rewinds nor uses
      // up a retry, as rxe's completer does.
      if (nak_retry_) {
        env_.count_duplicate();
        return;
      }
      if (retries_left_ == 0) {
        fail_op(*op, WcStatus::kRetryExcErr, VRNIC_VERR_RETRY_EXCEEDED);
        return;
      }
      --retries_left_;
      nak_retry_ = true;
      rewind_to(psn);
      return;
    case kNakRemoteAccessError:
      fail_op(*op, WcStatus::kRemAccessErr, VRNIC_VERR_NAK_ACCESS);
      return;
    case kNakRemoteOperationalError:
      fail_op(*op, WcStatus::kRemOpErr, VRNIC_VERR_NAK_OPERATIONAL);
      return;
    default:
      fail_op(*op, WcStatus::kRemInvReqErr, VRNIC_VERR_NAK_INVALID);
      return;
  }
}

void QpTransport::on_rnr_nak(SendOp& op, uint32_t psn, uint8_t timer) {
  env_.count_rnr_nak(false);
  if (rnr_retries_left_ == 0) {
    fail_op(op, WcStatus::kRnrRetryExcErr, VRNIC_VERR_RNR_EXCEEDED);
    return;
  }
  if (cfg_.rnr_retry != 7) {  // 7: retry for ever
    --rnr_retries_left_;
  }
  // The responder answered: this is no timeout.  The ACK timer and its
  // retry count start again once the RNR wait is over.
  retries_left_ = cfg_.retry_cnt;
  nak_retry_ = false;
  retry_deadline_ = UINT64_MAX;
  rnr_deadline_ = env_.now_us() + rnr_timer_us(timer);
  rewind_to(psn);
}

bool QpTransport::on_read_response(const Packet& pkt, const OpcodeInfo& oi) {
  const uint32_t psn = pkt.bth.psn;
  if (check_implied_nak(psn)) {
    return false;
  }
  SendOp* op = op_at(psn);
  if (op != nullptr && op->answered_empty()) {
    return on_empty_response(*op, pkt, oi);
  }
  if (op == nullptr || !op->is_read()) {
    env_.count_duplicate();
    return false;
  }
  const uint32_t expected = psn_add(op->first_psn, op->done_pkts);
  if (psn != expected) {
    if (psn_before(psn, expected)) {
      env_.count_duplicate();
    } else {
      rerequest_from(expected);  // responses went missing
    }
    return false;
  }
  read_rerequested_ = false;
  // Older sends and writes are implicitly acknowledged.
  ack_up_to(psn_add(op->first_psn, kPsnModulo - 1));
  const uint32_t k = op->done_pkts;
  const uint64_t off = static_cast<uint64_t>(k) * cfg_.mtu;
  const uint64_t want_len =
      std::min<uint64_t>(cfg_.mtu, op->wqe.length - std::min(off, op->wqe.length));
  if (((oi.bits & kIsFirst) != 0) != (k == 0) ||
      ((oi.bits & kIsLast) != 0) != (k + 1 == op->npkts) || pkt.payload.size() != want_len) {
    fail_op(*op, WcStatus::kBadRespErr, VRNIC_VERR_BAD_RESPONSE);
    return false;
  }
  const MemStatus m =
      pkt.payload.empty()
          ? MemStatus::kOk
          : env_.scatter(std::span(op->wqe.sge.data(), op->wqe.num_sge), off, pkt.payload);
  if (m != MemStatus::kOk) {
    fail_op(*op, WcStatus::kLocProtErr, local_memory_verr(m));
    return false;
  }
  op->done = ++op->done_pkts == op->npkts;
  complete_ops();
  return true;
}

// An ATOMIC WRITE is answered with a READ response of no bytes (rxe's
// answer, and vrnic's); a later ACK covers it too (ack_up_to()).
bool QpTransport::on_empty_response(SendOp& op, const Packet& pkt, const OpcodeInfo& oi) {
  if (operation_of(pkt.bth.opcode) != kReadResponseOnly || !pkt.payload.empty() ||
      (oi.bits & kHasAeth) == 0) {
    fail_op(op, WcStatus::kBadRespErr, VRNIC_VERR_BAD_RESPONSE);
    return false;
  }
  ack_up_to(psn_add(op.first_psn, kPsnModulo - 1));  // the WRITEs and SENDs before it
  op.done_pkts = op.npkts;
  op.done = true;
  complete_ops();
  return true;
}

bool QpTransport::on_atomic_ack(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  if (check_implied_nak(psn)) {
    return false;
  }
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const SendOp& op) {
    return !op.done && op.is_atomic() && op.first_psn == psn;
  });
  if (it == ops_.end()) {
    env_.count_duplicate();
    return false;
  }
  ack_up_to(psn_add(psn, kPsnModulo - 1));
  const uint64_t orig = pkt.atomic_ack;
  std::array<std::byte, sizeof(uint64_t)> val{};
  std::memcpy(val.data(), &orig, sizeof(orig));
  const MemStatus m = env_.scatter(std::span(it->wqe.sge.data(), it->wqe.num_sge), 0, val);
  if (m != MemStatus::kOk) {
    fail_op(*it, WcStatus::kLocProtErr, local_memory_verr(m));
    return false;
  }
  it->done = true;
  complete_ops();
  return true;
}

bool QpTransport::timer_step() {
  const uint64_t now = env_.now_us();
  bool progress = false;
  if (now >= rnr_deadline_) {
    rnr_deadline_ = UINT64_MAX;
    progress = true;
  }
  if (now >= retry_deadline_) {
    retry_deadline_ = UINT64_MAX;
    if (ops_.empty() || (state_ != QpState::kRts && state_ != QpState::kSqd)) {
      return progress;
    }
    SendOp& oldest = ops_.front();
    if (retries_left_ == 0) {
      fail_op(oldest, WcStatus::kRetryExcErr, VRNIC_VERR_RETRY_EXCEEDED);
      return true;
    }
    --retries_left_;
    read_rerequested_ = false;
    nak_retry_ = false;
    rewind_to(psn_add(oldest.first_psn, oldest.done_pkts));
    arm_retry_timer();
    progress = true;
  }
  return progress;
}

// The retry and RNR timers, and the pacer's: when a packet held back for
// want of credit may leave.
uint64_t QpTransport::next_deadline() const {
  const uint64_t timers = std::min(retry_deadline_, rnr_deadline_);
  if (!pacer_.owes() || tx_op_ >= ops_.size() || !window_open(ops_[tx_op_]) ||
      (state_ != QpState::kRts && state_ != QpState::kSqd) || rnr_deadline_ != UINT64_MAX) {
    return timers;
  }
  return std::min(timers, pacer_.ready_at());
}

// The PSN just before the oldest one not yet acknowledged.
uint32_t QpTransport::acked_psn() const {
  for (const SendOp& op : ops_) {
    if (!op.done) {
      return psn_add(op.first_psn, op.done_pkts + kPsnModulo - 1);
    }
  }
  return psn_add(next_psn_, kPsnModulo - 1);
}

}  // namespace vrnicd::roce
