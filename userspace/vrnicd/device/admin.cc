// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "device/admin.h"

#include <array>
#include <cstring>

#include "base/bar2.h"
#include "hw_access.h"

namespace vrnicd {

// The list's values are the enum's: opcodes are dense and in order.
#define VRNIC_AQ_OP(NAME, name, value) \
  static_assert(VRNIC_AQ_OP_##NAME == (value), "opcode " #NAME " is out of place");
#include "vrnic-aq-ops.h"
#undef VRNIC_AQ_OP

const char* aq_opcode_name(uint32_t opcode) noexcept {
  static constexpr std::array<const char*, VRNIC_AQ_OP_MAX> kNames = {
#define VRNIC_AQ_OP(NAME, name, value) #NAME,
#include "vrnic-aq-ops.h"
#undef VRNIC_AQ_OP
  };
  return opcode < kNames.size() ? kNames[opcode] : "UNKNOWN";
}

const char* aq_status_name(uint32_t status) noexcept {
  switch (status) {
    case VRNIC_AQ_STATUS_OK:
      return "OK";
    case VRNIC_AQ_STATUS_BAD_OPCODE:
      return "BAD_OPCODE";
    case VRNIC_AQ_STATUS_BAD_PARAM:
      return "BAD_PARAM";
    case VRNIC_AQ_STATUS_BAD_ADDR:
      return "BAD_ADDR";
    case VRNIC_AQ_STATUS_NO_RESOURCES:
      return "NO_RESOURCES";
    case VRNIC_AQ_STATUS_NOT_FOUND:
      return "NOT_FOUND";
    case VRNIC_AQ_STATUS_BUSY:
      return "BUSY";
    case VRNIC_AQ_STATUS_INTERNAL:
      return "INTERNAL";
    default:
      return "UNKNOWN";
  }
}

void AdminQueue::configure(std::byte* sq, std::byte* cq, uint32_t log_depth) noexcept {
  sq_ = sq;
  cq_ = cq;
  log_depth_ = log_depth;
  sq_ci_ = 0;
  cq_pi_ = 0;
}

void AdminQueue::clear() noexcept { configure(nullptr, nullptr, 0); }

void AdminQueue::write_cqe(uint16_t cookie, const AqResult& r) noexcept {
  std::byte* slot =
      cq_ + static_cast<size_t>(vrnic::ring_slot(cq_pi_, log_depth_)) * sizeof(vrnic_aq_cqe);
  const uint64_t result = vrnic::to_le64(r.result);
  const uint32_t result2 = vrnic::to_le32(r.result2);
  std::memcpy(slot + offsetof(vrnic_aq_cqe, result), &result, sizeof(result));
  std::memcpy(slot + offsetof(vrnic_aq_cqe, result2), &result2, sizeof(result2));
  const uint32_t info =
      vrnic::field_prep<VRNIC_AQ_CQE_COOKIE_MASK>(cookie) |
      vrnic::field_prep<VRNIC_AQ_CQE_STATUS_MASK>(r.status) |
      vrnic::field_prep<VRNIC_AQ_CQE_OWNER_MASK>(vrnic::ring_owner(cq_pi_, log_depth_));
  // The owner word goes last so the driver never sees a partial entry.
  vrnic::store_release32(slot + offsetof(vrnic_aq_cqe, info), vrnic::to_le32(info));
  ++cq_pi_;
}

AdminQueue::Outcome AdminQueue::process(Bar2& bar,
                                        const std::function<AqResult(const vrnic_aq_cmd&)>& exec,
                                        uint32_t* completed) {
  const uint32_t depth = 1U << log_depth_;
  const uint32_t pi = bar.reg(VRNIC_REG_AQ_SQ_PI);
  if (vrnic::ring_used(pi, sq_ci_) > depth) {
    return Outcome::kOverrun;
  }
  // At most one ring's worth per call, so a guest cannot keep us here.
  while (sq_ci_ != pi) {
    const uint32_t cq_ci = bar.reg(VRNIC_REG_AQ_CQ_CI);
    const uint32_t cq_used = vrnic::ring_used(cq_pi_, cq_ci);
    if (cq_used > depth) {
      return Outcome::kOverrun;
    }
    if (cq_used == depth) {
      return Outcome::kCqFull;
    }
    vrnic_aq_cmd cmd{};
    std::memcpy(&cmd, sq_ + static_cast<size_t>(vrnic::ring_slot(sq_ci_, log_depth_)) * sizeof(cmd),
                sizeof(cmd));
    const AqResult r = exec(cmd);
    write_cqe(vrnic::le16(cmd.hdr.cookie), r);
    ++sq_ci_;
    bar.set_reg(VRNIC_REG_AQ_SQ_CI, sq_ci_);
    ++*completed;
  }
  return Outcome::kIdle;
}

}  // namespace vrnicd
