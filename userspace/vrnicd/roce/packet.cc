// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "roce/packet.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

namespace vrnicd::roce {
namespace {

// Big-endian field access on byte buffers.
void put8(std::byte* p, uint8_t v) { p[0] = std::byte{v}; }
void put16(std::byte* p, uint16_t v) {
  p[0] = std::byte(v >> 8);
  p[1] = std::byte(v);
}
void put24(std::byte* p, uint32_t v) {
  p[0] = std::byte(v >> 16);
  p[1] = std::byte(v >> 8);
  p[2] = std::byte(v);
}
void put32(std::byte* p, uint32_t v) {
  put16(p, static_cast<uint16_t>(v >> 16));
  put16(p + 2, static_cast<uint16_t>(v));
}
void put64(std::byte* p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v >> 32));
  put32(p + 4, static_cast<uint32_t>(v));
}
uint8_t get8(const std::byte* p) { return static_cast<uint8_t>(p[0]); }
uint16_t get16(const std::byte* p) { return static_cast<uint16_t>((get8(p) << 8) | get8(p + 1)); }
uint32_t get24(const std::byte* p) {
  return (static_cast<uint32_t>(get8(p)) << 16) | (static_cast<uint32_t>(get8(p + 1)) << 8) |
         get8(p + 2);
}
uint32_t get32(const std::byte* p) {
  return (static_cast<uint32_t>(get16(p)) << 16) | get16(p + 2);
}
uint64_t get64(const std::byte* p) {
  return (static_cast<uint64_t>(get32(p)) << 32) | get32(p + 4);
}

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

uint32_t crc_update(uint32_t crc, const std::byte* p, size_t n) {
  // zlib's crc32 is the CRC-32 that the ICRC uses; it takes at most uInt.
  while (n > 0) {
    const auto chunk = static_cast<uInt>(std::min<size_t>(n, 1U << 30));
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): zlib takes bytes
    crc = static_cast<uint32_t>(crc32(crc, reinterpret_cast<const Bytef*>(p), chunk));
    p += chunk;
    n -= chunk;
  }
  return crc;
}

uint16_t ipv4_checksum(const std::byte* hdr) {
  uint32_t sum = 0;
  for (size_t i = 0; i < kIpv4HdrSize; i += 2) {
    sum += get16(hdr + i);
  }
  while ((sum >> 16) != 0) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
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
  static constexpr std::array<const char*, 32> kNames = {
      "SEND_FIRST",         "SEND_MIDDLE",         "SEND_LAST",
      "SEND_LAST_IMM",      "SEND_ONLY",           "SEND_ONLY_IMM",
      "WRITE_FIRST",        "WRITE_MIDDLE",        "WRITE_LAST",
      "WRITE_LAST_IMM",     "WRITE_ONLY",          "WRITE_ONLY_IMM",
      "READ_REQUEST",       "READ_RESPONSE_FIRST", "READ_RESPONSE_MIDDLE",
      "READ_RESPONSE_LAST", "READ_RESPONSE_ONLY",  "ACKNOWLEDGE",
      "ATOMIC_ACKNOWLEDGE", "COMPARE_SWAP",        "FETCH_ADD",
      "RESERVED_15",        "SEND_LAST_INV",       "SEND_ONLY_INV",
      "RESERVED_18",        "RESERVED_19",         "RESERVED_1A",
      "RESERVED_1B",        "RESERVED_1C",         "RESERVED_1D",
      "RESERVED_1E",        "RESERVED_1F"};
  if (opcode_info(opcode).kind == OpKind::kInvalid) {
    return "INVALID";
  }
  return kNames[operation_of(opcode)];
}

size_t ext_headers_size(uint16_t bits) noexcept {
  size_t n = 0;
  n += (bits & kHasDeth) != 0 ? kDethSize : 0;
  n += (bits & kHasReth) != 0 ? kRethSize : 0;
  n += (bits & kHasAtomicEth) != 0 ? kAtomicEthSize : 0;
  n += (bits & kHasAeth) != 0 ? kAethSize : 0;
  n += (bits & kHasAtomicAckEth) != 0 ? kAtomicAckEthSize : 0;
  n += (bits & kHasImm) != 0 ? kImmSize : 0;
  n += (bits & kHasIeth) != 0 ? kIethSize : 0;
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

// ICRC (IBA annex A17): CRC-32 over 64 bits of ones (the masked LRH), the
// IP and UDP headers and the BTH with their variant fields masked to ones,
// then everything after the BTH up to the ICRC.
uint32_t compute_icrc(std::span<const std::byte> frame, size_t l3, size_t bth, size_t end,
                      bool ipv4) {
  std::array<std::byte, kIpv6HdrSize + kUdpHdrSize + kBthSize> pseudo{};
  const size_t masked_len = bth + kBthSize - l3;
  std::memcpy(pseudo.data(), frame.data() + l3, masked_len);
  std::byte* ip = pseudo.data();
  size_t udp = 0;
  if (ipv4) {
    ip[1] = std::byte{0xff};            // type of service
    ip[8] = std::byte{0xff};            // time to live
    ip[10] = ip[11] = std::byte{0xff};  // header checksum
    udp = kIpv4HdrSize;
  } else {
    ip[0] |= std::byte{0x0f};                 // traffic class (high)
    ip[1] = ip[2] = ip[3] = std::byte{0xff};  // traffic class, flow label
    ip[7] = std::byte{0xff};                  // hop limit
    udp = kIpv6HdrSize;
  }
  pseudo[udp + 6] = pseudo[udp + 7] = std::byte{0xff};  // UDP checksum
  pseudo[udp + kUdpHdrSize + 4] = std::byte{0xff};      // BTH reserved byte
  static constexpr std::array<std::byte, 8> kOnes = {
      std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff},
      std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}};
  auto crc = static_cast<uint32_t>(crc32(0, nullptr, 0));
  crc = crc_update(crc, kOnes.data(), kOnes.size());
  crc = crc_update(crc, pseudo.data(), masked_len);
  crc = crc_update(crc, frame.data() + bth + kBthSize, end - (bth + kBthSize));
  return crc;
}

FrameLayout build_frame(const Packet& pkt, size_t payload_len, std::vector<std::byte>* out) {
  const OpcodeInfo& oi = opcode_info(pkt.bth.opcode);
  const Path& path = pkt.path;
  const size_t l2 = kEthHdrSize + (path.vlan != kNoVlan ? kVlanTagSize : 0);
  const size_t l3_len = path.ipv4 ? kIpv4HdrSize : kIpv6HdrSize;
  const size_t ext = ext_headers_size(oi.bits);
  const size_t pad = (4 - (payload_len & 3)) & 3;
  const size_t ib_len = kBthSize + ext + payload_len + pad + kIcrcSize;
  const size_t udp_len = kUdpHdrSize + ib_len;

  FrameLayout lay;
  lay.l3 = l2;
  lay.bth = l2 + l3_len + kUdpHdrSize;
  lay.payload = lay.bth + kBthSize + ext;
  lay.payload_len = payload_len;
  lay.icrc = lay.payload + payload_len + pad;
  out->assign(lay.icrc + kIcrcSize, std::byte{0});
  std::byte* f = out->data();

  // Ethernet
  std::memcpy(f, path.dmac.data(), 6);
  std::memcpy(f + 6, path.smac.data(), 6);
  size_t off = 12;
  if (path.vlan != kNoVlan) {
    put16(f + off, kEtherTypeVlan);
    put16(f + off + 2, static_cast<uint16_t>(path.vlan & 0x0fff));
    off += kVlanTagSize;
  }
  put16(f + off, path.ipv4 ? kEtherTypeIpv4 : kEtherTypeIpv6);

  // IP
  std::byte* ip = f + lay.l3;
  if (path.ipv4) {
    put8(ip, 0x45);
    put8(ip + 1, path.traffic_class);
    put16(ip + 2, static_cast<uint16_t>(kIpv4HdrSize + udp_len));
    put16(ip + 6, 0x4000);  // don't fragment
    put8(ip + 8, path.hop_limit);
    put8(ip + 9, 17);  // UDP
    std::memcpy(ip + 12, path.sgid.data() + 12, 4);
    std::memcpy(ip + 16, path.dgid.data() + 12, 4);
    put16(ip + 10, ipv4_checksum(ip));
  } else {
    put32(ip, (6U << 28) | (static_cast<uint32_t>(path.traffic_class) << 20) |
                  (path.flow_label & 0xfffff));
    put16(ip + 4, static_cast<uint16_t>(udp_len));
    put8(ip + 6, 17);
    put8(ip + 7, path.hop_limit);
    std::memcpy(ip + 8, path.sgid.data(), 16);
    std::memcpy(ip + 24, path.dgid.data(), 16);
  }

  // UDP (checksum 0: RoCEv2 relies on the ICRC)
  std::byte* udp = f + lay.l3 + l3_len;
  put16(udp, path.udp_sport);
  put16(udp + 2, kUdpPort);
  put16(udp + 4, static_cast<uint16_t>(udp_len));

  // BTH
  const Bth& b = pkt.bth;
  std::byte* bth = f + lay.bth;
  put8(bth, b.opcode);
  put8(bth + 1, static_cast<uint8_t>((b.solicited ? 0x80 : 0) | (b.mig_req ? 0x40 : 0) |
                                     (pad << 4)));  // TVer 0
  put16(bth + 2, b.pkey);
  put8(bth + 4, b.becn ? 0x40 : 0);
  put24(bth + 5, b.dest_qp & kQpnMask);
  put8(bth + 8, b.ack_req ? 0x80 : 0);
  put24(bth + 9, b.psn & kPsnMask);

  // Extended headers, in the order IBA defines.
  std::byte* p = bth + kBthSize;
  if ((oi.bits & kHasDeth) != 0) {
    put32(p, pkt.deth.qkey);
    put24(p + 5, pkt.deth.src_qp & kQpnMask);
    p += kDethSize;
  }
  if ((oi.bits & kHasReth) != 0) {
    put64(p, pkt.reth.va);
    put32(p + 8, pkt.reth.rkey);
    put32(p + 12, pkt.reth.length);
    p += kRethSize;
  }
  if ((oi.bits & kHasAtomicEth) != 0) {
    put64(p, pkt.atomic.va);
    put32(p + 8, pkt.atomic.rkey);
    put64(p + 12, pkt.atomic.swap_add);
    put64(p + 20, pkt.atomic.compare);
    p += kAtomicEthSize;
  }
  if ((oi.bits & kHasAeth) != 0) {
    put8(p, pkt.aeth_syndrome);
    put24(p + 1, pkt.aeth_msn & 0xffffff);
    p += kAethSize;
  }
  if ((oi.bits & kHasAtomicAckEth) != 0) {
    put64(p, pkt.atomic_ack);
    p += kAtomicAckEthSize;
  }
  if ((oi.bits & kHasImm) != 0) {
    put32(p, pkt.imm);
    p += kImmSize;
  }
  if ((oi.bits & kHasIeth) != 0) {
    put32(p, pkt.ieth);
  }
  return lay;
}

void seal_frame(std::span<std::byte> frame, const FrameLayout& lay) {
  const bool ipv4 = get8(frame.data() + lay.l3) >> 4 == 4;
  const uint32_t icrc = compute_icrc(frame, lay.l3, lay.bth, lay.icrc, ipv4);
  // The ICRC goes on the wire least significant byte first.
  for (size_t i = 0; i < kIcrcSize; ++i) {
    frame[lay.icrc + i] = std::byte(icrc >> (8 * i));
  }
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

DecodeStatus decode_frame(std::span<const std::byte> frame, Packet* pkt) {
  const std::byte* f = frame.data();
  const size_t n = frame.size();
  if (n < kEthHdrSize) {
    return DecodeStatus::kNotRoce;
  }
  Path& path = pkt->path;
  std::memcpy(path.dmac.data(), f, 6);
  std::memcpy(path.smac.data(), f + 6, 6);
  size_t off = 12;
  uint16_t ethertype = get16(f + off);
  path.vlan = kNoVlan;
  if (ethertype == kEtherTypeVlan) {
    if (n < kEthHdrSize + kVlanTagSize) {
      return DecodeStatus::kNotRoce;
    }
    path.vlan = get16(f + off + 2) & 0x0fff;
    off += kVlanTagSize;
    ethertype = get16(f + off);
  }
  const size_t l3 = off + 2;
  size_t l4 = 0;
  size_t end = 0;  // end of the IP datagram
  if (ethertype == kEtherTypeIpv4) {
    if (n < l3 + kIpv4HdrSize) {
      return DecodeStatus::kNotRoce;
    }
    const std::byte* ip = f + l3;
    if (get8(ip) != 0x45 || get8(ip + 9) != 17) {
      return DecodeStatus::kNotRoce;  // options, or not UDP
    }
    if ((get16(ip + 6) & 0x3fff) != 0) {
      return DecodeStatus::kNotRoce;  // a fragment
    }
    if (ipv4_checksum(ip) != 0) {
      return DecodeStatus::kMalformed;
    }
    const size_t total = get16(ip + 2);
    if (total < kIpv4HdrSize + kUdpHdrSize || l3 + total > n) {
      return DecodeStatus::kMalformed;
    }
    path.ipv4 = true;
    path.traffic_class = get8(ip + 1);
    path.hop_limit = get8(ip + 8);
    path.flow_label = 0;
    path.sgid = Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    path.dgid = path.sgid;
    std::memcpy(path.sgid.data() + 12, ip + 12, 4);
    std::memcpy(path.dgid.data() + 12, ip + 16, 4);
    l4 = l3 + kIpv4HdrSize;
    end = l3 + total;
  } else if (ethertype == kEtherTypeIpv6) {
    if (n < l3 + kIpv6HdrSize) {
      return DecodeStatus::kNotRoce;
    }
    const std::byte* ip = f + l3;
    const uint32_t w0 = get32(ip);
    if ((w0 >> 28) != 6 || get8(ip + 6) != 17) {
      return DecodeStatus::kNotRoce;
    }
    const size_t plen = get16(ip + 4);
    if (plen < kUdpHdrSize || l3 + kIpv6HdrSize + plen > n) {
      return DecodeStatus::kMalformed;
    }
    path.ipv4 = false;
    path.traffic_class = static_cast<uint8_t>(w0 >> 20);
    path.flow_label = w0 & 0xfffff;
    path.hop_limit = get8(ip + 7);
    std::memcpy(path.sgid.data(), ip + 8, 16);
    std::memcpy(path.dgid.data(), ip + 24, 16);
    l4 = l3 + kIpv6HdrSize;
    end = l4 + plen;
  } else {
    return DecodeStatus::kNotRoce;
  }

  const std::byte* udp = f + l4;
  if (get16(udp + 2) != kUdpPort) {
    return DecodeStatus::kNotRoce;
  }
  path.udp_sport = get16(udp);
  const size_t udp_len = get16(udp + 4);
  if (udp_len != end - l4 || udp_len < kUdpHdrSize + kBthSize + kIcrcSize) {
    return DecodeStatus::kMalformed;
  }

  const size_t bth_off = l4 + kUdpHdrSize;
  const std::byte* bth = f + bth_off;
  Bth& b = pkt->bth;
  b.opcode = get8(bth);
  const uint8_t flags = get8(bth + 1);
  if ((flags & 0x0f) != 0) {
    return DecodeStatus::kMalformed;  // transport header version must be 0
  }
  b.solicited = (flags & 0x80) != 0;
  b.mig_req = (flags & 0x40) != 0;
  b.pad = (flags >> 4) & 3;
  b.pkey = get16(bth + 2);
  b.becn = (get8(bth + 4) & 0x40) != 0;
  b.dest_qp = get24(bth + 5);
  b.ack_req = (get8(bth + 8) & 0x80) != 0;
  b.psn = get24(bth + 9);

  const OpcodeInfo& oi = opcode_info(b.opcode);
  if (oi.kind == OpKind::kInvalid) {
    return DecodeStatus::kBadOpcode;
  }
  const size_t ext = ext_headers_size(oi.bits);
  const size_t icrc_off = end - kIcrcSize;
  if (bth_off + kBthSize + ext > icrc_off) {
    return DecodeStatus::kMalformed;
  }
  const size_t payload_off = bth_off + kBthSize + ext;
  const size_t payload_and_pad = icrc_off - payload_off;
  if (b.pad > payload_and_pad || ((oi.bits & kHasPayload) == 0 && payload_and_pad != 0)) {
    return DecodeStatus::kMalformed;
  }

  uint32_t wire_icrc = 0;
  for (size_t i = 0; i < kIcrcSize; ++i) {
    wire_icrc |= static_cast<uint32_t>(get8(f + icrc_off + i)) << (8 * i);
  }
  if (compute_icrc(frame, l3, bth_off, icrc_off, path.ipv4) != wire_icrc) {
    return DecodeStatus::kBadIcrc;
  }

  const std::byte* p = bth + kBthSize;
  if ((oi.bits & kHasDeth) != 0) {
    pkt->deth.qkey = get32(p);
    pkt->deth.src_qp = get24(p + 5);
    p += kDethSize;
  }
  if ((oi.bits & kHasReth) != 0) {
    pkt->reth.va = get64(p);
    pkt->reth.rkey = get32(p + 8);
    pkt->reth.length = get32(p + 12);
    p += kRethSize;
  }
  if ((oi.bits & kHasAtomicEth) != 0) {
    pkt->atomic.va = get64(p);
    pkt->atomic.rkey = get32(p + 8);
    pkt->atomic.swap_add = get64(p + 12);
    pkt->atomic.compare = get64(p + 20);
    p += kAtomicEthSize;
  }
  if ((oi.bits & kHasAeth) != 0) {
    pkt->aeth_syndrome = get8(p);
    pkt->aeth_msn = get24(p + 1);
    p += kAethSize;
  }
  if ((oi.bits & kHasAtomicAckEth) != 0) {
    pkt->atomic_ack = get64(p);
    p += kAtomicAckEthSize;
  }
  if ((oi.bits & kHasImm) != 0) {
    pkt->imm = get32(p);
    p += kImmSize;
  }
  if ((oi.bits & kHasIeth) != 0) {
    pkt->ieth = get32(p);
  }
  pkt->payload = frame.subspan(payload_off, payload_and_pad - b.pad);
  pkt->l3 = frame.subspan(l3, path.ipv4 ? kIpv4HdrSize : kIpv6HdrSize);
  return DecodeStatus::kOk;
}

std::string describe(const Packet& pkt) {
  std::array<char, 160> buf{};
  std::snprintf(buf.data(), buf.size(), "%s qp %u psn %u%s len %zu", opcode_name(pkt.bth.opcode),
                pkt.bth.dest_qp, pkt.bth.psn, pkt.bth.ack_req ? " ackreq" : "", pkt.payload.size());
  return buf.data();
}

}  // namespace vrnicd::roce
