// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// BAR2: the shared memory the device hands to QEMU through the ivshmem
// server.  Its first page is the register page, its second the status page
// (see uapi/vrnic-hw.h).  The guest can write any of it at any time, so all
// register reads are single aligned 32-bit loads and every value read is
// validated by its user.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/fd.h"

namespace vrnicd {

class Bar2 {
 public:
  static constexpr size_t kDefaultSize = 1U << 20;

  // A memfd of size bytes (a power of two, at least VRNIC_BAR2_MIN_SIZE).
  static std::optional<Bar2> create(size_t size, std::string* err);
  // The BAR2 of a device taken over from its keeper: fd is its memfd.
  static std::optional<Bar2> adopt(UniqueFd fd, std::string* err);

  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  [[nodiscard]] size_t size() const noexcept { return map_.size(); }
  [[nodiscard]] std::byte* data() const noexcept { return map_.data(); }

  [[nodiscard]] uint32_t reg(uint32_t off) const noexcept;
  void set_reg(uint32_t off, uint32_t value) noexcept;
  [[nodiscard]] uint32_t status(uint32_t off) const noexcept;
  void set_status(uint32_t off, uint32_t value) noexcept;

  // Zero the register and status pages.
  void clear() noexcept;

  // Device memory: the upper half of a BAR2 of at least kMinDmSize bytes,
  // up to kMaxDmSize of it (hw-spec, "BAR2 layout"); empty in a smaller one.
  static constexpr size_t kMinDmSize = size_t{64} * 1024;
  static constexpr size_t kMaxDmSize = size_t{1} << 30;
  [[nodiscard]] std::span<std::byte> device_memory() const noexcept {
    if (size() < kMinDmSize) {
      return {};
    }
    return {data() + size() / 2, std::min(size() / 2, kMaxDmSize)};
  }

 private:
  Bar2(UniqueFd fd, Mapping map) : fd_(std::move(fd)), map_(std::move(map)) {}
  UniqueFd fd_;
  Mapping map_;
};

}  // namespace vrnicd
