// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The ivshmem server side of QEMU's ivshmem-doorbell protocol, for exactly
// one QEMU client.  vrnicd is both the server and the only other peer: it
// hands QEMU the BAR2 shared memory, one eventfd per doorbell channel of
// the device peer, and the eventfds behind QEMU's own MSI-X vectors, which
// it keeps to raise interrupts.
//
// Protocol (docs/specs/ivshmem-spec.rst): every message is a little-endian
// int64, some with one fd attached (SCM_RIGHTS): the version (0); the
// client's peer ID; -1 with the shared memory fd; the device's ID once per
// doorbell eventfd; the client's own ID once per interrupt eventfd.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/fd.h"
#include "base/irq.h"
#include "frontend/keeper.h"

namespace vrnicd {

class IvshmemServer final : public IrqSink {
 public:
  struct Callbacks {
    std::function<void()> on_connect;
    std::function<void()> on_disconnect;
    // count: doorbell rings since the last call (the eventfd's counter).
    std::function<void(uint32_t channel, uint64_t count)> on_doorbell;
  };

  IvshmemServer(EventLoop& loop, int shm_fd, uint32_t num_vectors, uint32_t num_channels,
                Callbacks cb);
  ~IvshmemServer() override;
  IvshmemServer(const IvshmemServer&) = delete;
  IvshmemServer& operator=(const IvshmemServer&) = delete;
  IvshmemServer(IvshmemServer&&) = delete;
  IvshmemServer& operator=(IvshmemServer&&) = delete;

  bool listen(const std::string& path, std::string* err);
  // Serve a device taken over from its keeper (keeper.h): QEMU is
  // connected already.  Once QEMU connects afresh, a keeper is started.
  bool adopt(KeptDevice kept);

  void raise(uint32_t vector) noexcept override;
  [[nodiscard]] bool connected() const noexcept { return client_.valid(); }

  static constexpr int64_t kProtocolVersion = 0;

 private:
  void on_accept();
  void on_client_event(uint32_t events);
  bool handshake();
  bool watch();
  bool send_msg(int64_t value, int fd);
  void drop_client();

  EventLoop& loop_;
  int shm_fd_;
  uint32_t num_vectors_;
  uint32_t num_channels_;
  Callbacks cb_;
  std::string path_;
  UniqueFd listen_;
  UniqueFd client_;
  UniqueFd lease_;                   // on the device, from its keeper
  std::vector<UniqueFd> doorbells_;  // device peer: one per channel
  std::vector<UniqueFd> irqs_;       // guest peer: one per MSI-X vector
};

}  // namespace vrnicd
