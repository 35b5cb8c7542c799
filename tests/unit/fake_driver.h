// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// A driver stand-in for host tests: it programs the register page, posts
// admin commands into rings in a fake guest RAM, rings the CTRL doorbell
// and reads completions and async events back, the way vrnic.ko does.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>

#include "hw_access.h"
#include "vrnic-hw.h"

namespace vrnic_test {

class FakeDriver {
 public:
  // Guest-physical layout of the driver's queues in the fake RAM.
  static constexpr uint64_t kAqSq = 0x10000;
  static constexpr uint64_t kAqCq = 0x20000;
  static constexpr uint64_t kAeq = 0x30000;
  static constexpr uint64_t kResp = 0x40000;
  static constexpr uint64_t kEqRing = 0x50000;
  static constexpr uint64_t kEqDbrec = 0x60000;

  FakeDriver(std::byte* bar2, std::byte* ram, size_t ram_size, std::function<void()> ring_ctrl,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(2000))
      : bar2_(bar2),
        ram_(ram),
        ram_size_(ram_size),
        ring_(std::move(ring_ctrl)),
        timeout_(timeout) {}

  [[nodiscard]] uint32_t reg(uint32_t off) const { return vrnic::load_acquire32(bar2_ + off); }
  void set_reg(uint32_t off, uint32_t v) { vrnic::store_release32(bar2_ + off, v); }
  void ring() { ring_(); }
  std::byte* ram(uint64_t gpa) { return ram_ + gpa; }
  [[nodiscard]] size_t ram_size() const { return ram_size_; }

  // Wait until pred() holds or the timeout passes.
  bool wait_for(const std::function<bool()>& pred) {
    const auto end = std::chrono::steady_clock::now() + timeout_;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > end) {
        return false;
      }
    }
    return true;
  }

  bool reset() {
    set_reg(VRNIC_REG_CTRL, VRNIC_CTRL_RESET);
    ring();
    if (!wait_for([&] { return reg(VRNIC_REG_CTRL) == 0; })) {
      return false;
    }
    sq_pi_ = 0;
    cq_ci_ = 0;
    aeq_ci_ = 0;
    return reg(VRNIC_REG_STATE) == VRNIC_STATE_RESET;
  }

  // Program the admin queue and AEQ and enable; returns the new state.
  uint32_t enable(uint32_t aq_log = 4, uint32_t aeq_log = 4, uint64_t sq = kAqSq,
                  uint64_t cq = kAqCq, uint64_t aeq = kAeq) {
    aq_log_ = aq_log;
    aeq_log_ = aeq_log;
    std::memset(ram(kAqCq), 0, sizeof(vrnic_aq_cqe) << std::min(aq_log, 12U));
    std::memset(ram(kAeq), 0, sizeof(vrnic_eqe) << std::min(aeq_log, 12U));
    set_reg(VRNIC_REG_AQ_SQ_BASE_LO, static_cast<uint32_t>(sq));
    set_reg(VRNIC_REG_AQ_SQ_BASE_HI, static_cast<uint32_t>(sq >> 32));
    set_reg(VRNIC_REG_AQ_CQ_BASE_LO, static_cast<uint32_t>(cq));
    set_reg(VRNIC_REG_AQ_CQ_BASE_HI, static_cast<uint32_t>(cq >> 32));
    set_reg(VRNIC_REG_AQ_DEPTH, aq_log);
    set_reg(VRNIC_REG_AEQ_BASE_LO, static_cast<uint32_t>(aeq));
    set_reg(VRNIC_REG_AEQ_BASE_HI, static_cast<uint32_t>(aeq >> 32));
    set_reg(VRNIC_REG_AEQ_DEPTH, aeq_log);
    set_reg(VRNIC_REG_CTRL, VRNIC_CTRL_ENABLE);
    ring();
    wait_for([&] { return reg(VRNIC_REG_STATE) != VRNIC_STATE_RESET; });
    return reg(VRNIC_REG_STATE);
  }

  // Write a command into the next SQ slot without ringing.
  void post(vrnic_aq_cmd cmd) {
    cmd.hdr.cookie = static_cast<uint16_t>(sq_pi_);
    std::memcpy(ram(kAqSq) + vrnic::ring_slot(sq_pi_, aq_log_) * sizeof(cmd), &cmd, sizeof(cmd));
    ++sq_pi_;
    set_reg(VRNIC_REG_AQ_SQ_PI, sq_pi_);
  }

  // The next admin completion, if the device has written one.
  std::optional<vrnic_aq_cqe> poll_cqe() {
    std::byte* slot = ram(kAqCq) + vrnic::ring_slot(cq_ci_, aq_log_) * sizeof(vrnic_aq_cqe);
    const uint32_t info = vrnic::load_acquire32(slot + offsetof(vrnic_aq_cqe, info));
    if (vrnic::field_get<VRNIC_AQ_CQE_OWNER_MASK>(info) != vrnic::ring_owner(cq_ci_, aq_log_)) {
      return std::nullopt;
    }
    vrnic_aq_cqe cqe{};
    std::memcpy(&cqe, slot, sizeof(cqe));
    ++cq_ci_;
    set_reg(VRNIC_REG_AQ_CQ_CI, cq_ci_);
    return cqe;
  }

  std::optional<vrnic_aq_cqe> exec(const vrnic_aq_cmd& cmd) {
    post(cmd);
    ring();
    std::optional<vrnic_aq_cqe> cqe;
    wait_for([&] { return (cqe = poll_cqe()).has_value(); });
    return cqe;
  }

  // Status of a command, or -1 when no completion arrived.
  int exec_status(const vrnic_aq_cmd& cmd) {
    auto cqe = exec(cmd);
    if (!cqe) {
      return -1;
    }
    return static_cast<int>(vrnic::field_get<VRNIC_AQ_CQE_STATUS_MASK>(cqe->info));
  }

  std::optional<vrnic_eqe> poll_aeqe() {
    std::byte* slot = ram(kAeq) + vrnic::ring_slot(aeq_ci_, aeq_log_) * sizeof(vrnic_eqe);
    const uint32_t info = vrnic::load_acquire32(slot + offsetof(vrnic_eqe, info));
    if (vrnic::field_get<VRNIC_EQE_OWNER_MASK>(info) != vrnic::ring_owner(aeq_ci_, aeq_log_)) {
      return std::nullopt;
    }
    vrnic_eqe e{};
    std::memcpy(&e, slot, sizeof(e));
    ++aeq_ci_;
    set_reg(VRNIC_REG_AEQ_CI, aeq_ci_);
    return e;
  }

  [[nodiscard]] uint32_t sq_pi() const { return sq_pi_; }
  [[nodiscard]] uint32_t cq_ci() const { return cq_ci_; }

 private:
  std::byte* bar2_;
  std::byte* ram_;
  size_t ram_size_;
  std::function<void()> ring_;
  std::chrono::milliseconds timeout_;
  uint32_t aq_log_ = 4;
  uint32_t aeq_log_ = 4;
  uint32_t sq_pi_ = 0;
  uint32_t cq_ci_ = 0;
  uint32_t aeq_ci_ = 0;
};

// Command builders.
inline vrnic_aq_cmd make_cmd(uint16_t opcode, uint32_t flags = 0) {
  vrnic_aq_cmd c{};
  c.hdr.opcode = opcode;
  c.hdr.flags = flags;
  return c;
}

}  // namespace vrnic_test
