// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "roce/transport.h"

#include <algorithm>
#include <cstring>

#include "roce/psn.h"

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

uint32_t packets_for(uint64_t length, uint32_t mtu) {
  if (length == 0) {
    return 1;
  }
  return static_cast<uint32_t>((length + mtu - 1) / mtu);
}

Transport transport_for(QpType t) {
  switch (t) {
    case QpType::kRc:
      return Transport::kRc;
    case QpType::kUc:
      return Transport::kUc;
    case QpType::kUd:
      return Transport::kUd;
  }
  return Transport::kRc;
}

WcOpcode wc_opcode_for(WrOpcode op) {
  switch (op) {
    case WrOpcode::kWrite:
    case WrOpcode::kWriteImm:
      return WcOpcode::kWrite;
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
      return WcOpcode::kSend;
    case WrOpcode::kRead:
      return WcOpcode::kRead;
    case WrOpcode::kCompareSwap:
      return WcOpcode::kCompareSwap;
    case WrOpcode::kFetchAdd:
      return WcOpcode::kFetchAdd;
  }
  return WcOpcode::kSend;
}

}  // namespace

const char* wc_status_name(WcStatus s) noexcept {
  switch (s) {
    case WcStatus::kSuccess:
      return "SUCCESS";
    case WcStatus::kLocLenErr:
      return "LOC_LEN_ERR";
    case WcStatus::kLocQpOpErr:
      return "LOC_QP_OP_ERR";
    case WcStatus::kLocProtErr:
      return "LOC_PROT_ERR";
    case WcStatus::kWrFlushErr:
      return "WR_FLUSH_ERR";
    case WcStatus::kBadRespErr:
      return "BAD_RESP_ERR";
    case WcStatus::kLocAccessErr:
      return "LOC_ACCESS_ERR";
    case WcStatus::kRemInvReqErr:
      return "REM_INV_REQ_ERR";
    case WcStatus::kRemAccessErr:
      return "REM_ACCESS_ERR";
    case WcStatus::kRemOpErr:
      return "REM_OP_ERR";
    case WcStatus::kRetryExcErr:
      return "RETRY_EXC_ERR";
    case WcStatus::kRnrRetryExcErr:
      return "RNR_RETRY_EXC_ERR";
    case WcStatus::kFatalErr:
      return "FATAL_ERR";
    case WcStatus::kGeneralErr:
      return "GENERAL_ERR";
  }
  return "?";
}

uint64_t rnr_timer_us(uint8_t code) noexcept {
  // IBA 9.7.5.2.8: 655.36 ms for 0, then 0.01 ms .. 491.52 ms.
  static constexpr std::array<uint32_t, 32> kTenUs = {
      65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,   32,
      48,    64,   96,   128,  192,  256,   384,   512,   768,   1024, 1536,
      2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  return static_cast<uint64_t>(kTenUs[code & 0x1f]) * 10;
}

uint64_t ack_timeout_us(uint8_t timeout) noexcept {
  if (timeout == 0) {
    return 0;  // no timeout
  }
  // 4.096 us * 2^timeout
  return (4096ULL << std::min<uint8_t>(timeout, 31)) / 1000;
}

uint32_t QpTransport::SendOp::last_psn() const { return psn_add(first_psn, npkts - 1); }

QpTransport::QpTransport(QpEnv& env, QpConfig cfg) : env_(env), cfg_(cfg) {}

void QpTransport::set_sq_psn(uint32_t psn) { next_psn_ = psn & kPsnMask; }
void QpTransport::set_rq_psn(uint32_t psn) { epsn_ = psn & kPsnMask; }

void QpTransport::set_state(QpState s) {
  if (s == state_) {
    return;
  }
  if (s == QpState::kReset) {
    // Forget all work without completions, as a reset QP has none.
    ops_.clear();
    tx_op_ = 0;
    sq_next_ = 0;
    resources_.clear();
    recv_active_ = write_active_ = nak_sent_ = false;
    uc_msg_ = UcMsg::kNone;
    comm_established_ = false;
    error_completed_ = false;
    retry_deadline_ = rnr_deadline_ = UINT64_MAX;
    msn_ = 0;
    state_ = s;
    return;
  }
  if (s == QpState::kErr) {
    enter_error();
    return;
  }
  if (s == QpState::kRts && state_ == QpState::kRtr) {
    retries_left_ = cfg_.retry_cnt;
    rnr_retries_left_ = cfg_.rnr_retry;
  }
  state_ = s;
  if (s == QpState::kSqd && ops_.empty()) {
    env_.event(QpEvent::kSqDrained);
  }
}

// ---------------------------------------------------------------------------
// Requester

// READs and atomics count until they complete, in order: the responder
// keeps what it needs to answer a repeat of any of them.
size_t QpTransport::outstanding_rd_atomic() const {
  return static_cast<size_t>(std::count_if(
      ops_.begin(), ops_.end(), [](const SendOp& op) { return op.is_read() || op.is_atomic(); }));
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
    const uint32_t expected = psn_add(op.first_psn, op.done_pkts);
    if (!read_rerequested_ || rerequest_psn_ != expected) {
      read_rerequested_ = true;
      rerequest_psn_ = expected;
      rewind_to(expected);
    }
    return true;
  }
  return false;
}

bool QpTransport::validate_wqe(SendOp& op, WcStatus* status) {
  const SendWqe& w = op.wqe;
  const bool rc = cfg_.type == QpType::kRc;
  const bool ud = cfg_.type == QpType::kUd;
  switch (w.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
      break;
    case WrOpcode::kWrite:
    case WrOpcode::kWriteImm:
      if (ud) {
        *status = WcStatus::kLocQpOpErr;
        return false;
      }
      break;
    case WrOpcode::kRead:
    case WrOpcode::kCompareSwap:
    case WrOpcode::kFetchAdd:
      if (!rc || w.is_inline) {
        *status = WcStatus::kLocQpOpErr;
        return false;
      }
      break;
    default:
      *status = WcStatus::kLocQpOpErr;
      return false;
  }
  if (w.length > (1ULL << 31) || (ud && w.length > cfg_.mtu)) {
    *status = WcStatus::kLocLenErr;
    return false;
  }
  if (op.is_atomic() && w.length < sizeof(uint64_t)) {
    *status = WcStatus::kLocLenErr;
    return false;
  }
  if (!w.is_inline) {
    const uint32_t need = (op.is_read() || op.is_atomic()) ? kAccessLocalWrite : 0;
    if (env_.check_local(std::span(w.sge.data(), w.num_sge), need) != MemStatus::kOk) {
      *status = WcStatus::kLocProtErr;
      return false;
    }
  }
  return true;
}

bool QpTransport::start_next_wqe() {
  if (sq_next_ == env_.send_producer()) {
    return false;
  }
  const bool rc = cfg_.type == QpType::kRc;
  if (rc && !ops_.empty()) {
    const SendOp& oldest = ops_.front();
    if (ops_.size() >= kMaxOutstandingOps ||
        psn_diff(next_psn_, psn_add(oldest.first_psn, oldest.done_pkts)) > kMaxPsnWindow) {
      return false;
    }
  }
  SendOp op;
  bool bad = false;
  if (!env_.read_send_wqe(sq_next_, &op.wqe, &bad)) {
    if (!bad) {
      return false;
    }
    // Posted but unusable: an error completion, after the older work.
    if (!ops_.empty()) {
      return false;
    }
    op.wqe.index = sq_next_;
    op.first_psn = next_psn_;
    ++sq_next_;
    ops_.push_back(op);
    tx_op_ = ops_.size();
    fail_op(ops_.back(), WcStatus::kLocQpOpErr);
    return true;
  }
  op.wqe.index = sq_next_;
  if (rc) {
    const bool rd_atomic = op.is_read() || op.is_atomic();
    if (op.wqe.fence && outstanding_rd_atomic() > 0) {
      return false;  // fenced: wait for older READs and atomics
    }
    if (rd_atomic && outstanding_rd_atomic() >= std::max<uint8_t>(cfg_.max_rd_atomic, 1)) {
      return false;
    }
  }
  WcStatus st = WcStatus::kSuccess;
  if (!validate_wqe(op, &st)) {
    // Errors complete in order: let older work finish first.
    if (!ops_.empty()) {
      return false;
    }
    op.first_psn = next_psn_;
    ++sq_next_;
    ops_.push_back(op);
    tx_op_ = ops_.size();
    fail_op(ops_.back(), st);
    return true;
  }
  op.first_psn = next_psn_;
  op.npkts = op.is_atomic() || cfg_.type == QpType::kUd ? 1 : packets_for(op.wqe.length, cfg_.mtu);
  next_psn_ = psn_add(next_psn_, op.npkts);
  ++sq_next_;
  ops_.push_back(std::move(op));
  env_.count_wqe();
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

bool QpTransport::transmit_packet(SendOp& op) {
  const SendWqe& w = op.wqe;
  const uint32_t k = op.next_pkt;
  const uint32_t psn = psn_add(op.first_psn, k);
  const bool first = k == 0;
  const bool last = k + 1 == op.npkts;
  const bool imm = w.opcode == WrOpcode::kSendImm || w.opcode == WrOpcode::kWriteImm;
  const uint64_t off = static_cast<uint64_t>(k) * cfg_.mtu;
  size_t len = 0;
  Packet p;

  switch (w.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendImm: {
      uint8_t o = kSendMiddle;
      if (first && last) {
        o = imm ? kSendOnlyImm : kSendOnly;
      } else if (first) {
        o = kSendFirst;
      } else if (last) {
        o = imm ? kSendLastImm : kSendLast;
      }
      p = new_packet(o, psn);
      len = static_cast<size_t>(std::min<uint64_t>(cfg_.mtu, w.length - off));
      break;
    }
    case WrOpcode::kWrite:
    case WrOpcode::kWriteImm: {
      uint8_t o = kWriteMiddle;
      if (first && last) {
        o = imm ? kWriteOnlyImm : kWriteOnly;
      } else if (first) {
        o = kWriteFirst;
      } else if (last) {
        o = imm ? kWriteLastImm : kWriteLast;
      }
      p = new_packet(o, psn);
      if (first) {
        p.reth = {w.remote_addr, w.rkey, static_cast<uint32_t>(w.length)};
      }
      len = static_cast<size_t>(std::min<uint64_t>(cfg_.mtu, w.length - off));
      break;
    }
    case WrOpcode::kRead: {
      // One request asks for everything from packet k on.
      p = new_packet(kReadRequest, psn);
      p.reth = {w.remote_addr + off, w.rkey,
                static_cast<uint32_t>(w.length - std::min(off, w.length))};
      break;
    }
    case WrOpcode::kCompareSwap:
    case WrOpcode::kFetchAdd: {
      const bool cas = w.opcode == WrOpcode::kCompareSwap;
      p = new_packet(cas ? kCompareSwap : kFetchAdd, psn);
      p.atomic = {w.remote_addr, w.rkey, cas ? w.swap : w.compare_add, w.compare_add};
      break;
    }
  }
  if (last || (k + 1) % kAckReqInterval == 0) {
    p.bth.ack_req = cfg_.type == QpType::kRc;
  }
  if (last) {
    p.bth.solicited = w.solicited;
  }
  if (imm && last) {
    p.imm = w.imm;
  }
  if (cfg_.type == QpType::kUd) {
    p.path = w.ud_path;
    p.bth.dest_qp = w.remote_qpn;
    p.bth.solicited = w.solicited;
    p.deth.qkey = (w.remote_qkey & 0x80000000U) != 0 ? cfg_.qkey : w.remote_qkey;
    if (cfg_.gsi) {
      p.deth.qkey = kGsiQkey;
    }
    p.deth.src_qp = cfg_.qpn;
  }

  const bool ok = env_.transmit(p, len, [&](std::span<std::byte> out) {
    if (out.empty()) {
      return true;
    }
    if (w.is_inline) {
      if (off + out.size() > w.inline_data.size()) {
        return false;
      }
      std::memcpy(out.data(), w.inline_data.data() + off, out.size());
      return true;
    }
    return env_.gather(std::span(w.sge.data(), w.num_sge), off, out) == MemStatus::kOk;
  });
  if (!ok) {
    return false;
  }
  if (op.sent || op.next_pkt < op.done_pkts) {
    env_.count_retransmit();
  }
  op.next_pkt = (w.opcode == WrOpcode::kRead) ? op.npkts : k + 1;
  if (cfg_.type == QpType::kRc) {
    arm_retry_timer();
  }
  return true;
}

bool QpTransport::window_open(const SendOp& op) const {
  if (cfg_.type != QpType::kRc) {
    return true;
  }
  return psn_diff(psn_add(op.first_psn, op.next_pkt), psn_add(acked_psn(), 1)) < kTxWindow;
}

bool QpTransport::send_step(int budget) {
  if (state_ == QpState::kErr) {
    return flush_step();
  }
  bool progress = false;
  // Responses owed to the other side go first: the responder works from
  // RTR on, whatever the send queue is doing.
  if (accepts_requests()) {
    for (Resource& r : resources_) {
      if (r.pending && budget > 0) {
        progress |= send_read_responses(r, &budget);
        if (state_ == QpState::kErr) {
          return true;
        }
      }
    }
  }
  if (state_ == QpState::kSqe) {
    return flush_step() || progress;
  }
  if (state_ != QpState::kRts && state_ != QpState::kSqd) {
    return progress;
  }
  while (budget > 0 && rnr_deadline_ == UINT64_MAX) {
    if (tx_op_ < ops_.size()) {
      SendOp& op = ops_[tx_op_];
      if (!window_open(op)) {
        break;  // until ACKs move the window (or the retry timer fires)
      }
      if (!transmit_packet(op)) {
        // Its memory went away under it.
        fail_op(op, WcStatus::kLocProtErr);
        return true;
      }
      progress = true;
      --budget;
      if (op.next_pkt >= op.npkts) {
        op.sent = true;
        ++tx_op_;
        if (cfg_.type != QpType::kRc) {
          op.done = true;  // UC and UD complete once sent
          complete_ops();
        }
      }
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

bool QpTransport::has_send_work() {
  if (accepts_requests()) {
    for (const Resource& r : resources_) {
      if (r.pending) {
        return true;
      }
    }
  }
  if (state_ == QpState::kErr || state_ == QpState::kSqe) {
    return sq_next_ != env_.send_producer();
  }
  if (state_ != QpState::kRts && state_ != QpState::kSqd) {
    return false;
  }
  if (rnr_deadline_ != UINT64_MAX) {
    return false;
  }
  if (tx_op_ < ops_.size()) {
    return window_open(ops_[tx_op_]);
  }
  return state_ == QpState::kRts && sq_next_ != env_.send_producer();
}

void QpTransport::complete_ops() {
  while (!ops_.empty() && ops_.front().done) {
    const SendOp& op = ops_.front();
    if (op.status != WcStatus::kSuccess || op.wqe.signaled || cfg_.sq_sig_all) {
      Completion c;
      c.wr_id = op.wqe.wr_id;
      c.wqe_idx = op.wqe.index;
      c.opcode = wc_opcode_for(op.wqe.opcode);
      c.status = op.status;
      if (op.status == WcStatus::kSuccess && (op.is_read() || op.is_atomic())) {
        c.byte_len = static_cast<uint32_t>(op.is_atomic() ? sizeof(uint64_t) : op.wqe.length);
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

void QpTransport::fail_op(SendOp& op, WcStatus status) {
  op.done = true;
  op.status = status;
  enter_error();
}

void QpTransport::enter_error() {
  state_ = QpState::kErr;
  retry_deadline_ = rnr_deadline_ = UINT64_MAX;
  for (SendOp& op : ops_) {
    if (!op.done) {
      op.done = true;
      op.status = WcStatus::kWrFlushErr;
    }
  }
  complete_ops();
  tx_op_ = 0;
  for (Resource& r : resources_) {
    r.pending = false;
  }
  if (recv_active_) {
    complete_recv(WcStatus::kWrFlushErr, 0, nullptr);
    recv_active_ = false;
  }
  write_active_ = false;
  if (env_.has_srq()) {
    env_.event(QpEvent::kLastWqe);
  }
  flush_step();
}

// In error, every posted WQE completes with WR_FLUSH_ERR.
bool QpTransport::flush_step() {
  bool progress = false;
  while (sq_next_ != env_.send_producer()) {
    SendWqe w;
    bool bad = false;
    if (!env_.read_send_wqe(sq_next_, &w, &bad) && !bad) {
      break;
    }
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
    while (env_.take_recv_wqe(&r, &bad) || bad) {
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

void QpTransport::arm_retry_timer() {
  const uint64_t t = ack_timeout_us(cfg_.timeout);
  if (t != 0 && retry_deadline_ == UINT64_MAX && !ops_.empty()) {
    retry_deadline_ = env_.now_us() + t;
  }
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

void QpTransport::on_response(const Packet& pkt) {
  if (state_ != QpState::kRts && state_ != QpState::kSqd) {
    return;
  }
  const uint32_t psn = pkt.bth.psn;
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  const bool has_aeth = (oi.bits & kHasAeth) != 0;
  const AethType type = has_aeth ? aeth_type(pkt.aeth_syndrome) : kAethAck;
  bool progress = false;

  if (oi.kind == OpKind::kAck && type != kAethAck) {
    // A NAK names the PSN that failed; everything before it is good.
    const uint32_t before = acked_psn();
    ack_up_to(psn_add(psn, kPsnModulo - 1));
    if (acked_psn() != before) {
      retries_left_ = cfg_.retry_cnt;  // it moved: the count starts again
    }
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const SendOp& op) {
      return !op.done && !psn_before(psn, op.first_psn) && !psn_after(psn, op.last_psn());
    });
    if (it == ops_.end()) {
      env_.count_duplicate();
      return;
    }
    if (type == kAethRnrNak) {
      env_.count_rnr_nak(false);
      if (rnr_retries_left_ == 0) {
        fail_op(*it, WcStatus::kRnrRetryExcErr);
        return;
      }
      if (cfg_.rnr_retry != 7) {
        --rnr_retries_left_;
      }
      // The responder answered: this is no timeout.  The ACK timer and
      // its retry count start again once the RNR wait is over.
      retries_left_ = cfg_.retry_cnt;
      retry_deadline_ = UINT64_MAX;
      rnr_deadline_ = env_.now_us() + rnr_timer_us(aeth_value(pkt.aeth_syndrome));
      rewind_to(psn);
      return;
    }
    switch (aeth_value(pkt.aeth_syndrome)) {
      case kNakPsnSeqError:
        env_.count_seq_nak(false);
        if (retries_left_ == 0) {
          fail_op(*it, WcStatus::kRetryExcErr);
          return;
        }
        --retries_left_;
        rewind_to(psn);
        return;
      case kNakRemoteAccessError:
        fail_op(*it, WcStatus::kRemAccessErr);
        return;
      case kNakRemoteOperationalError:
        fail_op(*it, WcStatus::kRemOpErr);
        return;
      default:
        fail_op(*it, WcStatus::kRemInvReqErr);
        return;
    }
  }

  if (oi.kind == OpKind::kAck) {
    const uint32_t before = acked_psn();
    ack_up_to(psn);
    progress = acked_psn() != before;
    check_implied_nak(psn);
  } else if (oi.kind == OpKind::kReadResponse) {
    if (check_implied_nak(psn)) {
      return;
    }
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const SendOp& op) {
      return !op.done && op.is_read() && !psn_before(psn, op.first_psn) &&
             !psn_after(psn, op.last_psn());
    });
    if (it == ops_.end()) {
      env_.count_duplicate();
      return;
    }
    SendOp& op = *it;
    const uint32_t expected = psn_add(op.first_psn, op.done_pkts);
    if (psn != expected) {
      if (psn_before(psn, expected)) {
        env_.count_duplicate();
      } else if (!read_rerequested_ || rerequest_psn_ != expected) {
        // Responses went missing: ask again, once per gap.
        read_rerequested_ = true;
        rerequest_psn_ = expected;
        rewind_to(expected);
      }
      return;
    }
    read_rerequested_ = false;
    // Older sends and writes are implicitly acknowledged.
    ack_up_to(psn_add(op.first_psn, kPsnModulo - 1));
    const uint32_t k = op.done_pkts;
    const bool want_first = k == 0;
    const bool want_last = k + 1 == op.npkts;
    const bool is_first = (oi.bits & kIsFirst) != 0;
    const bool is_last = (oi.bits & kIsLast) != 0;
    const uint64_t off = static_cast<uint64_t>(k) * cfg_.mtu;
    const uint64_t want_len =
        std::min<uint64_t>(cfg_.mtu, op.wqe.length - std::min(off, op.wqe.length));
    if (is_first != want_first || is_last != want_last || pkt.payload.size() != want_len) {
      fail_op(op, WcStatus::kBadRespErr);
      return;
    }
    if (!pkt.payload.empty() && env_.scatter(std::span(op.wqe.sge.data(), op.wqe.num_sge), off,
                                             pkt.payload) != MemStatus::kOk) {
      fail_op(op, WcStatus::kLocProtErr);
      return;
    }
    ++op.done_pkts;
    if (op.done_pkts == op.npkts) {
      op.done = true;
    }
    progress = true;
    complete_ops();
  } else if (oi.kind == OpKind::kAtomicAck) {
    if (check_implied_nak(psn)) {
      return;
    }
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const SendOp& op) {
      return !op.done && op.is_atomic() && op.first_psn == psn;
    });
    if (it == ops_.end()) {
      env_.count_duplicate();
      return;
    }
    ack_up_to(psn_add(psn, kPsnModulo - 1));
    const uint64_t orig = pkt.atomic_ack;
    std::array<std::byte, sizeof(uint64_t)> val{};
    std::memcpy(val.data(), &orig, sizeof(orig));
    if (env_.scatter(std::span(it->wqe.sge.data(), it->wqe.num_sge), 0, val) != MemStatus::kOk) {
      fail_op(*it, WcStatus::kLocProtErr);
      return;
    }
    it->done = true;
    progress = true;
    complete_ops();
  }

  if (progress) {
    retries_left_ = cfg_.retry_cnt;
    rnr_retries_left_ = cfg_.rnr_retry;
    retry_deadline_ = UINT64_MAX;
    arm_retry_timer();
  }
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
      fail_op(oldest, WcStatus::kRetryExcErr);
      return true;
    }
    --retries_left_;
    read_rerequested_ = false;
    rewind_to(psn_add(oldest.first_psn, oldest.done_pkts));
    arm_retry_timer();
    progress = true;
  }
  return progress;
}

uint64_t QpTransport::next_deadline() const { return std::min(retry_deadline_, rnr_deadline_); }

// The PSN just before the oldest one not yet acknowledged.
uint32_t QpTransport::acked_psn() const {
  for (const SendOp& op : ops_) {
    if (!op.done) {
      return psn_add(op.first_psn, op.done_pkts + kPsnModulo - 1);
    }
  }
  return psn_add(next_psn_, kPsnModulo - 1);
}

// ---------------------------------------------------------------------------
// Responder

bool QpTransport::accepts_requests() const {
  return state_ == QpState::kRtr || state_ == QpState::kRts || state_ == QpState::kSqd ||
         state_ == QpState::kSqe;
}

void QpTransport::receive(const Packet& pkt) {
  if (transport_of(pkt.bth.opcode) != transport_for(cfg_.type)) {
    return;  // not this QP's transport
  }
  if ((pkt.bth.pkey & 0x7fff) != (cfg_.pkey & 0x7fff)) {
    return;  // P_Key mismatch: silently dropped
  }
  if (state_ == QpState::kRtr && !comm_established_) {
    comm_established_ = true;
    env_.event(QpEvent::kCommEst);
  }
  const OpKind kind = opcode_info(pkt.bth.opcode).kind;
  if (kind == OpKind::kAck || kind == OpKind::kAtomicAck || kind == OpKind::kReadResponse) {
    if (cfg_.type == QpType::kRc) {
      on_response(pkt);
    }
    return;
  }
  switch (cfg_.type) {
    case QpType::kRc:
      on_request(pkt);
      break;
    case QpType::kUc:
      on_request_uc(pkt);
      break;
    case QpType::kUd:
      on_request_ud(pkt);
      break;
  }
}

void QpTransport::send_ack(uint8_t syndrome, uint32_t psn) {
  Packet p = new_packet(kAcknowledge, psn);
  p.aeth_syndrome = syndrome;
  p.aeth_msn = msn_;
  env_.transmit(p, 0, [](std::span<std::byte>) { return true; });
}

void QpTransport::send_nak(NakCode code, uint32_t psn) {
  send_ack(aeth_syndrome(kAethNak, code), psn);
}

void QpTransport::responder_error(NakCode code, uint32_t psn, QpEvent event) {
  if (cfg_.type == QpType::kRc) {
    send_nak(code, psn);
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
    if (oi.kind == OpKind::kWrite) {
      c.opcode = WcOpcode::kRecvWriteImm;
    }
    c.solicited = last->bth.solicited;
  }
  env_.complete_recv(c);
}

// Take the receive WQE for a new message; without one, RC answers RNR.
bool QpTransport::take_recv(uint32_t psn) {
  bool bad = false;
  if (env_.take_recv_wqe(&recv_, &bad)) {
    return true;
  }
  if (bad) {
    complete_recv(WcStatus::kLocQpOpErr, 0, nullptr);
    responder_error(kNakRemoteOperationalError, psn, QpEvent::kFatal);
    return false;
  }
  if (cfg_.type == QpType::kRc) {
    send_ack(aeth_syndrome(kAethRnrNak, cfg_.min_rnr_timer), psn);
    env_.count_rnr_nak(true);
  }
  return false;
}

void QpTransport::respond_duplicate(const Packet& pkt) {
  const uint32_t psn = pkt.bth.psn;
  switch (opcode_info(pkt.bth.opcode).kind) {
    case OpKind::kReadRequest:
      for (Resource& r : resources_) {
        const int32_t d = psn_diff(psn, r.first_psn);
        if (!r.atomic && d >= 0 && d < static_cast<int32_t>(r.npkts)) {
          r.next_pkt = static_cast<uint32_t>(d);
          r.pending = true;
          return;
        }
      }
      return;
    case OpKind::kAtomic:
      for (const Resource& r : resources_) {
        if (r.atomic && r.first_psn == psn) {
          Packet p = new_packet(kAtomicAcknowledge, psn);
          p.aeth_syndrome = kAethAckNoCredits;
          p.aeth_msn = msn_;
          p.atomic_ack = r.original;
          env_.transmit(p, 0, [](std::span<std::byte>) { return true; });
          return;
        }
      }
      return;
    default:
      // Acknowledge everything received so far again.
      send_ack(kAethAckNoCredits, psn_add(epsn_, kPsnModulo - 1));
      return;
  }
}

bool QpTransport::send_read_responses(Resource& r, int* budget) {
  bool progress = false;
  while (r.pending && r.next_pkt<r.npkts&& * budget> 0) {
    const uint32_t k = r.next_pkt;
    const uint64_t off = static_cast<uint64_t>(k) * cfg_.mtu;
    const size_t len = static_cast<size_t>(
        std::min<uint64_t>(cfg_.mtu, r.length - std::min<uint64_t>(off, r.length)));
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
    const bool ok = env_.transmit(p, len, [&](std::span<std::byte> out) {
      return out.empty() || env_.remote_read(r.rkey, r.va + off, out) == MemStatus::kOk;
    });
    if (!ok) {
      // The region went away while we read it.
      r.pending = false;
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

void QpTransport::on_request(const Packet& pkt) {
  if (!accepts_requests()) {
    return;
  }
  const uint32_t psn = pkt.bth.psn;
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  const int32_t d = psn_diff(psn, epsn_);
  if (d > 0) {
    // Something went missing: ask for it once.
    if (!nak_sent_) {
      nak_sent_ = true;
      send_nak(kNakPsnSeqError, epsn_);
      env_.count_seq_nak(true);
    }
    return;
  }
  if (d < 0) {
    env_.count_duplicate();
    respond_duplicate(pkt);
    return;
  }

  const bool first = (oi.bits & kIsFirst) != 0;
  const bool last = (oi.bits & kIsLast) != 0;
  const size_t plen = pkt.payload.size();
  // The opcode must continue the message in progress, or start a new one.
  if ((recv_active_ && (oi.kind != OpKind::kSend || first)) ||
      (write_active_ && (oi.kind != OpKind::kWrite || first)) ||
      (!recv_active_ && !write_active_ && !first)) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }
  // Only the last packet of a message may be shorter than the MTU.
  if ((oi.bits & kHasPayload) != 0 && (last ? plen > cfg_.mtu : plen != cfg_.mtu)) {
    responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
    return;
  }

  switch (oi.kind) {
    case OpKind::kSend: {
      if ((oi.bits & kHasIeth) != 0) {
        responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);  // no invalidation
        return;
      }
      if (first) {
        if (!take_recv(psn)) {
          return;
        }
        recv_active_ = true;
        recv_offset_ = 0;
      }
      if (recv_offset_ + plen > recv_.length) {
        complete_recv(WcStatus::kLocLenErr, 0, nullptr);
        recv_active_ = false;
        responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
        return;
      }
      if (plen != 0) {
        const MemStatus m =
            env_.scatter(std::span(recv_.sge.data(), recv_.num_sge), recv_offset_, pkt.payload);
        if (m != MemStatus::kOk) {
          complete_recv(WcStatus::kLocProtErr, 0, nullptr);
          recv_active_ = false;
          responder_error(kNakRemoteOperationalError, psn, QpEvent::kFatal);
          return;
        }
      }
      recv_offset_ += plen;
      if (last) {
        recv_active_ = false;
        ++msn_;
        complete_recv(WcStatus::kSuccess, static_cast<uint32_t>(recv_offset_), &pkt);
      }
      break;
    }
    case OpKind::kWrite: {
      if (first) {
        if ((cfg_.access & kAccessRemoteWrite) == 0 ||
            env_.check_remote(pkt.reth.rkey, pkt.reth.va, pkt.reth.length, kAccessRemoteWrite) !=
                MemStatus::kOk) {
          responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
          return;
        }
        write_rkey_ = pkt.reth.rkey;
        write_va_ = pkt.reth.va;
        write_remaining_ = pkt.reth.length;
        write_total_ = pkt.reth.length;
      }
      if (plen > write_remaining_ || (last && plen != write_remaining_)) {
        write_active_ = false;
        responder_error(kNakInvalidRequest, psn, QpEvent::kReqErr);
        return;
      }
      const bool imm = (oi.bits & kHasImm) != 0;
      if (imm && !take_recv(psn)) {
        write_active_ = !first || !last;
        return;
      }
      if (plen != 0 && env_.remote_write(write_rkey_, write_va_, pkt.payload) != MemStatus::kOk) {
        write_active_ = false;
        if (imm) {
          complete_recv(WcStatus::kRemAccessErr, 0, nullptr);
        }
        responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
        return;
      }
      write_va_ += plen;
      write_remaining_ -= plen;
      write_active_ = !last;
      if (last) {
        ++msn_;
        if (imm) {
          complete_recv(WcStatus::kSuccess, write_total_, &pkt);
        }
      }
      break;
    }
    case OpKind::kReadRequest: {
      if ((cfg_.access & kAccessRemoteRead) == 0 ||
          env_.check_remote(pkt.reth.rkey, pkt.reth.va, pkt.reth.length, kAccessRemoteRead) !=
              MemStatus::kOk) {
        responder_error(kNakRemoteAccessError, psn, QpEvent::kAccessErr);
        return;
      }
      const auto busy = static_cast<size_t>(std::count_if(
          resources_.begin(), resources_.end(), [](const Resource& r) { return r.pending; }));
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
      r.pending = true;
      resources_.push_back(r);
      while (resources_.size() > std::max<size_t>(cfg_.max_dest_rd_atomic, 1) + 4) {
        resources_.pop_front();
      }
      ++msn_;
      epsn_ = psn_add(psn, r.npkts);
      nak_sent_ = false;
      return;
    }
    case OpKind::kAtomic: {
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
      resources_.push_back(r);
      while (resources_.size() > std::max<size_t>(cfg_.max_dest_rd_atomic, 1) + 4) {
        resources_.pop_front();
      }
      ++msn_;
      Packet p = new_packet(kAtomicAcknowledge, psn);
      p.aeth_syndrome = kAethAckNoCredits;
      p.aeth_msn = msn_;
      p.atomic_ack = orig;
      env_.transmit(p, 0, [](std::span<std::byte>) { return true; });
      epsn_ = psn_add(psn, 1);
      nak_sent_ = false;
      return;
    }
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
  if (!first && uc_msg_ != kind) {
    uc_msg_ = UcMsg::kNone;
    return;
  }
  if ((oi.bits & kHasPayload) != 0 && (last ? plen > cfg_.mtu : plen != cfg_.mtu)) {
    uc_msg_ = UcMsg::kNone;
    return;
  }
  bool bad = false;
  if (kind == UcMsg::kSend) {
    if (first) {
      if (!recv_active_ && !env_.take_recv_wqe(&recv_, &bad)) {
        return;  // no receive WQE: the message is dropped
      }
      recv_active_ = true;
      recv_offset_ = 0;
      uc_msg_ = UcMsg::kSend;
    }
    if (recv_offset_ + plen > recv_.length) {
      complete_recv(WcStatus::kLocLenErr, 0, nullptr);
      recv_active_ = false;
      env_.event(QpEvent::kReqErr);
      enter_error();
      return;
    }
    if (plen != 0 && env_.scatter(std::span(recv_.sge.data(), recv_.num_sge), recv_offset_,
                                  pkt.payload) != MemStatus::kOk) {
      complete_recv(WcStatus::kLocProtErr, 0, nullptr);
      recv_active_ = false;
      env_.event(QpEvent::kFatal);
      enter_error();
      return;
    }
    recv_offset_ += plen;
    if (last) {
      recv_active_ = false;
      uc_msg_ = UcMsg::kNone;
      complete_recv(WcStatus::kSuccess, static_cast<uint32_t>(recv_offset_), &pkt);
    }
    return;
  }
  if (first) {
    if ((cfg_.access & kAccessRemoteWrite) == 0 ||
        env_.check_remote(pkt.reth.rkey, pkt.reth.va, pkt.reth.length, kAccessRemoteWrite) !=
            MemStatus::kOk) {
      return;  // UC drops what it cannot place
    }
    write_rkey_ = pkt.reth.rkey;
    write_va_ = pkt.reth.va;
    write_remaining_ = pkt.reth.length;
    write_total_ = pkt.reth.length;
    uc_msg_ = UcMsg::kWrite;
  }
  if (plen > write_remaining_ || (last && plen != write_remaining_)) {
    uc_msg_ = UcMsg::kNone;
    return;
  }
  const bool imm = (oi.bits & kHasImm) != 0;
  if (imm && !recv_active_) {
    if (!env_.take_recv_wqe(&recv_, &bad)) {
      uc_msg_ = UcMsg::kNone;
      return;
    }
    recv_active_ = true;
  }
  if (plen != 0 && env_.remote_write(write_rkey_, write_va_, pkt.payload) != MemStatus::kOk) {
    uc_msg_ = UcMsg::kNone;
    return;
  }
  write_va_ += plen;
  write_remaining_ -= plen;
  if (last) {
    uc_msg_ = UcMsg::kNone;
    if (imm) {
      recv_active_ = false;
      complete_recv(WcStatus::kSuccess, write_total_, &pkt);
    }
  }
}

void QpTransport::on_request_ud(const Packet& pkt) {
  if (!accepts_requests()) {
    return;
  }
  if (pkt.deth.qkey != (cfg_.gsi ? kGsiQkey : cfg_.qkey)) {
    return;  // Q_Key violation: silently dropped
  }
  bool bad = false;
  if (!env_.take_recv_wqe(&recv_, &bad)) {
    return;  // no receive WQE: UD drops the datagram
  }
  const uint64_t total = kGrhSize + pkt.payload.size();
  if (total > recv_.length) {
    complete_recv(WcStatus::kLocLenErr, 0, nullptr);
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
  if (env_.scatter(sges, 0, grh) != MemStatus::kOk ||
      (!pkt.payload.empty() && env_.scatter(sges, kGrhSize, pkt.payload) != MemStatus::kOk)) {
    complete_recv(WcStatus::kLocProtErr, 0, nullptr);
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
  c.solicited = pkt.bth.solicited;
  if ((opcode_info(pkt.bth.opcode).bits & kHasImm) != 0) {
    c.has_imm = true;
    c.imm = pkt.imm;
  }
  env_.complete_recv(c);
}

}  // namespace vrnicd::roce
