// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "base/bar2.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "hw_access.h"

namespace vrnicd {

std::optional<Bar2> Bar2::create(size_t size, std::string* err) {
  if (size < VRNIC_BAR2_MIN_SIZE || !std::has_single_bit(size)) {
    *err = "BAR2 size must be a power of two of at least 8 KiB";
    return std::nullopt;
  }
  UniqueFd fd(::memfd_create("vrnic-bar2", MFD_CLOEXEC));
  if (!fd) {
    *err = std::string("memfd_create: ") + std::strerror(errno);
    return std::nullopt;
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    *err = std::string("ftruncate: ") + std::strerror(errno);
    return std::nullopt;
  }
  Mapping map = Mapping::map_shared(fd.get(), size);
  if (!map.valid()) {
    *err = std::string("mmap: ") + std::strerror(errno);
    return std::nullopt;
  }
  return Bar2(std::move(fd), std::move(map));
}

std::optional<Bar2> Bar2::adopt(UniqueFd fd, std::string* err) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    *err = std::string("fstat: ") + std::strerror(errno);
    return std::nullopt;
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size < VRNIC_BAR2_MIN_SIZE || !std::has_single_bit(size)) {
    *err = "the kept BAR2 has a bad size";
    return std::nullopt;
  }
  Mapping map = Mapping::map_shared(fd.get(), size);
  if (!map.valid()) {
    *err = std::string("mmap: ") + std::strerror(errno);
    return std::nullopt;
  }
  return Bar2(std::move(fd), std::move(map));
}

uint32_t Bar2::reg(uint32_t off) const noexcept {
  return vrnic::load_acquire32(data() + VRNIC_BAR2_REG_PAGE + off);
}

void Bar2::set_reg(uint32_t off, uint32_t value) noexcept {
  vrnic::store_release32(data() + VRNIC_BAR2_REG_PAGE + off, value);
}

uint32_t Bar2::status(uint32_t off) const noexcept {
  return vrnic::load_acquire32(data() + VRNIC_BAR2_STATUS_PAGE + off);
}

void Bar2::set_status(uint32_t off, uint32_t value) noexcept {
  vrnic::store_release32(data() + VRNIC_BAR2_STATUS_PAGE + off, value);
}

void Bar2::clear() noexcept { std::memset(data(), 0, size_t{2} * VRNIC_BAR2_PAGE_SIZE); }

}  // namespace vrnicd
