// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "admin.h"

#include <cstring>

#include "bar2.h"
#include "hw_access.h"

namespace vrnicd {

const char* aq_opcode_name(uint32_t opcode) noexcept {
  switch (opcode) {
    case VRNIC_AQ_OP_NOP:
      return "NOP";
    case VRNIC_AQ_OP_QUERY_DEVICE:
      return "QUERY_DEVICE";
    case VRNIC_AQ_OP_QUERY_PORT:
      return "QUERY_PORT";
    case VRNIC_AQ_OP_MODIFY_PORT:
      return "MODIFY_PORT";
    case VRNIC_AQ_OP_SET_GID:
      return "SET_GID";
    case VRNIC_AQ_OP_CREATE_EQ:
      return "CREATE_EQ";
    case VRNIC_AQ_OP_DESTROY_EQ:
      return "DESTROY_EQ";
    case VRNIC_AQ_OP_CREATE_PD:
      return "CREATE_PD";
    case VRNIC_AQ_OP_DESTROY_PD:
      return "DESTROY_PD";
    case VRNIC_AQ_OP_REG_MR:
      return "REG_MR";
    case VRNIC_AQ_OP_DEREG_MR:
      return "DEREG_MR";
    case VRNIC_AQ_OP_CREATE_CQ:
      return "CREATE_CQ";
    case VRNIC_AQ_OP_DESTROY_CQ:
      return "DESTROY_CQ";
    case VRNIC_AQ_OP_RESIZE_CQ:
      return "RESIZE_CQ";
    case VRNIC_AQ_OP_CREATE_QP:
      return "CREATE_QP";
    case VRNIC_AQ_OP_MODIFY_QP:
      return "MODIFY_QP";
    case VRNIC_AQ_OP_QUERY_QP:
      return "QUERY_QP";
    case VRNIC_AQ_OP_DESTROY_QP:
      return "DESTROY_QP";
    case VRNIC_AQ_OP_CREATE_SRQ:
      return "CREATE_SRQ";
    case VRNIC_AQ_OP_MODIFY_SRQ:
      return "MODIFY_SRQ";
    case VRNIC_AQ_OP_QUERY_SRQ:
      return "QUERY_SRQ";
    case VRNIC_AQ_OP_DESTROY_SRQ:
      return "DESTROY_SRQ";
    case VRNIC_AQ_OP_QUERY_STATS:
      return "QUERY_STATS";
    case VRNIC_AQ_OP_ATTACH_MCAST:
      return "ATTACH_MCAST";
    case VRNIC_AQ_OP_DETACH_MCAST:
      return "DETACH_MCAST";
    case VRNIC_AQ_OP_ALLOC_COUNTER:
      return "ALLOC_COUNTER";
    case VRNIC_AQ_OP_DEALLOC_COUNTER:
      return "DEALLOC_COUNTER";
    case VRNIC_AQ_OP_SET_QP_COUNTER:
      return "SET_QP_COUNTER";
    case VRNIC_AQ_OP_QUERY_COUNTER:
      return "QUERY_COUNTER";
    default:
      return "UNKNOWN";
  }
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
