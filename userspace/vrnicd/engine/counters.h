// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device's counters (enum vrnic_stat) and its counter sets: per-QP
// counters that QPs count into as well, once SET_QP_COUNTER binds them.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "vrnic-hw.h"

namespace vrnicd {

class Counters {
 public:
  using Values = std::array<uint64_t, VRNIC_STAT_MAX>;

  explicit Counters(uint32_t max_sets);

  // Device reset: every counter set is freed, and the object counts are 0.
  void reset();

  void add(vrnic_stat s, uint64_t n = 1) { port_[s] += n; }
  void sub(vrnic_stat s, uint64_t n = 1) { port_[s] -= n; }
  [[nodiscard]] uint64_t get(vrnic_stat s) const { return port_[s]; }
  [[nodiscard]] const Values& port() const { return port_; }

  // An event of a QP that counts into set (0: none): the port's counter
  // and the set's.
  void add_qp(uint32_t set, vrnic_stat s, uint64_t n = 1);
  // Into the set only, for what the port counted already.
  void add_set(uint32_t set, vrnic_stat s, uint64_t n = 1);

  // Counter sets by id, 1 .. max_sets.  VRNIC_AQ_STATUS_* results.
  uint8_t alloc_set(uint32_t* id);
  uint8_t free_set(uint32_t id);
  [[nodiscard]] bool set_exists(uint32_t id) const;
  [[nodiscard]] const Values* set(uint32_t id) const;

 private:
  Values port_{};
  std::vector<std::optional<Values>> sets_;  // index 0 unused
};

// Microseconds since the engine started.
class Clock {
 public:
  [[nodiscard]] uint64_t now_us() const {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now() - epoch_)
                                     .count());
  }

 private:
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

}  // namespace vrnicd
