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

#include "base/config.h"
#include "engine/counters.h"
#include "engine/engine_host.h"
#include "engine/frame_router.h"
#include "engine/object_table.h"
#include "engine/params.h"
#include "engine/port.h"
#include "engine/qp.h"
#include "engine/trace.h"
#include "vrnic-hw.h"

namespace vrnicd {

class GuestMemory;

class Engine {
 public:
  // dm: the device memory that REG_MR's F_DM regions map (may be empty).
  Engine(const DeviceConfig& cfg, const GuestMemory& mem, std::span<std::byte> dm,
         EngineHost& host);

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
