// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Admin commands for data-path objects: PDs, MRs, CQs, QPs, SRQs and the
// device counters.  The engine validates each object's fields; these
// handlers validate what the command itself carries.
#include <cstring>

#include "device.h"
#include "guest_memory.h"
#include "hw_access.h"

namespace vrnicd {
namespace {

AqResult status(uint8_t s, uint64_t result = 0) {
  AqResult r;
  r.status = s;
  r.result = result;
  return r;
}

uint32_t flags_of(const vrnic_aq_cmd& cmd) { return vrnic::le32(cmd.hdr.flags); }

}  // namespace

AqResult Device::cmd_create_pd(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t pdn = 0;
  const uint8_t st = engine_.create_pd(&pdn);
  return status(st, pdn);
}

AqResult Device::cmd_destroy_pd(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.destroy_pd(vrnic::le32(cmd.destroy_pd.pdn)));
}

AqResult Device::cmd_reg_mr(const vrnic_aq_cmd& cmd) {
  uint32_t key = 0;
  const uint8_t st = engine_.reg_mr(cmd.reg_mr, &key);
  return status(st, key);
}

AqResult Device::cmd_dereg_mr(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.dereg_mr(vrnic::le32(cmd.dereg_mr.key)));
}

AqResult Device::cmd_create_cq(const vrnic_aq_cmd& cmd) {
  const uint32_t eqn = vrnic::le32(cmd.create_cq.eqn);
  if (eqn == 0 || eq(eqn) == nullptr) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);  // CQs report to completion EQs
  }
  uint32_t cqn = 0;
  const uint8_t st = engine_.create_cq(cmd.create_cq, &cqn);
  return status(st, cqn);
}

AqResult Device::cmd_destroy_cq(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.destroy_cq(vrnic::le32(cmd.destroy_cq.cqn)));
}

AqResult Device::cmd_resize_cq(const vrnic_aq_cmd& cmd) {
  uint32_t moved = 0;
  const uint8_t st = engine_.resize_cq(cmd.resize_cq, &moved);
  return status(st, moved);
}

AqResult Device::cmd_create_qp(const vrnic_aq_cmd& cmd) {
  uint32_t qpn = 0;
  const uint8_t st = engine_.create_qp(cmd.create_qp, &qpn);
  return status(st, qpn);
}

AqResult Device::cmd_modify_qp(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_modify_qp& c = cmd.modify_qp;
  const uint64_t addr = vrnic::le64(c.attr.addr);
  vrnic_qp_attr attr{};
  if (flags_of(cmd) != 0 || vrnic::le32(c.attr.len) < sizeof(attr)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if (addr % 8 != 0 || !mem_.read(addr, &attr, sizeof(attr))) {
    return status(VRNIC_AQ_STATUS_BAD_ADDR);
  }
  return status(engine_.modify_qp(vrnic::le32(c.qpn), vrnic::le32(c.attr_mask), attr));
}

AqResult Device::cmd_query_qp(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  vrnic_qp_attr attr{};
  const uint8_t st = engine_.query_qp(vrnic::le32(cmd.query_qp.qpn), &attr);
  if (st != VRNIC_AQ_STATUS_OK) {
    return status(st);
  }
  return write_resp(cmd.query_qp.resp, &attr, sizeof(attr));
}

AqResult Device::cmd_destroy_qp(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.destroy_qp(vrnic::le32(cmd.destroy_qp.qpn)));
}

AqResult Device::cmd_create_srq(const vrnic_aq_cmd& cmd) {
  uint32_t srqn = 0;
  const uint8_t st = engine_.create_srq(cmd.create_srq, &srqn);
  return status(st, srqn);
}

AqResult Device::cmd_modify_srq(const vrnic_aq_cmd& cmd) {
  const uint32_t flags = flags_of(cmd);
  if ((flags & ~VRNIC_AQ_MODIFY_SRQ_F_LIMIT) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.modify_srq(vrnic::le32(cmd.modify_srq.srqn),
                                   (flags & VRNIC_AQ_MODIFY_SRQ_F_LIMIT) != 0,
                                   vrnic::le32(cmd.modify_srq.limit)));
}

AqResult Device::cmd_query_srq(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t limit = 0;
  const uint8_t st = engine_.query_srq(vrnic::le32(cmd.query_srq.srqn), &limit);
  return status(st, limit);
}

AqResult Device::cmd_destroy_srq(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.destroy_srq(vrnic::le32(cmd.destroy_srq.srqn)));
}

AqResult Device::cmd_query_stats(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  vrnic_stats st{};
  engine_.fill_stats(&st);
  return write_resp(cmd.query_stats.resp, &st, sizeof(st));
}

AqResult Device::cmd_attach_mcast(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  roce::Gid gid{};
  std::copy(std::begin(cmd.mcast.gid), std::end(cmd.mcast.gid), gid.begin());
  return status(engine_.attach_mcast(vrnic::le32(cmd.mcast.qpn), gid));
}

AqResult Device::cmd_alloc_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t id = 0;
  const uint8_t st = engine_.alloc_counter(&id);
  return status(st, id);
}

AqResult Device::cmd_dealloc_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.dealloc_counter(vrnic::le32(cmd.counter.id)));
}

AqResult Device::cmd_set_qp_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.set_qp_counter(vrnic::le32(cmd.counter.qpn), vrnic::le32(cmd.counter.id)));
}

AqResult Device::cmd_query_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  vrnic_stats st{};
  const uint8_t s = engine_.query_counter(vrnic::le32(cmd.counter.id), &st);
  if (s != VRNIC_AQ_STATUS_OK) {
    return status(s);
  }
  return write_resp(cmd.counter.resp, &st, sizeof(st));
}

AqResult Device::cmd_detach_mcast(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  roce::Gid gid{};
  std::copy(std::begin(cmd.mcast.gid), std::end(cmd.mcast.gid), gid.begin());
  return status(engine_.detach_mcast(vrnic::le32(cmd.mcast.qpn), gid));
}

}  // namespace vrnicd
