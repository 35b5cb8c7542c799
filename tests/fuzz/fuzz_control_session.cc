// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: a whole session on vrnicd's control socket (vrnicctl's
// side is the attacker): the input is cut into writes, each sent to the
// server and served by its event loop, requests split or joined anyhow,
// over a device with QPs and traffic.  Every line the server answers is
// JSON, and when the client goes the server keeps nothing of it.
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "base/event_loop.h"
#include "control/control.h"
#include "fuzz_rig.h"
#include "wire/eth_port.h"

namespace {

struct Session {
  vrnic_fuzz::Rig rig;
  vrnicd::EventLoop loop;
  vrnicd::EthPort port{loop, [] { return vrnic_fuzz::DataPath::kMac; },
                       [](std::span<const std::byte>) { return false; }, [](bool) {}};
  vrnicd::ControlServer control{loop, rig.dp().dev(), port};

  Session() {
    if (!rig.ok()) {
      std::abort();
    }
  }

  // What the server wrote so far; complete lines must be JSON.
  static void read_answers(int fd, std::string* got) {
    std::array<char, 4096> buf{};
    for (;;) {
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n <= 0) {
        break;
      }
      got->append(buf.data(), static_cast<size_t>(n));
    }
    for (size_t nl = got->find('\n'); nl != std::string::npos; nl = got->find('\n')) {
      if (!nlohmann::json::accept(got->substr(0, nl))) {
        std::abort();  // not a JSON line
      }
      got->erase(0, nl + 1);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Session s;
  std::array<int, 2> sv{};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv.data()) != 0) {
    std::abort();
  }
  const int client = sv[0];
  if (!s.control.serve(vrnicd::UniqueFd(sv[1]))) {
    std::abort();  // the last session left something behind
  }
  vrnic_fuzz::Input in(data, size);
  std::string got;
  for (int n = 0; n < 16 && !in.empty(); ++n) {
    const uint8_t len = in.u8();
    const auto chunk = in.bytes(len);
    if (!chunk.empty()) {
      ::send(client, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if ((len & 1) != 0) {
      s.rig.dp().run(64);  // the device moves on: trace lines to send
    }
    s.loop.run_once(0);
    Session::read_answers(client, &got);
  }
  s.loop.run_once(0);
  Session::read_answers(client, &got);
  ::close(client);
  for (int i = 0; i < 4 && s.control.clients() != 0; ++i) {
    s.loop.run_once(0);
  }
  if (s.control.clients() != 0) {
    std::abort();  // a closed session is still served
  }
  s.rig.reset();
  return 0;
}
