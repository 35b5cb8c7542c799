// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "base/config.h"

#include <charconv>
#include <cstdio>

namespace vrnicd {

std::optional<MacAddr> parse_mac(std::string_view s) {
  MacAddr mac{};
  size_t pos = 0;
  for (size_t i = 0; i < mac.size(); ++i) {
    if (i > 0) {
      if (pos >= s.size() || s[pos] != ':') {
        return std::nullopt;
      }
      ++pos;
    }
    if (pos + 2 > s.size()) {
      return std::nullopt;
    }
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data() + pos, s.data() + pos + 2, v, 16);
    if (ec != std::errc() || p != s.data() + pos + 2) {
      return std::nullopt;
    }
    mac[i] = static_cast<uint8_t>(v);
    pos += 2;
  }
  if (pos != s.size()) {
    return std::nullopt;
  }
  return mac;
}

std::string format_mac(const MacAddr& mac) {
  std::array<char, 18> buf{};
  std::snprintf(buf.data(), buf.size(), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
                mac[3], mac[4], mac[5]);
  return buf.data();
}

uint64_t mac_to_guid(const MacAddr& mac) {
  // Modified EUI-64: flip the universal/local bit and insert ff:fe.
  const std::array<uint8_t, 8> eui{
      static_cast<uint8_t>(mac[0] ^ 2U), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
  uint64_t guid = 0;
  for (uint8_t b : eui) {
    guid = (guid << 8) | b;
  }
  return guid;
}

namespace {

// The 32-bit limits --limit may set, by name.
struct LimitField {
  std::string_view name;
  uint32_t DeviceLimits::*field;
};
constexpr std::array<LimitField, 21> kLimitFields{{
    {"max_qp", &DeviceLimits::max_qp},
    {"max_qp_wr", &DeviceLimits::max_qp_wr},
    {"max_send_sge", &DeviceLimits::max_send_sge},
    {"max_recv_sge", &DeviceLimits::max_recv_sge},
    {"max_sge_rd", &DeviceLimits::max_sge_rd},
    {"max_cq", &DeviceLimits::max_cq},
    {"max_cqe", &DeviceLimits::max_cqe},
    {"max_mr", &DeviceLimits::max_mr},
    {"max_pd", &DeviceLimits::max_pd},
    {"max_qp_rd_atom", &DeviceLimits::max_qp_rd_atom},
    {"max_qp_init_rd_atom", &DeviceLimits::max_qp_init_rd_atom},
    {"max_srq", &DeviceLimits::max_srq},
    {"max_srq_wr", &DeviceLimits::max_srq_wr},
    {"max_srq_sge", &DeviceLimits::max_srq_sge},
    {"max_ah", &DeviceLimits::max_ah},
    {"max_inline_data", &DeviceLimits::max_inline_data},
    {"max_mcast_grp", &DeviceLimits::max_mcast_grp},
    {"max_mcast_qp_attach", &DeviceLimits::max_mcast_qp_attach},
    {"max_eq", &DeviceLimits::max_eq},
    {"max_counter_sets", &DeviceLimits::max_counter_sets},
    {"max_fast_reg_page_list_len", &DeviceLimits::max_fast_reg_page_list_len},
}};

}  // namespace

bool set_limit(DeviceLimits& limits, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return false;
  }
  const std::string_view name = assignment.substr(0, eq);
  const std::string_view value = assignment.substr(eq + 1);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v == 0) {
    return false;
  }
  for (const LimitField& e : kLimitFields) {
    if (e.name == name) {
      // A key has 12 index bits: no more MRs than it can name.
      if (v > UINT32_MAX || (e.name == "max_mr" && v > VRNIC_MAX_KEYS)) {
        return false;
      }
      limits.*e.field = static_cast<uint32_t>(v);
      return true;
    }
  }
  if (name == "max_mr_size") {
    limits.max_mr_size = v;
    return true;
  }
  if (name == "gid_tbl_len") {
    if (v > UINT16_MAX) {
      return false;
    }
    limits.gid_tbl_len = static_cast<uint16_t>(v);
    return true;
  }
  return false;
}

}  // namespace vrnicd
