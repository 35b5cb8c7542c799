// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Admin command semantics.  Every field of a command comes from the guest:
// each handler validates what it uses and answers with a status, never
// with a crash or an access outside guest RAM.
#include <array>
#include <cstring>

#include "base/guest_memory.h"
#include "base/log.h"
#include "device/device.h"
#include "hw_access.h"

namespace vrnicd {
namespace {

AqResult status(uint8_t s) {
  AqResult r;
  r.status = s;
  return r;
}

bool flags_ok(const vrnic_aq_cmd& cmd, uint32_t allowed) {
  return (vrnic::le32(cmd.hdr.flags) & ~allowed) == 0;
}

}  // namespace

AqResult Device::execute_st(const vrnic_aq_cmd& cmd) {
  using Handler = AqResult (Device::*)(const vrnic_aq_cmd&);
  static constexpr std::array<Handler, VRNIC_AQ_OP_MAX> kHandlers = {
#define VRNIC_AQ_OP(NAME, name, value) &Device::cmd_##name,
#include "vrnic-aq-ops.h"
#undef VRNIC_AQ_OP
  };
  const uint32_t op = vrnic::le16(cmd.hdr.opcode);
  ++counters_.admin_cmds;
  AqResult r;
  if (op >= kHandlers.size()) {
    r = status(VRNIC_AQ_STATUS_BAD_OPCODE);
  } else {
    r = (this->*kHandlers[op])(cmd);
  }
  if (r.status != VRNIC_AQ_STATUS_OK) {
    ++counters_.admin_errors;
    log_guest_error("admin %s (opcode %#x, cookie %u) failed: %s", aq_opcode_name(op), op,
                    vrnic::le16(cmd.hdr.cookie), aq_status_name(r.status));
  } else {
    LOG_DBG("admin %s ok", aq_opcode_name(op));
  }
  return r;
}

AqResult Device::write_resp(const vrnic_aq_resp_buf& buf, const void* data, uint32_t len) {
  const uint64_t addr = vrnic::le64(buf.addr);
  const uint32_t n = std::min(vrnic::le32(buf.len), len);
  if (addr % 8 != 0) {
    return status(VRNIC_AQ_STATUS_BAD_ADDR);
  }
  if (!mem_.write(addr, data, n)) {
    return status(VRNIC_AQ_STATUS_BAD_ADDR);
  }
  AqResult r;
  r.result = len;
  r.result2 = n;
  return r;
}

AqResult Device::cmd_nop(const vrnic_aq_cmd& cmd) {
  if (!flags_ok(cmd, VRNIC_AQ_NOP_F_EVENT)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if ((vrnic::le32(cmd.hdr.flags) & VRNIC_AQ_NOP_F_EVENT) == 0) {
    return {};
  }
  const uint32_t eqn = vrnic::le32(cmd.nop.eqn);
  if (eq(eqn) == nullptr) {
    return status(VRNIC_AQ_STATUS_NOT_FOUND);
  }
  if (!post_eq_st(eqn, VRNIC_EQE_TYPE_NOP, vrnic::le32(cmd.nop.cookie), 0, 0)) {
    return status(VRNIC_AQ_STATUS_NO_RESOURCES);
  }
  return {};
}

AqResult Device::cmd_query_device(const vrnic_aq_cmd& cmd) {
  if (!flags_ok(cmd, 0)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  vrnic_device_attr attr{};
  fill_device_attr(attr);
  return write_resp(cmd.query_device.resp, &attr, sizeof(attr));
}

AqResult Device::cmd_query_port(const vrnic_aq_cmd& cmd) {
  if (!flags_ok(cmd, 0) || vrnic::le32(cmd.query_port.port) != 1) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  vrnic_port_attr attr{};
  port_.fill_attr(attr);
  return write_resp(cmd.query_port.resp, &attr, sizeof(attr));
}

AqResult Device::cmd_modify_port(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_modify_port& c = cmd.modify_port;
  const uint32_t flags = vrnic::le32(c.hdr.flags);
  constexpr uint32_t kAllowed =
      VRNIC_AQ_MODIFY_PORT_F_NETDEV | VRNIC_AQ_MODIFY_PORT_F_MTU | VRNIC_AQ_MODIFY_PORT_F_MAC;
  if (!flags_ok(cmd, kAllowed) || vrnic::le32(c.port) != 1) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  const uint32_t nstate = vrnic::le32(c.netdev_state);
  const uint32_t mtu = vrnic::le32(c.netdev_mtu);
  if ((flags & VRNIC_AQ_MODIFY_PORT_F_NETDEV) != 0 &&
      (nstate & ~(VRNIC_NETDEV_STATE_UP | VRNIC_NETDEV_STATE_CARRIER)) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if ((flags & VRNIC_AQ_MODIFY_PORT_F_MTU) != 0 && (mtu < Port::kMinMtu || mtu > Port::kMaxMtu)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if ((flags & VRNIC_AQ_MODIFY_PORT_F_NETDEV) != 0) {
    port_.set_netdev_state(nstate);
  }
  if ((flags & VRNIC_AQ_MODIFY_PORT_F_MTU) != 0) {
    port_.set_netdev_mtu(mtu);
  }
  if ((flags & VRNIC_AQ_MODIFY_PORT_F_MAC) != 0) {
    MacAddr mac{};
    std::memcpy(mac.data(), c.mac, mac.size());
    port_.set_mac(mac);
  }
  if (port_.update_state()) {
    port_changed_st();
  }
  return {};
}

AqResult Device::cmd_set_gid(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_set_gid& c = cmd.set_gid;
  const uint32_t index = vrnic::le32(c.index);
  if (!flags_ok(cmd, VRNIC_AQ_SET_GID_F_VALID) || vrnic::le32(c.port) != 1 ||
      index >= port_.gids().size()) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if ((vrnic::le32(c.hdr.flags) & VRNIC_AQ_SET_GID_F_VALID) == 0) {
    port_.set_gid(index, GidEntry{});
    return {};
  }
  const uint16_t vlan = vrnic::le16(c.vlan_id);
  const uint32_t type = vrnic::le32(c.type);
  if ((type != VRNIC_GID_TYPE_ROCE_V2 && type != VRNIC_GID_TYPE_ROCE_V1) ||
      (vlan != 0xffff && vlan > 4095)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  GidEntry g;
  g.valid = true;
  std::memcpy(g.gid.data(), c.gid, g.gid.size());
  g.type = type;
  g.vlan_id = vlan;
  std::memcpy(g.mac.data(), c.mac, g.mac.size());
  port_.set_gid(index, g);
  return {};
}

AqResult Device::cmd_create_eq(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_create_eq& c = cmd.create_eq;
  const uint32_t eqn = vrnic::le32(c.eqn);
  const uint32_t vector = vrnic::le32(c.vector);
  const uint32_t log_depth = vrnic::le32(c.log_depth);
  const uint64_t ring = vrnic::le64(c.ring_addr);
  const uint64_t dbrec = vrnic::le64(c.dbrec_addr);
  if (!flags_ok(cmd, 0) || eqn == 0 || eqn >= eqs_.size() || vector == 0 ||
      vector >= cfg_.num_vectors || log_depth < kMinLogDepth || log_depth > kEqMaxLogDepth) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if (eqs_[eqn]) {
    return status(VRNIC_AQ_STATUS_BUSY);
  }
  if (ring % kRingAlign != 0 || dbrec % sizeof(vrnic_eq_dbrec) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_ADDR);
  }
  std::byte* ring_host = mem_.translate(ring, sizeof(vrnic_eqe) << log_depth);
  std::byte* dbrec_host = mem_.translate(dbrec, sizeof(vrnic_eq_dbrec));
  if (ring_host == nullptr || dbrec_host == nullptr) {
    return status(VRNIC_AQ_STATUS_BAD_ADDR);
  }
  eqs_[eqn] = std::make_unique<EventQueue>(eqn, ring_host, log_depth, vector, dbrec_host);
  LOG_DBG("EQ %u created: depth %u, vector %u", eqn, 1U << log_depth, vector);
  return {};
}

AqResult Device::cmd_destroy_eq(const vrnic_aq_cmd& cmd) {
  const uint32_t eqn = vrnic::le32(cmd.destroy_eq.eqn);
  if (!flags_ok(cmd, 0) || eqn == 0 || eqn >= eqs_.size()) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if (!eqs_[eqn]) {
    return status(VRNIC_AQ_STATUS_NOT_FOUND);
  }
  if (engine_.objects().eq_in_use(eqn)) {
    return status(VRNIC_AQ_STATUS_BUSY);  // CQs report to it
  }
  eqs_[eqn].reset();
  return {};
}

}  // namespace vrnicd
