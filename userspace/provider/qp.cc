// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic queue pairs: WQEs are written straight into the mapped send
// and receive rings; publishing the producer index in the doorbell record
// hands them to the device, and the BAR0 doorbell wakes it if it sleeps.
// Both ibv_post_send() and the ibv_wr_*() API build the same WQEs.
#include <endian.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <span>

#include "abi_mirror.h"
#include "vrnic.h"

namespace vrnic {
namespace {

constexpr uint64_t kRcSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
constexpr uint64_t kUcSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
constexpr uint64_t kUdSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
constexpr uint32_t kMaxLogDepth = 16;

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

// The send-ops bit of a work request opcode, or 0 for opcodes vrnic lacks.
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
    default:
      return 0;
  }
}

bool is_inline_capable(ibv_wr_opcode op) noexcept {
  return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
         op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

bool rings_ok(const vrnic_create_qp_resp& r, bool has_rq) noexcept {
  const auto ring_ok = [&](uint32_t off, uint32_t log_depth, uint32_t log_stride,
                           uint32_t min_stride) {
    return log_depth <= kMaxLogDepth && log_stride >= min_stride &&
           log_stride <= VRNIC_WQE_MAX_LOG_STRIDE && off >= sizeof(vrnic_qp_dbrec) &&
           uint64_t{off} + (uint64_t{1} << (log_depth + log_stride)) <= r.qbuf_size;
  };
  return ring_ok(r.sq_offset, r.sq_log_depth, r.sq_log_stride, VRNIC_WQE_MIN_LOG_STRIDE) &&
         (!has_rq ||
          ring_ok(r.rq_offset, r.rq_log_depth, r.rq_log_stride, VRNIC_RQE_MIN_LOG_STRIDE));
}

// The device's WQE opcodes are libibverbs' own.
static_assert(same_value(VRNIC_WQE_RDMA_WRITE, IBV_WR_RDMA_WRITE) &&
              same_value(VRNIC_WQE_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM) &&
              same_value(VRNIC_WQE_SEND, IBV_WR_SEND) &&
              same_value(VRNIC_WQE_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM) &&
              same_value(VRNIC_WQE_RDMA_READ, IBV_WR_RDMA_READ) &&
              same_value(VRNIC_WQE_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP) &&
              same_value(VRNIC_WQE_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD));

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

int build_send(Qp* qp, uint32_t pi, const ibv_send_wr* wr) noexcept {
  const uint64_t bit = send_op_bit(wr->opcode);
  if (bit == 0 || (bit & send_ops_for(qp->type)) == 0 || wr->num_sge < 0) {
    return EINVAL;
  }
  const SqeWriter w = begin_wqe(qp, pi, wr->opcode, wr->wr_id, wr->send_flags);
  if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || wr->opcode == IBV_WR_SEND_WITH_IMM) {
    w.set_imm(be32toh(wr->imm_data));
  }
  switch (wr->opcode) {
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
  const int err = qp->wr_err;
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
  ex.wr_start = wr_start;
  ex.wr_complete = wr_complete;
  ex.wr_abort = wr_abort;
}

// ---------------------------------------------------------------------------

constexpr uint32_t kSupportedQpInitMask =
    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

// Why a QP cannot be created here, as an errno (0: it can).
int check_init_attr(const Context* ctx, const ibv_qp_init_attr_ex* attr) noexcept {
  if ((attr->comp_mask & ~kSupportedQpInitMask) != 0 ||
      ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) != 0 && attr->create_flags != 0)) {
    debug("create_qp: unsupported init attributes (comp_mask %#x)", attr->comp_mask);
    return EOPNOTSUPP;
  }
  const uint64_t ops = send_ops_for(attr->qp_type);
  if (ops == 0) {
    debug("create_qp: QP type %d is not supported", attr->qp_type);
    return EOPNOTSUPP;
  }
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0 &&
      (attr->send_ops_flags & ~ops) != 0) {
    debug("create_qp: send ops %#llx are not supported on this QP type",
          static_cast<unsigned long long>(attr->send_ops_flags & ~ops));
    return EOPNOTSUPP;
  }
  if (ctx->db_page == nullptr) {
    explain_once(
        "the doorbell register could not be mapped, so queue pairs are unavailable to "
        "user space. Boot the guest with pci=resource_alignment=12@pci:1af4:1110 so that "
        "BAR0 gets a page of its own (see Documentation/user-guide.rst).");
    return EOPNOTSUPP;
  }
  return 0;
}

// cap: what the kernel granted (libibverbs copied it back, from the write
// or the ioctl interface).
int attach_rings(Qp* qp, const ibv_qp_cap& cap, const vrnic_create_qp_resp& r) noexcept {
  const bool has_rq = qp->srq == nullptr;
  if (!rings_ok(r, has_rq) || r.max_inline > (1U << r.sq_log_stride) ||
      cap.max_send_sge > VRNIC_MAX_SGE || cap.max_recv_sge > VRNIC_MAX_SGE) {
    debug(
        "kernel described bad QP rings: size %u, SQ at %u 2^%u x 2^%u, RQ at %u 2^%u x 2^%u, "
        "inline %u, sge %u/%u",
        r.qbuf_size, r.sq_offset, r.sq_log_depth, r.sq_log_stride, r.rq_offset, r.rq_log_depth,
        r.rq_log_stride, r.max_inline, cap.max_send_sge, cap.max_recv_sge);
    return EPROTO;
  }
  if (!map_queue(qp->ctx, r.qbuf_key, r.qbuf_size, &qp->map)) {
    return errno;
  }
  qp->dbrec = qp->map.at(0);
  qp->sq = qp->map.at(r.sq_offset);
  qp->sq_log_depth = r.sq_log_depth;
  qp->sq_log_stride = r.sq_log_stride;
  qp->max_send_sge = cap.max_send_sge;
  qp->max_inline = r.max_inline;
  if (has_rq) {
    qp->rq.base = qp->map.at(r.rq_offset);
    qp->rq.pi_rec = qp->dbrec + offsetof(vrnic_qp_dbrec, rq_pi);
    qp->rq.ci_rec = qp->dbrec + offsetof(vrnic_qp_dbrec, rq_ci);
    qp->rq.log_depth = r.rq_log_depth;
    qp->rq.log_stride = r.rq_log_stride;
    qp->rq.max_sge = cap.max_recv_sge;
  }
  return 0;
}

void delete_qp(Qp* qp) noexcept {
  unmap_queue(&qp->map);
  pthread_spin_destroy(&qp->sq_lock);
  pthread_spin_destroy(&qp->rq_lock);
  delete qp;
}

}  // namespace

ibv_qp* create_qp_ex(ibv_context* ibctx, ibv_qp_init_attr_ex* attr) noexcept {
  Context* ctx = to_vctx(ibctx);
  if (const int err = check_init_attr(ctx, attr); err != 0) {
    errno = err;
    return nullptr;
  }
  auto* qp = new (std::nothrow) Qp{};
  if (qp == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  qp->ctx = ctx;
  qp->type = attr->qp_type;
  qp->sq_sig_all = attr->sq_sig_all != 0;
  qp->srq = attr->srq != nullptr ? to_vsrq(attr->srq) : nullptr;
  pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
  pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) {
    set_wr_ops(qp, attr->send_ops_flags);
  }

  abi::CreateQpExCmd cmd{};
  abi::CreateQpExResp resp{};
  int err =
      ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, abi::as<struct ibv_create_qp_ex>(&cmd),
                            sizeof(cmd), abi::as<ib_uverbs_ex_create_qp_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete_qp(qp);
    errno = err;
    return nullptr;
  }
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) {
    qp->vqp.comp_mask |= VERBS_QP_EX;
  }
  err = attach_rings(qp, attr->cap, resp.drv);
  if (err != 0) {
    ibv_cmd_destroy_qp(&qp->vqp.qp);
    delete_qp(qp);
    errno = err;
    return nullptr;
  }
  // What we can actually hold, as the spec asks (the kernel rounded up).
  attr->cap.max_inline_data = qp->max_inline;
  debug("QP %u: SQ 2^%u x %u B, RQ 2^%u x %u B, inline %u", qp->vqp.qp.qp_num, qp->sq_log_depth,
        1U << qp->sq_log_stride, qp->rq.log_depth, 1U << qp->rq.log_stride, qp->max_inline);
  return &qp->vqp.qp;
}

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) noexcept {
  ibv_qp_init_attr_ex ex{};
  ex.qp_context = attr->qp_context;
  ex.send_cq = attr->send_cq;
  ex.recv_cq = attr->recv_cq;
  ex.srq = attr->srq;
  ex.cap = attr->cap;
  ex.qp_type = attr->qp_type;
  ex.sq_sig_all = attr->sq_sig_all;
  ex.comp_mask = IBV_QP_INIT_ATTR_PD;
  ex.pd = pd;
  ibv_qp* qp = create_qp_ex(pd->context, &ex);
  if (qp != nullptr) {
    attr->cap = ex.cap;
  }
  return qp;
}

int destroy_qp(ibv_qp* ibqp) noexcept {
  const int err = ibv_cmd_destroy_qp(ibqp);
  if (err != 0) {
    return err;
  }
  delete_qp(to_vqp(ibqp));
  return 0;
}

int modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) noexcept {
  Qp* qp = to_vqp(ibqp);
  abi::ModifyQpCmd cmd{};
  const int err =
      ibv_cmd_modify_qp(ibqp, attr, mask, abi::as<struct ibv_modify_qp>(&cmd), sizeof(cmd));
  if (err != 0) {
    return err;
  }
  if ((mask & IBV_QP_STATE) != 0 && attr->qp_state == IBV_QPS_RESET) {
    // The device emptied the rings; start them again from index 0.
    const SpinGuard sq(&qp->sq_lock);
    const SpinGuard rq(&qp->rq_lock);
    qp->sq_pi = 0;
    qp->rq.pi = 0;
    store_release32(qp->dbrec + offsetof(vrnic_qp_dbrec, sq_pi), 0);
    store_release32(qp->dbrec + offsetof(vrnic_qp_dbrec, rq_pi), 0);
  }
  return 0;
}

int query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) noexcept {
  const Qp* qp = to_vqp(ibqp);
  abi::QueryQpCmd cmd{};
  const int err =
      ibv_cmd_query_qp(ibqp, attr, mask, init, abi::as<struct ibv_query_qp>(&cmd), sizeof(cmd));
  if (err != 0) {
    return err;
  }
  attr->cap.max_inline_data = qp->max_inline;
  init->cap.max_inline_data = qp->max_inline;
  return 0;
}

int post_send(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad) noexcept {
  Qp* qp = to_vqp(ibqp);
  // The IB spec: posting to a QP that has not reached RTS is an error.
  switch (ibqp->state) {
    case IBV_QPS_RESET:
    case IBV_QPS_INIT:
    case IBV_QPS_RTR:
      *bad = wr;
      return EINVAL;
    default:
      break;
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

}  // namespace vrnic
