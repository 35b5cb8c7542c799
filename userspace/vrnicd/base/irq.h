// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Where the device's interrupts go: the ivshmem server's MSI-X eventfds in
// vrnicd, a recorder in tests.
#pragma once

#include <cstdint>

namespace vrnicd {

class IrqSink {
 public:
  IrqSink() = default;
  virtual ~IrqSink() = default;
  IrqSink(const IrqSink&) = delete;
  IrqSink& operator=(const IrqSink&) = delete;
  IrqSink(IrqSink&&) = delete;
  IrqSink& operator=(IrqSink&&) = delete;

  // Raise MSI-X vector; vectors the guest does not have are ignored.
  virtual void raise(uint32_t vector) noexcept = 0;
};

}  // namespace vrnicd
