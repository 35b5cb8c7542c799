// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// EngineHost: what the engine and its objects (QPs, CQs) call back into,
// implemented by the device above them (device/device.h).  Its own header,
// so that the objects include nothing of the engine that owns them.
#pragma once

#include <cstdint>

#include "engine/port.h"

namespace vrnicd {

// What the engine needs from the device around it.
class EngineHost {
 public:
  EngineHost() = default;
  virtual ~EngineHost() = default;
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;
  EngineHost(EngineHost&&) = delete;
  EngineHost& operator=(EngineHost&&) = delete;

  // Post a COMPLETION event for cqn to EQ eqn.
  virtual void completion_event(uint32_t eqn, uint32_t cqn) = 0;
  // Post an async event (VRNIC_EQE_TYPE_*).
  virtual void async_event(uint8_t type, uint32_t d0, uint32_t d1) = 0;
  [[nodiscard]] virtual const Port& port() const = 0;
};

}  // namespace vrnicd
