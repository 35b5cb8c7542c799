// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Helpers shared by the parts of QpTransport (transport.cc, requester.cc,
// responder.cc); not for users of the transport.
#pragma once

#include <cstdint>

#include "roce/packet.h"
#include "roce/transport.h"

namespace vrnicd::roce {

// Packets of a message of length bytes; a zero-length message has one.
inline uint32_t packets_for(uint64_t length, uint32_t mtu) {
  if (length == 0) {
    return 1;
  }
  return static_cast<uint32_t>((length + mtu - 1) / mtu);
}

inline Transport transport_for(QpType t) {
  switch (t) {
    case QpType::kRc:
      return Transport::kRc;
    case QpType::kUc:
      return Transport::kUc;
    case QpType::kUd:
      return Transport::kUd;
  }
  return Transport::kRc;
}

// The vendor error code of a failed local memory access.
inline uint8_t local_memory_verr(MemStatus m) {
  switch (m) {
    case MemStatus::kNoAccess:
      return VRNIC_VERR_LOCAL_ACCESS;
    case MemStatus::kBounds:
    case MemStatus::kMisaligned:
      return VRNIC_VERR_LOCAL_BOUNDS;
    default:
      return VRNIC_VERR_LKEY;
  }
}

}  // namespace vrnicd::roce
