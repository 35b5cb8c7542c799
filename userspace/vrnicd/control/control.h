// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The control socket: a unix stream socket beside the ivshmem socket, for
// vrnicctl.  A client sends one request, a JSON object on one line, and
// gets one JSON object on one line back; for "trace", a line per event
// until it closes the connection.  Requests:
//   {"cmd":"status"}
//   {"cmd":"qp_list"}
//   {"cmd":"qp_show","qpn":N}
//   {"cmd":"trace"[,"qpn":N]}
//   {"cmd":"fault","drop":P,"reorder":P,"dup":P,"corrupt":P[,"seed":S]}
// Every answer has "ok" (true or false) and, when false, "error".
// Documentation/user-guide.rst ("Looking into a running device") has the
// fields.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/event_loop.h"
#include "base/fd.h"
#include "wire/eth_port.h"

namespace vrnicd {

class Device;

struct ControlRequest {
  enum class Cmd : uint8_t { kStatus, kQpList, kQpShow, kTrace, kFault };
  Cmd cmd = Cmd::kStatus;
  std::optional<uint32_t> qpn;
  FaultConfig fault;
};

// Parse one request line; false with *err on anything malformed.
bool parse_control_request(std::string_view line, ControlRequest* req, std::string* err);

// The control socket's path for an ivshmem socket path: NAME.sock gives
// NAME.ctl, anything else gets ".ctl" appended.
std::string control_path_for(const std::string& socket_path);

class ControlServer {
 public:
  ControlServer(EventLoop& loop, Device& dev, EthPort& port);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;
  ControlServer(ControlServer&&) = delete;
  ControlServer& operator=(ControlServer&&) = delete;

  bool listen(const std::string& path, std::string* err);
  // Serve a connected socket as an accepted client, within the limits
  // (per user, in all); false when it is refused (and closed).
  bool serve(UniqueFd fd);
  [[nodiscard]] size_t clients() const noexcept { return clients_.size(); }

  // The answer to a request, as one line of JSON (without the newline).
  std::string answer(const ControlRequest& req);

  // Requests are short: a longer line is refused.
  static constexpr size_t kMaxRequest = 4096;
  static constexpr size_t kMaxClients = 16;
  // No user holds more than this many connections at once, so that one
  // cannot take every slot.
  static constexpr size_t kMaxClientsPerUid = 4;
  // A connection that does nothing for this long is closed (a trace
  // subscription is never idle: it is waiting for the device).
  static constexpr uint32_t kIdleMs = 10000;
  void set_idle_ms(uint32_t ms) noexcept { idle_ms_ = ms; }

 private:
  struct Client {
    UniqueFd fd;
    std::string in;
    std::string out;       // still to write
    int trace_sub = 0;     // a trace subscription, or 0
    uint64_t lost = 0;     // trace lines dropped: the reader was too slow
    bool closing = false;  // close once out is written
    uid_t uid = 0;
    std::chrono::steady_clock::time_point active;  // accepted, or last read or written
  };
  void sweep_idle();
  void on_accept();
  void on_client(int fd, uint32_t events);
  void handle_line(Client& c);
  void start_trace(Client& c, std::optional<uint32_t> qpn);
  bool flush(Client& c);
  using Clients = std::vector<std::unique_ptr<Client>>;
  Clients::iterator client_at(int fd);
  void drop(int fd);

  EventLoop& loop_;
  Device& dev_;
  EthPort& port_;
  std::string path_;
  UniqueFd listen_;
  Clients clients_;
  uint32_t idle_ms_ = kIdleMs;
  int sweep_timer_ = -1;
};

}  // namespace vrnicd
