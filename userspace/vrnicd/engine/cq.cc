// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/cq.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/log.h"
#include "engine/counters.h"
#include "engine/engine_host.h"
#include "hw_access.h"
#include "queue_entry.h"

namespace vrnicd {

uint32_t Cq::dbrec_word(size_t offset) const {
  return vrnic::le32(vrnic::load_acquire32(dbrec() + offset));
}

uint8_t Cq::create(const GuestMemory& mem, uint32_t cqn, const CreateCqParams& p,
                   std::unique_ptr<Cq>* out) {
  auto cq = std::unique_ptr<Cq>(new Cq(cqn, p.eqn));
  if (!cq->buf_.map(mem, p.buf.pbl_addr, p.buf.npages)) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  cq->ring_ = {&cq->buf_, 1, p.log_depth, VRNIC_CQE_LOG_SIZE};
  if (!cq->ring_.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  cq->fired_sn_ = cq->dbrec_word(offsetof(vrnic_cq_dbrec, arm_sn));
  *out = std::move(cq);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Cq::resize(const GuestMemory& mem, const ResizeCqParams& p, uint32_t* moved) {
  QueueBuffer nb;
  if (!nb.map(mem, p.buf.pbl_addr, p.buf.npages)) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  const Ring nr{&nb, 1, p.log_depth, VRNIC_CQE_LOG_SIZE};
  if (!nr.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const uint32_t ci = dbrec_word(offsetof(vrnic_cq_dbrec, ci));
  const uint32_t pending = std::min(pi_ - ci, ring_.depth());
  if (pending > nr.depth()) {
    // A depth below what is still to be polled is a bad value, as rxe and
    // mlx5 say (EINVAL), not a lack of resources; nothing moves.
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  for (uint32_t i = 0; i < pending; ++i) {
    // The entry as it is, with the owner bit of its new place.
    vrnic_cqe e{};
    std::memcpy(&e, ring_.entry(ci + i), sizeof(e));
    const uint32_t info =
        (vrnic::le32(e.info) & ~VRNIC_CQE_OWNER_MASK) |
        vrnic::field_prep<VRNIC_CQE_OWNER_MASK>(vrnic::ring_owner(i, p.log_depth));
    std::byte* dst = nr.entry(i);
    std::memcpy(dst, &e, offsetof(vrnic_cqe, info));
    vrnic::store_release32(dst + offsetof(vrnic_cqe, info), vrnic::to_le32(info));
  }
  buf_ = std::move(nb);
  ring_ = {&buf_, 1, p.log_depth, VRNIC_CQE_LOG_SIZE};
  pi_ = pending;
  fired_sn_ = dbrec_word(offsetof(vrnic_cq_dbrec, arm_sn));
  held_ = 0;
  deadline_ = UINT64_MAX;
  *moved = pending;
  return VRNIC_AQ_STATUS_OK;
}

bool Cq::post(const roce::Completion& c, uint32_t qpn, EngineHost& host, const Clock& clock) {
  if (error_) {
    return false;
  }
  if (pi_ - dbrec_word(offsetof(vrnic_cq_dbrec, ci)) >= ring_.depth()) {
    error_ = true;
    log_guest_error("CQ %u overrun (depth %u)", cqn_, ring_.depth());
    host.async_event(VRNIC_EQE_TYPE_CQ_ERROR, cqn_, 0);
    return false;
  }
  vrnic::CqeFields f;
  f.wr_id = c.wr_id;
  f.opcode = static_cast<uint32_t>(c.opcode);
  f.status = static_cast<uint32_t>(c.status);
  f.byte_len = c.byte_len;
  f.has_imm = c.has_imm;
  f.has_inv = c.has_inv;
  f.imm = c.imm;
  f.grh = c.grh;
  f.ipv4 = c.ipv4;
  f.roce_v1 = c.roce_v1;
  f.qpn = qpn;
  f.src_qp = c.src_qp;
  f.wqe_idx = c.wqe_idx;
  f.vendor_err = c.vendor_err;
  vrnic::cqe_write(ring_.entry(pi_), f, pi_, ring_.log_depth);
  ++pi_;
  notify(c.solicited, c.status != roce::WcStatus::kSuccess, host, clock);
  return true;
}

void Cq::moderate(uint32_t count, uint32_t period_us, uint64_t now_us, EngineHost& host) {
  mod_count_ = count;
  mod_period_us_ = period_us;
  // What the old setting held back waits by the new one's rules, its
  // period counted from now.
  if (held_ == 0) {
    return;
  }
  if (held_ >= count) {
    fire(dbrec_word(offsetof(vrnic_cq_dbrec, arm_sn)), host);
  } else {
    deadline_ = period_us != 0 ? now_us + period_us : UINT64_MAX;
  }
}

// Notification: once per arm, for any completion or (solicited-only) for a
// solicited or failed one; with moderation, after mod_count_ of those or
// mod_period_us_ after the first.  A failed completion does not wait.
void Cq::notify(bool solicited, bool error, EngineHost& host, const Clock& clock) {
  // The CQE before the look at the arm: the consumer arms, then polls.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t sn = dbrec_word(offsetof(vrnic_cq_dbrec, arm_sn));
  if (sn == fired_sn_) {
    return;
  }
  const uint32_t flags = dbrec_word(offsetof(vrnic_cq_dbrec, arm_flags));
  if ((flags & VRNIC_CQ_ARM_SOLICITED) != 0 && !solicited && !error) {
    return;
  }
  ++held_;
  if (error || held_ >= mod_count_) {
    fire(sn, host);
  } else if (mod_period_us_ != 0 && deadline_ == UINT64_MAX) {
    deadline_ = clock.now_us() + mod_period_us_;
  }
}

bool Cq::tick(uint64_t now_us, EngineHost& host) {
  if (deadline_ > now_us) {
    return false;
  }
  fire(dbrec_word(offsetof(vrnic_cq_dbrec, arm_sn)), host);
  return true;
}

void Cq::fire(uint32_t sn, EngineHost& host) {
  fired_sn_ = sn;
  held_ = 0;
  deadline_ = UINT64_MAX;
  host.completion_event(eqn_, cqn_);
}

}  // namespace vrnicd
