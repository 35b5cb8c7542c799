// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The board: what a vrnic card carries, wired together.  The PCI function
// QEMU sees (the ivshmem server, handing it BAR2, doorbells and
// interrupts), the device behind it, and the Ethernet port.  Every
// connection between them is a named member function here:
//
//   QEMU doorbell, disconnect  -> on_doorbell(), on_disconnect() -> Device
//   port: frame received       -> port_rx()     -> Device::receive_frame_st()
//   port: cable plugged/pulled -> port_cable()  -> Device::set_cable_st()
//   port: which MAC it has     -> port_mac()    <- the device's port state
//   engine: frame to send      -> wire_tx()     -> EthPort::engine_tx()
//
// Neither the device nor the port includes the other's layer; only the
// board (the application layer) knows both.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/bar2.h"
#include "base/config.h"
#include "base/event_loop.h"
#include "base/guest_memory.h"
#include "device/device.h"
#include "frontend/ivshmem_server.h"
#include "frontend/keeper.h"
#include "wire/eth_port.h"

namespace vrnicd {

class Board {
 public:
  Board(const DeviceConfig& cfg, Bar2& bar, const GuestMemory& mem, EventLoop& loop);
  ~Board() = default;
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;
  Board(Board&&) = delete;
  Board& operator=(Board&&) = delete;

  // Serve QEMU on socket_path, taking over a kept device first if given
  // (it starts from RESET: to the driver, a device reset behind its back),
  // then bring the port up.  False with *err set on failure.
  bool start(const std::string& socket_path, std::optional<KeptDevice> kept,
             const EthPort::Options& port, std::string* err);

  Device& device() noexcept { return dev_; }
  [[nodiscard]] const Device& device() const noexcept { return dev_; }
  EthPort& port() noexcept { return port_; }

 private:
  // From QEMU, through the ivshmem server.
  void on_disconnect();
  void on_doorbell(uint32_t channel, uint64_t count);
  // From the Ethernet port.
  [[nodiscard]] MacAddr port_mac() const;
  bool port_rx(std::span<const std::byte> frame);
  void port_cable(bool up);
  // From the engine, for the wire.
  void wire_tx(std::span<const std::byte> frame);

  IvshmemServer server_;
  Device dev_;  // after the server, its interrupt sink

  EthPort port_;
};

}  // namespace vrnicd
