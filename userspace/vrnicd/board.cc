// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The board's wiring; see board.h.
#include "board.h"

#include <functional>
#include <utility>

namespace vrnicd {

Board::Board(const DeviceConfig& cfg, Bar2& bar, const GuestMemory& mem, EventLoop& loop)
    : server_(loop, bar.fd(), cfg.num_vectors, VRNIC_DB_NUM_CHANNELS,
              IvshmemServer::Callbacks{
                  .on_connect = [] {},
                  .on_disconnect = std::bind_front(&Board::on_disconnect, this),
                  .on_doorbell = std::bind_front(&Board::on_doorbell, this),
              }),
      dev_(cfg, bar, mem, server_),
      port_(loop, std::bind_front(&Board::port_mac, this), std::bind_front(&Board::port_rx, this),
            std::bind_front(&Board::port_cable, this)) {
  dev_.init_registers_st();
}

bool Board::start(const std::string& socket_path, std::optional<KeptDevice> kept,
                  const EthPort::Options& port, std::string* err) {
  if (kept && !server_.adopt(std::move(*kept))) {
    *err = "cannot take over the kept device";
    return false;
  }
  if (!server_.listen(socket_path, err)) {
    *err = "ivshmem server: " + *err;
    return false;
  }
  if (!port_.start(port, err)) {
    return false;
  }
  if (port_.has_wire()) {
    dev_.engine().set_wire(std::bind_front(&Board::wire_tx, this));
  }
  return true;
}

void Board::on_disconnect() { dev_.on_disconnect_st(); }

void Board::on_doorbell(uint32_t channel, uint64_t count) {
  if (channel == VRNIC_DB_CHANNEL_CTRL) {
    dev_.on_ctrl_doorbell_st();
  } else if (channel == VRNIC_DB_CHANNEL_ENGINE) {
    dev_.on_engine_doorbell_st(count);
  }
}

MacAddr Board::port_mac() const { return dev_.port().mac(); }

bool Board::port_rx(std::span<const std::byte> frame) { return dev_.receive_frame_st(frame); }

void Board::port_cable(bool up) { dev_.set_cable_st(up); }

void Board::wire_tx(std::span<const std::byte> frame) { port_.engine_tx(frame); }

}  // namespace vrnicd
