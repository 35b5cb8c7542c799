// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "wire/eth_port.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>

#include "base/log.h"
#include "base/unix_socket.h"
#include "roce/packet.h"

namespace vrnicd {

namespace {

// Where the BTH of a RoCEv2 frame starts and where its IP datagram ends.
std::optional<roce::FrameBounds> roce_bounds(std::span<const std::byte> f) {
  roce::Path path;
  roce::FrameBounds b;
  if (roce::locate_frame(f, &path, &b) != roce::DecodeStatus::kOk) {
    return std::nullopt;
  }
  return b;
}

// The group bit of a MAC address: multicast or broadcast.
bool is_multicast(const MacAddr& mac) { return (mac[0] & 1U) != 0; }

}  // namespace

bool is_roce_frame(std::span<const std::byte> frame) { return roce_bounds(frame).has_value(); }

// ---------------------------------------------------------------------------
// Fault injection

FaultInjector::FaultInjector(const FaultConfig& cfg) : cfg_(cfg), rng_(cfg.seed) {}

void FaultInjector::set_config(const FaultConfig& cfg) {
  cfg_ = cfg;
  rng_.seed(cfg.seed);
}

bool FaultInjector::chance(double p) {
  if (p <= 0) {
    return false;
  }
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
}

void FaultInjector::process(std::span<const std::byte> frame, const Sink& out) {
  // Every decision is drawn for every frame, so that a seed gives the
  // same faults for the same traffic whatever the probabilities.
  const bool drop = chance(cfg_.drop);
  const bool corrupt = chance(cfg_.corrupt);
  const bool dup = chance(cfg_.dup);
  const bool reorder = chance(cfg_.reorder);
  const uint64_t where = rng_();
  const auto flip = static_cast<std::byte>((rng_() % 255) + 1);

  if (drop) {
    ++dropped;
    return;
  }
  std::span<const std::byte> f = frame;
  if (corrupt) {
    const auto b = roce_bounds(frame);
    ++corrupted;
    if (!b) {
      return;  // the FCS would fail: gone
    }
    // Past the BTH nothing is masked out of the ICRC, so the ICRC check
    // must catch the flipped byte.  There is at least the ICRC after it.
    const size_t from = b->bth + sizeof(roce::wire::Bth);
    scratch_.assign(frame.begin(), frame.end());
    scratch_[from + (where % (b->end - from))] ^= flip;
    f = scratch_;
  }
  if (reorder && !holding_) {
    ++reordered;
    held_.assign(f.begin(), f.end());
    holding_ = true;
    return;
  }
  out(f);
  if (dup) {
    ++duplicated;
    out(f);
  }
  flush(out);
}

bool FaultInjector::flush(const Sink& out) {
  if (!holding_) {
    return false;
  }
  holding_ = false;
  std::vector<std::byte> f = std::move(held_);
  held_.clear();
  out(f);
  return true;
}

// ---------------------------------------------------------------------------
// Capture

PcapWriter::~PcapWriter() { flush(); }

bool PcapWriter::open(const std::string& path, std::string* err) {
  // A capture holds what the guests said, keys included: the user's
  // alone, and never through a link someone else planted.
  fd_.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd_) {
    *err = path + ": " + std::strerror(errno);
    return false;
  }
  if (!owner_is_trusted(fd_.get(), path, err)) {
    fd_.reset();
    return false;
  }
  if (::fchmod(fd_.get(), 0600) != 0 || ::ftruncate(fd_.get(), 0) != 0) {
    *err = path + ": " + std::strerror(errno);
    fd_.reset();
    return false;
  }
  struct {
    uint32_t magic = 0xa1b2c3d4;
    uint16_t major = 2;
    uint16_t minor = 4;
    int32_t thiszone = 0;
    uint32_t sigfigs = 0;
    uint32_t snaplen = StreamLink::kMaxFrame;
    uint32_t linktype = 1;  // LINKTYPE_ETHERNET
  } hdr;
  static_assert(sizeof(hdr) == 24);
  const auto* p = reinterpret_cast<const std::byte*>(&hdr);  // NOLINT
  buf_.assign(p, p + sizeof(hdr));  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
  flush();
  if (!fd_) {
    *err = path + ": cannot write";
    return false;
  }
  return true;
}

void PcapWriter::write(std::span<const std::byte> frame) {
  if (!fd_) {
    return;
  }
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  const std::array<uint32_t, 4> rec = {
      static_cast<uint32_t>(tv.tv_sec), static_cast<uint32_t>(tv.tv_usec),
      static_cast<uint32_t>(frame.size()), static_cast<uint32_t>(frame.size())};
  const auto hdr = std::as_bytes(std::span(rec));
  buf_.insert(buf_.end(), hdr.begin(), hdr.end());
  buf_.insert(buf_.end(), frame.begin(), frame.end());
  ++frames;
  if (buf_.size() >= kFlushAt) {
    flush();
  }
}

void PcapWriter::flush() {
  size_t off = 0;
  while (fd_ && off < buf_.size()) {
    const ssize_t n = ::write(fd_.get(), buf_.data() + off, buf_.size() - off);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      LOG_WARN("pcap: write failed (%s); capture stopped", std::strerror(errno));
      fd_.reset();
      break;
    }
    off += static_cast<size_t>(n);
  }
  buf_.clear();
}

// ---------------------------------------------------------------------------
// The port

EthPort::EthPort(EventLoop& loop, MacSource mac, EngineRx engine_rx, CableHandler cable)
    : loop_(loop),
      mac_(std::move(mac)),
      engine_rx_(std::move(engine_rx)),
      cable_(std::move(cable)) {}

EthPort::~EthPort() {
  if (pcap_) {
    pcap_->flush();
  }
}

bool EthPort::start(const Options& o, std::string* err) {
  if (!o.pcap.empty()) {
    pcap_ = std::make_unique<PcapWriter>();
    if (!pcap_->open(o.pcap, err)) {
      return false;
    }
  }
  if (o.faults.any()) {
    faults_ = std::make_unique<FaultInjector>(o.faults);
  }
  if (!o.nic_socket.empty() || !o.nic_connect.empty()) {
    nic_ = std::make_unique<StreamLink>(loop_, "nic",
                                        [this](std::span<const std::byte> f) { nic_rx(f); });
    const bool ok = o.nic_socket.empty() ? nic_->connect(o.nic_connect, 100, err)
                                         : nic_->listen(o.nic_socket, err);
    if (!ok) {
      *err = "NIC link: " + *err;
      return false;
    }
  }
  if (!o.wire.empty() && !open_datagram_wire(o.wire, err)) {
    return false;
  }
  if (!o.wire_listen.empty() || !o.wire_connect.empty()) {
    wire_ = std::make_unique<StreamLink>(
        loop_, "wire", [this](std::span<const std::byte> f) { wire_rx(f); },
        [this](bool up) {
          if (!up && faults_) {
            faults_->flush([](std::span<const std::byte>) {});  // lost with the link
          }
          if (cable_) {
            cable_(up);
          }
        });
    const bool ok = o.wire_listen.empty() ? wire_->connect(o.wire_connect, 100, err)
                                          : wire_->listen(o.wire_listen, err);
    if (!ok) {
      *err = "wire: " + *err;
      return false;
    }
    // No partner yet: the cable is out until one connects.
    if (cable_ && !wire_->connected()) {
      cable_(false);
    }
  }
  schedule_ticks();
  return true;
}

// --wire tap:NAME or udp:LOCAL,REMOTE.  The cable is up while it is open.
bool EthPort::open_datagram_wire(const std::string& spec, std::string* err) {
  dgram_ =
      std::make_unique<DatagramLink>(loop_, [this](std::span<const std::byte> f) { wire_rx(f); });
  bool ok = false;
  if (spec.starts_with("tap:")) {
    ok = dgram_->open_tap(spec.substr(4), err);
  } else if (spec.starts_with("udp:") && spec.find(',') != std::string::npos) {
    const size_t comma = spec.find(',');
    ok = dgram_->open_udp(spec.substr(4, comma - 4), spec.substr(comma + 1), err);
  } else {
    *err = "--wire " + spec + ": want tap:NAME or udp:LOCAL,REMOTE";
  }
  if (!ok) {
    dgram_.reset();
    return false;
  }
  LOG_INFO("wire: %s", dgram_->describe().c_str());
  if (cable_) {
    cable_(true);
  }
  return true;
}

// A held frame must not wait for long on an idle link, nor a capture.
void EthPort::schedule_ticks() {
  const uint32_t want = faults_ && faults_->config().reorder > 0 ? 2 : pcap_ ? 100 : 0;
  if (want == tick_ms_) {
    return;
  }
  if (tick_timer_ >= 0) {
    loop_.remove_timer(tick_timer_);
    tick_timer_ = -1;
  }
  tick_ms_ = want;
  if (want != 0) {
    tick_timer_ = loop_.add_timer(want, [this] { tick(); });
  }
}

void EthPort::set_faults(const FaultConfig& f) {
  if (faults_) {
    faults_->flush([this](std::span<const std::byte> fr) { ingress(fr); });
    faults_->set_config(f);
  } else if (f.any()) {
    faults_ = std::make_unique<FaultInjector>(f);
  }
  schedule_ticks();
}

void EthPort::tick() {
  if (faults_) {
    faults_->flush([this](std::span<const std::byte> f) { ingress(f); });
  }
  if (pcap_) {
    pcap_->flush();
  }
}

void EthPort::wire_send(std::span<const std::byte> frame) {
  if (!wire_connected()) {
    ++c_.dropped;
    return;
  }
  if (pcap_) {
    pcap_->write(frame);
  }
  if (dgram_ ? dgram_->send(frame) : wire_->send(frame)) {
    ++c_.wire_tx;
  } else {
    ++c_.link_full;
  }
}

void EthPort::engine_tx(std::span<const std::byte> frame) {
  ++c_.from_engine;
  wire_send(frame);
}

void EthPort::hold_wire() noexcept {
  if (wire_) {
    wire_->hold();
  } else if (dgram_) {
    dgram_->hold();
  }
}

void EthPort::release_wire() {
  if (wire_) {
    wire_->release();
  } else if (dgram_) {
    // Held datagrams the kernel did not take were counted as sent.
    const uint64_t dropped = dgram_->tx_dropped;
    dgram_->release();
    const uint64_t late = dgram_->tx_dropped - dropped;
    c_.wire_tx -= late;
    c_.link_full += late;
  }
}

void EthPort::nic_rx(std::span<const std::byte> frame) {
  ++c_.from_nic;
  wire_send(frame);
}

void EthPort::wire_rx(std::span<const std::byte> frame) {
  if (faults_) {
    faults_->process(frame, [this](std::span<const std::byte> f) { ingress(f); });
  } else {
    ingress(frame);
  }
}

void EthPort::ingress(std::span<const std::byte> frame) {
  ++c_.wire_rx;
  if (pcap_) {
    pcap_->write(frame);
  }
  if (frame.size() >= sizeof(roce::wire::EthHdr)) {
    const MacAddr dst = roce::wire::load<roce::wire::EthHdr>(frame, 0).dst;
    if ((dst == mac_() || is_multicast(dst)) && is_roce_frame(frame) && engine_rx_(frame)) {
      ++c_.to_engine;
      return;
    }
  }
  if (!nic_ || !nic_->connected()) {
    ++c_.dropped;
  } else if (nic_->send(frame)) {
    ++c_.to_nic;
  } else {
    ++c_.link_full;
  }
}

}  // namespace vrnicd
