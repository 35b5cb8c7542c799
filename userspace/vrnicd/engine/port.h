// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Port 1 as the device keeps it: link state, the netdev state the driver
// reports, MTU and the GID table.  The port is ACTIVE when the cable is up
// and the paired netdev is up with carrier.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/config.h"
#include "vrnic-hw.h"

namespace vrnicd {

struct GidEntry {
  bool valid = false;
  std::array<uint8_t, 16> gid{};
  uint32_t type = 0;
  uint16_t vlan_id = 0xffff;
  MacAddr mac{};
};

class Port {
 public:
  explicit Port(const DeviceConfig& cfg);

  // Back to the state after device reset: netdev unknown, so DOWN.
  void reset();

  void set_cable(bool up) noexcept { cable_up_ = up; }
  void set_netdev_state(uint32_t state) noexcept { netdev_state_ = state; }
  void set_netdev_mtu(uint32_t mtu) noexcept { netdev_mtu_ = mtu; }
  void set_mac(const MacAddr& mac) noexcept { mac_ = mac; }

  // Recompute state and phys_state; true when either changed.
  bool update_state() noexcept;

  [[nodiscard]] uint8_t state() const noexcept { return state_; }
  [[nodiscard]] uint8_t phys_state() const noexcept { return phys_state_; }
  [[nodiscard]] uint8_t active_mtu() const noexcept;
  [[nodiscard]] uint32_t netdev_mtu() const noexcept { return netdev_mtu_; }
  [[nodiscard]] const MacAddr& mac() const noexcept { return mac_; }
  [[nodiscard]] uint32_t link_changes() const noexcept { return link_changes_; }

  void fill_attr(vrnic_port_attr& attr) const noexcept;

  [[nodiscard]] const std::vector<GidEntry>& gids() const noexcept { return gids_; }
  // Entry index of the GID table (index < gids().size()).
  void set_gid(uint32_t index, const GidEntry& entry);
  // Whether gid is one of the port's own: asked of every frame, so
  // answered from the valid GIDs alone, not by a walk of the table.
  [[nodiscard]] bool is_local(const std::array<uint8_t, 16>& gid) const noexcept;

  // Ethernet MTUs Linux allows (ETH_MIN_MTU .. IP_MAX_MTU).
  static constexpr uint32_t kMinMtu = 68;
  static constexpr uint32_t kMaxMtu = 65535;
  // IPv4 + UDP + BTH + the largest extended header + ICRC, rounded up the
  // way rxe does it.
  static constexpr uint32_t kRoceOverhead = 80;

 private:
  const DeviceConfig& cfg_;
  bool cable_up_;
  uint32_t netdev_state_ = 0;
  uint32_t netdev_mtu_ = 1500;
  MacAddr mac_;
  uint8_t state_ = VRNIC_PORT_DOWN;
  uint8_t phys_state_ = VRNIC_PORT_PHYS_DISABLED;
  uint32_t link_changes_ = 0;
  std::vector<GidEntry> gids_;
  std::vector<std::array<uint8_t, 16>> local_;  // the valid GIDs, once each
};

}  // namespace vrnicd
