// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic shared receive queues: a receive ring of their own that any
// number of QPs take from, in the order posted.
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>

#include "abi_mirror.h"
#include "vrnic.h"

namespace vrnic {
namespace {

void delete_srq(Srq* srq) noexcept {
  unmap_queue(&srq->map);
  pthread_spin_destroy(&srq->lock);
  delete srq;
}

// What the kernel said of a ring (CREATE_SRQ's or a resize's answer).
template <typename Resp>
bool ring_ok(const Resp& r) noexcept {
  return r.log_depth <= 16 && r.log_stride >= VRNIC_RQE_MIN_LOG_STRIDE &&
         r.log_stride <= VRNIC_WQE_MAX_LOG_STRIDE && r.ring_offset >= sizeof(vrnic_srq_dbrec) &&
         uint64_t{r.ring_offset} + (uint64_t{1} << (r.log_depth + r.log_stride)) <= r.qbuf_size;
}

void attach_ring(Srq* srq, uint32_t ring_offset, uint32_t log_depth, uint32_t log_stride) noexcept {
  std::byte* dbrec = srq->map.at(0);
  srq->ring.base = srq->map.at(ring_offset);
  srq->ring.pi_rec = dbrec + offsetof(vrnic_srq_dbrec, pi);
  srq->ring.ci_rec = dbrec + offsetof(vrnic_srq_dbrec, ci);
  srq->ring.log_depth = log_depth;
  srq->ring.log_stride = log_stride;
}

// ibv_modify_srq with IBV_SRQ_MAX_WR: the device moves the WQEs posted
// and not taken to a new ring (from index 0), which we map in place of the
// old one and produce on from where they end.  Posting waits on the lock.
int resize_srq(Srq* srq, ibv_srq_attr* attr, int mask) noexcept {
  const SpinGuard lock(&srq->lock);
  vrnic_resize_srq_resp resp{};
  abi::ModifySrqCmd cmd{};
  cmd.drv.resp_addr = std::bit_cast<uintptr_t>(&resp);
  const int err = ibv_cmd_modify_srq(&srq->vsrq.srq, attr, mask,
                                     abi::as<struct ibv_modify_srq>(&cmd), sizeof(cmd));
  if (err != 0) {
    return err;
  }
  QueueMap map{};
  if (!ring_ok(resp) || resp.log_stride != srq->ring.log_stride ||
      resp.pi > (1U << resp.log_depth)) {
    // The device already moved to the new ring and we cannot see it.
    debug("kernel described a bad resized SRQ ring");
    return EPROTO;
  }
  if (!map_queue(srq->ctx, resp.qbuf_key, resp.qbuf_size, &map)) {
    return errno;
  }
  unmap_queue(&srq->map);
  srq->map = map;
  attach_ring(srq, resp.ring_offset, resp.log_depth, resp.log_stride);
  srq->ring.pi = resp.pi;
  return 0;
}

}  // namespace

ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) noexcept {
  auto* srq = new (std::nothrow) Srq{};
  if (srq == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  srq->ctx = to_vctx(pd->context);
  pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
  abi::CreateSrqCmd cmd{};
  abi::CreateSrqResp resp{};
  int err =
      ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, abi::as<struct ibv_create_srq>(&cmd),
                         sizeof(cmd), abi::as<ib_uverbs_create_srq_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete_srq(srq);
    errno = err;
    return nullptr;
  }
  const vrnic_create_srq_resp& r = resp.drv;
  if (!ring_ok(r) || attr->attr.max_sge > VRNIC_MAX_SGE) {
    debug("kernel described a bad SRQ ring");
    err = EPROTO;
  } else if (!map_queue(srq->ctx, r.qbuf_key, r.qbuf_size, &srq->map)) {
    err = errno;
  }
  if (err != 0) {
    ibv_cmd_destroy_srq(&srq->vsrq.srq);
    delete_srq(srq);
    errno = err;
    return nullptr;
  }
  attach_ring(srq, r.ring_offset, r.log_depth, r.log_stride);
  srq->ring.max_sge = attr->attr.max_sge;
  return &srq->vsrq.srq;
}

int modify_srq(ibv_srq* ibsrq, ibv_srq_attr* attr, int mask) noexcept {
  if ((mask & IBV_SRQ_MAX_WR) != 0) {
    return resize_srq(to_vsrq(ibsrq), attr, mask);
  }
  abi::ModifySrqCmd cmd{};
  return ibv_cmd_modify_srq(ibsrq, attr, mask, abi::as<struct ibv_modify_srq>(&cmd), sizeof(cmd));
}

int query_srq(ibv_srq* ibsrq, ibv_srq_attr* attr) noexcept {
  abi::QuerySrqCmd cmd{};
  return ibv_cmd_query_srq(ibsrq, attr, abi::as<struct ibv_query_srq>(&cmd), sizeof(cmd));
}

int destroy_srq(ibv_srq* ibsrq) noexcept {
  const int err = ibv_cmd_destroy_srq(ibsrq);
  if (err != 0) {
    return err;
  }
  delete_srq(to_vsrq(ibsrq));
  return 0;
}

}  // namespace vrnic
