// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/objects.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/guest_memory.h"
#include "hw_access.h"

namespace vrnicd {

bool QueueBuffer::map(const GuestMemory& mem, uint64_t pbl_addr, uint32_t npages) {
  pages_.clear();
  if (npages == 0 || npages > VRNIC_QBUF_MAX_PAGES || pbl_addr % sizeof(uint64_t) != 0) {
    return false;
  }
  const std::byte* pbl = mem.translate(pbl_addr, static_cast<uint64_t>(npages) * sizeof(uint64_t));
  if (pbl == nullptr) {
    return false;
  }
  pages_.reserve(npages);
  for (uint32_t i = 0; i < npages; ++i) {
    uint64_t gpa = 0;
    std::memcpy(&gpa, pbl + static_cast<size_t>(i) * sizeof(gpa), sizeof(gpa));
    gpa = vrnic::le64(gpa);
    std::byte* host = gpa % kPageSize == 0 ? mem.translate(gpa, kPageSize) : nullptr;
    if (host == nullptr) {
      pages_.clear();
      return false;
    }
    pages_.push_back(host);
  }
  return true;
}

bool Ring::fits() const {
  if (buf == nullptr || log_stride > kPageShift || log_depth > 20) {
    return false;
  }
  const uint64_t end = (static_cast<uint64_t>(first_page) << kPageShift) +
                       (static_cast<uint64_t>(depth()) << log_stride);
  return first_page > 0 && end <= static_cast<uint64_t>(buf->npages()) << kPageShift;
}

bool Mr::contains(uint64_t va, uint64_t len) const {
  if (phys != nullptr) {
    return phys->translate(va, std::max<uint64_t>(len, 1)) != nullptr;
  }
  return va >= iova && len <= length && va - iova <= length - len;
}

void Mr::read(uint64_t va, std::span<std::byte> dst) const {
  size_t done = 0;
  for_each_span(va, dst.size(), [&](const std::byte* p, size_t n) {
    std::memcpy(dst.data() + done, p, n);
    done += n;
  });
}

void Mr::write(uint64_t va, std::span<const std::byte> src) const {
  size_t done = 0;
  for_each_span(va, src.size(), [&](std::byte* p, size_t n) {
    std::memcpy(p, src.data() + done, n);
    done += n;
  });
}

std::byte* Mr::word(uint64_t va) const {
  if (phys != nullptr) {
    return phys->translate(va, sizeof(uint64_t));
  }
  const uint64_t off = va - base;
  return pages[off >> page_shift] + (off & ((1ULL << page_shift) - 1));
}

uint8_t map_mr_pages(const GuestMemory& mem, const RegMrParams& p, Mr* mr) {
  auto read_list = [&](uint64_t addr, uint32_t n, uint64_t* out) {
    return addr % sizeof(uint64_t) == 0 &&
           mem.read(addr, out, static_cast<size_t>(n) * sizeof(uint64_t));
  };
  std::vector<uint64_t> gpas(p.npages);
  if (p.indirect) {
    const uint32_t nlists =
        (p.npages + VRNIC_PBL_ENTRIES_PER_PAGE - 1) / VRNIC_PBL_ENTRIES_PER_PAGE;
    std::vector<uint64_t> lists(nlists);
    if (!read_list(p.pbl_addr, nlists, lists.data())) {
      return VRNIC_AQ_STATUS_BAD_ADDR;
    }
    for (uint32_t i = 0; i < nlists; ++i) {
      const uint32_t n =
          std::min<uint32_t>(VRNIC_PBL_ENTRIES_PER_PAGE, p.npages - i * VRNIC_PBL_ENTRIES_PER_PAGE);
      if (vrnic::le64(lists[i]) % kPageSize != 0 ||
          !read_list(vrnic::le64(lists[i]), n,
                     gpas.data() + static_cast<size_t>(i) * VRNIC_PBL_ENTRIES_PER_PAGE)) {
        return VRNIC_AQ_STATUS_BAD_ADDR;
      }
    }
  } else if (!read_list(p.pbl_addr, p.npages, gpas.data())) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  const uint64_t psize = 1ULL << p.page_shift;
  mr->pages.clear();
  mr->pages.reserve(p.npages);
  for (const uint64_t g : gpas) {
    const uint64_t gpa = vrnic::le64(g);
    std::byte* host = gpa % psize == 0 ? mem.translate(gpa, psize) : nullptr;
    if (host == nullptr) {
      return VRNIC_AQ_STATUS_BAD_ADDR;
    }
    mr->pages.push_back(host);
  }
  return VRNIC_AQ_STATUS_OK;
}

}  // namespace vrnicd
