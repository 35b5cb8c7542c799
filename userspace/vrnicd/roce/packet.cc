// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "roce/packet.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "roce/headers.h"

namespace vrnicd::roce {
namespace {

constexpr OpcodeInfo info(OpKind kind, uint16_t bits) { return OpcodeInfo{kind, bits}; }

constexpr uint16_t kFirst = kIsFirst;
constexpr uint16_t kLast = kIsLast;
constexpr uint16_t kOnly = kIsFirst | kIsLast;
constexpr uint16_t kPay = kHasPayload;

// Operations of RC, indexed by the low five opcode bits.
constexpr std::array<OpcodeInfo, 32> kRcOps = [] {
  std::array<OpcodeInfo, 32> t{};
  t[kSendFirst] = info(OpKind::kSend, kFirst | kPay);
  t[kSendMiddle] = info(OpKind::kSend, kPay);
  t[kSendLast] = info(OpKind::kSend, kLast | kPay);
  t[kSendLastImm] = info(OpKind::kSend, kLast | kPay | kHasImm);
  t[kSendOnly] = info(OpKind::kSend, kOnly | kPay);
  t[kSendOnlyImm] = info(OpKind::kSend, kOnly | kPay | kHasImm);
  t[kWriteFirst] = info(OpKind::kWrite, kFirst | kPay | kHasReth);
  t[kWriteMiddle] = info(OpKind::kWrite, kPay);
  t[kWriteLast] = info(OpKind::kWrite, kLast | kPay);
  t[kWriteLastImm] = info(OpKind::kWrite, kLast | kPay | kHasImm);
  t[kWriteOnly] = info(OpKind::kWrite, kOnly | kPay | kHasReth);
  t[kWriteOnlyImm] = info(OpKind::kWrite, kOnly | kPay | kHasReth | kHasImm);
  t[kReadRequest] = info(OpKind::kReadRequest, kOnly | kHasReth);
  t[kReadResponseFirst] = info(OpKind::kReadResponse, kFirst | kPay | kHasAeth);
  t[kReadResponseMiddle] = info(OpKind::kReadResponse, kPay);
  t[kReadResponseLast] = info(OpKind::kReadResponse, kLast | kPay | kHasAeth);
  t[kReadResponseOnly] = info(OpKind::kReadResponse, kOnly | kPay | kHasAeth);
  t[kAcknowledge] = info(OpKind::kAck, kOnly | kHasAeth);
  t[kAtomicAcknowledge] = info(OpKind::kAtomicAck, kOnly | kHasAeth | kHasAtomicAckEth);
  t[kCompareSwap] = info(OpKind::kAtomic, kOnly | kHasAtomicEth);
  t[kFetchAdd] = info(OpKind::kAtomic, kOnly | kHasAtomicEth);
  t[kSendLastInv] = info(OpKind::kSend, kLast | kPay | kHasIeth);
  t[kSendOnlyInv] = info(OpKind::kSend, kOnly | kPay | kHasIeth);
  t[kFlush] = info(OpKind::kFlush, kOnly | kHasFeth | kHasReth);
  t[kAtomicWrite] = info(OpKind::kAtomicWrite, kOnly | kPay | kHasReth);
  return t;
}();

// UC has RC's sends and writes, nothing else.
constexpr std::array<OpcodeInfo, 32> kUcOps = [] {
  std::array<OpcodeInfo, 32> t{};
  for (uint8_t op = kSendFirst; op <= kWriteOnlyImm; ++op) {
    t[op] = kRcOps[op];
  }
  return t;
}();

// UD has SEND_ONLY and SEND_ONLY_WITH_IMMEDIATE, with a DETH.
constexpr std::array<OpcodeInfo, 32> kUdOps = [] {
  std::array<OpcodeInfo, 32> t{};
  t[kSendOnly] = info(OpKind::kSend, kOnly | kPay | kHasDeth);
  t[kSendOnlyImm] = info(OpKind::kSend, kOnly | kPay | kHasDeth | kHasImm);
  return t;
}();

constexpr OpcodeInfo kInvalidOp{};

// The IPv4 header checksum: 0 over a header whose checksum is right.
uint16_t ipv4_checksum(const wire::Ipv4Hdr& h) {
  std::array<uint8_t, sizeof(h)> raw{};
  std::memcpy(raw.data(), &h, sizeof(h));
  uint32_t sum = 0;
  for (size_t i = 0; i < raw.size(); i += 2) {
    sum += static_cast<uint32_t>(raw[i] << 8 | raw[i + 1]);
  }
  while ((sum >> 16) != 0) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

Gid ipv4_mapped(const std::array<uint8_t, 4>& addr) {
  Gid g{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  std::copy(addr.begin(), addr.end(), g.begin() + 12);
  return g;
}

}  // namespace

const OpcodeInfo& opcode_info(uint8_t opcode) noexcept {
  switch (transport_of(opcode)) {
    case Transport::kRc:
      return kRcOps[operation_of(opcode)];
    case Transport::kUc:
      return kUcOps[operation_of(opcode)];
    case Transport::kUd:
      return kUdOps[operation_of(opcode)];
    default:
      return kInvalidOp;
  }
}

const char* opcode_name(uint8_t opcode) noexcept {
  static constexpr std::array<const char*, 32> kNames = {"SEND_FIRST",
                                                         "SEND_MIDDLE",
                                                         "SEND_LAST",
                                                         "SEND_LAST_IMM",
                                                         "SEND_ONLY",
                                                         "SEND_ONLY_IMM",
                                                         "WRITE_FIRST",
                                                         "WRITE_MIDDLE",
                                                         "WRITE_LAST",
                                                         "WRITE_LAST_IMM",
                                                         "WRITE_ONLY",
                                                         "WRITE_ONLY_IMM",
                                                         "READ_REQUEST",
                                                         "READ_RESPONSE_FIRST",
                                                         "READ_RESPONSE_MIDDLE",
                                                         "READ_RESPONSE_LAST",
                                                         "READ_RESPONSE_ONLY",
                                                         "ACKNOWLEDGE",
                                                         "ATOMIC_ACKNOWLEDGE",
                                                         "COMPARE_SWAP",
                                                         "FETCH_ADD",
                                                         "RESERVED_15",
                                                         "SEND_LAST_INV",
                                                         "SEND_ONLY_INV",
                                                         "RESERVED_18",
                                                         "RESERVED_19",
                                                         "RESERVED_1A",
                                                         "RESERVED_1B",
                                                         "FLUSH",
                                                         "ATOMIC_WRITE",
                                                         "RESERVED_1E",
                                                         "RESERVED_1F"};
  if (opcode_info(opcode).kind == OpKind::kInvalid) {
    return "INVALID";
  }
  return kNames[operation_of(opcode)];
}

size_t ext_headers_size(uint16_t bits) noexcept {
  size_t n = 0;
  n += (bits & kHasFeth) != 0 ? sizeof(wire::Feth) : 0;
  n += (bits & kHasDeth) != 0 ? sizeof(wire::Deth) : 0;
  n += (bits & kHasReth) != 0 ? sizeof(wire::Reth) : 0;
  n += (bits & kHasAtomicEth) != 0 ? sizeof(wire::AtomicEth) : 0;
  n += (bits & kHasAeth) != 0 ? sizeof(wire::Aeth) : 0;
  n += (bits & kHasAtomicAckEth) != 0 ? sizeof(wire::AtomicAckEth) : 0;
  n += (bits & kHasImm) != 0 ? sizeof(wire::ImmDt) : 0;
  n += (bits & kHasIeth) != 0 ? sizeof(wire::Ieth) : 0;
  return n;
}

bool gid_is_ipv4_mapped(const Gid& gid) noexcept {
  static constexpr std::array<uint8_t, 12> kPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::equal(kPrefix.begin(), kPrefix.end(), gid.begin());
}

bool gid_is_multicast(const Gid& gid) noexcept {
  if (gid_is_ipv4_mapped(gid)) {
    return (gid[12] & 0xf0) == 0xe0;
  }
  return gid[0] == 0xff;
}

// ---------------------------------------------------------------------------
// The ICRC (IBA annex A17): CRC-32 over 64 bits of ones (the masked LRH),
// the IP and UDP headers and the BTH with their variant fields masked to
// ones, then everything after the BTH up to the ICRC.

uint32_t crc32_update(uint32_t crc, std::span<const std::byte> bytes) noexcept {
  // ISA-L picks the widest carry-less multiply the CPU has (PCLMULQDQ,
  // VPCLMULQDQ) at run time.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): ISA-L takes bytes
  return crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

uint32_t compute_icrc(std::span<const std::byte> frame, size_t l3, size_t bth, size_t end,
                      Network net) {
  std::array<std::byte, sizeof(wire::Ipv6Hdr) + sizeof(wire::UdpHdr) + sizeof(wire::Bth)> pseudo{};
  const std::span<std::byte> out(pseudo);
  size_t len = 0;
  if (net == Network::kIpv4) {
    auto ip = wire::load<wire::Ipv4Hdr>(frame, l3);
    ip.tos = 0xff;
    ip.ttl = 0xff;
    ip.checksum.set_ones();
    wire::store(out, 0, ip);
    len = sizeof(ip);
  } else {
    // IPv6, or RoCEv1's GRH, which IBA masks the same way: traffic class,
    // flow label and hop limit; the version stays.
    auto ip = wire::load<wire::Ipv6Hdr>(frame, l3);
    ip.version_class_flow.set(wire::get32(ip.version_class_flow) |
                              ((1U << wire::kIpv6VersionShift) - 1));
    ip.hop_limit = 0xff;
    wire::store(out, 0, ip);
    len = sizeof(ip);
  }
  if (net != Network::kRoceV1) {
    auto u = wire::load<wire::UdpHdr>(frame, l3 + len);
    u.checksum.set_ones();
    wire::store(out, len, u);
    len += sizeof(u);
  }
  auto b = wire::load<wire::Bth>(frame, bth);
  b.fecn_becn = 0xff;
  wire::store(out, len, b);
  const size_t masked_len = len + sizeof(b);

  // The 64 bits of ones are the same in every frame: their CRC is taken once.
  static const uint32_t kOnesCrc = [] {
    std::array<std::byte, 8> ones{};
    ones.fill(std::byte{0xff});
    return crc32_update(0, ones);
  }();
  uint32_t crc = crc32_update(kOnesCrc, std::span(pseudo).first(masked_len));
  return crc32_update(crc, frame.subspan(bth + sizeof(wire::Bth), end - (bth + sizeof(wire::Bth))));
}

// ---------------------------------------------------------------------------
// Building

namespace {

// Ethernet, with an 802.1Q tag when the path has a VLAN.  Returns where the
// IP header starts.
size_t put_l2(std::span<std::byte> f, const Path& path) {
  wire::EthHdr eth{};
  eth.dst = path.dmac;
  eth.src = path.smac;
  const uint16_t ethertype = path.roce_v1 ? wire::kEtherTypeRoceV1
                             : path.ipv4  ? wire::kEtherTypeIpv4
                                          : wire::kEtherTypeIpv6;
  if (path.vlan == kNoVlan) {
    eth.ethertype.set(ethertype);
    wire::store(f, 0, eth);
    return sizeof(eth);
  }
  eth.ethertype.set(wire::kEtherTypeVlan);
  wire::store(f, 0, eth);
  wire::VlanTag tag{};
  tag.tci.set(path.vlan & wire::kVlanIdMask);
  tag.ethertype.set(ethertype);
  wire::store(f, sizeof(eth), tag);
  return sizeof(eth) + sizeof(tag);
}

// IPv4 or IPv6 carrying udp_len bytes of UDP, or RoCEv1's GRH carrying
// that many bytes of BTH and on.  Returns the header's size.
size_t put_l3(std::span<std::byte> f, size_t off, const Path& path, size_t udp_len) {
  if (path.ipv4 && !path.roce_v1) {
    wire::Ipv4Hdr ip{};
    ip.version_ihl = wire::kIpv4VersionIhl;
    ip.tos = path.traffic_class;
    ip.total_length.set(sizeof(ip) + udp_len);
    ip.frag.set(wire::kIpv4DontFragment);
    ip.ttl = path.hop_limit;
    ip.protocol = wire::kIpProtoUdp;
    std::copy(path.sgid.begin() + 12, path.sgid.end(), ip.saddr.begin());
    std::copy(path.dgid.begin() + 12, path.dgid.end(), ip.daddr.begin());
    ip.checksum.set(ipv4_checksum(ip));
    wire::store(f, off, ip);
    return sizeof(ip);
  }
  wire::Ipv6Hdr ip{};
  ip.version_class_flow.set(wire::ipv6_word0(path.traffic_class, path.flow_label));
  ip.payload_length.set(udp_len);
  ip.next_header = path.roce_v1 ? wire::kGrhNextHeaderBth : wire::kIpProtoUdp;
  ip.hop_limit = path.hop_limit;
  ip.saddr = path.sgid;
  ip.daddr = path.dgid;
  wire::store(f, off, ip);
  return sizeof(ip);
}

void put_bth(std::span<std::byte> f, size_t off, const Bth& b, size_t pad) {
  wire::Bth h{};
  h.opcode = b.opcode;
  h.flags = static_cast<uint8_t>((b.solicited ? wire::kBthSolicited : 0) |
                                 (b.mig_req ? wire::kBthMigReq : 0) |
                                 (pad << wire::kBthPadShift));  // version 0
  h.pkey.set(b.pkey);
  h.fecn_becn = b.becn ? wire::kBthBecn : 0;
  h.dest_qp.set(b.dest_qp & kQpnMask);
  h.ack_req = b.ack_req ? wire::kBthAckReq : 0;
  h.psn.set(b.psn & kPsnMask);
  wire::store(f, off, h);
}

// The extended headers the opcode calls for, in the order IBA defines.
void put_ext(std::span<std::byte> f, size_t off, const Packet& pkt, uint16_t bits) {
  if ((bits & kHasFeth) != 0) {
    wire::Feth h{};
    h.bits.set(pkt.feth & kFethMask);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasDeth) != 0) {
    wire::Deth h{};
    h.qkey.set(pkt.deth.qkey);
    h.src_qp.set(pkt.deth.src_qp & kQpnMask);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasReth) != 0) {
    wire::Reth h{};
    h.va.set(pkt.reth.va);
    h.rkey.set(pkt.reth.rkey);
    h.dma_length.set(pkt.reth.length);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasAtomicEth) != 0) {
    wire::AtomicEth h{};
    h.va.set(pkt.atomic.va);
    h.rkey.set(pkt.atomic.rkey);
    h.swap_add.set(pkt.atomic.swap_add);
    h.compare.set(pkt.atomic.compare);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasAeth) != 0) {
    wire::Aeth h{};
    h.syndrome = pkt.aeth_syndrome;
    h.msn.set(pkt.aeth_msn & kPsnMask);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasAtomicAckEth) != 0) {
    wire::AtomicAckEth h{};
    h.original.set(pkt.atomic_ack);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasImm) != 0) {
    wire::ImmDt h{};
    h.imm.set(pkt.imm);
    wire::store(f, off, h);
    off += sizeof(h);
  }
  if ((bits & kHasIeth) != 0) {
    wire::Ieth h{};
    h.rkey.set(pkt.ieth);
    wire::store(f, off, h);
  }
}

}  // namespace

FrameLayout frame_layout(const Packet& pkt, size_t payload_len) noexcept {
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  const Path& path = pkt.path;
  const size_t l2 = sizeof(wire::EthHdr) + (path.vlan != kNoVlan ? sizeof(wire::VlanTag) : 0);
  FrameLayout lay;
  lay.net = path.roce_v1 ? Network::kRoceV1 : path.ipv4 ? Network::kIpv4 : Network::kIpv6;
  const size_t l3_len = lay.net == Network::kIpv4 ? sizeof(wire::Ipv4Hdr) : sizeof(wire::Ipv6Hdr);
  const size_t udp_hdr = lay.net == Network::kRoceV1 ? 0 : sizeof(wire::UdpHdr);
  const size_t pad = (4 - (payload_len & 3)) & 3;
  lay.l3 = l2;
  lay.bth = l2 + l3_len + udp_hdr;
  lay.payload = lay.bth + sizeof(wire::Bth) + ext_headers_size(oi.bits);
  lay.payload_len = payload_len;
  lay.icrc = lay.payload + payload_len + pad;
  return lay;
}

size_t frame_size(const Packet& pkt, size_t payload_len) noexcept {
  return frame_layout(pkt, payload_len).icrc + wire::kIcrcSize;
}

FrameLayout build_frame(const Packet& pkt, size_t payload_len, std::vector<std::byte>* out) {
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  const Path& path = pkt.path;
  const FrameLayout lay = frame_layout(pkt, payload_len);
  const size_t pad = lay.icrc - lay.payload - payload_len;
  const size_t l3_len = lay.net == Network::kIpv4 ? sizeof(wire::Ipv4Hdr) : sizeof(wire::Ipv6Hdr);
  const size_t udp_hdr = lay.net == Network::kRoceV1 ? 0 : sizeof(wire::UdpHdr);
  // What follows the IP header (RoCEv1: the GRH), up to the ICRC's end.
  const size_t udp_len = lay.icrc + wire::kIcrcSize - lay.l3 - l3_len;

  // A pooled buffer comes with an old frame's bytes.  Only the payload is
  // left as it is, for the caller to overwrite: the rest is cleared.
  out->resize(lay.icrc + wire::kIcrcSize);
  const std::span<std::byte> f(*out);
  std::fill_n(f.begin(), lay.payload, std::byte{0});
  std::fill(f.begin() + static_cast<std::ptrdiff_t>(lay.payload + payload_len), f.end(),
            std::byte{0});

  put_l2(f, path);
  put_l3(f, lay.l3, path, udp_len);
  if (udp_hdr != 0) {
    // UDP checksum 0: RoCEv2 relies on the ICRC.
    wire::UdpHdr udp{};
    udp.sport.set(path.udp_sport);
    udp.dport.set(kUdpPort);
    udp.length.set(udp_len);
    wire::store(f, lay.l3 + l3_len, udp);
  }
  put_bth(f, lay.bth, pkt.bth, pad);
  put_ext(f, lay.bth + sizeof(wire::Bth), pkt, oi.bits);
  return lay;
}

void seal_frame(std::span<std::byte> frame, const FrameLayout& lay) {
  const uint32_t icrc = compute_icrc(frame, lay.l3, lay.bth, lay.icrc, lay.net);
  // The ICRC goes on the wire least significant byte first.
  for (size_t i = 0; i < wire::kIcrcSize; ++i) {
    frame[lay.icrc + i] = std::byte(icrc >> (8 * i));
  }
}

namespace {

// The path a received frame's headers give, for a frame built from sent:
// only what the headers can carry.  Returns the size of its network
// header (IPv4, IPv6 or the GRH).
size_t received_path(const Path& sent, Path* r) {
  *r = sent;
  if (r->vlan != kNoVlan) {
    r->vlan &= wire::kVlanIdMask;
  }
  if (r->roce_v1) {
    r->ipv4 = false;
    r->udp_sport = 0;
    r->flow_label &= wire::kIpv6FlowLabelMask;
    return sizeof(wire::Ipv6Hdr);  // the GRH
  }
  if (!r->ipv4) {
    r->flow_label &= wire::kIpv6FlowLabelMask;
    return sizeof(wire::Ipv6Hdr);
  }
  r->flow_label = 0;
  const auto ip4 = [](const Gid& g) {
    std::array<uint8_t, 4> a{};
    std::copy(g.begin() + 12, g.end(), a.begin());
    return ipv4_mapped(a);
  };
  r->sgid = ip4(sent.sgid);
  r->dgid = ip4(sent.dgid);
  return sizeof(wire::Ipv4Hdr);
}

}  // namespace

Packet received_view(const Packet& sent, std::span<const std::byte> frame,
                     const FrameLayout& layout) {
  Packet r;
  const size_t l4 = layout.l3 + received_path(sent.path, &r.path);
  r.bth = sent.bth;
  r.bth.pad = static_cast<uint8_t>((4 - (layout.payload_len & 3)) & 3);
  r.bth.dest_qp &= kQpnMask;
  r.bth.psn &= kPsnMask;
  const uint16_t bits = opcode_info(sent.bth.opcode).bits;
  if ((bits & kHasFeth) != 0) {
    r.feth = sent.feth & kFethMask;
  }
  if ((bits & kHasDeth) != 0) {
    r.deth = {sent.deth.qkey, sent.deth.src_qp & kQpnMask};
  }
  if ((bits & kHasReth) != 0) {
    r.reth = sent.reth;
  }
  if ((bits & kHasAtomicEth) != 0) {
    r.atomic = sent.atomic;
  }
  if ((bits & kHasAeth) != 0) {
    r.aeth_syndrome = sent.aeth_syndrome;
    r.aeth_msn = sent.aeth_msn & kPsnMask;
  }
  if ((bits & kHasAtomicAckEth) != 0) {
    r.atomic_ack = sent.atomic_ack;
  }
  if ((bits & kHasImm) != 0) {
    r.imm = sent.imm;
  }
  if ((bits & kHasIeth) != 0) {
    r.ieth = sent.ieth;
  }
  r.payload = frame.subspan(layout.payload, layout.payload_len);
  r.l3 = frame.subspan(layout.l3, l4 - layout.l3);
  return r;
}

void encode_frame(const Packet& pkt, std::vector<std::byte>* out) {
  const FrameLayout lay = build_frame(pkt, pkt.payload.size(), out);
  if (!pkt.payload.empty()) {
    std::memcpy(out->data() + lay.payload, pkt.payload.data(), pkt.payload.size());
  }
  seal_frame(*out, lay);
}

const char* decode_status_name(DecodeStatus s) noexcept {
  switch (s) {
    case DecodeStatus::kOk:
      return "ok";
    case DecodeStatus::kNotRoce:
      return "not RoCEv2";
    case DecodeStatus::kMalformed:
      return "malformed";
    case DecodeStatus::kBadIcrc:
      return "bad ICRC";
    case DecodeStatus::kBadOpcode:
      return "bad opcode";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Decoding.  Every length is checked against the frame before the header
// it covers is read.

namespace {

// Ethernet and an optional 802.1Q tag: the EtherType and where L3 starts.
DecodeStatus parse_l2(std::span<const std::byte> f, Path* path, uint16_t* ethertype, size_t* l3) {
  if (f.size() < sizeof(wire::EthHdr)) {
    return DecodeStatus::kNotRoce;
  }
  const auto eth = wire::load<wire::EthHdr>(f, 0);
  path->dmac = eth.dst;
  path->smac = eth.src;
  path->vlan = kNoVlan;
  *ethertype = wire::get16(eth.ethertype);
  *l3 = sizeof(eth);
  if (*ethertype == wire::kEtherTypeVlan) {
    if (f.size() < sizeof(eth) + sizeof(wire::VlanTag)) {
      return DecodeStatus::kNotRoce;
    }
    const auto tag = wire::load<wire::VlanTag>(f, sizeof(eth));
    path->vlan = wire::get16(tag.tci) & wire::kVlanIdMask;
    *ethertype = wire::get16(tag.ethertype);
    *l3 += sizeof(tag);
  }
  return DecodeStatus::kOk;
}

DecodeStatus parse_ipv4(std::span<const std::byte> f, FrameBounds* b, Path* path) {
  if (f.size() < b->l3 + sizeof(wire::Ipv4Hdr)) {
    return DecodeStatus::kNotRoce;
  }
  const auto ip = wire::load<wire::Ipv4Hdr>(f, b->l3);
  if (ip.version_ihl != wire::kIpv4VersionIhl || ip.protocol != wire::kIpProtoUdp) {
    return DecodeStatus::kNotRoce;  // options, or not UDP
  }
  if ((wire::get16(ip.frag) & wire::kIpv4FragmentMask) != 0) {
    return DecodeStatus::kNotRoce;  // a fragment
  }
  if (ipv4_checksum(ip) != 0) {
    return DecodeStatus::kMalformed;
  }
  const size_t total = wire::get16(ip.total_length);
  if (total < sizeof(ip) + sizeof(wire::UdpHdr) || b->l3 + total > f.size()) {
    return DecodeStatus::kMalformed;
  }
  path->ipv4 = true;
  path->roce_v1 = false;
  path->traffic_class = ip.tos;
  path->hop_limit = ip.ttl;
  path->flow_label = 0;
  path->sgid = ipv4_mapped(ip.saddr);
  path->dgid = ipv4_mapped(ip.daddr);
  b->net = Network::kIpv4;
  b->l4 = b->l3 + sizeof(ip);
  b->end = b->l3 + total;
  return DecodeStatus::kOk;
}

// The addressing an IPv6 header, or RoCEv1's GRH, gives a path.
void take_ipv6_addressing(const wire::Ipv6Hdr& ip, bool roce_v1, Path* path) {
  const uint32_t w0 = wire::get32(ip.version_class_flow);
  path->ipv4 = false;
  path->roce_v1 = roce_v1;
  path->traffic_class = static_cast<uint8_t>(w0 >> wire::kIpv6ClassShift);
  path->flow_label = w0 & wire::kIpv6FlowLabelMask;
  path->hop_limit = ip.hop_limit;
  path->sgid = ip.saddr;
  path->dgid = ip.daddr;
}

DecodeStatus parse_ipv6(std::span<const std::byte> f, FrameBounds* b, Path* path) {
  if (f.size() < b->l3 + sizeof(wire::Ipv6Hdr)) {
    return DecodeStatus::kNotRoce;
  }
  const auto ip = wire::load<wire::Ipv6Hdr>(f, b->l3);
  const uint32_t w0 = wire::get32(ip.version_class_flow);
  if ((w0 >> wire::kIpv6VersionShift) != 6 || ip.next_header != wire::kIpProtoUdp) {
    return DecodeStatus::kNotRoce;
  }
  const size_t plen = wire::get16(ip.payload_length);
  if (plen < sizeof(wire::UdpHdr) || b->l3 + sizeof(ip) + plen > f.size()) {
    return DecodeStatus::kMalformed;
  }
  take_ipv6_addressing(ip, false, path);
  b->net = Network::kIpv6;
  b->l4 = b->l3 + sizeof(ip);
  b->end = b->l4 + plen;
  return DecodeStatus::kOk;
}

// RoCEv1: a GRH (IP version 6, next header the BTH) whose payload, which
// ends with the ICRC, fits the frame and holds at least a BTH and an ICRC.
DecodeStatus parse_grh(std::span<const std::byte> f, FrameBounds* b, Path* path) {
  if (f.size() < b->l3 + sizeof(wire::Ipv6Hdr)) {
    return DecodeStatus::kMalformed;
  }
  const auto grh = wire::load<wire::Ipv6Hdr>(f, b->l3);
  const uint32_t w0 = wire::get32(grh.version_class_flow);
  if ((w0 >> wire::kIpv6VersionShift) != 6 || grh.next_header != wire::kGrhNextHeaderBth) {
    return DecodeStatus::kMalformed;
  }
  const size_t plen = wire::get16(grh.payload_length);
  if (plen < sizeof(wire::Bth) + wire::kIcrcSize || b->l3 + sizeof(grh) + plen > f.size()) {
    return DecodeStatus::kMalformed;
  }
  take_ipv6_addressing(grh, true, path);
  path->udp_sport = 0;
  b->net = Network::kRoceV1;
  b->l4 = b->l3 + sizeof(grh);
  b->bth = b->l4;
  b->end = b->l4 + plen;
  return DecodeStatus::kOk;
}

// UDP to the RoCEv2 port, with room for a BTH and an ICRC.
DecodeStatus parse_udp(std::span<const std::byte> f, FrameBounds* b, Path* path) {
  const auto udp = wire::load<wire::UdpHdr>(f, b->l4);
  if (wire::get16(udp.dport) != kUdpPort) {
    return DecodeStatus::kNotRoce;
  }
  path->udp_sport = wire::get16(udp.sport);
  const size_t len = wire::get16(udp.length);
  if (len != b->end - b->l4 || len < sizeof(udp) + sizeof(wire::Bth) + wire::kIcrcSize) {
    return DecodeStatus::kMalformed;
  }
  b->bth = b->l4 + sizeof(udp);
  return DecodeStatus::kOk;
}

DecodeStatus parse_bth(std::span<const std::byte> f, size_t off, Bth* b) {
  const auto h = wire::load<wire::Bth>(f, off);
  if ((h.flags & wire::kBthVersionMask) != 0) {
    return DecodeStatus::kMalformed;  // transport header version must be 0
  }
  b->opcode = h.opcode;
  b->solicited = (h.flags & wire::kBthSolicited) != 0;
  b->mig_req = (h.flags & wire::kBthMigReq) != 0;
  b->pad = static_cast<uint8_t>((h.flags & wire::kBthPadMask) >> wire::kBthPadShift);
  b->pkey = wire::get16(h.pkey);
  b->becn = (h.fecn_becn & wire::kBthBecn) != 0;
  b->dest_qp = wire::get24(h.dest_qp);
  b->ack_req = (h.ack_req & wire::kBthAckReq) != 0;
  b->psn = wire::get24(h.psn);
  return DecodeStatus::kOk;
}

// The extended headers; the caller has checked that they fit.
void parse_ext(std::span<const std::byte> f, size_t off, uint16_t bits, Packet* pkt) {
  if ((bits & kHasFeth) != 0) {
    pkt->feth = wire::get32(wire::load<wire::Feth>(f, off).bits);
    off += sizeof(wire::Feth);
  }
  if ((bits & kHasDeth) != 0) {
    const auto h = wire::load<wire::Deth>(f, off);
    pkt->deth = {wire::get32(h.qkey), wire::get24(h.src_qp)};
    off += sizeof(h);
  }
  if ((bits & kHasReth) != 0) {
    const auto h = wire::load<wire::Reth>(f, off);
    pkt->reth = {wire::get64(h.va), wire::get32(h.rkey), wire::get32(h.dma_length)};
    off += sizeof(h);
  }
  if ((bits & kHasAtomicEth) != 0) {
    const auto h = wire::load<wire::AtomicEth>(f, off);
    pkt->atomic = {wire::get64(h.va), wire::get32(h.rkey), wire::get64(h.swap_add),
                   wire::get64(h.compare)};
    off += sizeof(h);
  }
  if ((bits & kHasAeth) != 0) {
    const auto h = wire::load<wire::Aeth>(f, off);
    pkt->aeth_syndrome = h.syndrome;
    pkt->aeth_msn = wire::get24(h.msn);
    off += sizeof(h);
  }
  if ((bits & kHasAtomicAckEth) != 0) {
    pkt->atomic_ack = wire::get64(wire::load<wire::AtomicAckEth>(f, off).original);
    off += sizeof(wire::AtomicAckEth);
  }
  if ((bits & kHasImm) != 0) {
    pkt->imm = wire::get32(wire::load<wire::ImmDt>(f, off).imm);
    off += sizeof(wire::ImmDt);
  }
  if ((bits & kHasIeth) != 0) {
    pkt->ieth = wire::get32(wire::load<wire::Ieth>(f, off).rkey);
  }
}

uint32_t wire_icrc(std::span<const std::byte> f, size_t off) {
  uint32_t v = 0;
  for (size_t i = 0; i < wire::kIcrcSize; ++i) {
    v |= static_cast<uint32_t>(std::to_integer<uint8_t>(f[off + i])) << (8 * i);
  }
  return v;
}

}  // namespace

DecodeStatus locate_frame(std::span<const std::byte> frame, Path* path, FrameBounds* b) {
  uint16_t ethertype = 0;
  DecodeStatus st = parse_l2(frame, path, &ethertype, &b->l3);
  if (st != DecodeStatus::kOk) {
    return st;
  }
  if (ethertype == wire::kEtherTypeIpv4) {
    st = parse_ipv4(frame, b, path);
  } else if (ethertype == wire::kEtherTypeIpv6) {
    st = parse_ipv6(frame, b, path);
  } else if (ethertype == wire::kEtherTypeRoceV1) {
    return parse_grh(frame, b, path);
  } else {
    return DecodeStatus::kNotRoce;
  }
  return st == DecodeStatus::kOk ? parse_udp(frame, b, path) : st;
}

DecodeStatus decode_frame(std::span<const std::byte> frame, Packet* pkt) {
  FrameBounds b;
  DecodeStatus st = locate_frame(frame, &pkt->path, &b);
  if (st == DecodeStatus::kOk) {
    st = parse_bth(frame, b.bth, &pkt->bth);
  }
  if (st != DecodeStatus::kOk) {
    return st;
  }
  const OpcodeInfo& oi = opcode_info(pkt->bth.opcode);
  if (oi.kind == OpKind::kInvalid) {
    return DecodeStatus::kBadOpcode;
  }
  const size_t payload = b.bth + sizeof(wire::Bth) + ext_headers_size(oi.bits);
  const size_t icrc = b.end - wire::kIcrcSize;
  if (payload > icrc) {
    return DecodeStatus::kMalformed;
  }
  const size_t payload_and_pad = icrc - payload;
  if (pkt->bth.pad > payload_and_pad || ((oi.bits & kHasPayload) == 0 && payload_and_pad != 0)) {
    return DecodeStatus::kMalformed;
  }
  if (compute_icrc(frame, b.l3, b.bth, icrc, b.net) != wire_icrc(frame, icrc)) {
    return DecodeStatus::kBadIcrc;
  }
  parse_ext(frame, b.bth + sizeof(wire::Bth), oi.bits, pkt);
  pkt->payload = frame.subspan(payload, payload_and_pad - pkt->bth.pad);
  pkt->l3 = frame.subspan(b.l3, b.l4 - b.l3);
  return DecodeStatus::kOk;
}

std::string describe(const Packet& pkt) {
  std::array<char, 160> buf{};
  std::snprintf(buf.data(), buf.size(), "%s qp %u psn %u%s len %zu", opcode_name(pkt.bth.opcode),
                pkt.bth.dest_qp, pkt.bth.psn, pkt.bth.ack_req ? " ackreq" : "", pkt.payload.size());
  return buf.data();
}

}  // namespace vrnicd::roce
