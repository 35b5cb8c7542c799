// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Address vectors: where a QP (RC, UC) or a UD WQE sends, as the driver
// names it (struct vrnic_av), and the path a packet takes, resolved
// against the port's GID table.
#pragma once

#include <cstdint>

#include "engine/params.h"
#include "roce/packet.h"
#include "vrnic-hw.h"

namespace vrnicd {

class Port;

AddressVector address_from_wire(const vrnic_av& av);
vrnic_av address_to_wire(const AddressVector& av);

// The L2/L3 path of packets to av from the port's GID av.sgid_index, in
// that GID's encapsulation (RoCEv2 or RoCEv1).  false if that GID is not
// valid or, for RoCEv2, the address families differ.
bool resolve_path(const AddressVector& av, uint32_t qpn, const Port& port, roce::Path* path);

}  // namespace vrnicd
