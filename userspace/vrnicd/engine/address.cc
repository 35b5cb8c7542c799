// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/address.h"

#include <algorithm>

#include "engine/port.h"
#include "hw_access.h"

namespace vrnicd {

AddressVector address_from_wire(const vrnic_av& av) {
  AddressVector a;
  std::copy(std::begin(av.dgid), std::end(av.dgid), a.dgid.begin());
  std::copy(std::begin(av.dmac), std::end(av.dmac), a.dmac.begin());
  a.sgid_index = av.sgid_index;
  a.hop_limit = av.hop_limit;
  a.flow_label = vrnic::le32(av.flow_label);
  a.traffic_class = av.traffic_class;
  a.vlan_id = vrnic::le16(av.vlan_id);
  return a;
}

vrnic_av address_to_wire(const AddressVector& a) {
  vrnic_av av{};
  std::copy(a.dgid.begin(), a.dgid.end(), std::begin(av.dgid));
  std::copy(a.dmac.begin(), a.dmac.end(), std::begin(av.dmac));
  av.sgid_index = a.sgid_index;
  av.hop_limit = a.hop_limit;
  av.flow_label = vrnic::to_le32(a.flow_label);
  av.traffic_class = a.traffic_class;
  av.vlan_id = vrnic::to_le16(a.vlan_id);
  return av;
}

bool resolve_path(const AddressVector& av, uint32_t qpn, const Port& port, roce::Path* path) {
  const auto& gids = port.gids();
  if (av.sgid_index >= gids.size() || !gids[av.sgid_index].valid) {
    return false;
  }
  const GidEntry& g = gids[av.sgid_index];
  path->sgid = g.gid;
  path->dgid = av.dgid;
  // RoCEv1 carries any two GIDs in its GRH; RoCEv2 needs one IP version.
  path->roce_v1 = g.type == VRNIC_GID_TYPE_ROCE_V1;
  path->ipv4 = !path->roce_v1 && roce::gid_is_ipv4_mapped(path->sgid);
  if (!path->roce_v1 && path->ipv4 != roce::gid_is_ipv4_mapped(path->dgid)) {
    return false;
  }
  path->smac = g.mac;
  path->dmac = av.dmac;
  path->vlan =
      g.vlan_id != roce::kNoVlan ? g.vlan_id : (av.vlan_id <= 4095 ? av.vlan_id : roce::kNoVlan);
  path->traffic_class = av.traffic_class;
  path->hop_limit = av.hop_limit != 0 ? av.hop_limit : 64;
  path->flow_label = av.flow_label & 0xfffff;
  // RoCEv2 spreads flows over UDP source ports 0xc000..0xffff.
  const uint32_t h = (path->flow_label != 0 ? path->flow_label : qpn) * 2654435761U;
  path->udp_sport = static_cast<uint16_t>(0xc000 | (h >> 18));
  return true;
}

}  // namespace vrnicd
