// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Live, decoded events of the data path, for `vrnicctl trace`: each send
// WQE a QP takes, each CQE it writes, each packet it sends or receives, as
// one JSON object per line.  With no subscriber the data path pays one
// branch per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roce/packet.h"
#include "roce/transport.h"

namespace vrnicd {

class Clock;

class Tracer {
 public:
  // Takes one line (no newline); false when the subscriber is gone.
  using Sink = std::function<bool(const std::string& line)>;
  static constexpr uint32_t kAllQps = UINT32_MAX;

  explicit Tracer(const Clock& clock) : clock_(clock) {}

  // Events of qpn (or kAllQps) go to sink until unsubscribe(id).
  int subscribe(uint32_t qpn, Sink sink);
  void unsubscribe(int id);
  [[nodiscard]] bool active() const noexcept { return !subs_.empty(); }

  void wqe(uint32_t qpn, const roce::SendWqe& w);
  void cqe(uint32_t qpn, bool send, const roce::Completion& c);
  // payload_len: the payload's bytes (a packet to send has them elsewhere).
  void packet(uint32_t qpn, bool tx, const roce::Packet& p, size_t payload_len, size_t frame_size);

 private:
  struct Sub {
    int id;
    uint32_t qpn;
    Sink sink;
  };
  [[nodiscard]] bool wants(uint32_t qpn) const noexcept;
  void emit(uint32_t qpn, const std::string& line);

  const Clock& clock_;
  std::vector<Sub> subs_;
  int next_id_ = 1;
};

}  // namespace vrnicd
