// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// What the device is: identity, limits and port properties.  Set from the
// command line; reported to the driver by QUERY_DEVICE and QUERY_PORT.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vrnic-hw.h"

namespace vrnicd {

using MacAddr = std::array<uint8_t, 6>;

// ivshmem peer IDs: the guest (QEMU) and the device (vrnicd itself).
constexpr uint32_t kGuestPeerId = 0;
constexpr uint32_t kDevicePeerId = 1;

struct DeviceLimits {
  uint32_t max_qp = 1024;
  uint32_t max_qp_wr = 4096;
  uint32_t max_send_sge = 16;
  uint32_t max_recv_sge = 16;
  uint32_t max_sge_rd = 16;
  uint32_t max_cq = 1024;
  uint32_t max_cqe = 262144;         // libfabric rxm: 256 per peer x 1024 peers
  uint32_t max_mr = VRNIC_MAX_KEYS;  // MRs, FRWR MRs and windows
  uint32_t max_pd = 1024;
  uint32_t max_qp_rd_atom = 128;  // as rxe: perftest asks for the peer's value
  uint32_t max_qp_init_rd_atom = 128;
  uint32_t max_srq = 256;
  uint32_t max_srq_wr = 4096;
  uint32_t max_srq_sge = 16;
  uint32_t max_ah = 4096;
  uint32_t max_inline_data = 256;
  uint32_t max_mcast_grp = 64;
  uint32_t max_mcast_qp_attach = 32;
  uint32_t max_eq = 32;
  uint32_t max_counter_sets = 63;
  uint32_t max_fast_reg_page_list_len = 512;
  uint64_t max_mr_size = 1ULL << 32;
  uint16_t gid_tbl_len = 128;
};

struct DeviceConfig {
  MacAddr mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  uint32_t num_vectors = 4;  // MSI-X vectors; must match QEMU's vectors=
  uint32_t heartbeat_ms = 100;
  uint32_t vendor_id = 0x1af4;
  uint32_t vendor_part_id = 0x1110;
  uint32_t hw_version = 1;
  uint64_t fw_version = (1ULL << 48) | (0ULL << 32) | 0;  // 1.0.0
  DeviceLimits limits;
  // Port: IB speed/width encodings (EDR x1 = 25 Gb/s).
  uint8_t active_speed = 32;
  uint8_t active_width = 1;
  uint8_t max_mtu = 5;  // 4096
  bool cable_up = true;
};

std::optional<MacAddr> parse_mac(std::string_view s);
std::string format_mac(const MacAddr& mac);
// node GUID (EUI-64 from the MAC), as the 64-bit big-endian value.
uint64_t mac_to_guid(const MacAddr& mac);

// Set a limit by name ("max_qp=128"); false for unknown names or values.
bool set_limit(DeviceLimits& limits, std::string_view assignment);

}  // namespace vrnicd
