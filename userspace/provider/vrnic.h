// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic: the libibverbs provider for vrnic devices.  Objects embed the
// libibverbs ones; every entry point is extern "C" and noexcept.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ibverbs_private.h"
#include "vrnic-abi.h"

namespace vrnic {

struct Device {
  verbs_device vdev;
};

// Allocated by libibverbs with calloc(), so plain data only.
struct Context {
  verbs_context ibv_ctx;
  void* db_page;            // BAR0 page, or nullptr without user doorbells
  const void* status_page;  // BAR2 status page, read-only
  size_t page_size;
  uint32_t db_offset;
  uint32_t db_peer;
  uint32_t flags;  // VRNIC_UCTX_F_*
  uint32_t max_inline_data;
};

inline Context* to_vctx(ibv_context* ctx) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(ctx) -
                                    offsetof(Context, ibv_ctx.context));
}

// verbs.cc
verbs_context* alloc_context(ibv_device* ibdev, int cmd_fd, void* private_data) noexcept;
void free_context(ibv_context* ibctx) noexcept;
int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size) noexcept;
int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) noexcept;

// Debug output, enabled with VRNIC_DEBUG=1.
void debug(const char* fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

}  // namespace vrnic
