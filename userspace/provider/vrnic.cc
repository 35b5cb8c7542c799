// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic registration: which devices are ours, user contexts, and the
// verbs we serve.
#include "vrnic.h"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "abi_mirror.h"
#include "uverbs_call.h"

namespace vrnic {
namespace {

// vrnic is a QEMU ivshmem-doorbell function (1af4:1110), which is not
// specific to vrnic: match_device() below makes the final call.
constexpr std::array<verbs_match_ent, 2> kMatchTable = {{
    {nullptr, {nullptr}, VRNIC_PCI_VENDOR_ID, VRNIC_PCI_DEVICE_ID, VERBS_MATCH_PCI},
    {},
}};

// A device is ours when the vrnic kernel driver is bound to its PCI
// function: <ibdev_path>/device/driver points at .../drivers/vrnic.
bool match_device(verbs_sysfs_dev* sysfs_dev) noexcept {
  const std::string link = std::string(sysfs_dev->ibdev_path) + "/device/driver";
  std::array<char, 256> target{};
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (n <= 0) {
    return false;
  }
  const char* base = std::strrchr(target.data(), '/');
  base = base != nullptr ? base + 1 : target.data();
  const bool ours = std::strcmp(base, VRNIC_DRIVER_NAME) == 0;
  debug("%s: driver %s: %s", sysfs_dev->ibdev_name, base, ours ? "ours" : "not ours");
  return ours;
}

verbs_device* alloc_device(verbs_sysfs_dev* /*sysfs_dev*/) noexcept {
  // libibverbs requires the ibv_device part zeroed: calloc, not new.
  auto* dev = static_cast<Device*>(std::calloc(1, sizeof(Device)));  // NOLINT(*-no-malloc)
  return dev != nullptr ? &dev->vdev : nullptr;
}

void uninit_device(verbs_device* vdev) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  std::free(reinterpret_cast<Device*>(vdev));  // NOLINT(*-no-malloc)
}

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

// Map the pages the kernel's context data offers; 0 or an errno.
int map_context(Context* ctx, int cmd_fd, const vrnic_alloc_ucontext_resp& drv) noexcept {
  ctx->page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  ctx->flags = drv.flags;
  ctx->db_offset = drv.db_offset;
  ctx->db_peer = drv.db_peer;
  ctx->max_inline_data = drv.max_inline_data;
  if (ctx->db_offset > ctx->page_size - sizeof(uint32_t) || (ctx->db_offset & 3U) != 0) {
    debug("kernel gave a bad doorbell offset %u", ctx->db_offset);
    return EPROTO;
  }

  void* status = mmap(nullptr, ctx->page_size, PROT_READ, MAP_SHARED, cmd_fd,
                      static_cast<off_t>(drv.status_mmap_key));
  if (status == MAP_FAILED) {
    debug("mapping the status page failed: %s", std::strerror(errno));
    return errno;
  }
  ctx->status_page = status;

  if ((ctx->flags & VRNIC_UCTX_F_USER_DB) != 0) {
    void* db = mmap(nullptr, ctx->page_size, PROT_WRITE, MAP_SHARED, cmd_fd,
                    static_cast<off_t>(drv.db_mmap_key));
    if (db == MAP_FAILED) {
      debug("mapping the doorbell page failed: %s", std::strerror(errno));
      return errno;
    }
    ctx->db_page = db;
  }
  return 0;
}

// Get the kernel's context data and map the pages it offers; 0 or an errno.
int setup_context(Context* ctx, int cmd_fd) noexcept {
  abi::GetContextCmd cmd{};
  abi::GetContextResp resp{};
  const int err = vrnic::pabi::cmd_get_context(
      &ctx->ibv_ctx, abi::as<struct ibv_get_context>(&cmd), sizeof(cmd),
      abi::as<ib_uverbs_get_context_resp>(&resp), sizeof(resp));
  if (err != 0) {
    debug("get_context failed: %s", std::strerror(err));
    return err;
  }
  return map_context(ctx, cmd_fd, resp.drv);
}

// ibv_import_device: the context another process opened, on its command
// fd.  The kernel tells its data again (UVERBS_METHOD_QUERY_CONTEXT).
int setup_imported_context(Context* ctx, int cmd_fd) noexcept {
  UverbsCall<3> call(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT);
  uint32_t comp_vectors = 0;
  uint64_t core_support = 0;
  vrnic_alloc_ucontext_resp drv{};
  call.out(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, &comp_vectors);
  call.out(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, &core_support);
  call.out(VRNIC_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &drv);
  const int err = call.run(cmd_fd);
  if (err != 0) {
    debug("query_context failed: %s", std::strerror(err));
    return err;
  }
  ctx->ibv_ctx.context.num_comp_vectors = static_cast<int>(comp_vectors);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  reinterpret_cast<verbs_device*>(ctx->ibv_ctx.context.device)->core_support = core_support;
  return map_context(ctx, cmd_fd, drv);
}

// The ops libvrnic serves; every other member is null, which libibverbs
// reads as "not supported" (clang 19 warns about each one left out).
#if defined(__clang__) && __has_warning("-Wmissing-designated-field-initializers")
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-designated-field-initializers"
#endif
const verbs_context_ops kContextOps = {
    .alloc_dm = alloc_dm,
    .alloc_mw = alloc_mw,
    .alloc_pd = alloc_pd,
    .attach_mcast = attach_mcast,
    .bind_mw = bind_mw,
    .create_ah = create_ah,
    .create_cq = create_cq,
    .create_cq_ex = create_cq_ex,
    .create_qp = create_qp,
    .create_qp_ex = create_qp_ex,
    .create_srq = create_srq,
    .dealloc_mw = dealloc_mw,
    .dealloc_pd = dealloc_pd,
    .dereg_mr = dereg_mr,
    .destroy_ah = destroy_ah,
    .destroy_cq = destroy_cq,
    .destroy_qp = destroy_qp,
    .destroy_srq = destroy_srq,
    .detach_mcast = detach_mcast,
    .free_context = free_context,
    .free_dm = free_dm,
    .import_dm = import_dm,
    .import_mr = import_mr,
    .import_pd = import_pd,
    .modify_cq = modify_cq,
    .modify_qp = modify_qp,
    .modify_qp_rate_limit = modify_qp_rate_limit,
    .modify_srq = modify_srq,
    .poll_cq = poll_cq,
    .post_recv = post_recv,
    .post_send = post_send,
    .post_srq_recv = post_srq_recv,
    .query_device_ex = query_device_ex,
    .query_port = query_port,
    .query_qp = query_qp,
    .query_srq = query_srq,
    .reg_dm_mr = reg_dm_mr,
    .reg_mr = reg_mr,
    .req_notify_cq = req_notify_cq,
    .rereg_mr = rereg_mr,
    .resize_cq = resize_cq,
    .unimport_dm = unimport_dm,
    .unimport_mr = unimport_mr,
    .unimport_pd = unimport_pd,
};
#if defined(__clang__) && __has_warning("-Wmissing-designated-field-initializers")
#pragma clang diagnostic pop
#endif

verbs_context* open_context(ibv_device* ibdev, int cmd_fd, bool imported) noexcept {
  ContextPtr ctx(static_cast<Context*>(_verbs_init_and_alloc_context(
      ibdev, cmd_fd, sizeof(Context),
      // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast,performance-no-int-to-ptr)
      reinterpret_cast<verbs_context*>(offsetof(Context, ibv_ctx)), 0)));
  if (!ctx) {
    return nullptr;
  }
  const int err =
      imported ? setup_imported_context(ctx.get(), cmd_fd) : setup_context(ctx.get(), cmd_fd);
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

const verbs_device_ops kDeviceOps = {
    .name = "vrnic",
    .match_min_abi_version = VRNIC_UVERBS_ABI_VERSION,
    .match_max_abi_version = VRNIC_UVERBS_ABI_VERSION,
    .match_table = kMatchTable.data(),
    .static_providers = nullptr,
    .match_device = match_device,
    .alloc_context = alloc_context,
    .import_context = import_context,
    .alloc_device = alloc_device,
    .uninit_device = uninit_device,
};

// Registered only under a libibverbs with this build's layouts: under
// another, libvrnic says so and libibverbs finds no provider for vrnic.
__attribute__((constructor)) void register_driver() noexcept {
  const int running = pabi::running_rdma_core_major();
  if (pabi::layout_family(running) != pabi::kBuiltFamily) {
    std::fprintf(stderr,
                 "libvrnic: built for the libibverbs of rdma-core %d, but this is rdma-core %d's; "
                 "not loaded (build libvrnic against it)\n",
                 VRNIC_RDMA_CORE_MAJOR, running);
    return;
  }
  VRNIC_VERBS_REGISTER_DRIVER(&kDeviceOps);
}

}  // namespace

bool is_vrnic_context(ibv_context* ctx) noexcept {
  // verbs_device starts with its ibv_device (checked in ibverbs_private.h).
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  return ctx != nullptr && reinterpret_cast<verbs_device*>(ctx->device)->ops == &kDeviceOps;
}

verbs_context* alloc_context(ibv_device* ibdev, int cmd_fd, void* /*private_data*/) noexcept {
  return open_context(ibdev, cmd_fd, false);
}

verbs_context* import_context(ibv_device* ibdev, int cmd_fd) noexcept {
  return open_context(ibdev, cmd_fd, true);
}

void free_context(ibv_context* ibctx) noexcept { destroy_context(to_vctx(ibctx)); }

void debug(const char* fmt, ...) noexcept {
  static const bool enabled = [] {
    const char* v = std::getenv("VRNIC_DEBUG");
    return v != nullptr && std::strcmp(v, "0") != 0;
  }();
  if (!enabled) {
    return;
  }
  std::fputs("libvrnic: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

}  // namespace vrnic
