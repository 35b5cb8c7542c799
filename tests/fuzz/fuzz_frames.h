// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// A RoCEv2 packet for the fuzz rig's device, built from input bytes: well
// formed and sealed once encoded, with hostile contents (any opcode, QP,
// PSN, key, address, length).  For fuzz_packet and fuzz_ingress.
#pragma once

#include <algorithm>

#include "fuzz_rig.h"
#include "roce/packet.h"

namespace vrnic_fuzz {

inline vrnicd::roce::Packet structured_packet(Input& in, Rig& rig) {
  vrnicd::roce::Packet p;
  p.path.ipv4 = true;
  std::copy(DataPath::kGid.begin(), DataPath::kGid.end(), p.path.sgid.begin());
  p.path.dgid = p.path.sgid;
  std::copy(DataPath::kMac.begin(), DataPath::kMac.end(), p.path.smac.begin());
  p.path.dmac = p.path.smac;
  p.bth.opcode = in.u8();
  const uint8_t qsel = in.u8();
  p.bth.dest_qp = qsel < 0xf0 ? rig.qp(qsel).qpn : in.get<uint32_t>() & 0xffffff;
  const uint8_t flags = in.u8();
  p.bth.solicited = (flags & 1) != 0;
  p.bth.ack_req = (flags & 2) != 0;
  p.bth.pkey = (flags & 4) != 0 ? in.get<uint16_t>() : vrnicd::roce::kDefaultPkey;
  if ((flags & 0x10) != 0) {  // RoCEv1: the same GIDs in a GRH
    p.path.roce_v1 = true;
    p.path.ipv4 = false;
  }
  p.bth.psn = in.get<uint32_t>() & 0xffffff;
  p.reth.va = in.get<uint64_t>();
  p.reth.rkey = in.get<uint32_t>();
  p.reth.length = in.get<uint32_t>();
  p.aeth_syndrome = in.u8();
  p.aeth_msn = in.get<uint32_t>() & 0xffffff;
  p.atomic.va = p.reth.va;
  p.atomic.rkey = p.reth.rkey;
  p.atomic.swap_add = in.get<uint64_t>();
  p.atomic.compare = in.get<uint64_t>();
  p.atomic_ack = p.atomic.compare;
  p.imm = in.get<uint32_t>();
  p.ieth = p.imm;
  p.deth.qkey = (flags & 8) != 0 ? in.get<uint32_t>() : 0x1234;
  p.deth.src_qp = rig.qp(in.u8()).qpn;
  return p;
}

}  // namespace vrnic_fuzz
