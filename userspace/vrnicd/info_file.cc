// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "info_file.h"

#include <array>
#include <cinttypes>
#include <cstdio>

#include "device/device.h"
#include "hw_access.h"

namespace vrnicd {

std::string info_text(const Device& dev) {
  vrnic_device_attr a{};
  dev.fill_device_attr(a);
  std::string out;
  std::array<char, 128> line{};
  auto add = [&](const char* key, const char* fmt, auto value) {
    std::array<char, 96> v{};
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
    std::snprintf(v.data(), v.size(), fmt, value);
    std::snprintf(line.data(), line.size(), "%s: %s\n", key, v.data());
    out += line.data();
  };
  const uint64_t fw = vrnic::le64(a.fw_version);
  std::array<char, 32> fwbuf{};
  std::snprintf(fwbuf.data(), fwbuf.size(), "%u.%u.%u", static_cast<unsigned>(fw >> 48),
                static_cast<unsigned>((fw >> 32) & 0xffff), static_cast<unsigned>(fw & 0xffffffff));
  add("fw_ver", "%s", fwbuf.data());
  const uint64_t g = vrnic::le64(a.node_guid);
  std::array<char, 32> gbuf{};
  std::snprintf(gbuf.data(), gbuf.size(), "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48),
                static_cast<unsigned>((g >> 32) & 0xffff),
                static_cast<unsigned>((g >> 16) & 0xffff), static_cast<unsigned>(g & 0xffff));
  add("node_guid", "%s", gbuf.data());
  add("sys_image_guid", "%s", gbuf.data());
  add("vendor_id", "0x%04x", vrnic::le32(a.vendor_id));
  add("vendor_part_id", "%u", vrnic::le32(a.vendor_part_id));
  add("hw_ver", "0x%X", vrnic::le32(a.hw_version));
  add("max_mr_size", "0x%" PRIx64, vrnic::le64(a.max_mr_size));
  add("page_size_cap", "0x%" PRIx64, vrnic::le64(a.page_size_cap));
  add("max_qp", "%u", vrnic::le32(a.max_qp));
  add("max_qp_wr", "%u", vrnic::le32(a.max_qp_wr));
  add("max_sge", "%u", std::min(vrnic::le32(a.max_send_sge), vrnic::le32(a.max_recv_sge)));
  add("max_sge_rd", "%u", vrnic::le32(a.max_sge_rd));
  add("max_cq", "%u", vrnic::le32(a.max_cq));
  add("max_cqe", "%u", vrnic::le32(a.max_cqe));
  add("max_mr", "%u", vrnic::le32(a.max_mr));
  add("max_pd", "%u", vrnic::le32(a.max_pd));
  add("max_qp_rd_atom", "%u", vrnic::le32(a.max_qp_rd_atom));
  add("max_qp_init_rd_atom", "%u", vrnic::le32(a.max_qp_init_rd_atom));
  add("max_mcast_grp", "%u", vrnic::le32(a.max_mcast_grp));
  add("max_mcast_qp_attach", "%u", vrnic::le32(a.max_mcast_qp_attach));
  add("max_counter_sets", "%u", vrnic::le32(a.max_counter_sets));
  add("max_ah", "%u", vrnic::le32(a.max_ah));
  add("max_srq", "%u", vrnic::le32(a.max_srq));
  add("max_srq_wr", "%u", vrnic::le32(a.max_srq_wr));
  add("max_srq_sge", "%u", vrnic::le32(a.max_srq_sge));
  add("max_pkeys", "%u", vrnic::le32(a.max_pkeys));
  add("local_ca_ack_delay", "%u", vrnic::le32(a.local_ca_ack_delay));
  add("phys_port_cnt", "%u", vrnic::le32(a.num_ports));
  add("gid_tbl_len", "%u", static_cast<unsigned>(dev.config().limits.gid_tbl_len));
  add("max_mtu", "%u", 128U << dev.config().max_mtu);
  add("mac", "%s", format_mac(dev.config().mac).c_str());
  add("num_vectors", "%u", dev.config().num_vectors);
  return out;
}

bool write_info_file(const std::string& path, const Device& dev) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    return false;
  }
  const std::string text = info_text(dev);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) {
    return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace vrnicd
