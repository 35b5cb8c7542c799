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

#include "fuzz_frames.h"
#include "fuzz_rig.h"
#include "roce/packet.h"

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
      vrnicd::roce::Packet p = vrnic_fuzz::structured_packet(in, rig);
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
