// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Packet pacing of a send queue (MODIFY_QP's rate_limit): a token bucket
// of bits.  Credit grows with time at the rate, up to the burst, and each
// frame sent takes its size.  A frame may leave while the credit is above
// zero, so the credit can go below zero by one frame; the next waits until
// that is paid back.  Over any interval the QP sends at most
// rate x interval + burst + one frame.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace vrnicd::roce {

// The rates a QP can be paced at, in kbit/s (besides 0, unpaced).
constexpr uint32_t kRateLimitMinKbps = 1000;         // 1 Mbit/s
constexpr uint32_t kRateLimitMaxKbps = 100'000'000;  // 100 Gbit/s
// The least burst: two frames of a 4096-byte MTU with their headers, so
// that a round of the engine that comes a little late loses no credit.
constexpr uint32_t kPacerMinBurstBytes = 2 * (4096 + 128);

class Pacer {
 public:
  // Pace at kbps (0: unpaced) with a bucket of burst bytes, full from now.
  void set(uint32_t kbps, uint32_t burst, uint64_t now_us) {
    kbps_ = kbps;
    burst_ = burst;
    // Credit is kept in millibits: 1 kbit/s is one millibit a microsecond.
    cap_ = static_cast<int64_t>(std::max(burst, kPacerMinBurstBytes)) * kMillibitsPerByte;
    credit_ = cap_;
    last_us_ = now_us;
  }

  [[nodiscard]] bool active() const { return kbps_ != 0; }
  [[nodiscard]] uint32_t kbps() const { return kbps_; }
  [[nodiscard]] uint32_t burst() const { return burst_; }

  // Whether a frame may leave at now.
  bool may_send(uint64_t now_us) {
    if (!active()) {
      return true;
    }
    refill(now_us);
    return credit_ > 0;
  }

  // A frame of bytes left.
  void sent(size_t bytes) {
    if (active()) {
      credit_ -= static_cast<int64_t>(bytes) * kMillibitsPerByte;
    }
  }

  // Whether the credit is spent: the next frame waits for ready_at().
  [[nodiscard]] bool owes() const { return active() && credit_ <= 0; }

  // When the credit is above zero again, with no more frames sent.
  [[nodiscard]] uint64_t ready_at() const {
    if (credit_ > 0) {
      return last_us_;
    }
    const auto owed = static_cast<uint64_t>(-credit_);
    return last_us_ + owed / kbps_ + 1;
  }

 private:
  static constexpr int64_t kMillibitsPerByte = 8000;

  void refill(uint64_t now_us) {
    if (now_us <= last_us_) {
      return;
    }
    // Whatever time fills the bucket, without a product that overflows.
    const auto room = static_cast<uint64_t>(cap_ - credit_);
    const uint64_t elapsed = now_us - last_us_;
    credit_ = elapsed > room / kbps_
                  ? cap_
                  : std::min(cap_, credit_ + static_cast<int64_t>(elapsed * kbps_));
    last_us_ = now_us;
  }

  uint32_t kbps_ = 0;
  uint32_t burst_ = 0;
  int64_t cap_ = 0;
  int64_t credit_ = 0;
  uint64_t last_us_ = 0;
};

}  // namespace vrnicd::roce
