// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "device/eq.h"

#include <atomic>
#include <cstring>

#include "hw_access.h"

namespace vrnicd {

EventQueue::EventQueue(uint32_t eqn, std::byte* ring, uint32_t log_depth, uint32_t vector,
                       std::byte* dbrec) noexcept
    : eqn_(eqn), ring_(ring), log_depth_(log_depth), vector_(vector), dbrec_(dbrec) {
  if (dbrec_ != nullptr) {
    // The EQ starts disarmed: the driver arms it by bumping arm_sn.
    fired_sn_ = vrnic::load_acquire32(dbrec_ + offsetof(vrnic_eq_dbrec, arm_sn));
  }
}

uint32_t EventQueue::dbrec_ci() const noexcept {
  if (dbrec_ == nullptr) {
    return pi_;
  }
  return vrnic::le32(vrnic::load_acquire32(dbrec_ + offsetof(vrnic_eq_dbrec, ci)));
}

bool EventQueue::post(uint32_t ci, uint8_t type, uint32_t d0, uint32_t d1, uint32_t d2) noexcept {
  if (vrnic::ring_used(pi_, ci) >= (1U << log_depth_)) {
    ++overruns;
    return false;
  }
  std::byte* slot =
      ring_ + static_cast<size_t>(vrnic::ring_slot(pi_, log_depth_)) * sizeof(vrnic_eqe);
  const uint32_t data[3] = {vrnic::to_le32(d0), vrnic::to_le32(d1), vrnic::to_le32(d2)};
  std::memcpy(slot, data, sizeof(data));
  const uint32_t info = vrnic::field_prep<VRNIC_EQE_TYPE_MASK>(type) |
                        vrnic::field_prep<VRNIC_EQE_OWNER_MASK>(vrnic::ring_owner(pi_, log_depth_));
  // The owner word is written last, after the rest of the entry.
  vrnic::store_release32(slot + offsetof(vrnic_eqe, info), vrnic::to_le32(info));
  ++pi_;
  return true;
}

bool EventQueue::take_arm() noexcept {
  if (dbrec_ == nullptr) {
    return true;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t sn = vrnic::le32(vrnic::load_acquire32(dbrec_ + offsetof(vrnic_eq_dbrec, arm_sn)));
  if (sn == fired_sn_) {
    return false;
  }
  fired_sn_ = sn;
  return true;
}

}  // namespace vrnicd
