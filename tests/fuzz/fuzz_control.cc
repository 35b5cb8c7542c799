// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: a request line on vrnicd's control socket (vrnicctl).
// Whatever it is, the parser returns; what it accepts is in range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "control/control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  vrnicd::ControlRequest req;
  std::string err;
  if (!vrnicd::parse_control_request(line, &req, &err)) {
    if (err.empty()) {
      std::abort();
    }
    return 0;
  }
  const vrnicd::FaultConfig& f = req.fault;
  const bool bad_p = f.drop < 0 || f.drop > 1 || f.reorder < 0 || f.reorder > 1 || f.dup < 0 ||
                     f.dup > 1 || f.corrupt < 0 || f.corrupt > 1;
  if (bad_p || (req.qpn && *req.qpn > 0xffffff) ||
      (req.cmd == vrnicd::ControlRequest::Cmd::kQpShow && !req.qpn)) {
    std::abort();
  }
  return 0;
}
