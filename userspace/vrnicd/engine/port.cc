// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/port.h"

#include <algorithm>
#include <cstring>

#include "hw_access.h"

namespace vrnicd {

Port::Port(const DeviceConfig& cfg)
    : cfg_(cfg), cable_up_(cfg.cable_up), mac_(cfg.mac), gids_(cfg.limits.gid_tbl_len) {
  update_state();
}

void Port::reset() {
  netdev_state_ = 0;
  netdev_mtu_ = 1500;
  mac_ = cfg_.mac;
  for (GidEntry& g : gids_) {
    g = GidEntry{};
  }
  local_.clear();
  update_state();
}

void Port::set_gid(uint32_t index, const GidEntry& entry) {
  gids_.at(index) = entry;
  local_.clear();
  for (const GidEntry& g : gids_) {
    if (g.valid && std::find(local_.begin(), local_.end(), g.gid) == local_.end()) {
      local_.push_back(g.gid);
    }
  }
}

bool Port::is_local(const std::array<uint8_t, 16>& gid) const noexcept {
  return std::find(local_.begin(), local_.end(), gid) != local_.end();
}

bool Port::update_state() noexcept {
  uint8_t phys = VRNIC_PORT_PHYS_LINK_UP;
  if ((netdev_state_ & VRNIC_NETDEV_STATE_UP) == 0) {
    phys = VRNIC_PORT_PHYS_DISABLED;
  } else if (!cable_up_ || (netdev_state_ & VRNIC_NETDEV_STATE_CARRIER) == 0) {
    phys = VRNIC_PORT_PHYS_POLLING;
  }
  const uint8_t state = phys == VRNIC_PORT_PHYS_LINK_UP ? VRNIC_PORT_ACTIVE : VRNIC_PORT_DOWN;
  const bool changed = state != state_ || phys != phys_state_;
  if (state != state_) {
    ++link_changes_;
  }
  state_ = state;
  phys_state_ = phys;
  return changed;
}

uint8_t Port::active_mtu() const noexcept {
  // Largest IB MTU (256 << (n - 1)) whose packets fit the Ethernet MTU.
  const uint32_t payload = netdev_mtu_ > kRoceOverhead ? netdev_mtu_ - kRoceOverhead : 0;
  uint8_t mtu = 1;
  while (mtu < cfg_.max_mtu && (256U << mtu) <= payload) {
    ++mtu;
  }
  return mtu;
}

void Port::fill_attr(vrnic_port_attr& attr) const noexcept {
  attr = vrnic_port_attr{};
  attr.state = state_;
  attr.phys_state = phys_state_;
  attr.active_mtu = active_mtu();
  attr.max_mtu = cfg_.max_mtu;
  attr.active_speed = cfg_.active_speed;
  attr.active_width = cfg_.active_width;
  attr.gid_tbl_len = vrnic::to_le16(static_cast<uint16_t>(gids_.size()));
  attr.pkey_tbl_len = vrnic::to_le16(1);
  std::memcpy(attr.mac, mac_.data(), mac_.size());
  attr.max_msg_sz = vrnic::to_le32(1U << 31);
  attr.netdev_mtu = vrnic::to_le32(netdev_mtu_);
  attr.link_changes = vrnic::to_le32(link_changes_);
}

}  // namespace vrnicd
