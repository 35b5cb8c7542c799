// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// A uverbs ioctl (RDMA_VERBS_IOCTL) built from the kernel's ABI alone:
// for the methods libibverbs offers providers no helper for that takes
// vrnic's driver attributes (uapi/vrnic-abi.h), without rdma-core's
// private command-buffer layout.
#pragma once

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>
#include <sys/ioctl.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vrnic {

template <size_t N>
class UverbsCall {
 public:
  UverbsCall(uint16_t object, uint16_t method) noexcept {
    buf_.hdr.object_id = object;
    buf_.hdr.method_id = method;
  }

  // A value in (up to 8 bytes, carried inline).
  template <typename T>
  void in(uint16_t id, const T& value) noexcept {
    static_assert(sizeof(T) <= sizeof(uint64_t));
    ib_uverbs_attr* a = add(id, sizeof(T));
    std::memcpy(&a->data, &value, sizeof(T));
  }

  // A buffer the kernel writes.
  template <typename T>
  void out(uint16_t id, T* dst) noexcept {
    add(id, sizeof(T))->data = reinterpret_cast<uintptr_t>(dst);  // NOLINT
  }

  // An object by its handle (IDR attribute).
  void handle(uint16_t id, uint32_t h) noexcept { add(id, 0)->data = h; }

  // A new object: the kernel writes its handle back (new_handle() after).
  size_t new_object(uint16_t id) noexcept {
    add(id, 0);
    return buf_.hdr.num_attrs - 1U;
  }
  [[nodiscard]] uint32_t new_handle(size_t slot) const noexcept {
    return static_cast<uint32_t>(buf_.attrs.at(slot).data);
  }

  // 0, or an errno.
  int run(int cmd_fd) noexcept {
    if (overflow_) {
      return EINVAL;
    }
    buf_.hdr.length =
        static_cast<uint16_t>(sizeof(buf_.hdr) + sizeof(ib_uverbs_attr) * buf_.hdr.num_attrs);
    return ioctl(cmd_fd, RDMA_VERBS_IOCTL, &buf_) == 0 ? 0 : errno;
  }

 private:
  ib_uverbs_attr* add(uint16_t id, size_t len) noexcept {
    if (buf_.hdr.num_attrs >= N) {
      overflow_ = true;
      return &spare_;
    }
    ib_uverbs_attr* a = &buf_.attrs.at(buf_.hdr.num_attrs++);
    a->attr_id = id;
    a->len = static_cast<uint16_t>(len);
    return a;
  }

  // struct ib_uverbs_ioctl_hdr without its flexible attrs[], which C++
  // cannot embed.
  struct Hdr {
    uint16_t length;
    uint16_t object_id;
    uint16_t method_id;
    uint16_t num_attrs;
    uint64_t reserved1;
    uint32_t driver_id;
    uint32_t reserved2;
  };
  static_assert(sizeof(Hdr) == sizeof(ib_uverbs_ioctl_hdr));
  struct Buffer {
    Hdr hdr{};
    std::array<ib_uverbs_attr, N> attrs{};
  };
  static_assert(offsetof(Buffer, attrs) == sizeof(ib_uverbs_ioctl_hdr));
  Buffer buf_;
  ib_uverbs_attr spare_{};
  bool overflow_ = false;
};

}  // namespace vrnic
