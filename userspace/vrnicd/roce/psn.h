// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Packet sequence numbers: 24-bit counters compared within half the space
// (IBA 9.7.1), so that "before" and "after" work across the wrap.
#pragma once

#include <cstdint>

namespace vrnicd::roce {

constexpr uint32_t kPsnBits = 24;
constexpr uint32_t kPsnModulo = 1U << kPsnBits;

constexpr uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & (kPsnModulo - 1); }

// a - b as a signed distance in (-2^23, 2^23].
constexpr int32_t psn_diff(uint32_t a, uint32_t b) {
  // Shift the 24-bit difference into the top of a 32-bit word and back.
  return static_cast<int32_t>(((a - b) & (kPsnModulo - 1)) << 8) >> 8;
}

constexpr bool psn_before(uint32_t a, uint32_t b) { return psn_diff(a, b) < 0; }
constexpr bool psn_after(uint32_t a, uint32_t b) { return psn_diff(a, b) > 0; }

}  // namespace vrnicd::roce
