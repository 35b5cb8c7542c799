// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Event queue producer: writes struct vrnic_eqe entries with the owner bit
// into a ring in guest memory.  The async EQ takes its consumer index from
// the AEQ_CI register; completion EQs from their doorbell record, which
// also carries the arm sequence number that gates their interrupt.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vrnicd {

class EventQueue {
 public:
  // ring and dbrec are validated host addresses in guest memory; dbrec is
  // nullptr for the async EQ.
  EventQueue(uint32_t eqn, std::byte* ring, uint32_t log_depth, uint32_t vector,
             std::byte* dbrec) noexcept;

  [[nodiscard]] uint32_t eqn() const noexcept { return eqn_; }
  [[nodiscard]] uint32_t vector() const noexcept { return vector_; }
  [[nodiscard]] uint32_t log_depth() const noexcept { return log_depth_; }
  [[nodiscard]] uint32_t producer_index() const noexcept { return pi_; }

  // Consumer index from the doorbell record (completion EQs only).
  [[nodiscard]] uint32_t dbrec_ci() const noexcept;

  // Write an entry unless the ring is full as seen from consumer index ci.
  // A ci that is not within the ring's last depth entries counts as full.
  bool post(uint32_t ci, uint8_t type, uint32_t d0, uint32_t d1, uint32_t d2) noexcept;

  // True when the EQ holds entries the driver has not consumed.
  [[nodiscard]] bool pending(uint32_t ci) const noexcept { return pi_ != ci; }

  // Completion EQs: consume one arm.  True when the driver has armed the
  // EQ since the last interrupt, i.e. the interrupt may be raised now.
  bool take_arm() noexcept;

  uint64_t overruns = 0;

 private:
  uint32_t eqn_;
  std::byte* ring_;
  uint32_t log_depth_;
  uint32_t vector_;
  std::byte* dbrec_;
  uint32_t pi_ = 0;
  uint32_t fired_sn_ = 0;
};

}  // namespace vrnicd
