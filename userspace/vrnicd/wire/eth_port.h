// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device's Ethernet port.  It joins three things:
//   - the guest's NIC (virtio-net, over a QEMU stream socket): the host
//     side of the netdev the RDMA port is paired with;
//   - the wire (another vrnicd, or a QEMU netdev of another guest);
//   - the RDMA engine, which sends and receives RoCEv2 frames.
// Frames from the wire that are RoCEv2 for the device go to the engine;
// every other frame is switched between the NIC and the wire, so that ARP
// and IP work between the guests as on a real converged NIC.
//
// The wire side can drop, reorder, duplicate and corrupt frames (fault
// injection, seeded and repeatable) and record every frame in a pcap file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/event_loop.h"
#include "base/fd.h"
#include "wire/datagram_link.h"
#include "wire/stream_link.h"

namespace vrnicd {

struct FaultConfig {
  double drop = 0;
  double reorder = 0;
  double dup = 0;
  double corrupt = 0;
  uint64_t seed = 1;
  [[nodiscard]] bool any() const noexcept {
    return drop > 0 || reorder > 0 || dup > 0 || corrupt > 0;
  }
};

// Bad things a link does to frames.  A corrupted RoCEv2 frame gets a bit
// flipped after its UDP header, where only the ICRC can catch it; any
// other corrupted frame is dropped, as the Ethernet FCS would drop it.  A
// reordered frame is held back and sent after the next one (or when
// flush() is called).
class FaultInjector {
 public:
  using Sink = std::function<void(std::span<const std::byte>)>;
  explicit FaultInjector(const FaultConfig& cfg);

  void process(std::span<const std::byte> frame, const Sink& out);
  // Release a held frame; true if there was one.
  bool flush(const Sink& out);
  [[nodiscard]] bool holding() const noexcept { return holding_; }
  [[nodiscard]] const FaultConfig& config() const noexcept { return cfg_; }
  // New probabilities (and seed) from now on; the counts go on.
  void set_config(const FaultConfig& cfg);

  uint64_t dropped = 0;
  uint64_t reordered = 0;
  uint64_t duplicated = 0;
  uint64_t corrupted = 0;

 private:
  bool chance(double p);

  FaultConfig cfg_;
  std::mt19937_64 rng_;
  std::vector<std::byte> held_;
  bool holding_ = false;
  std::vector<std::byte> scratch_;
};

// Frames as a pcap file (LINKTYPE_ETHERNET, microsecond timestamps).
// Records are buffered and written whole, so that a reader of the growing
// file never sees half a record (beyond a full disk).
class PcapWriter {
 public:
  PcapWriter() = default;
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  PcapWriter(PcapWriter&&) = delete;
  PcapWriter& operator=(PcapWriter&&) = delete;

  bool open(const std::string& path, std::string* err);
  void write(std::span<const std::byte> frame);
  void flush();
  uint64_t frames = 0;

 private:
  static constexpr size_t kFlushAt = size_t{256} << 10;
  UniqueFd fd_;
  std::vector<std::byte> buf_;
};

// True for a RoCEv2 frame: UDP to port 4791 over IPv4 or IPv6, whole.
bool is_roce_frame(std::span<const std::byte> frame);

class EthPort {
 public:
  struct Options {
    std::string nic_socket;    // listen for the guest NIC
    std::string nic_connect;   // or: connect to it, again whenever lost
    std::string wire_listen;   // or: listen for the link partner
    std::string wire_connect;  // or: connect to it
    std::string wire;          // or: tap:NAME, or udp:LOCAL,REMOTE
    std::string pcap;
    FaultConfig faults;
  };
  // Engine ingress: true when the frame was RoCEv2 for the device.
  using EngineRx = std::function<bool(std::span<const std::byte>)>;
  using CableHandler = std::function<void(bool up)>;
  // The port's current MAC (the driver may change it).
  using MacSource = std::function<MacAddr()>;

  EthPort(EventLoop& loop, MacSource mac, EngineRx engine_rx, CableHandler cable);
  ~EthPort();
  EthPort(const EthPort&) = delete;
  EthPort& operator=(const EthPort&) = delete;
  EthPort(EthPort&&) = delete;
  EthPort& operator=(EthPort&&) = delete;

  bool start(const Options& o, std::string* err);
  // A frame from the engine, for the wire.
  void engine_tx(std::span<const std::byte> frame);
  // Hold the frames for the wire from now on, and send them together at
  // release_wire() (one system call for a unix or UDP wire): the dispatch
  // loop holds them over one engine round.
  void hold_wire() noexcept;
  void release_wire();
  // Periodic work: release a held (reordered) frame, flush the capture.
  void tick();
  // What the wire is: tap:NAME, udp:LOCAL,REMOTE, unix (a stream socket)
  // or none.
  [[nodiscard]] std::string wire_name() const {
    return dgram_ ? dgram_->describe() : wire_ ? "unix" : "none";
  }
  [[nodiscard]] bool has_wire() const noexcept { return wire_ != nullptr || dgram_ != nullptr; }
  [[nodiscard]] bool wire_connected() const noexcept {
    return (wire_ && wire_->connected()) || (dgram_ && dgram_->open());
  }

  struct Counters {
    uint64_t wire_rx = 0;
    uint64_t wire_tx = 0;
    uint64_t to_engine = 0;
    uint64_t to_nic = 0;
    uint64_t from_nic = 0;
    uint64_t from_engine = 0;
    uint64_t dropped = 0;    // nowhere to go: no wire, no NIC
    uint64_t link_full = 0;  // the link's queue was full (a slow peer)
  };
  [[nodiscard]] const Counters& counters() const noexcept { return c_; }
  [[nodiscard]] const FaultInjector* faults() const noexcept { return faults_.get(); }
  // Fault injection on the wire's ingress, changed at run time (vrnicctl
  // fault).  All zero turns it off; a frame held for reordering goes on.
  void set_faults(const FaultConfig& f);

 private:
  void wire_send(std::span<const std::byte> frame);
  void wire_rx(std::span<const std::byte> frame);
  void ingress(std::span<const std::byte> frame);
  void nic_rx(std::span<const std::byte> frame);
  void schedule_ticks();
  bool open_datagram_wire(const std::string& spec, std::string* err);

  EventLoop& loop_;
  MacSource mac_;
  EngineRx engine_rx_;
  CableHandler cable_;
  std::unique_ptr<StreamLink> nic_;
  std::unique_ptr<StreamLink> wire_;
  std::unique_ptr<DatagramLink> dgram_;  // the wire as a TAP or a UDP tunnel
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<PcapWriter> pcap_;
  Counters c_;
  int tick_timer_ = -1;
  uint32_t tick_ms_ = 0;
};

}  // namespace vrnicd
