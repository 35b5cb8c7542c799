// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: frames from a datagram wire (--wire udp:, and a TAP's
// read path, which is the same DatagramLink), through EthPort's fault
// injector and ingress to the device and its engine.  The input first
// sets the fault injector (drop, reorder, duplicate, corrupt and seed,
// as vrnicctl fault may at any time), then is a list of frames, raw or
// built as RoCEv2 packets for the rig's QPs, each sent as one datagram
// from the tunnel's remote end, or from a stranger.  Nothing may crash,
// and what the engine is handed must be what a datagram carried.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "fuzz_frames.h"
#include "fuzz_rig.h"
#include "roce/packet.h"
#include "wire/datagram_link.h"
#include "wire/eth_port.h"

namespace {

// A UDP socket on a free loopback port; its "127.0.0.1:PORT".
int udp_socket(std::string* where) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast)
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::abort();
  }
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  *where = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  return s;
}

struct Wire {
  vrnic_fuzz::Rig rig;
  vrnicd::EventLoop loop;
  int remote = -1;    // the tunnel's other end
  int stranger = -1;  // anyone else
  std::string port_at;
  size_t max_frame = 0;
  vrnicd::EthPort port{loop, [] { return vrnic_fuzz::DataPath::kMac; },
                       [this](std::span<const std::byte> f) {
                         if (f.empty() || f.size() > max_frame) {
                           std::abort();  // not what a datagram carried
                         }
                         return rig.dp().dev().receive_frame_st(f);
                       },
                       [](bool) {}};

  Wire() {
    std::string remote_at;
    std::string stranger_at;
    remote = udp_socket(&remote_at);
    stranger = udp_socket(&stranger_at);
    const int probe = udp_socket(&port_at);
    ::close(probe);  // a free port for the device's end
    vrnicd::EthPort::Options o;
    o.wire = "udp:" + port_at + "," + remote_at;
    std::string err;
    if (!rig.ok() || !port.start(o, &err)) {
      std::abort();
    }
  }

  void send(int from, std::span<const std::byte> frame) {
    std::string err;
    sockaddr_storage to{};
    socklen_t len = 0;
    if (!vrnicd::parse_udp_endpoint(port_at, &to, &len, &err)) {
      std::abort();
    }
    max_frame = std::max(max_frame, frame.size());
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
    ::sendto(from, frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), len);
    loop.run_once(0);
  }
};

double probability(uint8_t b) { return b < 128 ? 0 : (b - 128) / 256.0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Wire w;
  vrnic_fuzz::Input in(data, size);
  vrnicd::FaultConfig f;
  f.drop = probability(in.u8());
  f.reorder = probability(in.u8());
  f.dup = probability(in.u8());
  f.corrupt = probability(in.u8());
  f.seed = in.u8();
  w.port.set_faults(f);
  w.max_frame = 0;
  std::vector<std::byte> frame;
  for (int n = 0; n < 16 && !in.empty(); ++n) {
    const uint8_t mode = in.u8();
    const size_t len = in.u8() + (static_cast<size_t>(in.u8() & 0x1f) << 8);
    const int from = (mode & 4) != 0 ? w.stranger : w.remote;
    if ((mode & 1) != 0) {
      const auto raw = in.bytes(len);
      w.send(from, raw);
    } else {
      vrnicd::roce::Packet p = vrnic_fuzz::structured_packet(in, w.rig);
      p.payload = in.bytes(len);
      vrnicd::roce::encode_frame(p, &frame);
      w.send(from, frame);
    }
    if ((mode & 2) != 0) {
      w.rig.dp().run(64);
    }
    if ((mode & 8) != 0) {
      w.port.tick();  // a held (reordered) frame goes on
    }
  }
  for (int i = 0; i < 4; ++i) {
    w.loop.run_once(0);
  }
  w.port.set_faults({});
  w.port.tick();
  w.rig.dp().run(20000);
  w.rig.reset();
  return 0;
}
