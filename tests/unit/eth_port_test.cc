// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd's Ethernet port: fault injection, pcap capture, and how frames
// are switched between the wire, the guest NIC and the RDMA engine.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <linux/if.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/fd.h"
#include "roce/packet.h"
#include "wire/eth_port.h"

namespace {

using vrnicd::EthPort;
using vrnicd::FaultConfig;
using vrnicd::FaultInjector;
using Frame = std::vector<std::byte>;
namespace wire = vrnicd::roce::wire;

const vrnicd::MacAddr kMac = {0x52, 0x54, 0x00, 0x76, 0x72, 0x01};

Frame roce_frame(uint32_t psn, size_t payload = 64) {
  using namespace vrnicd::roce;
  std::vector<std::byte> data(payload);
  for (size_t i = 0; i < payload; ++i) {
    data[i] = std::byte(static_cast<uint8_t>(i * 7 + psn));
  }
  Packet p;
  p.path.smac = {0x52, 0x54, 0x00, 0x76, 0x72, 0x02};
  p.path.dmac = kMac;
  p.path.sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 2};
  p.path.dgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 1};
  p.path.hop_limit = 64;
  p.path.udp_sport = 0xc000;
  p.bth.opcode = kSendOnly;
  p.bth.dest_qp = 0x12;
  p.bth.psn = psn;
  p.payload = data;
  Frame f;
  encode_frame(p, &f);
  return f;
}

// An ARP request from the partner (not RoCE).
Frame arp_frame() {
  Frame f(60);
  wire::EthHdr eth{};
  eth.dst.fill(0xff);
  eth.ethertype.set(0x0806);
  wire::store(std::span(f), 0, eth);
  return f;
}

uint32_t psn_of(const Frame& f) {
  vrnicd::roce::Packet p;
  EXPECT_EQ(vrnicd::roce::decode_frame(f, &p), vrnicd::roce::DecodeStatus::kOk);
  return p.bth.psn;
}

std::vector<Frame> run_faults(const FaultConfig& cfg, const std::vector<Frame>& in,
                              FaultInjector* fi_out = nullptr) {
  FaultInjector fi(cfg);
  std::vector<Frame> out;
  auto sink = [&](std::span<const std::byte> f) { out.emplace_back(f.begin(), f.end()); };
  for (const Frame& f : in) {
    fi.process(f, sink);
  }
  fi.flush(sink);
  if (fi_out != nullptr) {
    fi_out->dropped = fi.dropped;
    fi_out->reordered = fi.reordered;
    fi_out->duplicated = fi.duplicated;
    fi_out->corrupted = fi.corrupted;
  }
  return out;
}

std::vector<Frame> numbered(uint32_t n) {
  std::vector<Frame> in;
  for (uint32_t i = 0; i < n; ++i) {
    in.push_back(roce_frame(i));
  }
  return in;
}

TEST(FaultInjector, NoFaultsPassEverythingInOrder) {
  const auto in = numbered(100);
  EXPECT_EQ(run_faults(FaultConfig{}, in), in);
}

TEST(FaultInjector, DropRateIsRoughlyTheProbabilityAndRepeatable) {
  const auto in = numbered(4000);
  FaultConfig cfg;
  cfg.drop = 0.05;
  cfg.seed = 7;
  FaultInjector counts(cfg);
  const auto a = run_faults(cfg, in, &counts);
  EXPECT_EQ(a.size() + counts.dropped, in.size());
  EXPECT_GT(counts.dropped, 120U);
  EXPECT_LT(counts.dropped, 280U);
  EXPECT_EQ(run_faults(cfg, in), a);  // same seed, same faults
  cfg.seed = 8;
  EXPECT_NE(run_faults(cfg, in), a);
}

TEST(FaultInjector, ReorderSwapsWithTheNextFrame) {
  FaultConfig cfg;
  cfg.reorder = 1;
  const auto out = run_faults(cfg, numbered(4));
  ASSERT_EQ(out.size(), 4U);
  // 0 is held; 1 passes and releases 0; 2 is held; 3 passes, releases 2.
  EXPECT_EQ(psn_of(out[0]), 1U);
  EXPECT_EQ(psn_of(out[1]), 0U);
  EXPECT_EQ(psn_of(out[2]), 3U);
  EXPECT_EQ(psn_of(out[3]), 2U);
}

TEST(FaultInjector, DuplicateDeliversTwice) {
  FaultConfig cfg;
  cfg.dup = 1;
  const auto in = numbered(3);
  const auto out = run_faults(cfg, in);
  ASSERT_EQ(out.size(), 6U);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out[i], in[i / 2]);
  }
}

// A datagram that ends right after its BTH has no byte the corruption
// could flip (and no room for an ICRC): it is lost, and nothing divides by
// the zero bytes after the BTH.
TEST(FaultInjector, CorruptingADatagramThatEndsAtItsBthLosesIt) {
  Frame f = roce_frame(1, 0);
  constexpr size_t kIp = sizeof(wire::EthHdr);
  constexpr size_t kUdp = kIp + sizeof(wire::Ipv4Hdr);
  auto ip = wire::load<wire::Ipv4Hdr>(f, kIp);
  ip.total_length.set(sizeof(wire::Ipv4Hdr) + sizeof(wire::UdpHdr) + sizeof(wire::Bth));
  wire::store(std::span(f), kIp, ip);
  auto udp = wire::load<wire::UdpHdr>(f, kUdp);
  udp.length.set(sizeof(wire::UdpHdr) + sizeof(wire::Bth));
  wire::store(std::span(f), kUdp, udp);
  FaultConfig cfg;
  cfg.corrupt = 1;
  FaultInjector counts(cfg);
  EXPECT_TRUE(run_faults(cfg, {f, f}, &counts).empty());
  EXPECT_EQ(counts.corrupted, 2U);
}

TEST(FaultInjector, CorruptedRoceFailsTheIcrcAndOtherFramesAreLost) {
  FaultConfig cfg;
  cfg.corrupt = 1;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    cfg.seed = seed;
    const Frame f = roce_frame(seed, seed % 5);
    const auto out = run_faults(cfg, {f, arp_frame()});
    ASSERT_EQ(out.size(), 1U);  // the ARP frame failed its FCS
    ASSERT_EQ(out[0].size(), f.size());
    EXPECT_NE(out[0], f);
    vrnicd::roce::Packet p;
    EXPECT_EQ(vrnicd::roce::decode_frame(out[0], &p), vrnicd::roce::DecodeStatus::kBadIcrc)
        << "seed " << seed;
  }
}

TEST(RoceFrame, Recognized) {
  EXPECT_TRUE(vrnicd::is_roce_frame(roce_frame(1)));
  EXPECT_FALSE(vrnicd::is_roce_frame(arp_frame()));
  Frame f = roce_frame(1);
  constexpr size_t kUdp = sizeof(wire::EthHdr) + sizeof(wire::Ipv4Hdr);
  auto udp = wire::load<wire::UdpHdr>(f, kUdp);
  udp.dport.set(4790);  // another UDP port
  wire::store(std::span(f), kUdp, udp);
  EXPECT_FALSE(vrnicd::is_roce_frame(f));
  const Frame whole = roce_frame(1);
  EXPECT_FALSE(vrnicd::is_roce_frame(Frame(whole.begin(), whole.begin() + 40)));  // cut short
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "vrnic-port.XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) = delete;
  TempDir& operator=(TempDir&&) = delete;
  [[nodiscard]] std::string file(const char* name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

TEST(Pcap, WritesEthernetRecords) {
  TempDir dir;
  const auto path = dir.file("cap.pcap");
  const Frame a = roce_frame(1);
  const Frame b = arp_frame();
  {
    vrnicd::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(path, &err)) << err;
    w.write(a);
    w.write(b);
    EXPECT_EQ(w.frames, 2U);
  }
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> raw((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  ASSERT_EQ(raw.size(), 24 + 16 + a.size() + 16 + b.size());
  uint32_t word = 0;
  std::memcpy(&word, raw.data(), 4);
  EXPECT_EQ(word, 0xa1b2c3d4U);
  std::memcpy(&word, raw.data() + 20, 4);
  EXPECT_EQ(word, 1U);  // LINKTYPE_ETHERNET
  std::memcpy(&word, raw.data() + 24 + 8, 4);
  EXPECT_EQ(word, a.size());
  EXPECT_EQ(std::memcmp(raw.data() + 24 + 16, a.data(), a.size()), 0);
  std::memcpy(&word, raw.data() + 24 + 16 + a.size() + 12, 4);
  EXPECT_EQ(word, b.size());
}

// A peer of one of the port's stream sockets.
class Peer {
 public:
  explicit Peer(const std::string& path) {
    fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
    ok_ = ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;  // NOLINT
    const timeval tv{0, 200000};
    ::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  [[nodiscard]] bool ok() const { return ok_; }
  void send(const Frame& f) const {
    const uint32_t len = htonl(static_cast<uint32_t>(f.size()));
    ASSERT_EQ(::write(fd_.get(), &len, 4), 4);
    ASSERT_EQ(::write(fd_.get(), f.data(), f.size()), static_cast<ssize_t>(f.size()));
  }
  // Read frames already sent to us (the caller runs the loop first).
  std::vector<Frame> recv_all() {
    std::array<std::byte, 65536> chunk{};
    ssize_t n = 0;
    while ((n = ::recv(fd_.get(), chunk.data(), chunk.size(), MSG_DONTWAIT)) > 0) {
      buf_.insert(buf_.end(), chunk.begin(), chunk.begin() + n);
    }
    std::vector<Frame> out;
    const auto used = vrnicd::parse_stream_frames(
        buf_, [&](std::span<const std::byte> f) { out.emplace_back(f.begin(), f.end()); });
    EXPECT_TRUE(used.has_value());
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(used.value_or(0)));
    return out;
  }
  void close() { fd_.reset(); }

 private:
  vrnicd::UniqueFd fd_;
  bool ok_ = false;
  std::vector<std::byte> buf_;
};

void spin(vrnicd::EventLoop& loop) {
  for (int i = 0; i < 20; ++i) {
    loop.run_once(5);
  }
}

TEST(EthPortSwitching, RoceForUsToTheEngineEverythingElseAcross) {
  TempDir dir;
  vrnicd::EventLoop loop;
  std::vector<Frame> engine_got;
  std::vector<bool> cable;
  vrnicd::MacAddr mac = kMac;
  EthPort port(
      loop, [&] { return mac; },
      [&](std::span<const std::byte> f) {
        engine_got.emplace_back(f.begin(), f.end());
        return true;
      },
      [&](bool up) { cable.push_back(up); });
  EthPort::Options o;
  o.nic_socket = dir.file("nic");
  o.wire_listen = dir.file("wire");
  o.pcap = dir.file("cap.pcap");
  std::string err;
  ASSERT_TRUE(port.start(o, &err)) << err;
  EXPECT_EQ(cable, std::vector<bool>{false});  // no partner yet

  Peer nic(o.nic_socket);
  Peer wire(o.wire_listen);
  ASSERT_TRUE(nic.ok());
  ASSERT_TRUE(wire.ok());
  spin(loop);
  EXPECT_EQ(cable, (std::vector<bool>{false, true}));

  // Wire → engine (RoCE to our MAC) or NIC (the rest).
  const Frame roce = roce_frame(5);
  Frame roce_other = roce_frame(6);
  roce_other[5] = std::byte{0x09};  // another MAC: the NIC's business
  wire.send(roce);
  wire.send(arp_frame());
  wire.send(roce_other);
  spin(loop);
  EXPECT_EQ(engine_got, std::vector<Frame>{roce});
  EXPECT_EQ(nic.recv_all(), (std::vector<Frame>{arp_frame(), roce_other}));

  // NIC and engine → wire.
  nic.send(arp_frame());
  spin(loop);
  port.engine_tx(roce);
  spin(loop);
  EXPECT_EQ(wire.recv_all(), (std::vector<Frame>{arp_frame(), roce}));
  EXPECT_EQ(port.counters().to_engine, 1U);
  EXPECT_EQ(port.counters().to_nic, 2U);
  EXPECT_EQ(port.counters().wire_tx, 2U);

  // The MAC is read afresh: after a change, RoCE to the old one is not ours.
  mac[5] = 0x42;
  wire.send(roce);
  spin(loop);
  EXPECT_EQ(engine_got.size(), 1U);
  EXPECT_EQ(nic.recv_all().size(), 1U);

  wire.close();
  spin(loop);
  EXPECT_EQ(cable, (std::vector<bool>{false, true, false}));
  port.engine_tx(roce);  // no partner: dropped, not queued
  EXPECT_GE(port.counters().dropped, 1U);
  port.tick();

  // Every frame that crossed the wire is in the capture: 4 in, 2 out.
  std::ifstream in(o.pcap, std::ios::binary);
  const std::vector<char> raw((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  size_t off = 24;
  int records = 0;
  while (off + 16 <= raw.size()) {
    uint32_t len = 0;
    std::memcpy(&len, raw.data() + off + 8, 4);
    off += 16 + len;
    ++records;
  }
  EXPECT_EQ(off, raw.size());
  EXPECT_EQ(records, 6);
}

TEST(EthPortSwitching, ConnectsToAListenerAndRetries) {
  TempDir dir;
  vrnicd::EventLoop loop;
  std::vector<bool> cable;
  EthPort a(
      loop, [] { return kMac; }, [](std::span<const std::byte>) { return false; },
      [&](bool up) { cable.push_back(up); });
  EthPort::Options ao;
  ao.wire_connect = dir.file("wire");
  std::string err;
  ASSERT_TRUE(a.start(ao, &err)) << err;  // nobody listens yet
  spin(loop);
  EXPECT_EQ(cable, std::vector<bool>{false});

  EthPort b(
      loop, [] { return kMac; }, [](std::span<const std::byte>) { return false; }, nullptr);
  EthPort::Options bo;
  bo.wire_listen = ao.wire_connect;
  ASSERT_TRUE(b.start(bo, &err)) << err;
  for (int i = 0; i < 40 && cable.size() < 2; ++i) {
    loop.run_once(10);
  }
  EXPECT_EQ(cable, (std::vector<bool>{false, true}));
}

}  // namespace

namespace {

// A UDP port on 127.0.0.1 that nothing uses right now.
uint16_t free_udp_port() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast)
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST(UdpEndpoint, Parses) {
  sockaddr_storage a{};
  socklen_t len = 0;
  std::string err;
  EXPECT_TRUE(vrnicd::parse_udp_endpoint("127.0.0.1:4791", &a, &len, &err)) << err;
  EXPECT_EQ(a.ss_family, AF_INET);
  EXPECT_TRUE(vrnicd::parse_udp_endpoint("[::1]:6000", &a, &len, &err)) << err;
  EXPECT_EQ(a.ss_family, AF_INET6);
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":5", "::1:5", "[::1]5",
                          "[::1]:", "127.0.0.1:port", "[::1]:99999"}) {
    EXPECT_FALSE(vrnicd::parse_udp_endpoint(bad, &a, &len, &err)) << bad;
  }
}

// Two ports joined by --wire udp:A,B and udp:B,A on loopback: frames cross
// one per datagram, the cable is up at once, and datagrams from anyone but
// the remote end are not taken.
TEST(EthPortSwitching, UdpTunnelCarriesOneFramePerDatagram) {
  vrnicd::EventLoop loop;
  const std::string a = "127.0.0.1:" + std::to_string(free_udp_port());
  const std::string b = "127.0.0.1:" + std::to_string(free_udp_port());
  std::vector<Frame> got_a;
  std::vector<Frame> got_b;
  std::vector<bool> cable_a;
  auto engine = [](std::vector<Frame>* got) {
    return [got](std::span<const std::byte> f) {
      got->emplace_back(f.begin(), f.end());
      return true;
    };
  };
  EthPort pa(
      loop, [] { return kMac; }, engine(&got_a), [&](bool up) { cable_a.push_back(up); });
  EthPort pb(
      loop, [] { return kMac; }, engine(&got_b), [](bool) {});
  EthPort::Options oa;
  oa.wire = "udp:" + a + "," + b;
  EthPort::Options ob;
  ob.wire = "udp:" + b + "," + a;
  std::string err;
  ASSERT_TRUE(pa.start(oa, &err)) << err;
  ASSERT_TRUE(pb.start(ob, &err)) << err;
  EXPECT_EQ(cable_a, std::vector<bool>{true});
  EXPECT_TRUE(pa.wire_connected());
  EXPECT_EQ(pa.wire_name(), "udp:" + a + "," + b);

  const std::vector<Frame> frames = {roce_frame(1), roce_frame(2, 1000), roce_frame(3, 4000)};
  for (const Frame& f : frames) {
    pa.engine_tx(f);
  }
  pb.engine_tx(roce_frame(9));
  for (int i = 0; i < 200 && (got_b.size() < frames.size() || got_a.empty()); ++i) {
    loop.run_once(10);
  }
  EXPECT_EQ(got_b, frames);
  EXPECT_EQ(got_a, std::vector<Frame>{roce_frame(9)});
  EXPECT_EQ(pa.counters().wire_tx, 3U);

  // A datagram from a stranger is not a frame from the wire.
  const int s = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_storage to{};
  socklen_t tlen = 0;
  ASSERT_TRUE(vrnicd::parse_udp_endpoint(b, &to, &tlen, &err));
  const Frame f = roce_frame(7);
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  ASSERT_EQ(::sendto(s, f.data(), f.size(), 0, reinterpret_cast<sockaddr*>(&to), tlen),
            static_cast<ssize_t>(f.size()));
  ::close(s);
  for (int i = 0; i < 20; ++i) {
    loop.run_once(10);
  }
  EXPECT_EQ(got_b.size(), frames.size());
  EXPECT_EQ(pb.counters().wire_rx, frames.size());
}

TEST(EthPortSwitching, WireSpecMustBeTapOrUdp) {
  vrnicd::EventLoop loop;
  EthPort p(
      loop, [] { return kMac; }, [](std::span<const std::byte>) { return true; }, [](bool) {});
  EthPort::Options o;
  o.wire = "udp:127.0.0.1:1";  // no remote
  std::string err;
  EXPECT_FALSE(p.start(o, &err));
  EXPECT_NE(err.find("udp:LOCAL,REMOTE"), std::string::npos) << err;
}

namespace {

// In a network namespace of its own: --wire tap:NAME creates the TAP, and
// frames cross between it and a packet socket on the interface.  Returns
// what failed, or an empty string.
std::string tap_round_trip() {
  if (::unshare(CLONE_NEWNET) != 0) {
    return std::string("unshare: ") + std::strerror(errno);
  }
  vrnicd::EventLoop loop;
  std::vector<Frame> got;
  EthPort port(
      loop, [] { return kMac; },
      [&](std::span<const std::byte> f) {
        got.emplace_back(f.begin(), f.end());
        return true;
      },
      [](bool) {});
  EthPort::Options o;
  o.wire = "tap:vrtest0";
  std::string err;
  if (!port.start(o, &err)) {
    return err;
  }
  vrnicd::UniqueFd sock(::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
  ifreq ifr{};
  std::strcpy(ifr.ifr_name, "vrtest0");  // NOLINT(clang-analyzer-security.insecureAPI.strcpy)
  // NOLINTBEGIN(cppcoreguidelines-pro-type-vararg,cppcoreguidelines-pro-type-union-access)
  if (!sock || ::ioctl(sock.get(), SIOCGIFFLAGS, &ifr) != 0) {
    return "no interface vrtest0";
  }
  ifr.ifr_flags = static_cast<int16_t>(ifr.ifr_flags | IFF_UP);
  if (::ioctl(sock.get(), SIOCSIFFLAGS, &ifr) != 0 ||
      ::ioctl(sock.get(), SIOCGIFINDEX, &ifr) != 0) {
    return "cannot bring vrtest0 up";
  }
  sockaddr_ll ll{};
  ll.sll_family = AF_PACKET;
  ll.sll_protocol = htons(ETH_P_ALL);
  ll.sll_ifindex = ifr.ifr_ifindex;
  // NOLINTEND(cppcoreguidelines-pro-type-vararg,cppcoreguidelines-pro-type-union-access)
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&ll), sizeof(ll)) != 0) {
    return "cannot bind a packet socket to vrtest0";
  }
  // vrnicd -> the interface.
  const Frame out = roce_frame(11, 200);
  port.engine_tx(out);
  loop.run_once(0);
  bool seen = false;
  Frame buf(2048);
  for (int i = 0; i < 50 && !seen; ++i) {
    const ssize_t n = ::recv(sock.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) {
      seen = Frame(buf.begin(), buf.begin() + n) == out;
    } else {
      ::usleep(10000);
    }
  }
  if (!seen) {
    return "the frame vrnicd sent did not come out of vrtest0";
  }
  // The interface -> vrnicd's engine.
  const Frame in = roce_frame(12, 300);
  if (::send(sock.get(), in.data(), in.size(), 0) != static_cast<ssize_t>(in.size())) {
    return "cannot send on vrtest0";
  }
  for (int i = 0; i < 50 && got.empty(); ++i) {
    loop.run_once(10);
  }
  if (got != std::vector<Frame>{in}) {
    return "the frame sent on vrtest0 did not reach the engine";
  }
  return "";
}

}  // namespace

TEST(EthPortSwitching, TapWireExchangesFramesWithTheHost) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root, for a network namespace and a TAP device";
  }
  int pipefd[2];  // NOLINT(cppcoreguidelines-avoid-c-arrays)
  ASSERT_EQ(::pipe(pipefd), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipefd[0]);
    const std::string why = tap_round_trip();
    (void)!::write(pipefd[1], why.data(), why.size());
    ::_exit(why.empty() ? 0 : 1);
  }
  ::close(pipefd[1]);
  std::string why(512, '\0');
  const ssize_t n = ::read(pipefd[0], why.data(), why.size());
  why.resize(n > 0 ? static_cast<size_t>(n) : 0);
  ::close(pipefd[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  if (why.starts_with("unshare:")) {
    GTEST_SKIP() << why;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << why;
}

// A capture holds what the guests said, keys and all (issue 24, defect
// 7): it is created 0600 whatever the umask, through no symbolic link,
// and not into a file another user made.
TEST(Pcap, CaptureIsTheUsersAlone) {
  char dir[] = "/tmp/vrnic-pcap-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string file = std::string(dir) + "/wire.pcap";
  const std::string link = std::string(dir) + "/link.pcap";
  const std::string target = std::string(dir) + "/target";
  std::string err;
  const mode_t old = umask(0);
  {
    vrnicd::PcapWriter w;
    ASSERT_TRUE(w.open(file, &err)) << err;
  }
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);

  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  {
    vrnicd::PcapWriter w;
    EXPECT_FALSE(w.open(link, &err));
  }
  EXPECT_NE(stat(target.c_str(), &st), 0) << "the capture followed the link";

  if (geteuid() == 0) {
    ASSERT_EQ(chown(file.c_str(), 65534, 65534), 0);
    vrnicd::PcapWriter w;
    EXPECT_FALSE(w.open(file, &err));
    EXPECT_NE(err.find("owned by uid 65534"), std::string::npos) << err;
  }
  unlink(link.c_str());
  unlink(file.c_str());
  rmdir(dir);
}
