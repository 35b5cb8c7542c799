// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: hostile work requests.  The input is a list of raw
// send and receive WQEs, each written into the next slot of one of the
// rig's QPs (RC, UC, UD) and published; then the engine runs them,
// looping traffic through its own GID.  A WQE may carry the rig's keys
// (its MRs, fast-register MR and windows), so that REG_MR, BIND_MW,
// LOCAL_INV and SEND_WITH_INV run and not only refuse.  Guest RAM is a
// heap buffer, so a device access outside it is caught by AddressSanitizer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_rig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vrnic_fuzz::Rig rig;
  if (!rig.ok()) {
    __builtin_trap();  // the rig itself is broken: fail loudly
  }
  vrnic_fuzz::Input in(data, size);
  for (int n = 0; n < 32 && !in.empty(); ++n) {
    const uint8_t sel = in.u8();
    const size_t len = in.u8() + (static_cast<size_t>(in.u8() & 0xf) << 8);
    auto& qp = rig.qp(sel & 0x7);
    const auto raw = in.bytes(len);
    std::vector<std::byte> wqe(raw.begin(), raw.end());
    if ((sel & 0x20) != 0) {
      rig.patch_keys(&wqe, in.u8());  // the rig's keys, in the right places
    }
    if ((sel & 0x40) != 0) {
      rig.dp().post_recv_raw(qp, wqe);
    } else {
      rig.dp().post_send_raw(qp, wqe);
    }
    if ((sel & 0x80) != 0) {
      rig.dp().run(64);  // interleave execution with posting
    }
  }
  rig.dp().run(20000);
  rig.reset();
  return 0;
}
