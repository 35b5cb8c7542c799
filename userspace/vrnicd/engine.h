// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The data engine: the object tables, the counters and the frame router,
// and the polling loop that gives every QP its turn.  Each QP runs its
// protocol (a roce::QpTransport) over its rings in guest memory; see qp.h.
// Object commands reach the engine as validated CPU-order parameters
// (params.h, decoded in admin_verbs.cc).  All of it runs on the dispatch
// thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "config.h"
#include "counters.h"
#include "frame_router.h"
#include "object_table.h"
#include "params.h"
#include "port.h"
#include "qp.h"
#include "trace.h"
#include "vrnic-hw.h"

namespace vrnicd {

class GuestMemory;

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

class Engine {
 public:
  Engine(const DeviceConfig& cfg, const GuestMemory& mem, EngineHost& host);

  // Forget every object, as at device reset.
  void reset();

  // Objects (VRNIC_AQ_STATUS_* results).  The tables take the object
  // commands; these need the engine as a whole.
  ObjectTable& objects() { return objects_; }
  uint8_t modify_qp(uint32_t qpn, const QpAttrs& a);
  uint8_t query_qp(uint32_t qpn, QpAttrs* a) const;
  uint8_t alloc_counter(uint32_t* id) { return counters_.alloc_set(id); }
  uint8_t dealloc_counter(uint32_t id);
  uint8_t set_qp_counter(uint32_t qpn, uint32_t id);
  [[nodiscard]] const Counters& counters() const { return counters_; }

  // Data path.  poll() does one round of work; has_work() says whether a
  // round would do anything (the sleep handshake re-checks with it).
  bool poll();
  bool has_work();
  [[nodiscard]] uint64_t next_deadline_us() const;
  [[nodiscard]] bool active() const;

  // A frame from the wire; false if it is not RoCEv2 for this device.
  bool receive_frame(std::span<const std::byte> frame) { return router_.receive(frame); }
  // Where frames that are not for the device itself go.
  void set_wire(FrameRouter::Wire tx) { router_.set_wire(std::move(tx)); }

  void count(vrnic_stat s, uint64_t n = 1) { counters_.add(s, n); }
  [[nodiscard]] uint64_t stat(vrnic_stat s) const { return counters_.get(s); }
  [[nodiscard]] uint64_t now_us() const { return clock_.now_us(); }
  [[nodiscard]] size_t loopback_depth() const { return router_.loopback_depth(); }
  Tracer& tracer() { return tracer_; }

 private:
  EngineHost& host_;
  Clock clock_;
  Counters counters_;
  Tracer tracer_;
  QpContext qp_ctx_;  // refers to objects_ and router_ below
  ObjectTable objects_;
  FrameRouter router_;
};

}  // namespace vrnicd
