// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Guest RAM as the device sees it: the QEMU memory-backend-file mapped into
// vrnicd, with every guest-physical access bounds-checked.  A device DMA is
// a translate() of a guest-physical range to host memory; a range that is
// not wholly inside one RAM region is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/fd.h"

namespace vrnicd {

class GuestMemory {
 public:
  struct Region {
    uint64_t gpa;
    uint64_t size;
    std::byte* host;
  };

  // Where each part of guest RAM lives in the backing file.
  struct Layout {
    uint64_t gpa;
    uint64_t file_offset;
    uint64_t size;
  };

  GuestMemory() = default;
  // Guest memory over caller-owned host memory (tests, fuzzers).
  explicit GuestMemory(std::vector<Region> regions);

  // The q35 machine's RAM layout for ram_size bytes of RAM.
  static std::vector<Layout> q35_layout(uint64_t ram_size);

  // Map a memory-backend-file of ram_size bytes with the q35 layout.
  static std::optional<GuestMemory> map_file(const std::string& path, uint64_t ram_size,
                                             std::string* err);

  // Host address of [gpa, gpa + len), or nullptr when any byte of it is
  // outside guest RAM.  len may be 0, in which case gpa must be inside RAM.
  [[nodiscard]] std::byte* translate(uint64_t gpa, uint64_t len) const noexcept;

  // Copies to/from guest memory; false (and nothing copied) when the range
  // is not wholly in RAM.
  bool read(uint64_t gpa, void* dst, size_t len) const noexcept;
  bool write(uint64_t gpa, const void* src, size_t len) const noexcept;

  // Whether guest RAM is a file that outlives a power cut: not tmpfs,
  // ramfs or hugetlbfs (nor host memory of a caller's).  Only then can a
  // FLUSH of placement type persistence be honoured.
  [[nodiscard]] bool persistent() const noexcept { return persistent_; }
  // Write [host, host + len), a range inside guest RAM, through to the
  // file (msync MS_SYNC of the pages it touches); false if that failed or
  // guest RAM is not persistent.
  bool persist(const std::byte* host, size_t len) const noexcept;

  [[nodiscard]] uint64_t ram_size() const noexcept { return ram_size_; }
  [[nodiscard]] const std::vector<Region>& regions() const noexcept { return regions_; }

 private:
  Mapping mapping_;
  std::vector<Region> regions_;
  uint64_t ram_size_ = 0;
  bool persistent_ = false;
};

}  // namespace vrnicd
