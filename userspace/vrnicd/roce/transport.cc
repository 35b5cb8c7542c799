// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The parts of a QP's transport that both sides share: its state, and the
// dispatch of every packet to the requester's completer (responses) or the
// responder (requests).
#include "roce/transport.h"

#include <algorithm>
#include <cstring>

#include "roce/psn.h"
#include "roce/transport_impl.h"

namespace vrnicd::roce {

const char* wr_opcode_name(WrOpcode op) noexcept {
  switch (op) {
    case WrOpcode::kWrite:
      return "RDMA_WRITE";
    case WrOpcode::kWriteImm:
      return "RDMA_WRITE_WITH_IMM";
    case WrOpcode::kSend:
      return "SEND";
    case WrOpcode::kSendImm:
      return "SEND_WITH_IMM";
    case WrOpcode::kRead:
      return "RDMA_READ";
    case WrOpcode::kCompareSwap:
      return "ATOMIC_CMP_AND_SWP";
    case WrOpcode::kFetchAdd:
      return "ATOMIC_FETCH_AND_ADD";
    case WrOpcode::kAtomicWrite:
      return "ATOMIC_WRITE";
    case WrOpcode::kFlush:
      return "FLUSH";
    case WrOpcode::kLocalInv:
      return "LOCAL_INV";
    case WrOpcode::kBindMw:
      return "BIND_MW";
    case WrOpcode::kSendInv:
      return "SEND_WITH_INV";
    case WrOpcode::kRegMr:
      return "REG_MR";
  }
  return "?";
}

const char* wc_opcode_name(WcOpcode op) noexcept {
  switch (op) {
    case WcOpcode::kSend:
      return "SEND";
    case WcOpcode::kWrite:
      return "RDMA_WRITE";
    case WcOpcode::kRead:
      return "RDMA_READ";
    case WcOpcode::kCompareSwap:
      return "COMP_SWAP";
    case WcOpcode::kFetchAdd:
      return "FETCH_ADD";
    case WcOpcode::kAtomicWrite:
      return "ATOMIC_WRITE";
    case WcOpcode::kFlush:
      return "FLUSH";
    case WcOpcode::kBindMw:
      return "BIND_MW";
    case WcOpcode::kLocalInv:
      return "LOCAL_INV";
    case WcOpcode::kRegMr:
      return "REG_MR";
    case WcOpcode::kRecv:
      return "RECV";
    case WcOpcode::kRecvWriteImm:
      return "RECV_RDMA_WITH_IMM";
  }
  return "?";
}

const char* qp_state_name(QpState s) noexcept {
  switch (s) {
    case QpState::kReset:
      return "RESET";
    case QpState::kInit:
      return "INIT";
    case QpState::kRtr:
      return "RTR";
    case QpState::kRts:
      return "RTS";
    case QpState::kSqd:
      return "SQD";
    case QpState::kSqe:
      return "SQE";
    case QpState::kErr:
      return "ERR";
  }
  return "?";
}

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
    case WcStatus::kMwBindErr:
      return "MW_BIND_ERR";
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
    owed_ack_.reset();
    recv_active_ = write_active_ = nak_sent_ = false;
    uc_msg_ = UcMsg::kNone;
    uc_key_violations_ = 0;
    comm_established_ = false;
    error_completed_ = false;
    nak_retry_ = read_rerequested_ = false;
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

bool QpTransport::accepts_requests() const {
  return state_ == QpState::kRtr || state_ == QpState::kRts || state_ == QpState::kSqd ||
         state_ == QpState::kSqe;
}

// RC and UC talk to one peer: a packet must come from the QP's destination
// address to its source address, as rxe's check_addr() has it.
bool QpTransport::from_peer(const Packet& pkt) const {
  return pkt.path.sgid == cfg_.path.dgid && pkt.path.dgid == cfg_.path.sgid;
}

void QpTransport::receive(const Packet& pkt) {
  if (transport_of(pkt.bth.opcode) != transport_for(cfg_.type)) {
    return;  // not this QP's transport
  }
  if ((pkt.bth.pkey & 0x7fff) != (cfg_.pkey & 0x7fff)) {
    env_.count_refused(Refusal::kPkey);
    return;  // P_Key mismatch: silently dropped
  }
  if (cfg_.type != QpType::kUd && !from_peer(pkt)) {
    env_.count_refused(Refusal::kAddress);
    return;  // not from the QP's peer: silently dropped
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

bool QpEnv::read_payload(const Payload& payload, std::span<std::byte> dst) {
  if (dst.empty()) {
    return true;
  }
  switch (payload.source) {
    case Payload::Source::kNone:
      return false;
    case Payload::Source::kBytes:
      if (payload.offset > payload.bytes.size() ||
          dst.size() > payload.bytes.size() - payload.offset) {
        return false;
      }
      std::memcpy(dst.data(), payload.bytes.data() + payload.offset, dst.size());
      return true;
    case Payload::Source::kLocal:
      return gather(payload.sges, payload.offset, dst) == MemStatus::kOk;
    case Payload::Source::kRemote:
      return remote_read(payload.rkey, payload.va, dst) == MemStatus::kOk;
  }
  return false;
}

}  // namespace vrnicd::roce
