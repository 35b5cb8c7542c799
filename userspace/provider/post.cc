// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic's posting fast path, with no system call: WQEs are written
// straight into the mapped send and receive rings (through the common
// codec), publishing the producer index in the doorbell record hands them
// to the device, and the BAR0 doorbell wakes it only if it sleeps.  Both
// ibv_post_send() and the ibv_wr_*() API build the same WQEs.
#include <endian.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>

#include "vrnic.h"

namespace vrnic {
namespace {

// FLUSH came with rdma-core 45 (IBV_WR_FLUSH, ibv_wr_flush()).
#if VRNIC_RDMA_CORE_AT_LEAST(45)
constexpr uint64_t kFlushOps = IBV_QP_EX_WITH_FLUSH;
static_assert(same_value(VRNIC_WQE_FLUSH, IBV_WR_FLUSH) &&
              same_value(VRNIC_FLUSH_GLOBAL, IBV_FLUSH_GLOBAL) &&
              same_value(VRNIC_FLUSH_PERSISTENT, IBV_FLUSH_PERSISTENT) &&
              same_value(VRNIC_FLUSH_LEVEL_RANGE, IBV_FLUSH_RANGE) &&
              same_value(VRNIC_FLUSH_LEVEL_MR, IBV_FLUSH_MR));
#else
constexpr uint64_t kFlushOps = 0;
#endif
constexpr uint64_t kUcSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
constexpr uint64_t kRcSendOps = kUcSendOps | IBV_QP_EX_WITH_RDMA_READ |
                                IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV |
                                IBV_QP_EX_WITH_ATOMIC_WRITE | kFlushOps;
constexpr uint64_t kUdSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

bool is_inline_capable(ibv_wr_opcode op) noexcept {
  return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
         op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_INV;
}

// The device's WQE opcodes are libibverbs' own.
static_assert(same_value(VRNIC_WQE_RDMA_WRITE, IBV_WR_RDMA_WRITE) &&
              same_value(VRNIC_WQE_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM) &&
              same_value(VRNIC_WQE_SEND, IBV_WR_SEND) &&
              same_value(VRNIC_WQE_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM) &&
              same_value(VRNIC_WQE_RDMA_READ, IBV_WR_RDMA_READ) &&
              same_value(VRNIC_WQE_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP) &&
              same_value(VRNIC_WQE_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD) &&
              same_value(VRNIC_WQE_LOCAL_INV, IBV_WR_LOCAL_INV) &&
              same_value(VRNIC_WQE_BIND_MW, IBV_WR_BIND_MW) &&
              same_value(VRNIC_WQE_SEND_WITH_INV, IBV_WR_SEND_WITH_INV) &&
              same_value(VRNIC_WQE_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE));
// Window rights use the libibverbs bits.
static_assert(same_value(VRNIC_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_WRITE) &&
              same_value(VRNIC_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_READ) &&
              same_value(VRNIC_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_REMOTE_ATOMIC) &&
              same_value(VRNIC_ACCESS_ZERO_BASED, IBV_ACCESS_ZERO_BASED));
constexpr unsigned int kMwAccess =
    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// A BIND_MW WQE: the MR may be absent only to unbind (length 0).  A
// window's rights are the remote ones, and a type 2 window may be
// zero-based (the device refuses it for type 1, as IB says); the other
// access bits (LOCAL_WRITE, MW_BIND) mean nothing for a window and are
// ignored, as rxe and mlx5 ignore them.
int write_bind(const SqeWriter& w, uint32_t rkey, const ibv_mw_bind_info& b) noexcept {
  if (b.length != 0 && b.mr == nullptr) {
    return EINVAL;
  }
  w.set_bind(rkey, b.addr, b.length, b.mr != nullptr ? b.mr->lkey : 0,
             static_cast<uint32_t>(b.mw_access_flags) & (kMwAccess | IBV_ACCESS_ZERO_BASED));
  return 0;
}

bool sq_full(const Qp* qp, uint32_t pi) noexcept {
  const uint32_t ci = le32(load_acquire32(qp->dbrec + offsetof(vrnic_qp_dbrec, sq_ci)));
  return ring_used(pi, ci) >= (1U << qp->sq_log_depth);
}

uint32_t ctrl_flags(const Qp* qp, unsigned int send_flags) noexcept {
  uint32_t flags = 0;
  if ((send_flags & IBV_SEND_SIGNALED) != 0 || qp->sq_sig_all) {
    flags |= VRNIC_WQE_CTRL_SIGNALED;
  }
  if ((send_flags & IBV_SEND_SOLICITED) != 0) {
    flags |= VRNIC_WQE_CTRL_SOLICITED;
  }
  if ((send_flags & IBV_SEND_FENCE) != 0) {
    flags |= VRNIC_WQE_CTRL_FENCE;
  }
  return flags;
}

// Start a WQE at index pi: its header, with no data yet.
SqeWriter begin_wqe(const Qp* qp, uint32_t pi, ibv_wr_opcode op, uint64_t wr_id,
                    unsigned int send_flags) noexcept {
  const size_t stride = size_t{1} << qp->sq_log_stride;
  const SqeWriter w(qp->sq + ring_slot(pi, qp->sq_log_depth) * stride, stride,
                    qp->type == IBV_QPT_UD);
  w.begin(wr_id, static_cast<uint32_t>(op), ctrl_flags(qp, send_flags));
  return w;
}

int write_sges(const Qp* qp, const SqeWriter& w, std::span<const ibv_sge> sges) noexcept {
  return sges.size() <= qp->max_send_sge && w.set_sges(sges) ? 0 : EINVAL;
}

// Inline data gathered from buffers in this process.
int write_inline(const Qp* qp, const SqeWriter& w, std::span<const ibv_data_buf> bufs) noexcept {
  size_t total = 0;
  for (const ibv_data_buf& b : bufs) {
    total += b.length;
  }
  return total <= qp->max_inline && w.set_inline(bufs) ? 0 : EINVAL;
}

int write_ud(const SqeWriter& w, const ibv_ah* ibah, uint32_t remote_qpn,
             uint32_t remote_qkey) noexcept {
  if (ibah == nullptr) {
    return EINVAL;
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast)
  w.set_ud(to_vah(const_cast<ibv_ah*>(ibah))->av, remote_qpn, remote_qkey);
  return 0;
}

// Hand WQEs up to pi to the device.
void publish_sq(Qp* qp, uint32_t pi) noexcept {
  qp->sq_pi = pi;
  store_release32(qp->dbrec + offsetof(vrnic_qp_dbrec, sq_pi), to_le32(pi));
  ring_engine(qp->ctx);
}

// An ibv_post_send() work request's SGEs as inline data: their addresses
// are pointers in this process.
int write_inline_sges(const Qp* qp, const SqeWriter& w, std::span<const ibv_sge> sges) noexcept {
  if (sges.size() > qp->max_send_sge) {
    return EINVAL;
  }
  std::array<ibv_data_buf, VRNIC_MAX_SGE> bufs{};
  for (size_t i = 0; i < sges.size(); ++i) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr,cppcoreguidelines-pro-type-reinterpret-cast)
    bufs.at(i) = {reinterpret_cast<void*>(sges[i].addr), sges[i].length};
  }
  return write_inline(qp, w, std::span(bufs.data(), sges.size()));
}

// ATOMIC_WRITE's 8 bytes and FLUSH's type and level have no field in an
// ibv_send_wr: they are posted with ibv_wr_atomic_write() and
// ibv_wr_flush() only, and ibv_post_send() refuses them.
int build_send(Qp* qp, uint32_t pi, const ibv_send_wr* wr) noexcept {
  const uint64_t bit = send_op_bit(wr->opcode);
  if (bit == 0 || (bit & send_ops_for(qp->type)) == 0 || wr->num_sge < 0 ||
      (bit & (IBV_QP_EX_WITH_ATOMIC_WRITE | kFlushOps)) != 0) {
    return EINVAL;
  }
  const SqeWriter w = begin_wqe(qp, pi, wr->opcode, wr->wr_id, wr->send_flags);
  if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || wr->opcode == IBV_WR_SEND_WITH_IMM) {
    w.set_imm(be32toh(wr->imm_data));
  }
  switch (wr->opcode) {
    case IBV_WR_BIND_MW:
      return wr->bind_mw.mw == nullptr ? EINVAL
                                       : write_bind(w, wr->bind_mw.rkey, wr->bind_mw.bind_info);
    case IBV_WR_LOCAL_INV:
      w.set_invalidate(wr->invalidate_rkey);
      return 0;  // no data
    case IBV_WR_SEND_WITH_INV:
      w.set_invalidate(wr->invalidate_rkey);
      break;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
      w.set_remote(wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      w.set_remote(wr->wr.atomic.remote_addr, wr->wr.atomic.rkey);
      w.set_atomic(wr->wr.atomic.compare_add, wr->wr.atomic.swap);
      break;
    default:
      break;
  }
  if (qp->type == IBV_QPT_UD) {
    if (const int err = write_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
        err != 0) {
      return err;
    }
  }
  const std::span<const ibv_sge> sges(wr->sg_list, static_cast<size_t>(wr->num_sge));
  if ((wr->send_flags & IBV_SEND_INLINE) != 0 && is_inline_capable(wr->opcode)) {
    return write_inline_sges(qp, w, sges);
  }
  return write_sges(qp, w, sges);
}

// ---------------------------------------------------------------------------
// ibv_wr_*(): WQEs built between wr_start() and wr_complete().

Qp* from_ex(ibv_qp_ex* ibqp) noexcept { return to_vqp_ex(ibqp); }

// Start the next WQE of the batch, or note why not.
const SqeWriter* wr_begin(ibv_qp_ex* ibqp, ibv_wr_opcode op) noexcept {
  Qp* qp = from_ex(ibqp);
  qp->wr_wqe = SqeWriter{};
  if (qp->wr_err != 0) {
    return nullptr;
  }
  if (sq_full(qp, qp->wr_pi)) {
    qp->wr_err = ENOMEM;
    return nullptr;
  }
  qp->wr_wqe = begin_wqe(qp, qp->wr_pi, op, ibqp->wr_id, ibqp->wr_flags);
  ++qp->wr_pi;
  return &qp->wr_wqe;
}

void wr_send(ibv_qp_ex* ibqp) noexcept { wr_begin(ibqp, IBV_WR_SEND); }

void wr_send_imm(ibv_qp_ex* ibqp, __be32 imm) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_SEND_WITH_IMM)) {
    w->set_imm(be32toh(imm));
  }
}

void wr_rdma_write(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_RDMA_WRITE)) {
    w->set_remote(addr, rkey);
  }
}

void wr_rdma_write_imm(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr, __be32 imm) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM)) {
    w->set_remote(addr, rkey);
    w->set_imm(be32toh(imm));
  }
}

void wr_rdma_read(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_RDMA_READ)) {
    w->set_remote(addr, rkey);
  }
}

void wr_atomic_cmp_swp(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr, uint64_t compare,
                       uint64_t swap) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP)) {
    w->set_remote(addr, rkey);
    w->set_atomic(compare, swap);
  }
}

void wr_atomic_fetch_add(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr, uint64_t add) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD)) {
    w->set_remote(addr, rkey);
    w->set_atomic(add, 0);
  }
}

void wr_atomic_write(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr,
                     const void* atomic_wr) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_ATOMIC_WRITE)) {
    w->set_remote(addr, rkey);
    w->set_atomic_write(atomic_wr);
  }
}

#if VRNIC_RDMA_CORE_AT_LEAST(45)
// The range of rkey, or its whole region or window at level MR; the
// device checks the type and level and fails the WQE if it knows neither.
void wr_flush(ibv_qp_ex* ibqp, uint32_t rkey, uint64_t addr, size_t len, uint8_t type,
              uint8_t level) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_FLUSH)) {
    w->set_remote(addr, rkey);
    w->set_flush(type | (uint32_t{level} << 4), static_cast<uint32_t>(len));
  }
}
#endif

void wr_bind_mw(ibv_qp_ex* ibqp, ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_BIND_MW)) {
    Qp* qp = from_ex(ibqp);
    if (mw == nullptr || write_bind(*w, rkey, *info) != 0) {
      qp->wr_err = EINVAL;
    }
  }
}

void wr_local_inv(ibv_qp_ex* ibqp, uint32_t invalidate_rkey) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_LOCAL_INV)) {
    w->set_invalidate(invalidate_rkey);
  }
}

void wr_send_inv(ibv_qp_ex* ibqp, uint32_t invalidate_rkey) noexcept {
  if (const SqeWriter* w = wr_begin(ibqp, IBV_WR_SEND_WITH_INV)) {
    w->set_invalidate(invalidate_rkey);
  }
}

void wr_set_ud_addr(ibv_qp_ex* ibqp, ibv_ah* ah, uint32_t remote_qpn,
                    uint32_t remote_qkey) noexcept {
  Qp* qp = from_ex(ibqp);
  if (!qp->wr_wqe.valid()) {
    return;
  }
  qp->wr_err = qp->type == IBV_QPT_UD ? write_ud(qp->wr_wqe, ah, remote_qpn, remote_qkey) : EINVAL;
}

void wr_set_sge(ibv_qp_ex* ibqp, uint32_t lkey, uint64_t addr, uint32_t length) noexcept {
  Qp* qp = from_ex(ibqp);
  if (qp->wr_wqe.valid()) {
    const ibv_sge sge{addr, length, lkey};
    qp->wr_err = write_sges(qp, qp->wr_wqe, std::span(&sge, 1));
  }
}

void wr_set_sge_list(ibv_qp_ex* ibqp, size_t num_sge, const ibv_sge* sg_list) noexcept {
  Qp* qp = from_ex(ibqp);
  if (qp->wr_wqe.valid()) {
    qp->wr_err = write_sges(qp, qp->wr_wqe, std::span(sg_list, num_sge));
  }
}

void wr_set_inline_data(ibv_qp_ex* ibqp, void* addr, size_t length) noexcept {
  Qp* qp = from_ex(ibqp);
  if (qp->wr_wqe.valid()) {
    const ibv_data_buf buf{addr, length};
    qp->wr_err = write_inline(qp, qp->wr_wqe, std::span(&buf, 1));
  }
}

void wr_set_inline_data_list(ibv_qp_ex* ibqp, size_t num_buf,
                             const ibv_data_buf* buf_list) noexcept {
  Qp* qp = from_ex(ibqp);
  if (qp->wr_wqe.valid()) {
    qp->wr_err = write_inline(qp, qp->wr_wqe, std::span(buf_list, num_buf));
  }
}

// The IB spec: posting to a send queue that has not reached RTS is an
// error, through either API.
bool sq_postable(const ibv_qp* ibqp) noexcept {
  switch (ibqp->state) {
    case IBV_QPS_RESET:
    case IBV_QPS_INIT:
    case IBV_QPS_RTR:
      return false;
    default:
      return true;
  }
}

void wr_start(ibv_qp_ex* ibqp) noexcept {
  Qp* qp = from_ex(ibqp);
  pthread_spin_lock(&qp->sq_lock);
  qp->wr_pi = qp->sq_pi;
  qp->wr_wqe = SqeWriter{};
  qp->wr_err = 0;
}

// All or nothing: with an error, none of the batch is posted.
int wr_complete(ibv_qp_ex* ibqp) noexcept {
  Qp* qp = from_ex(ibqp);
  const int err = qp->wr_err != 0 ? qp->wr_err : sq_postable(&ibqp->qp_base) ? 0 : EINVAL;
  if (err == 0 && qp->wr_pi != qp->sq_pi) {
    publish_sq(qp, qp->wr_pi);
  }
  qp->wr_wqe = SqeWriter{};
  pthread_spin_unlock(&qp->sq_lock);
  return err;
}

void wr_abort(ibv_qp_ex* ibqp) noexcept {
  Qp* qp = from_ex(ibqp);
  qp->wr_wqe = SqeWriter{};
  pthread_spin_unlock(&qp->sq_lock);
}

}  // namespace

uint64_t send_op_bit(ibv_wr_opcode op) noexcept {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
      return IBV_QP_EX_WITH_RDMA_WRITE;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
    case IBV_WR_SEND:
      return IBV_QP_EX_WITH_SEND;
    case IBV_WR_SEND_WITH_IMM:
      return IBV_QP_EX_WITH_SEND_WITH_IMM;
    case IBV_WR_RDMA_READ:
      return IBV_QP_EX_WITH_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    case IBV_WR_BIND_MW:
      return IBV_QP_EX_WITH_BIND_MW;
    case IBV_WR_LOCAL_INV:
      return IBV_QP_EX_WITH_LOCAL_INV;
    case IBV_WR_SEND_WITH_INV:
      return IBV_QP_EX_WITH_SEND_WITH_INV;
    case IBV_WR_ATOMIC_WRITE:
      return IBV_QP_EX_WITH_ATOMIC_WRITE;
#if VRNIC_RDMA_CORE_AT_LEAST(45)
    case IBV_WR_FLUSH:
      return IBV_QP_EX_WITH_FLUSH;
#endif
    default:
      return 0;
  }
}

uint64_t flush_send_ops() noexcept { return kFlushOps; }

uint64_t send_ops_for(ibv_qp_type type) noexcept {
  switch (type) {
    case IBV_QPT_RC:
      return kRcSendOps;
    case IBV_QPT_UC:
      return kUcSendOps;
    case IBV_QPT_UD:
      return kUdSendOps;
    default:
      return 0;
  }
}

void set_wr_ops(Qp* qp, uint64_t flags) noexcept {
  ibv_qp_ex& ex = qp->vqp.qp_ex;
  if ((flags & IBV_QP_EX_WITH_SEND) != 0) {
    ex.wr_send = wr_send;
  }
  if ((flags & IBV_QP_EX_WITH_SEND_WITH_IMM) != 0) {
    ex.wr_send_imm = wr_send_imm;
  }
  if ((flags & IBV_QP_EX_WITH_RDMA_WRITE) != 0) {
    ex.wr_rdma_write = wr_rdma_write;
  }
  if ((flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM) != 0) {
    ex.wr_rdma_write_imm = wr_rdma_write_imm;
  }
  if ((flags & IBV_QP_EX_WITH_RDMA_READ) != 0) {
    ex.wr_rdma_read = wr_rdma_read;
  }
  if ((flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) != 0) {
    ex.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  }
  if ((flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) != 0) {
    ex.wr_atomic_fetch_add = wr_atomic_fetch_add;
  }
  ex.wr_set_ud_addr = wr_set_ud_addr;
  ex.wr_set_sge = wr_set_sge;
  ex.wr_set_sge_list = wr_set_sge_list;
  ex.wr_set_inline_data = wr_set_inline_data;
  ex.wr_set_inline_data_list = wr_set_inline_data_list;
  if ((flags & IBV_QP_EX_WITH_BIND_MW) != 0) {
    ex.wr_bind_mw = wr_bind_mw;
  }
  if ((flags & IBV_QP_EX_WITH_LOCAL_INV) != 0) {
    ex.wr_local_inv = wr_local_inv;
  }
  if ((flags & IBV_QP_EX_WITH_SEND_WITH_INV) != 0) {
    ex.wr_send_inv = wr_send_inv;
  }
  if ((flags & IBV_QP_EX_WITH_ATOMIC_WRITE) != 0) {
    ex.wr_atomic_write = wr_atomic_write;
  }
#if VRNIC_RDMA_CORE_AT_LEAST(45)
  if ((flags & IBV_QP_EX_WITH_FLUSH) != 0) {
    ex.wr_flush = wr_flush;
  }
#endif
  ex.wr_start = wr_start;
  ex.wr_complete = wr_complete;
  ex.wr_abort = wr_abort;
}

int post_send(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad) noexcept {
  Qp* qp = to_vqp(ibqp);
  if (!sq_postable(ibqp)) {
    *bad = wr;
    return EINVAL;
  }
  const SpinGuard lock(&qp->sq_lock);
  uint32_t pi = qp->sq_pi;
  int err = 0;
  for (; wr != nullptr; wr = wr->next) {
    if (sq_full(qp, pi)) {
      err = ENOMEM;
      break;
    }
    err = build_send(qp, pi, wr);
    if (err != 0) {
      break;
    }
    ++pi;
  }
  if (err != 0) {
    *bad = wr;
  }
  if (pi != qp->sq_pi) {
    publish_sq(qp, pi);
  }
  return err;
}

int post_recv_ring(Context* ctx, RecvRing* ring, ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept {
  uint32_t pi = ring->pi;
  int err = 0;
  for (; wr != nullptr; wr = wr->next) {
    const uint32_t ci = le32(load_acquire32(ring->ci_rec));
    if (ring_used(pi, ci) >= (1U << ring->log_depth)) {
      err = ENOMEM;
      break;
    }
    std::byte* slot = ring->base + (size_t{ring_slot(pi, ring->log_depth)} << ring->log_stride);
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > ring->max_sge ||
        !rqe_write(slot, ring->log_stride, wr->wr_id,
                   std::span<const ibv_sge>(wr->sg_list, static_cast<size_t>(wr->num_sge)))) {
      err = EINVAL;
      break;
    }
    ++pi;
  }
  if (err != 0) {
    *bad = wr;
  }
  if (pi != ring->pi) {
    ring->pi = pi;
    store_release32(ring->pi_rec, to_le32(pi));
    ring_engine(ctx);
  }
  return err;
}

int post_recv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept {
  Qp* qp = to_vqp(ibqp);
  if (qp->srq != nullptr || ibqp->state == IBV_QPS_RESET) {
    *bad = wr;
    return EINVAL;
  }
  const SpinGuard lock(&qp->rq_lock);
  return post_recv_ring(qp->ctx, &qp->rq, wr, bad);
}

int post_srq_recv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept {
  Srq* srq = to_vsrq(ibsrq);
  const SpinGuard lock(&srq->lock);
  return post_recv_ring(srq->ctx, &srq->ring, wr, bad);
}

}  // namespace vrnic
