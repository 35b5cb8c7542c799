// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// A completion queue: a ring of CQEs in guest memory that the device
// produces into and the driver (or libvrnic) consumes, with its doorbell
// record (consumer index and arming) in page 0 of its buffer.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/objects.h"
#include "engine/params.h"
#include "roce/transport.h"

namespace vrnicd {

class Clock;
class EngineHost;
class GuestMemory;

class Cq {
 public:
  // Map the CQ's buffer; VRNIC_AQ_STATUS_* (BAD_ADDR: not RAM, BAD_PARAM:
  // the ring does not fit the buffer).
  static uint8_t create(const GuestMemory& mem, uint32_t cqn, const CreateCqParams& p,
                        std::unique_ptr<Cq>* out);

  // Move to a new buffer, carrying the entries not yet consumed.
  uint8_t resize(const GuestMemory& mem, const ResizeCqParams& p, uint32_t* moved);

  // Write the completion of a WQE of QP qpn, and raise the completion event
  // the consumer armed for, now or (moderated) when its count or period is
  // reached.  false when the CQ is in error or has just overrun (reported
  // as a CQ_ERROR event): the QP goes to error.
  bool post(const roce::Completion& c, uint32_t qpn, EngineHost& host, const Clock& clock);

  // Event moderation (MODIFY_CQ): the armed event waits for count
  // completions, or period_us after the first (0: no timer), whichever
  // comes first; count 0 or 1 is no moderation.  Completions already held
  // back wait by the new rules, the period counted from now_us.
  void moderate(uint32_t count, uint32_t period_us, uint64_t now_us, EngineHost& host);
  [[nodiscard]] bool timed() const { return mod_period_us_ != 0; }
  // When the moderation timer raises the event (UINT64_MAX: not running).
  [[nodiscard]] uint64_t deadline() const { return deadline_; }
  // Raise the event whose period has run out by now_us; whether it did.
  bool tick(uint64_t now_us, EngineHost& host);

  [[nodiscard]] uint32_t cqn() const { return cqn_; }
  [[nodiscard]] uint32_t eqn() const { return eqn_; }
  uint32_t refs = 0;  // QPs using it

 private:
  Cq(uint32_t cqn, uint32_t eqn) : cqn_(cqn), eqn_(eqn) {}
  [[nodiscard]] std::byte* dbrec() const { return buf_.page(0); }
  [[nodiscard]] uint32_t dbrec_word(size_t offset) const;
  void notify(bool solicited, bool error, EngineHost& host, const Clock& clock);
  void fire(uint32_t sn, EngineHost& host);

  uint32_t cqn_;
  uint32_t eqn_;
  QueueBuffer buf_;
  Ring ring_;
  uint32_t pi_ = 0;
  uint32_t fired_sn_ = 0;
  bool error_ = false;
  uint32_t mod_count_ = 0;
  uint32_t mod_period_us_ = 0;
  uint32_t held_ = 0;  // completions the armed event waits behind
  uint64_t deadline_ = UINT64_MAX;
};

}  // namespace vrnicd
