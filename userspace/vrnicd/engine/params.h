// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Admin commands on data-path objects as the engine takes them: CPU-order
// parameters that admin_verbs.cc has decoded from the wire commands and
// validated field by field (flags, ranges, limits).  The engine checks only
// what needs its tables and guest memory: whether the objects named exist,
// whether there is room, and whether the guest addresses map.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "roce/packet.h"
#include "roce/transport.h"

namespace vrnicd {

// npages 4 KiB pages of guest memory, listed by the page list at pbl_addr.
struct QueueBufferDesc {
  uint64_t pbl_addr = 0;
  uint32_t npages = 0;
};

// A ring of 2^log_depth entries of 2^log_stride bytes from a queue buffer's
// page first_page on.
struct RingDesc {
  uint32_t first_page = 0;
  uint32_t log_depth = 0;
  uint32_t log_stride = 0;
};

struct RegMrParams {
  uint32_t pdn = 0;
  uint32_t access = 0;  // VRNIC_ACCESS_*
  bool phys = false;    // guest-physical memory itself (the local DMA key)
  bool dm = false;      // device memory from byte pbl_addr, addressed from 0
  // Otherwise length bytes at iova, in npages pages of 2^page_shift bytes
  // listed at pbl_addr (indirect: a list of the list's pages).
  bool indirect = false;
  uint64_t iova = 0;
  uint64_t length = 0;
  uint32_t page_shift = 0;
  uint32_t npages = 0;
  uint64_t pbl_addr = 0;
};

// REREG_MR of the registered region key: what changes, and to what (a
// translation as REG_MR's, reg.pdn, reg.access).
struct ReregMrParams {
  uint32_t key = 0;
  bool trans = false;
  bool pd = false;
  bool access = false;
  RegMrParams reg;
};

struct CreateCqParams {
  QueueBufferDesc buf;
  uint32_t log_depth = 0;
  uint32_t eqn = 0;
};

struct ResizeCqParams {
  uint32_t cqn = 0;
  QueueBufferDesc buf;
  uint32_t log_depth = 0;
};

struct CreateQpParams {
  roce::QpType type = roce::QpType::kRc;
  uint32_t pdn = 0;
  uint32_t send_cqn = 0;
  uint32_t recv_cqn = 0;
  std::optional<uint32_t> srqn;  // receives from this SRQ, and has no RQ
  bool sq_sig_all = false;
  bool gsi = false;                  // QP 1
  bool block_self_mcast_lb = false;  // not a receiver of its own multicasts
  QueueBufferDesc buf;
  RingDesc sq;
  RingDesc rq;
  uint32_t max_inline = 0;
};

struct CreateSrqParams {
  uint32_t pdn = 0;
  QueueBufferDesc buf;
  RingDesc ring;
  uint32_t limit = 0;
};

// The new ring keeps the SRQ's stride.
struct ResizeSrqParams {
  uint32_t srqn = 0;
  QueueBufferDesc buf;
  uint32_t first_page = 0;
  uint32_t log_depth = 0;
};

// Where a QP's packets go, as the driver gives it.
struct AddressVector {
  roce::Gid dgid{};
  roce::Mac dmac{};
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 0;
  uint32_t flow_label = 0;
  uint8_t traffic_class = 0;
  uint16_t vlan_id = roce::kNoVlan;
};

// QP attributes.  For MODIFY_QP, mask (VRNIC_QP_ATTR_*) says which to set;
// QUERY_QP fills them all.
struct QpAttrs {
  uint32_t mask = 0;
  roce::QpState state = roce::QpState::kReset;
  uint32_t access = 0;
  uint32_t path_mtu = 0;  // IB enumeration: 1 (256) .. 5 (4096)
  uint32_t dest_qpn = 0;
  uint32_t rq_psn = 0;
  uint32_t sq_psn = 0;
  uint32_t qkey = 0;
  uint16_t pkey_index = 0;
  uint8_t port = 0;
  bool sq_draining = false;  // QUERY_QP only
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
  uint8_t rnr_retry = 0;
  uint8_t min_rnr_timer = 0;
  uint8_t max_rd_atomic = 0;
  uint8_t max_dest_rd_atomic = 0;
  uint8_t sqd_async_notify = 0;
  AddressVector av;
  uint32_t rate_limit = 0;  // kbit/s, 0: unpaced
  uint32_t max_burst = 0;   // bytes
};

}  // namespace vrnicd
