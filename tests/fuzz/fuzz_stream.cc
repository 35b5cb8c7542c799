// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: the QEMU stream framing that carries the guest NIC's
// Ethernet frames into vrnicd.  Every frame handed out must lie inside the
// input, and the bytes consumed must never exceed it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "wire/stream_link.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> buf(reinterpret_cast<const std::byte*>(data), size);
  size_t seen = 0;
  const auto consumed = vrnicd::parse_stream_frames(buf, [&](std::span<const std::byte> f) {
    if (f.data() < buf.data() || f.data() + f.size() > buf.data() + buf.size() || f.empty() ||
        f.size() > vrnicd::StreamLink::kMaxFrame) {
      std::abort();
    }
    seen += f.size() + 4;
  });
  if (consumed && (*consumed > size || *consumed != seen)) {
    std::abort();
  }
  return 0;
}
