// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic verbs: queries, protection domains, memory regions, address
// handles, and mapping queue buffers.
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "abi_mirror.h"
#include "vrnic.h"

namespace vrnic {

bool map_queue(Context* ctx, uint64_t key, size_t size, QueueMap* map) noexcept {
  if (size == 0 || size % ctx->page_size != 0) {
    errno = EPROTO;
    return false;
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->ibv_ctx.context.cmd_fd,
                 static_cast<off_t>(key));
  if (p == MAP_FAILED) {
    debug("mapping a queue buffer failed: %s", std::strerror(errno));
    return false;
  }
  map->base = p;
  map->size = size;
  return true;
}

void unmap_queue(QueueMap* map) noexcept {
  if (map->base != nullptr) {
    munmap(map->base, map->size);
  }
  map->base = nullptr;
  map->size = 0;
}

int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size) noexcept {
  abi::QueryDeviceExResp resp{};
  size_t resp_size = sizeof(resp);
  const int err = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp.core, &resp_size);
  if (err != 0) {
    return err;
  }
  // Packet pacing is the driver's to tell (the core response has no field).
  if (attr_size >=
      offsetof(ibv_device_attr_ex, packet_pacing_caps) + sizeof(attr->packet_pacing_caps)) {
    attr->packet_pacing_caps.qp_rate_limit_min = resp.drv.rate_limit_min;
    attr->packet_pacing_caps.qp_rate_limit_max = resp.drv.rate_limit_max;
    attr->packet_pacing_caps.supported_qpts = resp.drv.pacing_qpts;
  }
  // The kernel passes the device's 16.16.32 firmware version through raw.
  const uint64_t fw = resp.core.base.fw_ver;
  std::snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
                static_cast<unsigned>(fw >> 48), static_cast<unsigned>((fw >> 32) & 0xffff),
                static_cast<unsigned>(fw & 0xffffffff));
  return 0;
}

int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) noexcept {
  abi::QueryPortCmd cmd{};
  return ibv_cmd_query_port(ctx, port, attr, abi::as<struct ibv_query_port>(&cmd), sizeof(cmd));
}

ibv_pd* alloc_pd(ibv_context* ctx) noexcept {
  auto* pd = new (std::nothrow) Pd{};
  if (pd == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  abi::AllocPdCmd cmd{};
  abi::AllocPdResp resp{};
  const int err =
      ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, abi::as<struct ibv_alloc_pd>(&cmd), sizeof(cmd),
                       abi::as<ib_uverbs_alloc_pd_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete pd;
    errno = err;
    return nullptr;
  }
  pd->pdn = resp.drv.pdn;
  return &pd->ibv_pd;
}

int dealloc_pd(ibv_pd* ibpd) noexcept {
  const int err = ibv_cmd_dealloc_pd(ibpd);
  if (err == 0) {
    delete to_vpd(ibpd);
  }
  return err;
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, uint64_t hca_va, int access) noexcept {
  auto* mr = new (std::nothrow) Mr{};
  if (mr == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  abi::RegMrCmd cmd{};
  abi::RegMrResp resp{};
  const int err =
      ibv_cmd_reg_mr(pd, addr, length, hca_va, access, &mr->vmr, abi::as<struct ibv_reg_mr>(&cmd),
                     sizeof(cmd), abi::as<ib_uverbs_reg_mr_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete mr;
    errno = err;
    return nullptr;
  }
  return &mr->vmr.ibv_mr;
}

// In place, through the kernel: the keys stay (libibverbs copies them
// back), and the device takes the new range, PD or rights.
int rereg_mr(verbs_mr* vmr, int flags, ibv_pd* pd, void* addr, size_t length, int access) noexcept {
  abi::ReregMrCmd cmd{};
  abi::ReregMrResp resp{};
  return ibv_cmd_rereg_mr(vmr, static_cast<uint32_t>(flags), addr, length,
                          std::bit_cast<uintptr_t>(addr), access, pd,
                          abi::as<struct ibv_rereg_mr>(&cmd), sizeof(cmd),
                          abi::as<ib_uverbs_rereg_mr_resp>(&resp), sizeof(resp));
}

int dereg_mr(verbs_mr* vmr) noexcept {
  const int err = ibv_cmd_dereg_mr(vmr);
  if (err == 0) {
    delete container<Mr>(vmr, offsetof(Mr, vmr));
  }
  return err;
}

// Memory windows: the kernel has the device make one; binding is a WQE.
ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) noexcept {
  auto* mw = new (std::nothrow) ibv_mw{};
  if (mw == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  abi::AllocMwCmd cmd{};
  abi::AllocMwResp resp{};
  const int err = ibv_cmd_alloc_mw(pd, type, mw, abi::as<struct ibv_alloc_mw>(&cmd), sizeof(cmd),
                                   abi::as<ib_uverbs_alloc_mw_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete mw;
    errno = err;
    return nullptr;
  }
  return mw;
}

int dealloc_mw(ibv_mw* mw) noexcept {
  const int err = ibv_cmd_dealloc_mw(mw);
  if (err == 0) {
    delete mw;
  }
  return err;
}

// ibv_bind_mw() (type 1): a BIND_MW WQE with the next key; the window
// takes it once the WQE is posted.
int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* mw_bind) noexcept {
  // Only type 2 windows may be zero-based (IB 10.6.7.2.2); mlx5 says EINVAL.
  if (mw->type != IBV_MW_TYPE_1 ||
      (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED) != 0) {
    return EINVAL;
  }
  ibv_send_wr wr{};
  wr.wr_id = mw_bind->wr_id;
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = mw_bind->send_flags;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
  wr.bind_mw.bind_info = mw_bind->bind_info;
  ibv_send_wr* bad = nullptr;
  const int err = post_send(qp, &wr, &bad);
  if (err == 0) {
    mw->rkey = wr.bind_mw.rkey;
  }
  return err;
}

// The kernel resolves the destination MAC and returns the whole address
// vector, which every UD send WQE to this AH carries.
ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) noexcept {
  if (attr->is_global == 0) {
    errno = EINVAL;  // RoCE needs a GRH
    return nullptr;
  }
  auto* ah = new (std::nothrow) Ah{};
  if (ah == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  abi::CreateAhResp resp{};
  const int err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, abi::as<ib_uverbs_create_ah_resp>(&resp),
                                    sizeof(resp));
  if (err != 0) {
    delete ah;
    errno = err;
    return nullptr;
  }
  ah->av = resp.drv.av;
  return &ah->ibv_ah;
}

int destroy_ah(ibv_ah* ibah) noexcept {
  const int err = ibv_cmd_destroy_ah(ibah);
  if (err == 0) {
    delete to_vah(ibah);
  }
  return err;
}

// The device keeps the group table; the kernel checks the QP and GID.
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept {
  return ibv_cmd_attach_mcast(qp, gid, lid);
}

int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept {
  return ibv_cmd_detach_mcast(qp, gid, lid);
}

void explain_once(const char* msg) noexcept {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    std::fprintf(stderr, "libvrnic: %s\n", msg);
  }
}

}  // namespace vrnic
