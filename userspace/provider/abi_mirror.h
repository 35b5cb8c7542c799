// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The uverbs command and response buffers libvrnic passes to libibverbs'
// ibv_cmd_*() helpers: a header, the core kernel structure and vrnic's
// driver data.  The kernel structures end in flexible driver_data[]
// arrays, which C++ cannot embed, so these mirror them without; the sizes
// are checked against the kernel ABI (IBVERBS_PRIVATE_34, rdma-core v44).
#pragma once

#include <rdma/ib_user_verbs.h>

#include <cstddef>
#include <cstdint>

#include "vrnic-abi.h"

namespace vrnic::abi {

// Write commands start with this 8-byte header; extended ones with 24.
struct CmdHdr {
  uint32_t command;
  uint16_t in_words;
  uint16_t out_words;
};
struct ExHdr {
  CmdHdr hdr;
  uint64_t response;
  uint16_t provider_in_words;
  uint16_t provider_out_words;
  uint32_t cmd_hdr_reserved;
};
static_assert(sizeof(CmdHdr) == 8 && sizeof(ExHdr) == 24);

template <size_t N>
struct Opaque {
  uint8_t bytes[N];
};

// Commands whose core part carries no driver data from us.
using GetContextCmd = Opaque<16 + sizeof(vrnic_alloc_ucontext_req)>;
using QueryPortCmd = Opaque<24>;
using AllocPdCmd = Opaque<16>;
using AllocMwCmd = Opaque<24>;
using RegMrCmd = Opaque<48>;
using ReregMrCmd = Opaque<56>;
using CreateCqCmd = Opaque<40>;
using CreateCqExCmd = Opaque<56>;
using ResizeCqCmd = Opaque<24>;
using ModifyCqCmd = Opaque<40>;
using CreateQpCmd = Opaque<64>;
using CreateQpExCmd = Opaque<88>;
using ModifyQpCmd = Opaque<120>;
using QueryQpCmd = Opaque<24>;
using CreateSrqCmd = Opaque<40>;
using QuerySrqCmd = Opaque<24>;

static_assert(sizeof(ModifyCqCmd) == sizeof(ExHdr) + sizeof(ib_uverbs_ex_modify_cq));

// modify_qp (extended) with IBV_QP_RATE_LIMIT: the core command, then
// the burst.
struct ModifyQpExCmd {
  uint8_t core[sizeof(ExHdr) + sizeof(ib_uverbs_ex_modify_qp)];
  vrnic_modify_qp_req drv;
};
static_assert(offsetof(ModifyQpExCmd, drv) == 144 && sizeof(ModifyQpExCmd) == 152);

// query_device (extended): the core response, then what it lacks.
struct QueryDeviceExResp {
  ib_uverbs_ex_query_device_resp core;
  vrnic_query_device_resp drv;
};
static_assert(offsetof(QueryDeviceExResp, drv) == sizeof(ib_uverbs_ex_query_device_resp));

// modify_srq's core command, then where the kernel writes a resize's answer.
struct ModifySrqCmd {
  uint8_t core[24];
  vrnic_modify_srq_req drv;
};
static_assert(sizeof(CmdHdr) + sizeof(ib_uverbs_modify_srq) == 24);
static_assert(offsetof(ModifySrqCmd, drv) == 24 && sizeof(ModifySrqCmd) == 32);

struct GetContextResp {
  uint32_t async_fd;
  uint32_t num_comp_vectors;
  vrnic_alloc_ucontext_resp drv;
};
static_assert(offsetof(GetContextResp, drv) == 8);

struct AllocPdResp {
  uint32_t pd_handle;
  vrnic_alloc_pd_resp drv;
};
static_assert(offsetof(AllocPdResp, drv) == 4);

struct AllocMwResp {
  uint32_t mw_handle;
  uint32_t rkey;
};
static_assert(sizeof(AllocMwResp) == sizeof(ib_uverbs_alloc_mw_resp));

struct RegMrResp {
  uint32_t mr_handle;
  uint32_t lkey;
  uint32_t rkey;
};
static_assert(sizeof(RegMrResp) == 12);

struct ReregMrResp {
  uint32_t lkey;
  uint32_t rkey;
};
static_assert(sizeof(ReregMrResp) == 8);

struct CreateCqResp {
  uint32_t cq_handle;
  uint32_t cqe;
  vrnic_create_cq_resp drv;
};
static_assert(offsetof(CreateCqResp, drv) == 8);

struct CreateCqExResp {
  uint32_t cq_handle;
  uint32_t cqe;
  uint32_t comp_mask;
  uint32_t response_length;
  vrnic_create_cq_resp drv;
};
static_assert(offsetof(CreateCqExResp, drv) == 16);

struct ResizeCqResp {
  uint32_t cqe;
  uint32_t reserved;
  vrnic_create_cq_resp drv;
};
static_assert(offsetof(ResizeCqResp, drv) == 8);

struct CreateQpCore {
  uint32_t qp_handle;
  uint32_t qpn;
  uint32_t max_send_wr;
  uint32_t max_recv_wr;
  uint32_t max_send_sge;
  uint32_t max_recv_sge;
  uint32_t max_inline_data;
  uint32_t reserved;
};
static_assert(sizeof(CreateQpCore) == sizeof(ib_uverbs_create_qp_resp));

struct CreateQpResp {
  CreateQpCore core;
  vrnic_create_qp_resp drv;
};
static_assert(offsetof(CreateQpResp, drv) == 32);

struct CreateQpExResp {
  CreateQpCore core;
  uint32_t comp_mask;
  uint32_t response_length;
  vrnic_create_qp_resp drv;
};
static_assert(offsetof(CreateQpExResp, drv) == 40);

struct CreateSrqResp {
  uint32_t srq_handle;
  uint32_t max_wr;
  uint32_t max_sge;
  uint32_t srqn;
  vrnic_create_srq_resp drv;
};
static_assert(offsetof(CreateSrqResp, drv) == 16);

struct CreateAhResp {
  uint32_t ah_handle;
  vrnic_create_ah_resp drv;
};
static_assert(offsetof(CreateAhResp, drv) == 4);

// Passing a mirror where libibverbs wants its own struct.
template <typename To, typename From>
To* as(From* p) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  return reinterpret_cast<To*>(p);
}

}  // namespace vrnic::abi
