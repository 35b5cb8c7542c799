// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Admin queue ring mechanics: fetch commands from the admin SQ in guest
// memory, hand each to an executor, and write completions with the owner
// bit to the admin CQ.  Command semantics live in the Device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "vrnic-hw.h"

namespace vrnicd {

class Bar2;

struct AqResult {
  uint8_t status = VRNIC_AQ_STATUS_OK;
  uint64_t result = 0;
  uint32_t result2 = 0;
};

const char* aq_opcode_name(uint32_t opcode) noexcept;
const char* aq_status_name(uint32_t status) noexcept;

class AdminQueue {
 public:
  enum class Outcome : uint8_t {
    kIdle,     // nothing (more) to do
    kCqFull,   // stopped: the driver has not consumed the admin CQ
    kOverrun,  // the driver's indices are inconsistent
  };

  // sq and cq are validated host addresses of the two rings in guest memory.
  void configure(std::byte* sq, std::byte* cq, uint32_t log_depth) noexcept;
  void clear() noexcept;
  [[nodiscard]] bool configured() const noexcept { return sq_ != nullptr; }

  // Process commands up to the producer index in the register page.
  // completed is incremented for each completion written.
  Outcome process(Bar2& bar, const std::function<AqResult(const vrnic_aq_cmd&)>& exec,
                  uint32_t* completed);

  [[nodiscard]] uint32_t sq_ci() const noexcept { return sq_ci_; }
  [[nodiscard]] uint32_t cq_pi() const noexcept { return cq_pi_; }

 private:
  void write_cqe(uint16_t cookie, const AqResult& r) noexcept;

  std::byte* sq_ = nullptr;
  std::byte* cq_ = nullptr;
  uint32_t log_depth_ = 0;
  uint32_t sq_ci_ = 0;
  uint32_t cq_pi_ = 0;
};

}  // namespace vrnicd
