// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic's polling fast path: completions are read straight from the
// mapped CQ ring (through the common codec).  The device writes a CQE's
// last word, with the owner bit, after the rest, so an entry whose owner
// bit matches the pass is complete.
#include <endian.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "vrnic.h"

namespace vrnic {
namespace {

std::byte* cqe_slot(const Cq* cq, uint32_t idx) noexcept {
  return cq->ring + (static_cast<size_t>(ring_slot(idx, cq->log_depth)) << VRNIC_CQE_LOG_SIZE);
}

// The next CQE, if the device has written it.  Inlined: an empty poll is
// the hottest loop of a busy application.
[[gnu::always_inline]] inline bool next_cqe(Cq* cq, CqeFields* out) noexcept {
  if (!cqe_read(cqe_slot(cq, cq->ci), cq->ci, cq->log_depth, out)) {
    return false;
  }
  ++cq->ci;
  return true;
}

// The device's completion opcodes and statuses are libibverbs' own;
// cqe_read() has turned any it does not define into GENERAL_ERR.
static_assert(same_value(VRNIC_CQE_SEND, IBV_WC_SEND) &&
              same_value(VRNIC_CQE_RDMA_WRITE, IBV_WC_RDMA_WRITE) &&
              same_value(VRNIC_CQE_RDMA_READ, IBV_WC_RDMA_READ) &&
              same_value(VRNIC_CQE_COMP_SWAP, IBV_WC_COMP_SWAP) &&
              same_value(VRNIC_CQE_FETCH_ADD, IBV_WC_FETCH_ADD) &&
              same_value(VRNIC_CQE_BIND_MW, IBV_WC_BIND_MW) &&
              same_value(VRNIC_CQE_LOCAL_INV, IBV_WC_LOCAL_INV) &&
              same_value(VRNIC_CQE_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE) &&
              same_value(VRNIC_CQE_RECV, IBV_WC_RECV) &&
              same_value(VRNIC_CQE_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM));
static_assert(same_value(VRNIC_CQE_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR) &&
              same_value(VRNIC_CQE_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR) &&
              same_value(VRNIC_CQE_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR) &&
              same_value(VRNIC_CQE_MW_BIND_ERR, IBV_WC_MW_BIND_ERR) &&
              same_value(VRNIC_CQE_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR) &&
              same_value(VRNIC_CQE_RNR_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR) &&
              same_value(VRNIC_CQE_FATAL_ERR, IBV_WC_FATAL_ERR) &&
              same_value(VRNIC_CQE_GENERAL_ERR, IBV_WC_GENERAL_ERR));

ibv_wc_status wc_status(const CqeFields& e) noexcept {
  return static_cast<ibv_wc_status>(e.status);
}
// FLUSH is libibverbs' 8 (IBV_WC_FLUSH, rdma-core 45 on), a number the
// device gives REG_MR, which user QPs never post.
constexpr uint32_t kIbvWcFlush = 8;
#if VRNIC_RDMA_CORE_MAJOR >= 45
static_assert(same_value(kIbvWcFlush, IBV_WC_FLUSH));
#endif

ibv_wc_opcode wc_opcode(const CqeFields& e) noexcept {
  return static_cast<ibv_wc_opcode>(e.opcode == VRNIC_CQE_FLUSH ? kIbvWcFlush : e.opcode);
}

unsigned int wc_flags(const CqeFields& e) noexcept {
  return (e.has_imm ? IBV_WC_WITH_IMM : 0U) | (e.has_inv ? IBV_WC_WITH_INV : 0U) |
         (e.grh ? IBV_WC_GRH : 0U);
}

// RoCE has no service levels in completions.  mlx5 reports a received
// datagram's L3 header type where IB has the SL (1 IPv6, 2 IPv4), and
// software relies on it: UCX's UD transport (1.13 to 1.18) reads sl to find
// the destination address in a datagram's GRH area and drops every datagram
// it cannot match.  vrnic reports it the same way; 0 without a GRH.
uint8_t wc_sl(const CqeFields& e) noexcept {
  if (!e.grh) {
    return 0;
  }
  return e.ipv4 ? 2 : 1;
}

// imm_data and invalidated_rkey share the field: immediate data in network
// order, the key (as libibverbs reads it) in CPU order.
__be32 imm_or_key(const CqeFields& e) noexcept {
  if (e.has_inv) {
    __be32 key{};
    std::memcpy(&key, &e.imm, sizeof(key));
    return key;
  }
  return htobe32(e.imm);
}

void fill_wc(const CqeFields& e, ibv_wc* wc) noexcept {
  *wc = {};
  wc->wr_id = e.wr_id;
  wc->status = wc_status(e);
  wc->opcode = wc_opcode(e);
  wc->vendor_err = e.vendor_err;
  wc->byte_len = e.byte_len;
  wc->imm_data = imm_or_key(e);
  wc->qp_num = e.qpn;
  wc->src_qp = e.src_qp;
  wc->wc_flags = wc_flags(e);
  wc->sl = wc_sl(e);
}

// ibv_cq_ex polling: start_poll/next_poll fetch an entry into cq->cur,
// the read_* callbacks look at it, end_poll returns the slots.
VRNIC_HOT_LOOP int start_poll(ibv_cq_ex* ibcq, ibv_poll_cq_attr* attr) noexcept {
  Cq* cq = to_vcq_ex(ibcq);
  if (attr->comp_mask != 0) {
    return EINVAL;
  }
  pthread_spin_lock(&cq->lock);
  if (!next_cqe(cq, &cq->cur)) {
    pthread_spin_unlock(&cq->lock);
    return ENOENT;
  }
  ibcq->wr_id = cq->cur.wr_id;
  ibcq->status = wc_status(cq->cur);
  return 0;
}

VRNIC_HOT_LOOP int next_poll(ibv_cq_ex* ibcq) noexcept {
  Cq* cq = to_vcq_ex(ibcq);
  if (!next_cqe(cq, &cq->cur)) {
    return ENOENT;
  }
  ibcq->wr_id = cq->cur.wr_id;
  ibcq->status = wc_status(cq->cur);
  return 0;
}

void end_poll(ibv_cq_ex* ibcq) noexcept {
  Cq* cq = to_vcq_ex(ibcq);
  publish_ci(cq);
  pthread_spin_unlock(&cq->lock);
}

ibv_wc_opcode read_opcode(ibv_cq_ex* ibcq) noexcept { return wc_opcode(to_vcq_ex(ibcq)->cur); }
uint32_t read_vendor_err(ibv_cq_ex* ibcq) noexcept { return to_vcq_ex(ibcq)->cur.vendor_err; }
uint32_t read_byte_len(ibv_cq_ex* ibcq) noexcept { return to_vcq_ex(ibcq)->cur.byte_len; }
__be32 read_imm_data(ibv_cq_ex* ibcq) noexcept { return imm_or_key(to_vcq_ex(ibcq)->cur); }
uint32_t read_qp_num(ibv_cq_ex* ibcq) noexcept { return to_vcq_ex(ibcq)->cur.qpn; }
uint32_t read_src_qp(ibv_cq_ex* ibcq) noexcept { return to_vcq_ex(ibcq)->cur.src_qp; }
unsigned int read_wc_flags(ibv_cq_ex* ibcq) noexcept { return wc_flags(to_vcq_ex(ibcq)->cur); }
// RoCE has no LIDs in completions.
uint32_t read_slid(ibv_cq_ex* /*ibcq*/) noexcept { return 0; }
uint8_t read_sl(ibv_cq_ex* ibcq) noexcept { return wc_sl(to_vcq_ex(ibcq)->cur); }
uint8_t read_dlid_path_bits(ibv_cq_ex* /*ibcq*/) noexcept { return 0; }

}  // namespace

void set_ex_ops(Cq* cq, uint64_t wc_flags) noexcept {
  ibv_cq_ex& ex = cq->vcq.cq_ex;
  ex.start_poll = start_poll;
  ex.next_poll = next_poll;
  ex.end_poll = end_poll;
  ex.read_opcode = read_opcode;
  ex.read_vendor_err = read_vendor_err;
  ex.read_wc_flags = read_wc_flags;
  if ((wc_flags & IBV_WC_EX_WITH_BYTE_LEN) != 0) {
    ex.read_byte_len = read_byte_len;
  }
  if ((wc_flags & IBV_WC_EX_WITH_IMM) != 0) {
    ex.read_imm_data = read_imm_data;
  }
  if ((wc_flags & IBV_WC_EX_WITH_QP_NUM) != 0) {
    ex.read_qp_num = read_qp_num;
  }
  if ((wc_flags & IBV_WC_EX_WITH_SRC_QP) != 0) {
    ex.read_src_qp = read_src_qp;
  }
  if ((wc_flags & IBV_WC_EX_WITH_SLID) != 0) {
    ex.read_slid = read_slid;
  }
  if ((wc_flags & IBV_WC_EX_WITH_SL) != 0) {
    ex.read_sl = read_sl;
  }
  if ((wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS) != 0) {
    ex.read_dlid_path_bits = read_dlid_path_bits;
  }
}

// Give the consumed slots back to the device.
void publish_ci(Cq* cq) noexcept {
  store_release32(cq->dbrec + offsetof(vrnic_cq_dbrec, ci), to_le32(cq->ci));
}

// ibv_destroy_qp takes the QP's completions that were not polled out of
// its CQs, as mlx5 and irdma do: software frees a QP's work request
// contexts with it, and libfabric's verbs provider drains its CQs right
// after destroying a QP, so an entry left behind would hand back a freed
// wr_id.  A move to RESET does the same (mlx5).  The device writes nothing
// for the QP once DESTROY_QP, or MODIFY_QP to RESET, completed.
// The written entries after the dropped ones move up over them, from the
// newest back, and ci passes the slots they leave; the device writes only
// beyond the newest, within the ci it last read.
void clean_cq(Cq* cq, uint32_t qpn) noexcept {
  const SpinGuard lock(&cq->lock);
  const uint32_t depth = 1U << cq->log_depth;
  uint32_t written = 0;
  CqeFields e;
  while (written < depth &&
         cqe_read(cqe_slot(cq, cq->ci + written), cq->ci + written, cq->log_depth, &e)) {
    ++written;
  }
  uint32_t dropped = 0;
  for (uint32_t n = written; n > 0; --n) {
    const uint32_t idx = cq->ci + n - 1;
    cqe_read(cqe_slot(cq, idx), idx, cq->log_depth, &e);
    if (e.qpn == qpn) {
      ++dropped;
    } else if (dropped > 0) {
      cqe_move(cqe_slot(cq, idx), cqe_slot(cq, idx + dropped), idx + dropped, cq->log_depth);
    }
  }
  if (dropped > 0) {
    cq->ci += dropped;
    publish_ci(cq);
  }
}

VRNIC_HOT_LOOP int poll_cq(ibv_cq* ibcq, int ne, ibv_wc* wc) noexcept {
  Cq* cq = to_vcq(ibcq);
  const SpinGuard lock(&cq->lock);
  int n = 0;
  CqeFields e;
  while (n < ne && next_cqe(cq, &e)) {
    fill_wc(e, &wc[n]);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    ++n;
  }
  if (n > 0) {
    publish_ci(cq);
  }
  return n;
}

// Arming is a write to the doorbell record: the device looks at arm_sn
// whenever it adds a completion, so no doorbell is needed.
int req_notify_cq(ibv_cq* ibcq, int solicited_only) noexcept {
  Cq* cq = to_vcq(ibcq);
  const SpinGuard lock(&cq->lock);
  store_release32(cq->dbrec + offsetof(vrnic_cq_dbrec, arm_flags),
                  to_le32(solicited_only != 0 ? VRNIC_CQ_ARM_SOLICITED : 0));
  ++cq->arm_sn;
  store_release32(cq->dbrec + offsetof(vrnic_cq_dbrec, arm_sn), to_le32(cq->arm_sn));
  // The caller polls next: order the arm before that poll's reads, as the
  // device orders its CQE write before reading arm_sn.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return 0;
}

}  // namespace vrnic
