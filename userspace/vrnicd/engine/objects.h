// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Data-path objects as the device keeps them: queue buffers translated to
// host memory once, memory regions with their page lists, and shared
// receive queues.  (Completion queues are in cq.h, QPs in qp.h.)  Guest pointers are validated when
// an object is created; later accesses are offset arithmetic within them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/guest_memory.h"
#include "engine/params.h"
#include "roce/transport.h"
#include "vrnic-hw.h"

namespace vrnicd {

class GuestMemory;

constexpr uint32_t kPageShift = 12;
constexpr uint32_t kPageSize = 1U << kPageShift;

// npages 4 KiB pages of guest memory named by a page list.
class QueueBuffer {
 public:
  // false if the list or a page is misaligned, outside RAM, or too long.
  bool map(const GuestMemory& mem, uint64_t pbl_addr, uint32_t npages);
  [[nodiscard]] uint32_t npages() const { return static_cast<uint32_t>(pages_.size()); }
  [[nodiscard]] std::byte* page(uint32_t i) const { return pages_[i]; }
  // Byte offset within the buffer; the caller keeps accesses within a page.
  [[nodiscard]] std::byte* at(uint64_t offset) const {
    return pages_[offset >> kPageShift] + (offset & (kPageSize - 1));
  }

 private:
  std::vector<std::byte*> pages_;
};

// A ring of 2^log_depth entries of 2^log_stride bytes in a queue buffer,
// starting at a page boundary.  Entries never straddle pages.
struct Ring {
  const QueueBuffer* buf = nullptr;
  uint32_t first_page = 0;
  uint32_t log_depth = 0;
  uint32_t log_stride = 0;

  [[nodiscard]] bool fits() const;
  [[nodiscard]] uint32_t depth() const { return 1U << log_depth; }
  [[nodiscard]] std::byte* entry(uint32_t index) const {
    const uint64_t off = (static_cast<uint64_t>(first_page) << kPageShift) +
                         (static_cast<uint64_t>(index & (depth() - 1)) << log_stride);
    return buf->at(off);
  }
};

struct Pd {
  uint32_t refs = 0;  // MRs, QPs and SRQs using it
};

// IB's memory region states.  Registered MRs are valid from REG_MR to
// DEREG_MR; fast-register MRs start free and move with REG_MR (valid),
// LOCAL_INV and SEND_WITH_INV (invalid).  A memory window is valid while
// bound, free otherwise.
enum class MrState : uint8_t { kValid, kFree, kInvalid };

struct Mr {
  uint32_t key = 0;  // fast-register: the consumer's variant since REG_MR
  MrState state = MrState::kValid;
  bool fast_reg = false;
  uint32_t max_pages = 0;  // fast-register: ALLOC_MR's page list capacity
  // A memory window (type 1 or 2; 0: a region).  Bound, iova, length and
  // access are the window's, and it reaches memory through MR index mw_mr;
  // a type 2 window only from QP mw_qpn.
  uint8_t mw_type = 0;
  bool zero_based = false;  // a type 2 window addressed from 0
  uint32_t mw_mr = 0;
  uint32_t mw_qpn = 0;
  uint32_t windows = 0;  // regions: windows bound to this one
  uint32_t pdn = 0;
  uint32_t access = 0;
  uint64_t iova = 0;
  uint64_t length = 0;
  uint32_t page_shift = kPageShift;
  uint64_t base = 0;  // iova aligned down to the page size
  std::vector<std::byte*> pages;
  // A physical region (the kernel's local DMA key): addresses are GPAs,
  // resolved through guest memory on every access.
  const GuestMemory* phys = nullptr;
  bool dm = false;  // its pages are the device's memory (REG_MR F_DM)

  // [va, va + len) lies inside the region.
  [[nodiscard]] bool contains(uint64_t va, uint64_t len) const;
  // Copy within the region; the range must be inside it.
  void read(uint64_t va, std::span<std::byte> dst) const;
  void write(uint64_t va, std::span<const std::byte> src) const;
  // Host address of an 8-byte aligned word inside the region.
  [[nodiscard]] std::byte* word(uint64_t va) const;
  // fn(host, n) for each piece of [va, va + len) that is contiguous in
  // host memory, in order; the range must be inside the region.
  template <typename Fn>
  void for_each_span(uint64_t va, uint64_t len, Fn&& fn) const {
    if (phys != nullptr) {
      if (len != 0) {
        fn(phys->translate(va, len), static_cast<size_t>(len));
      }
      return;
    }
    uint64_t off = va - base;
    const uint64_t psize = 1ULL << page_shift;
    for (uint64_t done = 0; done < len;) {
      const uint64_t in_page = off & (psize - 1);
      const uint64_t n = std::min(psize - in_page, len - done);
      fn(pages[off >> page_shift] + in_page, static_cast<size_t>(n));
      done += n;
      off += n;
    }
  }
};

// Translate a registration's page list into mr->pages (the device copies
// it, as REG_MR says); VRNIC_AQ_STATUS_BAD_ADDR if any of it is not RAM.
uint8_t map_mr_pages(const GuestMemory& mem, const RegMrParams& p, Mr* mr);

struct Srq {
  uint32_t srqn = 0;
  uint32_t pdn = 0;
  QueueBuffer buf;
  Ring ring;
  uint32_t ci = 0;
  uint32_t limit = 0;  // armed limit, 0: not armed
  uint32_t refs = 0;   // QPs using it

  [[nodiscard]] std::byte* dbrec() const { return buf.page(0); }
};

}  // namespace vrnicd
