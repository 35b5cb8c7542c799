// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The transport of one queue pair: the RC, UC and UD protocols of the
// InfiniBand architecture as RoCEv2 carries them.  A QpTransport turns send
// work requests into packets (requester), turns incoming requests into
// memory accesses, completions and responses (responder), and turns
// responses into completions (completer), with PSNs, ACKs, NAKs, RNR and
// retransmission.
//
// It knows nothing of guest memory, rings or ports: everything outside the
// protocol goes through QpEnv, which the device implements over guest RAM
// and tests implement over plain buffers.  Single-threaded (the device's
// dispatch thread).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "queue_entry.h"
#include "roce/pacer.h"
#include "roce/packet.h"
#include "vrnic-hw.h"

namespace vrnicd::roce {

// The enumerations below are the device's (uapi/vrnic-hw.h), which use the
// IB and libibverbs encodings; they are named here, never renumbered.
constexpr uint32_t kMaxSge = VRNIC_MAX_SGE;
// The general services QP's fixed Q_Key.
constexpr uint32_t kGsiQkey = VRNIC_GSI_QKEY;

enum class QpType : uint8_t { kRc = VRNIC_QPT_RC, kUc = VRNIC_QPT_UC, kUd = VRNIC_QPT_UD };
enum class QpState : uint8_t {
  kReset = VRNIC_QPS_RESET,
  kInit = VRNIC_QPS_INIT,
  kRtr = VRNIC_QPS_RTR,
  kRts = VRNIC_QPS_RTS,
  kSqd = VRNIC_QPS_SQD,
  kSqe = VRNIC_QPS_SQE,
  kErr = VRNIC_QPS_ERR,
};

// Send work request opcodes.
enum class WrOpcode : uint8_t {
  kWrite = VRNIC_WQE_RDMA_WRITE,
  kWriteImm = VRNIC_WQE_RDMA_WRITE_WITH_IMM,
  kSend = VRNIC_WQE_SEND,
  kSendImm = VRNIC_WQE_SEND_WITH_IMM,
  kRead = VRNIC_WQE_RDMA_READ,
  kCompareSwap = VRNIC_WQE_ATOMIC_CMP_AND_SWP,
  kFetchAdd = VRNIC_WQE_ATOMIC_FETCH_AND_ADD,
  kLocalInv = VRNIC_WQE_LOCAL_INV,
  kBindMw = VRNIC_WQE_BIND_MW,
  kSendInv = VRNIC_WQE_SEND_WITH_INV,
  kFlush = VRNIC_WQE_FLUSH,
  kAtomicWrite = VRNIC_WQE_ATOMIC_WRITE,
  kRegMr = VRNIC_WQE_REG_MR,
};

// Completion opcodes and statuses.
enum class WcOpcode : uint8_t {
  kSend = VRNIC_CQE_SEND,
  kWrite = VRNIC_CQE_RDMA_WRITE,
  kRead = VRNIC_CQE_RDMA_READ,
  kCompareSwap = VRNIC_CQE_COMP_SWAP,
  kFetchAdd = VRNIC_CQE_FETCH_ADD,
  kBindMw = VRNIC_CQE_BIND_MW,
  kLocalInv = VRNIC_CQE_LOCAL_INV,
  kRegMr = VRNIC_CQE_REG_MR,
  kAtomicWrite = VRNIC_CQE_ATOMIC_WRITE,
  kFlush = VRNIC_CQE_FLUSH,
  kRecv = VRNIC_CQE_RECV,
  kRecvWriteImm = VRNIC_CQE_RECV_RDMA_WITH_IMM,
};

enum class WcStatus : uint8_t {
  kSuccess = VRNIC_CQE_SUCCESS,
  kLocLenErr = VRNIC_CQE_LOC_LEN_ERR,
  kLocQpOpErr = VRNIC_CQE_LOC_QP_OP_ERR,
  kLocProtErr = VRNIC_CQE_LOC_PROT_ERR,
  kWrFlushErr = VRNIC_CQE_WR_FLUSH_ERR,
  kMwBindErr = VRNIC_CQE_MW_BIND_ERR,
  kBadRespErr = VRNIC_CQE_BAD_RESP_ERR,
  kLocAccessErr = VRNIC_CQE_LOC_ACCESS_ERR,
  kRemInvReqErr = VRNIC_CQE_REM_INV_REQ_ERR,
  kRemAccessErr = VRNIC_CQE_REM_ACCESS_ERR,
  kRemOpErr = VRNIC_CQE_REM_OP_ERR,
  kRetryExcErr = VRNIC_CQE_RETRY_EXC_ERR,
  kRnrRetryExcErr = VRNIC_CQE_RNR_RETRY_EXC_ERR,
  kFatalErr = VRNIC_CQE_FATAL_ERR,
  kGeneralErr = VRNIC_CQE_GENERAL_ERR,
};

const char* wc_status_name(WcStatus s) noexcept;
// Names of opcodes and states, for vrnicctl.
const char* wr_opcode_name(WrOpcode op) noexcept;
const char* wc_opcode_name(WcOpcode op) noexcept;
const char* qp_state_name(QpState s) noexcept;

using Sge = vrnic::WqeSge;

struct SendWqe {
  uint32_t index = 0;  // send ring index
  uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  bool signaled = false;
  bool solicited = false;
  bool fence = false;
  bool is_inline = false;
  uint32_t imm = 0;  // immediate data, or the key LOCAL_INV and
                     // SEND_WITH_INV invalidate
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  uint32_t remote_qpn = 0;   // UD
  uint32_t remote_qkey = 0;  // UD
  Path ud_path;              // UD, resolved from the WQE's address vector
  uint32_t num_sge = 0;
  std::array<Sge, kMaxSge> sge{};
  std::vector<std::byte> inline_data;
  uint64_t length = 0;       // message length
  uint8_t vendor_err = 0;    // with read_send_wqe()'s *bad: why (VRNIC_VERR_*)
  vrnic::FastRegFields reg;  // REG_MR
  vrnic::BindMwFields bind;  // BIND_MW

  // REG_MR, LOCAL_INV and BIND_MW: executed by the device, no packets.
  [[nodiscard]] bool is_local() const {
    return opcode == WrOpcode::kRegMr || opcode == WrOpcode::kLocalInv ||
           opcode == WrOpcode::kBindMw;
  }
};

struct RecvWqe {
  uint32_t index = 0;
  uint64_t wr_id = 0;
  uint32_t num_sge = 0;
  std::array<Sge, kMaxSge> sge{};
  uint64_t length = 0;
};

struct Completion {
  uint64_t wr_id = 0;
  uint32_t wqe_idx = 0;
  WcOpcode opcode = WcOpcode::kSend;
  WcStatus status = WcStatus::kSuccess;
  uint32_t byte_len = 0;
  bool has_imm = false;
  bool has_inv = false;  // a SEND_WITH_INV: imm is the key it invalidated
  uint32_t imm = 0;
  uint32_t src_qp = 0;
  bool grh = false;
  bool ipv4 = false;
  bool roce_v1 = false;    // UD: a RoCEv1 datagram (its GRH as received)
  bool solicited = false;  // for solicited-only CQ notification
  uint8_t vendor_err = 0;  // why it failed (VRNIC_VERR_*)
};

// Result of a memory access made on the QP's behalf.
enum class MemStatus : uint8_t {
  kOk,
  kBadKey,     // no such key, or a key of another PD
  kNoAccess,   // the region does not grant the access
  kBounds,     // outside the region
  kMisaligned  // atomics need 8-byte alignment
};

// Affiliated asynchronous events, as the device reports them.
enum class QpEvent : uint8_t {
  kCommEst = VRNIC_EQE_TYPE_QP_COMM_EST,
  kSqDrained = VRNIC_EQE_TYPE_QP_SQ_DRAINED,
  kFatal = VRNIC_EQE_TYPE_QP_FATAL,           // local work queue catastrophic error
  kReqErr = VRNIC_EQE_TYPE_QP_REQ_ERR,        // invalid request received
  kAccessErr = VRNIC_EQE_TYPE_QP_ACCESS_ERR,  // remote access violation received
  kLastWqe = VRNIC_EQE_TYPE_QP_LAST_WQE,      // SRQ QP in error: no more receives
};

// Why a QP refused a packet (none of it reaches memory).
enum class Refusal : uint8_t {
  kAddress,   // RC/UC: not from the QP's peer
  kKey,       // R_Key, access or bounds violation
  kQkey,      // UD: wrong Q_Key
  kPkey,      // wrong P_Key
  kInvalid,   // out of order in its message, or a bad length
  kNoBuffer,  // UC/UD: no receive WQE
};

// Access rights.
constexpr uint32_t kAccessLocalWrite = VRNIC_ACCESS_LOCAL_WRITE;
constexpr uint32_t kAccessRemoteWrite = VRNIC_ACCESS_REMOTE_WRITE;
constexpr uint32_t kAccessRemoteRead = VRNIC_ACCESS_REMOTE_READ;
constexpr uint32_t kAccessRemoteAtomic = VRNIC_ACCESS_REMOTE_ATOMIC;
constexpr uint32_t kAccessFlushGlobal = VRNIC_ACCESS_FLUSH_GLOBAL;
constexpr uint32_t kAccessFlushPersistent = VRNIC_ACCESS_FLUSH_PERSISTENT;

// A FLUSH's type and level (VRNIC_FLUSH_*, as in the WQE and the FETH):
// at least one placement type, and no unknown type bit or level.
constexpr bool flush_valid(uint32_t type_level) {
  const uint32_t type = type_level & VRNIC_FLUSH_TYPE_MASK;
  const uint32_t level = (type_level & VRNIC_FLUSH_LEVEL_MASK) >> 4;
  return (type_level & ~(VRNIC_FLUSH_TYPE_MASK | VRNIC_FLUSH_LEVEL_MASK)) == 0 && type != 0 &&
         (type & ~(VRNIC_FLUSH_GLOBAL | VRNIC_FLUSH_PERSISTENT)) == 0 &&
         level <= VRNIC_FLUSH_LEVEL_MR;
}

// A FLUSH's placement type (VRNIC_FLUSH_GLOBAL, _PERSISTENT) as the access
// rights it needs.
constexpr uint32_t flush_access(uint32_t type) {
  return ((type & VRNIC_FLUSH_GLOBAL) != 0 ? kAccessFlushGlobal : 0U) |
         ((type & VRNIC_FLUSH_PERSISTENT) != 0 ? kAccessFlushPersistent : 0U);
}

// Where the payload of a packet to send comes from.  The environment
// copies it straight into the frame it builds.
struct Payload {
  enum class Source : uint8_t {
    kNone,
    kBytes,   // bytes[offset ...]: inline data
    kLocal,   // the SGEs' memory (lkeys) from offset into the message
    kRemote,  // a READ response: the region of rkey at va
  };
  Source source = Source::kNone;
  std::span<const std::byte> bytes;
  std::span<const Sge> sges;
  uint32_t rkey = 0;
  uint64_t va = 0;
  uint64_t offset = 0;
  size_t length = 0;
};

// What became of a packet handed to QpEnv::transmit().
enum class TxStatus : uint8_t {
  kSent,
  kBusy,      // the device has no room for it now: try again later
  kNoMemory,  // its payload's memory is gone: not sent
};

// What a QP's transport needs from the device around it.  The transport
// calls down into it, and it never calls back up.
class QpEnv {
 public:
  QpEnv() = default;
  virtual ~QpEnv() = default;
  QpEnv(const QpEnv&) = delete;
  QpEnv& operator=(const QpEnv&) = delete;
  QpEnv(QpEnv&&) = delete;
  QpEnv& operator=(QpEnv&&) = delete;

  // Local memory through an SGE list (lkeys of the QP's PD).  need is the
  // access the SGEs must grant (kAccessLocalWrite for targets).
  virtual MemStatus check_local(std::span<const Sge> sges, uint32_t need) = 0;
  virtual MemStatus gather(std::span<const Sge> sges, uint64_t offset,
                           std::span<std::byte> dst) = 0;
  virtual MemStatus scatter(std::span<const Sge> sges, uint64_t offset,
                            std::span<const std::byte> src) = 0;
  // Into a receive WQE's SGEs: their lkeys are of the SRQ's PD when the
  // QP receives from an SRQ.
  virtual MemStatus scatter_recv(std::span<const Sge> sges, uint64_t offset,
                                 std::span<const std::byte> src) {
    return scatter(sges, offset, src);
  }
  // Remote access through an rkey of the QP's PD.
  virtual MemStatus check_remote(uint32_t rkey, uint64_t va, uint64_t length, uint32_t need) = 0;
  virtual MemStatus remote_write(uint32_t rkey, uint64_t va, std::span<const std::byte> src) = 0;
  virtual MemStatus remote_read(uint32_t rkey, uint64_t va, std::span<std::byte> dst) = 0;
  virtual MemStatus remote_atomic(uint32_t rkey, uint64_t va, bool compare_swap,
                                  uint64_t compare_add, uint64_t swap, uint64_t* original) = 0;
  // ATOMIC_WRITE: the 8 bytes at an 8-byte aligned va (remote write
  // access), stored in one access: nobody sees half of them.
  virtual MemStatus remote_atomic_write(uint32_t rkey, uint64_t va,
                                        std::span<const std::byte, 8> bytes) = 0;
  // FLUSH of [va, va + length) or, with whole, of all of rkey's region or
  // window: everything placed there before is visible to every reader
  // (type VRNIC_FLUSH_GLOBAL) or persistent (VRNIC_FLUSH_PERSISTENT).  The
  // key must grant flush_access(type).
  virtual MemStatus remote_flush(uint32_t rkey, uint64_t va, uint64_t length, bool whole,
                                 uint32_t type) = 0;

  // REG_MR, LOCAL_INV and BIND_MW of a WQE: kSuccess, or its error status
  // with *verr (VRNIC_VERR_MR_*, VRNIC_VERR_MW_*).
  virtual WcStatus local_op(const SendWqe& w, uint8_t* verr) = 0;
  // SEND_WITH_INV received: invalidate rkey, a valid fast-register MR of
  // the QP's PD or a type 2 window bound to the QP.  false if it is not one.
  virtual bool invalidate_remote(uint32_t rkey) = 0;

  // Send ring: the WQE at index if the driver has posted it.  false with
  // *bad set: it is posted but malformed.
  virtual bool read_send_wqe(uint32_t index, SendWqe* wqe, bool* bad) = 0;
  // The producer index of the send ring.
  virtual uint32_t send_producer() = 0;
  // Receive queue (or SRQ): consume the next WQE.  false: none posted.
  virtual bool take_recv_wqe(RecvWqe* wqe, bool* bad) = 0;
  virtual bool has_srq() = 0;
  // The receive ring (not an SRQ) holds WQEs not taken yet.
  virtual bool recv_pending() = 0;

  // Send WQEs before next_index are complete (signaled or not): their ring
  // slots are free again.  Called before the completion of the last one.
  virtual void retire_send(uint32_t next_index) = 0;
  virtual void complete_send(const Completion& c) = 0;
  virtual void complete_recv(const Completion& c) = 0;

  // Send a packet with payload.length bytes of payload from where payload
  // says.  kBusy: the device cannot take it now (backpressure); kNoMemory:
  // that memory is gone.  Either way it is not sent.
  virtual TxStatus transmit(const Packet& pkt, const Payload& payload) = 0;
  virtual void event(QpEvent e) = 0;
  virtual uint64_t now_us() = 0;
  // Counters.
  virtual void count_retransmit() {}
  virtual void count_rnr_nak(bool sent) { (void)sent; }
  virtual void count_seq_nak(bool sent) { (void)sent; }
  virtual void count_duplicate() {}
  virtual void count_wqe() {}
  virtual void count_refused(Refusal why) { (void)why; }

 protected:
  // Copy a payload into dst (payload.length bytes), through the memory
  // access above; for transmit() implementations.
  bool read_payload(const Payload& payload, std::span<std::byte> dst);
};

struct QpConfig {
  QpType type = QpType::kRc;
  uint32_t qpn = 0;
  uint32_t dest_qpn = 0;
  uint32_t mtu = 1024;  // path MTU in bytes
  uint32_t qkey = 0;
  uint16_t pkey = kDefaultPkey;
  Path path;            // RC/UC: where packets go
  uint32_t access = 0;  // remote access the QP allows
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 0;
  uint8_t max_rd_atomic = 1;
  uint8_t max_dest_rd_atomic = 1;
  bool sq_sig_all = false;
  uint32_t max_inline = 0;
  bool gsi = false;                  // QP1: Q_Key 0x80010000, whatever the WR or attributes say
  bool block_self_mcast_lb = false;  // its own multicasts are not looped back to it
};

// Microseconds of an RNR NAK timer code (IBA table 45).
uint64_t rnr_timer_us(uint8_t code) noexcept;
// Microseconds of the local ACK timeout 4.096 us * 2^timeout (0: none).
uint64_t ack_timeout_us(uint8_t timeout) noexcept;

class QpTransport {
 public:
  // A UC QP drops a WRITE it cannot place, as the IB spec has it; but a
  // dropped WRITE tells a sender nothing, so an R_Key could be swept from
  // the wire.  After this many R_Key violations the QP goes to ERROR with
  // a QP_ACCESS_ERR event, as a NIC's security counters trip.
  static constexpr uint32_t kUcKeyViolationLimit = 8;

  QpTransport(QpEnv& env, QpConfig cfg);

  QpConfig& config() { return cfg_; }
  [[nodiscard]] const QpConfig& config() const { return cfg_; }
  [[nodiscard]] QpState state() const { return state_; }
  [[nodiscard]] uint32_t sq_psn() const { return next_psn_; }
  [[nodiscard]] uint32_t rq_psn() const { return epsn_; }
  [[nodiscard]] bool sq_draining() const { return state_ == QpState::kSqd && !ops_.empty(); }

  // State changes, already validated by the caller.
  void set_state(QpState s);
  // Before the driver moves the QP to ERR or RESET, or destroys it.
  void send_owed_responses();
  void set_sq_psn(uint32_t psn);
  void set_rq_psn(uint32_t psn);
  // Pace the send queue's packets at kbps (0: unpaced), burst bytes at once.
  void set_rate_limit(uint32_t kbps, uint32_t burst) { pacer_.set(kbps, burst, env_.now_us()); }
  [[nodiscard]] uint32_t rate_limit() const { return pacer_.kbps(); }
  [[nodiscard]] uint32_t max_burst() const { return pacer_.burst(); }

  // Requester: start and send work, up to budget packets.  Also flushes
  // work posted to a QP in error.  Returns true if it did anything.
  bool send_step(int budget);
  // Any packet addressed to this QP.
  void receive(const Packet& pkt);
  // Timers.  Returns true if it did anything.
  bool timer_step();
  // When the next timer fires, or UINT64_MAX.
  [[nodiscard]] uint64_t next_deadline() const;
  // Work the requester could do right now without new input.
  [[nodiscard]] bool has_send_work();

  // Work requests started and not yet completed (for tests).
  [[nodiscard]] size_t outstanding() const { return ops_.size(); }

  // What vrnicctl shows of the protocol's state.
  struct Status {
    size_t outstanding = 0;            // work requests started, not completed
    size_t outstanding_rd_atomic = 0;  // of them READs and atomics
    size_t responder_resources = 0;    // READs and atomics kept for duplicates
    uint32_t acked_psn = 0;            // the last PSN the responder acknowledged
    uint32_t retries_left = 0;
    uint32_t rnr_retries_left = 0;
  };
  [[nodiscard]] Status status() const {
    return {ops_.size(), outstanding_rd_atomic(), resources_.size(),
            acked_psn(), retries_left_,           rnr_retries_left_};
  }

  // Send WQEs consumed: the next one to start.
  [[nodiscard]] uint32_t sq_next() const { return sq_next_; }
  // Index of the oldest send WQE not yet completed (signaled or not).
  [[nodiscard]] uint32_t sq_done() const {
    return ops_.empty() ? sq_next_ : ops_.front().wqe.index;
  }

 private:
  struct SendOp {
    SendWqe wqe;
    uint32_t first_psn = 0;
    uint32_t npkts = 1;
    uint32_t next_pkt = 0;   // next packet to (re)transmit
    uint32_t done_pkts = 0;  // read: responses received; others: acked
    bool sent = false;       // every packet transmitted at least once
    bool done = false;       // complete, waiting for older ones
    WcStatus status = WcStatus::kSuccess;
    uint8_t vendor_err = 0;
    std::array<std::byte, 8> atomic_write{};  // ATOMIC_WRITE: its payload
    [[nodiscard]] bool is_read() const { return wqe.opcode == WrOpcode::kRead; }
    [[nodiscard]] bool is_atomic() const {
      return wqe.opcode == WrOpcode::kCompareSwap || wqe.opcode == WrOpcode::kFetchAdd;
    }
    [[nodiscard]] bool is_atomic_write() const { return wqe.opcode == WrOpcode::kAtomicWrite; }
    [[nodiscard]] bool is_flush() const { return wqe.opcode == WrOpcode::kFlush; }
    // Answered by an RDMA READ response of no bytes (IBA 1.5).
    [[nodiscard]] bool answered_empty() const { return is_atomic_write() || is_flush(); }
    // A responder may keep a resource for it (IBA 1.5: READs, atomics,
    // ATOMIC WRITEs and FLUSHes; rxe does), so it counts against
    // max_rd_atomic.
    [[nodiscard]] bool takes_resource() const {
      return is_read() || is_atomic() || answered_empty();
    }
    [[nodiscard]] uint32_t last_psn() const;
  };

  // A READ, atomic, ATOMIC WRITE or FLUSH the responder has executed, kept
  // to answer duplicates.  An ATOMIC WRITE's or a FLUSH's answer is a READ
  // response of no bytes (length 0), sent in order with the other
  // responses.
  struct Resource {
    bool atomic = false;
    bool empty = false;  // ATOMIC WRITE or FLUSH: the answer has no bytes
    uint32_t first_psn = 0;
    uint32_t npkts = 1;
    uint64_t va = 0;
    uint32_t rkey = 0;
    uint32_t length = 0;
    uint64_t original = 0;
    uint32_t next_pkt = 0;  // read responses still to send from here
    bool pending = false;
    bool replay = false;  // answering a duplicate: the requester has it all
  };

  // Requester (requester.cc)
  bool start_next_wqe();
  [[nodiscard]] bool window_has_room() const;
  [[nodiscard]] bool rd_atomic_allows(const SendOp& op) const;
  [[nodiscard]] bool opcode_allowed(const SendWqe& w) const;
  bool validate_wqe(SendOp& op, WcStatus* status, uint8_t* verr);
  bool fail_wqe(SendOp op, WcStatus status, uint8_t verr);
  bool start_local(SendOp op);
  [[nodiscard]] Packet request_packet(const SendOp& op, uint32_t k, Payload* payload) const;
  [[nodiscard]] Packet atomic_packet(const SendOp& op, uint32_t psn, Payload* payload) const;
  static Payload wqe_payload(const SendWqe& w, uint64_t off, uint64_t len);
  void address_datagram(const SendWqe& w, Packet* p) const;
  TxStatus transmit_packet(SendOp& op);
  [[nodiscard]] bool in_flight() const;
  [[nodiscard]] bool wants_ack(uint32_t k, bool last) const;
  int transmit_step();
  bool respond_step(int* budget);
  void complete_ops();
  void fail_op(SendOp& op, WcStatus status, uint8_t verr);
  void enter_error();
  void enter_sq_error();
  void flush_ops();
  bool flush_step(int budget);
  void ack_up_to(uint32_t psn);
  void rewind_to(uint32_t psn);
  void rerequest_from(uint32_t expected);
  void arm_retry_timer();
  [[nodiscard]] bool window_open(const SendOp& op) const;
  [[nodiscard]] size_t outstanding_rd_atomic() const;
  [[nodiscard]] uint32_t acked_psn() const;
  bool check_implied_nak(uint32_t psn);

  // Completer: one handler per kind of response (requester.cc)
  void on_response(const Packet& pkt);
  SendOp* op_at(uint32_t psn);
  bool on_ack(uint32_t psn);
  void on_nak(const Packet& pkt);
  void on_rnr_nak(SendOp& op, uint32_t psn, uint8_t timer);
  bool on_read_response(const Packet& pkt, const OpcodeInfo& oi);
  bool on_atomic_ack(const Packet& pkt);
  bool on_empty_response(SendOp& op, const Packet& pkt, const OpcodeInfo& oi);

  // Responder: one handler per kind of request (responder.cc)
  void on_request(const Packet& pkt);
  bool in_sequence(const Packet& pkt);
  [[nodiscard]] bool continues_message(const OpcodeInfo& oi, size_t plen) const;
  bool on_send(const Packet& pkt, const OpcodeInfo& oi);
  bool place_send(const Packet& pkt, const OpcodeInfo& oi);
  bool on_write(const Packet& pkt, const OpcodeInfo& oi);
  bool start_write(const Reth& reth);
  [[nodiscard]] bool write_fits(size_t plen, bool last) const;
  void on_read_request(const Packet& pkt);
  void on_atomic(const Packet& pkt);
  void on_atomic_write(const Packet& pkt);
  void on_flush(const Packet& pkt);
  void executed_empty(uint32_t psn);
  void answer_empty(uint32_t psn);
  void on_request_uc(const Packet& pkt);
  void uc_send(const Packet& pkt, const OpcodeInfo& oi);
  void uc_write(const Packet& pkt, const OpcodeInfo& oi);
  void on_request_ud(const Packet& pkt);
  void respond_duplicate(const Packet& pkt);
  void remember(const Resource& r);
  void send_ack(uint8_t syndrome, uint32_t psn);
  void send_response(const Packet& p);
  void send_nak(NakCode code, uint32_t psn);
  bool send_atomic_ack(Resource& r, int* budget);
  bool send_responses(Resource& r, int* budget);
  [[nodiscard]] bool responses_queued() const;
  void owe_ack(const Packet& p);
  bool send_owed_ack(int* budget);
  void responder_error(NakCode code, uint32_t psn, QpEvent event);
  void uc_key_violation();
  void complete_recv(WcStatus status, uint32_t byte_len, const Packet* last);
  void fail_recv(WcStatus status, uint8_t verr);
  bool take_recv(uint32_t psn);
  bool take_recv_unreliable();
  [[nodiscard]] bool accepts_requests() const;
  [[nodiscard]] bool from_peer(const Packet& pkt) const;

  [[nodiscard]] Packet new_packet(uint8_t op, uint32_t psn) const;
  [[nodiscard]] Packet ack_packet(uint8_t syndrome, uint32_t psn) const;

  QpEnv& env_;
  QpConfig cfg_;
  QpState state_ = QpState::kReset;

  // Requester
  std::deque<SendOp> ops_;  // started and not completed, oldest first
  size_t tx_op_ = 0;        // ops_[tx_op_] is the next to transmit from
  uint32_t sq_next_ = 0;    // next send WQE index to start
  uint32_t next_psn_ = 0;   // PSN of the next new packet
  uint32_t retries_left_ = 7;
  uint32_t rnr_retries_left_ = 7;
  uint64_t retry_deadline_ = UINT64_MAX;
  uint64_t rnr_deadline_ = UINT64_MAX;
  bool error_completed_ = false;   // the erroring WQE's completion is out
  bool read_rerequested_ = false;  // a READ gap was asked for again ...
  uint32_t rerequest_psn_ = 0;     // ... from this PSN
  bool nak_retry_ = false;         // a sequence NAK's retry runs (until progress)
  Pacer pacer_;                    // the send queue's packets (not responses)

  // Responder
  uint32_t epsn_ = 0;
  uint32_t msn_ = 0;
  bool nak_sent_ = false;
  bool recv_active_ = false;  // in the middle of a SEND
  RecvWqe recv_;
  uint64_t recv_offset_ = 0;
  bool write_active_ = false;  // in the middle of an RDMA WRITE
  uint32_t write_rkey_ = 0;
  uint64_t write_va_ = 0;
  uint64_t write_remaining_ = 0;
  uint32_t write_total_ = 0;
  enum class UcMsg : uint8_t { kNone, kSend, kWrite };
  UcMsg uc_msg_ = UcMsg::kNone;  // UC: the message being received
  uint32_t uc_key_violations_ = 0;
  bool comm_established_ = false;
  std::deque<Resource> resources_;
  std::optional<Packet> owed_ack_;  // an ACK or NAK the link had no room for
};

}  // namespace vrnicd::roce
