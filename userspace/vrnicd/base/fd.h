// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// RAII owners for file descriptors and memory mappings.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

namespace vrnicd {

class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset(o.release());
    }
    return *this;
  }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

class Mapping {
 public:
  Mapping() noexcept = default;
  Mapping(void* addr, size_t len) noexcept : addr_(addr), len_(len) {}
  ~Mapping() { reset(); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping(Mapping&& o) noexcept
      : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept {
    if (this != &o) {
      reset();
      addr_ = std::exchange(o.addr_, nullptr);
      len_ = std::exchange(o.len_, 0);
    }
    return *this;
  }

  // mmap(MAP_SHARED) of fd; returns an empty Mapping on failure.
  static Mapping map_shared(int fd, size_t len, int prot = PROT_READ | PROT_WRITE) noexcept {
    void* p = ::mmap(nullptr, len, prot, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      return {};
    }
    return {p, len};
  }

  [[nodiscard]] std::byte* data() const noexcept { return static_cast<std::byte*>(addr_); }
  [[nodiscard]] size_t size() const noexcept { return len_; }
  [[nodiscard]] bool valid() const noexcept { return addr_ != nullptr; }
  void reset() noexcept {
    if (addr_ != nullptr) {
      ::munmap(addr_, len_);
    }
    addr_ = nullptr;
    len_ = 0;
  }

 private:
  void* addr_ = nullptr;
  size_t len_ = 0;
};

}  // namespace vrnicd
