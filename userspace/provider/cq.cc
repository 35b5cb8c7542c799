// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic completion queues, the control path: creation and resizing
// through the kernel, and mapping the ring it allocated.  Polling is in
// poll.cc.
#include <endian.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "abi_mirror.h"
#include "vrnic.h"

namespace vrnic {
namespace {

constexpr uint64_t kSupportedWcFlags =
    IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS;

// Take over the ring the kernel described; false (errno set) on failure.
bool attach_ring(Cq* cq, const vrnic_create_cq_resp& r) noexcept {
  const size_t ring_bytes = sizeof(vrnic_cqe) << r.log_depth;
  if (r.log_depth > 24 || r.ring_offset < sizeof(vrnic_cq_dbrec) ||
      r.ring_offset + ring_bytes > r.qbuf_size) {
    debug("kernel described a bad CQ ring (log_depth %u, offset %u, size %u)", r.log_depth,
          r.ring_offset, r.qbuf_size);
    errno = EPROTO;
    return false;
  }
  QueueMap map;
  if (!map_queue(cq->ctx, r.qbuf_key, r.qbuf_size, &map)) {
    return false;
  }
  unmap_queue(&cq->map);
  cq->map = map;
  cq->dbrec = map.at(0);
  cq->ring = map.at(r.ring_offset);
  cq->log_depth = r.log_depth;
  cq->ci = 0;
  cq->arm_sn = load_acquire32(cq->dbrec + offsetof(vrnic_cq_dbrec, arm_sn));
  cq->have_cur = false;
  return true;
}

Cq* new_cq(ibv_context* ibctx) noexcept {
  auto* cq = new (std::nothrow) Cq{};
  if (cq == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  cq->ctx = to_vctx(ibctx);
  pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
  return cq;
}

void delete_cq(Cq* cq) noexcept {
  unmap_queue(&cq->map);
  pthread_spin_destroy(&cq->lock);
  delete cq;
}

}  // namespace

ibv_cq* create_cq(ibv_context* ibctx, int cqe, ibv_comp_channel* channel,
                  int comp_vector) noexcept {
  Cq* cq = new_cq(ibctx);
  if (cq == nullptr) {
    return nullptr;
  }
  abi::CreateCqCmd cmd{};
  abi::CreateCqResp resp{};
  const int err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
                                    abi::as<struct ibv_create_cq>(&cmd), sizeof(cmd),
                                    abi::as<ib_uverbs_create_cq_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete_cq(cq);
    errno = err;
    return nullptr;
  }
  cq->cqn = resp.drv.cqn;
  if (!attach_ring(cq, resp.drv)) {
    const int saved = errno;
    ibv_cmd_destroy_cq(&cq->vcq.cq);
    delete_cq(cq);
    errno = saved;
    return nullptr;
  }
  return &cq->vcq.cq;
}

ibv_cq_ex* create_cq_ex(ibv_context* ibctx, ibv_cq_init_attr_ex* attr) noexcept {
  if ((attr->wc_flags & ~kSupportedWcFlags) != 0) {
    debug("create_cq_ex: unsupported wc_flags %#llx",
          static_cast<unsigned long long>(attr->wc_flags & ~kSupportedWcFlags));
    errno = EOPNOTSUPP;
    return nullptr;
  }
  if (attr->comp_mask > IBV_CQ_INIT_ATTR_MASK_FLAGS ||
      ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) != 0 && attr->flags != 0)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  Cq* cq = new_cq(ibctx);
  if (cq == nullptr) {
    return nullptr;
  }
  cq->ex = true;
  abi::CreateCqExCmd cmd{};
  abi::CreateCqExResp resp{};
  const int err = vrnic::pabi::cmd_create_cq_ex(
      ibctx, attr, &cq->vcq, abi::as<struct ibv_create_cq_ex>(&cmd), sizeof(cmd),
      abi::as<ib_uverbs_ex_create_cq_resp>(&resp), sizeof(resp), 0);
  if (err != 0) {
    delete_cq(cq);
    errno = err;
    return nullptr;
  }
  cq->cqn = resp.drv.cqn;
  if (!attach_ring(cq, resp.drv)) {
    const int saved = errno;
    ibv_cmd_destroy_cq(&cq->vcq.cq);
    delete_cq(cq);
    errno = saved;
    return nullptr;
  }
  set_ex_ops(cq, attr->wc_flags);
  return &cq->vcq.cq_ex;
}

int destroy_cq(ibv_cq* ibcq) noexcept {
  Cq* cq = to_vcq(ibcq);
  const int err = ibv_cmd_destroy_cq(ibcq);
  if (err != 0) {
    return err;
  }
  delete_cq(cq);
  return 0;
}

// ibv_modify_cq: event moderation, which the kernel passes to the device
// (it refuses what the device does not offer), as mlx5 does.
int modify_cq(ibv_cq* ibcq, ibv_modify_cq_attr* attr) noexcept {
  abi::ModifyCqCmd cmd{};
  return ibv_cmd_modify_cq(ibcq, attr, abi::as<struct ibv_modify_cq>(&cmd), sizeof(cmd));
}

int resize_cq(ibv_cq* ibcq, int cqe) noexcept {
  Cq* cq = to_vcq(ibcq);
  const SpinGuard lock(&cq->lock);
  // The device moves what we have not consumed from the ci it reads.
  publish_ci(cq);
  abi::ResizeCqCmd cmd{};
  abi::ResizeCqResp resp{};
  const int err = ibv_cmd_resize_cq(ibcq, cqe, abi::as<struct ibv_resize_cq>(&cmd), sizeof(cmd),
                                    abi::as<ib_uverbs_resize_cq_resp>(&resp), sizeof(resp));
  if (err != 0) {
    return err;
  }
  if (!attach_ring(cq, resp.drv)) {
    // The device already moved to the new ring and we cannot see it.
    return errno;
  }
  return 0;
}

}  // namespace vrnic
