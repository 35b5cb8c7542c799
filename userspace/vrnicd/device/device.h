// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The vrnic device model: register page state machine (reset, enable,
// fatal), the admin queue and its commands, event queues, and port 1.
// All methods run on the dispatch thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/config.h"
#include "device/admin.h"
#include "device/eq.h"
#include "engine/engine.h"
#include "engine/port.h"
#include "vrnic-hw.h"

namespace vrnicd {

class Bar2;

// VRNIC_STATE_* by name: RESET, READY, FATAL, GONE.
const char* device_state_name(uint32_t s) noexcept;
class GuestMemory;
class IrqSink;

struct DeviceCounters {
  uint64_t admin_cmds = 0;
  uint64_t admin_errors = 0;
  uint64_t async_events = 0;
  uint64_t async_dropped = 0;
  uint64_t irqs = 0;
  uint64_t resets = 0;
};

class Device final : public EngineHost {
 public:
  // Ring geometry the device accepts (log2 of entries; base alignment).
  static constexpr uint32_t kMinLogDepth = 2;
  static constexpr uint32_t kAqMaxLogDepth = 8;
  static constexpr uint32_t kAeqMaxLogDepth = 12;
  static constexpr uint32_t kEqMaxLogDepth = 16;
  static constexpr uint64_t kRingAlign = VRNIC_BAR2_PAGE_SIZE;

  Device(const DeviceConfig& cfg, Bar2& bar, const GuestMemory& mem, IrqSink& irq);
  ~Device() override = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&&) = delete;
  Device& operator=(Device&&) = delete;

  // Publish the read-only registers; the device starts in RESET.
  void init_registers_st();

  // Doorbell channel VRNIC_DB_CHANNEL_CTRL: CTRL register, admin queue and
  // EQ arming.
  void on_ctrl_doorbell_st();
  // Heartbeat timer tick.
  void on_heartbeat_st();
  // QEMU went away: forget everything, as after RESET.
  void on_disconnect_st();
  // The device process is exiting: tell the driver.
  void shutdown_st();
  // Link partner present or not (the "cable").
  void set_cable_st(bool up);
  // Fault injection (SIGUSR1): stop serving the admin queue, as a hung
  // command processor would, while the heartbeat goes on.  A reset ends it.
  void stall_admin_st();

  // Execute one admin command (public for tests and fuzzing).
  AqResult execute_st(const vrnic_aq_cmd& cmd);

  // The data engine.  engine_poll_st() does one round of work and says
  // whether there was any.  Before sleeping, engine_prepare_sleep_st() sets
  // ENGINE_ASLEEP, fences and re-checks every doorbell record: false means
  // work arrived and the caller must not sleep.  A doze with the flag set
  // (--doze-ring) prepares the same way but is not counted as a sleep.
  // engine_wake_st() clears the flag.
  bool engine_poll_st();
  // A frame from the wire; false if it is not RoCEv2 for the device.  Only
  // a READY device takes frames: otherwise RoCEv2 frames are dropped.
  bool receive_frame_st(std::span<const std::byte> frame);
  bool engine_prepare_sleep_st(bool doze = false);
  void engine_wake_st();
  void on_engine_doorbell_st(uint64_t count);
  [[nodiscard]] uint64_t engine_next_deadline_us() const { return engine_.next_deadline_us(); }
  Engine& engine() { return engine_; }

  // EngineHost
  void completion_event(uint32_t eqn, uint32_t cqn) override;
  void async_event(uint8_t type, uint32_t d0, uint32_t d1) override;
  [[nodiscard]] const Port& port() const override { return port_; }

  [[nodiscard]] uint32_t state() const noexcept { return state_; }
  [[nodiscard]] const DeviceCounters& counters() const noexcept { return counters_; }
  [[nodiscard]] const EventQueue* eq(uint32_t eqn) const noexcept;
  [[nodiscard]] const DeviceConfig& config() const noexcept { return cfg_; }
  void fill_device_attr(vrnic_device_attr& attr) const noexcept;

 private:
  void reset_st();
  bool dma_allowed_st();
  void enable_st();
  void fatal_st(uint32_t code);
  void process_admin_st();
  void check_eq_arms_st();
  void raise_st(uint32_t vector);
  void post_async_st(uint8_t type, uint32_t d0, uint32_t d1, uint32_t d2);
  bool post_eq_st(uint32_t eqn, uint8_t type, uint32_t d0, uint32_t d1, uint32_t d2);
  void port_changed_st();

  // One handler per admin opcode, cmd_<name>: device-level commands in
  // admin_cmds.cc, data-path objects in admin_verbs.cc.
#define VRNIC_AQ_OP(NAME, name, value) AqResult cmd_##name(const vrnic_aq_cmd& cmd);
#include "vrnic-aq-ops.h"
#undef VRNIC_AQ_OP
  AqResult write_resp(const vrnic_aq_resp_buf& buf, const void* data, uint32_t len);
  AqResult write_stats(const vrnic_aq_resp_buf& buf, const Counters::Values& values);
  [[nodiscard]] bool cq_depth_ok(uint32_t log_depth) const;
  bool decode_qp_attr(const vrnic_qp_attr& w, uint32_t mask, QpAttrs* a) const;

  const DeviceConfig& cfg_;
  Bar2& bar_;
  const GuestMemory& mem_;
  IrqSink& irq_;
  uint32_t state_ = VRNIC_STATE_RESET;
  uint32_t heartbeat_ = 0;
  bool admin_stalled_ = false;
  AdminQueue aq_;
  std::unique_ptr<EventQueue> aeq_;
  std::vector<std::unique_ptr<EventQueue>> eqs_;  // indexed by EQ number
  Port port_;
  DeviceCounters counters_;
  Engine engine_;
};

}  // namespace vrnicd
