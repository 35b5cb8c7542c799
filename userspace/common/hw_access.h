// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// C++ access to the formats in uapi/vrnic-hw.h: little-endian conversion,
// mask-based field access and shared-memory word access.  Used by vrnicd
// and libvrnic so that both read the hardware formats the same way.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vrnic-hw.h"

namespace vrnic {

static_assert(std::endian::native == std::endian::little,
              "vrnic formats are little endian; add byte swaps for this host");

// The uapi header declares fields as __le16/__le32/__le64, which are plain
// integers in userspace.  These helpers keep the intent visible.
constexpr uint16_t le16(uint16_t v) noexcept { return v; }
constexpr uint32_t le32(uint32_t v) noexcept { return v; }
constexpr uint64_t le64(uint64_t v) noexcept { return v; }
constexpr uint16_t to_le16(uint16_t v) noexcept { return v; }
constexpr uint32_t to_le32(uint32_t v) noexcept { return v; }
constexpr uint64_t to_le64(uint64_t v) noexcept { return v; }

template <uint32_t Mask>
constexpr uint32_t field_get(uint32_t word) noexcept {
  static_assert(Mask != 0, "empty mask");
  return (word & Mask) >> std::countr_zero(Mask);
}

template <uint32_t Mask>
constexpr uint32_t field_prep(uint32_t value) noexcept {
  static_assert(Mask != 0, "empty mask");
  return (value << std::countr_zero(Mask)) & Mask;
}

#ifdef VRNIC_FUZZ_SHARED_LOADS
// Fuzz builds only: when set, called after every load_acquire32(), so that
// a fuzzer can play a guest that rewrites shared memory between any two
// reads of the device (tests/fuzz/fuzz_poll.cc).
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables)
inline void (*fuzz_after_load)(const void* p) noexcept = nullptr;
#endif

// Loads and stores of 32-bit words in memory shared with another agent
// (the guest, or the device).  The pointer must be 4-byte aligned.
inline uint32_t load_acquire32(const void* p) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast)
  auto* w = static_cast<uint32_t*>(const_cast<void*>(p));
  const uint32_t v = std::atomic_ref<uint32_t>(*w).load(std::memory_order_acquire);
#ifdef VRNIC_FUZZ_SHARED_LOADS
  if (fuzz_after_load != nullptr) {
    fuzz_after_load(p);
  }
#endif
  return v;
}

inline void store_release32(void* p, uint32_t v) noexcept {
  std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(p)).store(v, std::memory_order_release);
}

// Two enumerators of different enums (a uapi one and a libibverbs one, say)
// with the same value.
template <typename A, typename B>
constexpr bool same_value(A a, B b) noexcept {
  return static_cast<long long>(a) == static_cast<long long>(b);
}

// Ring arithmetic on free-running 32-bit indices.
constexpr uint32_t ring_used(uint32_t pi, uint32_t ci) noexcept { return pi - ci; }
constexpr uint32_t ring_slot(uint32_t idx, uint32_t log_depth) noexcept {
  return idx & ((1U << log_depth) - 1U);
}
// Owner bit the producer writes for index idx: 1 on the first pass.
constexpr uint32_t ring_owner(uint32_t idx, uint32_t log_depth) noexcept {
  return ((idx >> log_depth) & 1U) ^ 1U;
}

}  // namespace vrnic
