// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Device memory (ibv_alloc_dm): pages of the device's own memory in BAR2,
// mapped into the process, copied to and from in 4-byte words as the
// device takes them, and registered as zero-based MRs; ibv_import_dm maps
// a DM of a shared context.
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "hw_access.h"
#include "uverbs_call.h"
#include "vrnic.h"

namespace vrnic {
namespace {

inline Dm* to_vdm(ibv_dm* dm) noexcept { return container<Dm>(dm, offsetof(Dm, vdm.dm)); }

// The device's memory moves in aligned 4-byte words, as mlx5's does:
// offset and length must be multiples of 4 (EINVAL), inside the
// allocation (EFAULT).
int dm_range(const Dm* dm, uint64_t offset, size_t length) noexcept {
  if ((offset & 3U) != 0 || (length & 3U) != 0) {
    return EINVAL;
  }
  if (offset > dm->length || length > dm->length - offset) {
    return EFAULT;
  }
  return 0;
}

int memcpy_to_dm(ibv_dm* ibdm, uint64_t offset, const void* host, size_t length) noexcept {
  const Dm* dm = to_vdm(ibdm);
  const int err = dm_range(dm, offset, length);
  if (err != 0) {
    return err;
  }
  auto* dst = static_cast<std::byte*>(dm->map) + offset;
  const auto* src = static_cast<const std::byte*>(host);
  for (size_t i = 0; i < length; i += sizeof(uint32_t)) {
    uint32_t word = 0;
    std::memcpy(&word, src + i, sizeof(word));
    store_release32(dst + i, word);
  }
  return 0;
}

int memcpy_from_dm(void* host, ibv_dm* ibdm, uint64_t offset, size_t length) noexcept {
  const Dm* dm = to_vdm(ibdm);
  const int err = dm_range(dm, offset, length);
  if (err != 0) {
    return err;
  }
  const auto* src = static_cast<const std::byte*>(dm->map) + offset;
  auto* dst = static_cast<std::byte*>(host);
  for (size_t i = 0; i < length; i += sizeof(uint32_t)) {
    const uint32_t word = load_acquire32(src + i);
    std::memcpy(dst + i, &word, sizeof(word));
  }
  return 0;
}

// Fill dm's ibv_dm for context ibctx, DM handle, and map its memory from
// key; 0 or an errno.
int dm_setup(Dm* dm, ibv_context* ibctx, uint32_t handle, uint64_t length, uint64_t key) noexcept {
  dm->vdm.handle = handle;
  dm->vdm.dm.context = ibctx;
  dm->vdm.dm.handle = handle;
  dm->vdm.dm.comp_mask = IBV_DM_MASK_HANDLE;
  dm->vdm.dm.memcpy_to_dm = memcpy_to_dm;
  dm->vdm.dm.memcpy_from_dm = memcpy_from_dm;
  dm->length = length;
  const size_t page = to_vctx(ibctx)->page_size;
  dm->map_size = (length + page - 1) / page * page;
  void* map = mmap(nullptr, dm->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, ibctx->cmd_fd,
                   static_cast<off_t>(key));
  if (map == MAP_FAILED) {
    const int err = errno;
    debug("mapping device memory failed: %s", std::strerror(err));
    return err;
  }
  dm->map = map;
  return 0;
}

}  // namespace

ibv_dm* alloc_dm(ibv_context* ibctx, ibv_alloc_dm_attr* attr) noexcept {
  if (attr->comp_mask != 0) {
    errno = EINVAL;
    return nullptr;
  }
  auto* dm = new (std::nothrow) Dm{};
  if (dm == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  UverbsCall<4> call(UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC);
  const size_t handle_slot = call.new_object(UVERBS_ATTR_ALLOC_DM_HANDLE);
  call.in(UVERBS_ATTR_ALLOC_DM_LENGTH, static_cast<uint64_t>(attr->length));
  call.in(UVERBS_ATTR_ALLOC_DM_ALIGNMENT, attr->log_align_req);
  uint64_t key = 0;
  call.out(VRNIC_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY, &key);
  int err = call.run(ibctx->cmd_fd);
  if (err != 0) {
    delete dm;
    errno = err;
    return nullptr;
  }
  err = dm_setup(dm, ibctx, call.new_handle(handle_slot), attr->length, key);
  if (err != 0) {
    ibv_cmd_free_dm(&dm->vdm);
    delete dm;
    errno = err;
    return nullptr;
  }
  return &dm->vdm.dm;
}

// ibv_import_dm: a DM of a context shared by fd, mapped here too.
ibv_dm* import_dm(ibv_context* ibctx, uint32_t handle) noexcept {
  UverbsCall<3> call(UVERBS_OBJECT_DM, VRNIC_IB_METHOD_DM_QUERY);
  uint64_t key = 0;
  uint64_t length = 0;
  call.handle(VRNIC_IB_ATTR_QUERY_DM_HANDLE, handle);
  call.out(VRNIC_IB_ATTR_QUERY_DM_RESP_MMAP_KEY, &key);
  call.out(VRNIC_IB_ATTR_QUERY_DM_RESP_LENGTH, &length);
  int err = call.run(ibctx->cmd_fd);
  auto* dm = err == 0 ? new (std::nothrow) Dm{} : nullptr;
  if (err == 0 && dm == nullptr) {
    err = ENOMEM;
  }
  if (err == 0) {
    err = dm_setup(dm, ibctx, handle, length, key);
  }
  if (err != 0) {
    delete dm;
    errno = err;
    return nullptr;
  }
  return &dm->vdm.dm;
}

void unimport_dm(ibv_dm* ibdm) noexcept {
  Dm* dm = to_vdm(ibdm);
  munmap(dm->map, dm->map_size);
  delete dm;
}

int free_dm(ibv_dm* ibdm) noexcept {
  Dm* dm = to_vdm(ibdm);
  const int err = ibv_cmd_free_dm(&dm->vdm);
  if (err != 0) {
    return err;
  }
  // The device's pages are free once this mapping goes too.
  munmap(dm->map, dm->map_size);
  delete dm;
  return 0;
}

ibv_mr* reg_dm_mr(ibv_pd* pd, ibv_dm* ibdm, uint64_t offset, size_t length,
                  unsigned int access) noexcept {
  auto* mr = new (std::nothrow) Mr{};
  if (mr == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  const int err =
      ibv_cmd_reg_dm_mr(pd, &to_vdm(ibdm)->vdm, offset, length, access, &mr->vmr, nullptr);
  if (err != 0) {
    delete mr;
    errno = err;
    return nullptr;
  }
  return &mr->vmr.ibv_mr;
}

}  // namespace vrnic
