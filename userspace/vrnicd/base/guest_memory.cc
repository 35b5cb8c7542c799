// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "base/guest_memory.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unix_socket.h"

namespace vrnicd {
namespace {

constexpr uint64_t kGiB = 1ULL << 30;
// q35 keeps all RAM below 4 GiB when there is less than 2.75 GiB of it;
// otherwise 2 GiB stay low and the rest starts at 4 GiB.
constexpr uint64_t kQ35LowmemLimit = 0xb0000000ULL;
constexpr uint64_t kQ35Lowmem = 2 * kGiB;
constexpr uint64_t kHighRamBase = 4 * kGiB;

// Whether fd's file system keeps what is written to it: memory file
// systems do not.
bool on_persistent_fs(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) {
    return false;
  }
  const auto type = static_cast<unsigned long>(fs.f_type);
  return type != TMPFS_MAGIC && type != RAMFS_MAGIC && type != HUGETLBFS_MAGIC;
}

}  // namespace

GuestMemory::GuestMemory(std::vector<Region> regions) : regions_(std::move(regions)) {
  for (const Region& r : regions_) {
    ram_size_ += r.size;
  }
}

std::vector<GuestMemory::Layout> GuestMemory::q35_layout(uint64_t ram_size) {
  if (ram_size < kQ35LowmemLimit) {
    return {{0, 0, ram_size}};
  }
  return {{0, 0, kQ35Lowmem}, {kHighRamBase, kQ35Lowmem, ram_size - kQ35Lowmem}};
}

std::optional<GuestMemory> GuestMemory::map_file(const std::string& path, uint64_t ram_size,
                                                 std::string* err) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!fd) {
    *err = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  // Another user's file is another user's window into the guest.
  if (!owner_is_trusted(fd.get(), path, err)) {
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    *err = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  if (ram_size == 0) {
    ram_size = static_cast<uint64_t>(st.st_size);
  }
  if (ram_size == 0 || static_cast<uint64_t>(st.st_size) < ram_size) {
    *err = path + ": file is smaller than the guest RAM size";
    return std::nullopt;
  }
  Mapping map = Mapping::map_shared(fd.get(), ram_size);
  if (!map.valid()) {
    *err = path + ": mmap: " + std::strerror(errno);
    return std::nullopt;
  }
  std::vector<Region> regions;
  for (const Layout& l : q35_layout(ram_size)) {
    regions.push_back({l.gpa, l.size, map.data() + l.file_offset});
  }
  GuestMemory mem(std::move(regions));
  mem.mapping_ = std::move(map);
  mem.persistent_ = on_persistent_fs(fd.get());
  return mem;
}

bool GuestMemory::persist(const std::byte* host, size_t len) const noexcept {
  if (!persistent_ || len == 0) {
    return persistent_;
  }
  std::byte* base = mapping_.data();
  if (host < base || len > mapping_.size() ||
      host - base > static_cast<ptrdiff_t>(mapping_.size() - len)) {
    return false;
  }
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto off = static_cast<size_t>(host - base);
  const size_t start = off & ~(page - 1);  // the mapping starts on a page
  return ::msync(base + start, off + len - start, MS_SYNC) == 0;
}

std::byte* GuestMemory::translate(uint64_t gpa, uint64_t len) const noexcept {
  for (const Region& r : regions_) {
    if (gpa < r.gpa) {
      continue;
    }
    const uint64_t off = gpa - r.gpa;
    if (off >= r.size) {
      continue;
    }
    // off < r.size, so r.size - off cannot underflow.
    if (len > r.size - off) {
      return nullptr;
    }
    return r.host + off;
  }
  return nullptr;
}

bool GuestMemory::read(uint64_t gpa, void* dst, size_t len) const noexcept {
  const std::byte* src = translate(gpa, len);
  if (src == nullptr) {
    return false;
  }
  std::memcpy(dst, src, len);
  return true;
}

bool GuestMemory::write(uint64_t gpa, const void* src, size_t len) const noexcept {
  std::byte* dst = translate(gpa, len);
  if (dst == nullptr) {
    return false;
  }
  std::memcpy(dst, src, len);
  return true;
}

}  // namespace vrnicd
