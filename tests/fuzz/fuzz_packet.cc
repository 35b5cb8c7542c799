// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: hostile packets from the wire.  Each record of the
// input is either a raw frame (for the decoder: Ethernet, VLAN, IP, UDP,
// BTH and the extended headers, ICRC) or the fields of a RoCEv2 packet
// that the target builds and seals correctly, so that the transport's
// requester and responder see well-formed packets with hostile contents:
// any opcode, QP, PSN, key, address, length and payload.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_rig.h"
#include "roce/packet.h"

namespace {

using vrnic_fuzz::DataPath;
using vrnicd::roce::Packet;

Packet structured(vrnic_fuzz::Input& in, vrnic_fuzz::Rig& rig) {
  Packet p;
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vrnic_fuzz::Rig rig;
  if (!rig.ok()) {
    __builtin_trap();
  }
  vrnic_fuzz::Input in(data, size);
  std::vector<std::byte> frame;
  for (int n = 0; n < 16 && !in.empty(); ++n) {
    const uint8_t mode = in.u8();
    const size_t len = in.u8() + (static_cast<size_t>(in.u8() & 0x1f) << 8);
    if ((mode & 1) != 0) {
      const auto raw = in.bytes(len);
      rig.dp().dev().engine().receive_frame(raw);
    } else {
      Packet p = structured(in, rig);
      const auto payload = in.bytes(len);
      p.payload = payload;
      vrnicd::roce::encode_frame(p, &frame);
      rig.dp().dev().engine().receive_frame(frame);
    }
    if ((mode & 2) != 0) {
      rig.dp().run(64);
    }
  }
  rig.dp().run(20000);
  rig.reset();
  return 0;
}
