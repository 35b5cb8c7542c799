// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic verbs: user context and queries.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "vrnic.h"

namespace vrnic {
namespace {

// Mirrors of the uverbs command and response layouts, without the kernel
// structs' flexible driver_data[] arrays, which C++ cannot embed.
struct GetContextCmd {
  ib_uverbs_cmd_hdr hdr;
  uint64_t response;
  vrnic_alloc_ucontext_req drv;
};
static_assert(sizeof(GetContextCmd) == 16 + sizeof(vrnic_alloc_ucontext_req));

struct GetContextResp {
  uint32_t async_fd;
  uint32_t num_comp_vectors;
  vrnic_alloc_ucontext_resp drv;
};
static_assert(offsetof(GetContextResp, drv) == 8);

struct QueryPortCmd {
  ib_uverbs_cmd_hdr hdr;
  uint64_t response;
  uint8_t port_num;
  uint8_t reserved[7];
};
static_assert(sizeof(QueryPortCmd) == 24);

void unmap_pages(Context* ctx) noexcept {
  if (ctx->db_page != nullptr) {
    munmap(ctx->db_page, ctx->page_size);
    ctx->db_page = nullptr;
  }
  if (ctx->status_page != nullptr) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast)
    munmap(const_cast<void*>(ctx->status_page), ctx->page_size);
    ctx->status_page = nullptr;
  }
}

void destroy_context(Context* ctx) noexcept {
  unmap_pages(ctx);
  verbs_uninit_context(&ctx->ibv_ctx);
  // libibverbs allocated it with calloc().
  std::free(ctx);  // NOLINT(cppcoreguidelines-no-malloc)
}

struct ContextDeleter {
  void operator()(Context* ctx) const noexcept { destroy_context(ctx); }
};
using ContextPtr = std::unique_ptr<Context, ContextDeleter>;

// Get the kernel's context data and map the pages it offers; 0 or an errno.
int setup_context(Context* ctx, int cmd_fd) noexcept {
  ctx->page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  GetContextCmd cmd{};
  GetContextResp resp{};
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast)
  const int err =
      ibv_cmd_get_context(&ctx->ibv_ctx, reinterpret_cast<ibv_get_context*>(&cmd), sizeof(cmd),
                          reinterpret_cast<ib_uverbs_get_context_resp*>(&resp), sizeof(resp));
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  if (err != 0) {
    debug("get_context failed: %s", std::strerror(err));
    return err;
  }

  ctx->flags = resp.drv.flags;
  ctx->db_offset = resp.drv.db_offset;
  ctx->db_peer = resp.drv.db_peer;
  ctx->max_inline_data = resp.drv.max_inline_data;
  if (ctx->db_offset > ctx->page_size - sizeof(uint32_t) || (ctx->db_offset & 3U) != 0) {
    debug("kernel gave a bad doorbell offset %u", ctx->db_offset);
    return EPROTO;
  }

  void* status = mmap(nullptr, ctx->page_size, PROT_READ, MAP_SHARED, cmd_fd,
                      static_cast<off_t>(resp.drv.status_mmap_key));
  if (status == MAP_FAILED) {
    debug("mapping the status page failed: %s", std::strerror(errno));
    return errno;
  }
  ctx->status_page = status;

  if ((ctx->flags & VRNIC_UCTX_F_USER_DB) != 0) {
    void* db = mmap(nullptr, ctx->page_size, PROT_WRITE, MAP_SHARED, cmd_fd,
                    static_cast<off_t>(resp.drv.db_mmap_key));
    if (db == MAP_FAILED) {
      debug("mapping the doorbell page failed: %s", std::strerror(errno));
      return errno;
    }
    ctx->db_page = db;
  }
  return 0;
}

const verbs_context_ops kContextOps = {
    .free_context = free_context,
    .query_device_ex = query_device_ex,
    .query_port = query_port,
};

}  // namespace

verbs_context* alloc_context(ibv_device* ibdev, int cmd_fd, void* /*private_data*/) noexcept {
  ContextPtr ctx(static_cast<Context*>(_verbs_init_and_alloc_context(
      ibdev, cmd_fd, sizeof(Context),
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast,performance-no-int-to-ptr)
      reinterpret_cast<verbs_context*>(offsetof(Context, ibv_ctx)), 0)));
  if (!ctx) {
    return nullptr;
  }
  const int err = setup_context(ctx.get(), cmd_fd);
  if (err != 0) {
    ctx.reset();
    errno = err;
    return nullptr;
  }
  verbs_set_ops(&ctx->ibv_ctx, &kContextOps);
  debug("context open on %s: user doorbells %s", ibdev->name,
        ctx->db_page != nullptr ? "mapped" : "unavailable");
  return &ctx.release()->ibv_ctx;
}

void free_context(ibv_context* ibctx) noexcept { destroy_context(to_vctx(ibctx)); }

int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size) noexcept {
  ib_uverbs_ex_query_device_resp resp{};
  size_t resp_size = sizeof(resp);
  const int err = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp, &resp_size);
  if (err != 0) {
    return err;
  }
  // The kernel passes the device's 16.16.32 firmware version through raw.
  const uint64_t fw = resp.base.fw_ver;
  std::snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
                static_cast<unsigned>(fw >> 48), static_cast<unsigned>((fw >> 32) & 0xffff),
                static_cast<unsigned>(fw & 0xffffffff));
  return 0;
}

int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) noexcept {
  QueryPortCmd cmd{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  return ibv_cmd_query_port(ctx, port, attr, reinterpret_cast<struct ibv_query_port*>(&cmd),
                            sizeof(cmd));
}

}  // namespace vrnic
