// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// RoCEv2 and RoCEv1 frame encoding and decoding, ICRC included, against
// frames built by hand (an independent Python implementation of IBA
// annexes A17 and A16 computed the expected bytes), and against malformed
// input.
#include <gtest/gtest.h>

#include <cstddef>

#include <cstring>
#include <random>
#include <vector>

#include <zlib.h>

#include "roce/headers.h"
#include "roce/packet.h"
#include "roce/psn.h"
#include "roce/transport.h"

namespace {

using namespace vrnicd::roce;

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) {
    out.push_back(std::byte(b));
  }
  return out;
}

// RC SEND_ONLY from 10.0.0.1 to 10.0.0.2, QP 0x12, PSN 0x345678, AckReq,
// payload "hello" (so a 3-byte pad), P_Key 0xffff, TTL 64, UDP port 0xc000.
const std::vector<std::byte> kSendOnlyFrame =
    bytes({0x52, 0x54, 0x00, 0x76, 0x72, 0x02, 0x52, 0x54, 0x00, 0x76, 0x72, 0x01, 0x08, 0x00,
           0x45, 0x00, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0xb7, 0x0a, 0x00,
           0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
           0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x34, 0x56, 0x78, 0x68, 0x65,
           0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0x94, 0x86, 0x1e, 0xac});

// The same SEND_ONLY as RoCEv1: Ethertype 0x8915, a GRH (next header 0x1b,
// payload length 24: BTH, payload, pad, ICRC) between the IPv4-mapped GIDs.
// Its ICRC covers 64 bits of ones, the GRH with traffic class, flow label
// and hop limit set to ones, the BTH with its reserved byte set to ones,
// and the payload and pad.
const std::vector<std::byte> kSendOnlyV1Frame = bytes(
    {0x52, 0x54, 0x00, 0x76, 0x72, 0x02, 0x52, 0x54, 0x00, 0x76, 0x72, 0x01, 0x89, 0x15, 0x60, 0x00,
     0x00, 0x00, 0x00, 0x18, 0x1b, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
     0xff, 0xff, 0x0a, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
     0xff, 0xff, 0x0a, 0x00, 0x00, 0x02, 0x04, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x80, 0x34,
     0x56, 0x78, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, 0xdc, 0x39, 0xb5, 0xd3});

Path test_path() {
  Path p;
  p.smac = {0x52, 0x54, 0x00, 0x76, 0x72, 0x01};
  p.dmac = {0x52, 0x54, 0x00, 0x76, 0x72, 0x02};
  p.sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  p.dgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  p.hop_limit = 64;
  p.udp_sport = 0xc000;
  return p;
}

TEST(RocePacket, EncodesTheHandComputedFrame) {
  const char hello[] = "hello";
  Packet p;
  p.path = test_path();
  p.bth.opcode = kSendOnly;
  p.bth.dest_qp = 0x12;
  p.bth.psn = 0x345678;
  p.bth.ack_req = true;
  p.payload = std::as_bytes(std::span(hello, 5));
  std::vector<std::byte> frame;
  encode_frame(p, &frame);
  EXPECT_EQ(frame, kSendOnlyFrame);
}

TEST(RocePacket, DecodesTheHandComputedFrame) {
  Packet p;
  ASSERT_EQ(decode_frame(kSendOnlyFrame, &p), DecodeStatus::kOk);
  EXPECT_EQ(p.bth.opcode, kSendOnly);
  EXPECT_EQ(p.bth.dest_qp, 0x12U);
  EXPECT_EQ(p.bth.psn, 0x345678U);
  EXPECT_TRUE(p.bth.ack_req);
  EXPECT_EQ(p.bth.pad, 3);
  ASSERT_EQ(p.payload.size(), 5U);
  EXPECT_EQ(std::memcmp(p.payload.data(), "hello", 5), 0);
  EXPECT_TRUE(p.path.ipv4);
  EXPECT_EQ(p.path.sgid, test_path().sgid);
  EXPECT_EQ(p.path.dgid, test_path().dgid);
  EXPECT_EQ(p.path.hop_limit, 64);
  EXPECT_EQ(p.l3.size(), kIpv4HdrSize);
}

Packet hello_packet(bool roce_v1) {
  static const char hello[] = "hello";
  Packet p;
  p.path = test_path();
  p.path.roce_v1 = roce_v1;
  p.path.ipv4 = !roce_v1;
  p.bth.opcode = kSendOnly;
  p.bth.dest_qp = 0x12;
  p.bth.psn = 0x345678;
  p.bth.ack_req = true;
  p.payload = std::as_bytes(std::span(hello, 5));
  return p;
}

TEST(RocePacket, EncodesTheHandComputedV1Frame) {
  std::vector<std::byte> frame;
  encode_frame(hello_packet(true), &frame);
  EXPECT_EQ(frame, kSendOnlyV1Frame);
}

TEST(RocePacket, DecodesTheHandComputedV1Frame) {
  Packet p;
  ASSERT_EQ(decode_frame(kSendOnlyV1Frame, &p), DecodeStatus::kOk);
  EXPECT_TRUE(p.path.roce_v1);
  EXPECT_FALSE(p.path.ipv4);
  EXPECT_EQ(p.bth.opcode, kSendOnly);
  EXPECT_EQ(p.bth.dest_qp, 0x12U);
  EXPECT_EQ(p.bth.psn, 0x345678U);
  EXPECT_EQ(p.bth.pad, 3);
  ASSERT_EQ(p.payload.size(), 5U);
  EXPECT_EQ(std::memcmp(p.payload.data(), "hello", 5), 0);
  EXPECT_EQ(p.path.sgid, test_path().sgid);
  EXPECT_EQ(p.path.dgid, test_path().dgid);
  EXPECT_EQ(p.path.hop_limit, 64);
  // A UD receive buffer gets these 40 bytes as its GRH.
  ASSERT_EQ(p.l3.size(), kGrhSize);
  EXPECT_EQ(p.l3.data(), kSendOnlyV1Frame.data() + sizeof(wire::EthHdr));
}

TEST(RocePacket, V1IcrcCatchesEveryCorruptedByte) {
  // The GRH's traffic class, flow label and hop limit, and the BTH's
  // reserved byte, are masked out of the ICRC and nothing else checks
  // them; every other byte after the Ethernet header counts.
  constexpr size_t kGrh = sizeof(wire::EthHdr);
  constexpr size_t kBth = kGrh + sizeof(wire::Ipv6Hdr);
  for (size_t i = kGrh; i < kSendOnlyV1Frame.size(); ++i) {
    auto f = kSendOnlyV1Frame;
    f[i] ^= std::byte{0x01};
    Packet p;
    const DecodeStatus st = decode_frame(f, &p);
    const bool version_byte = i == kGrh;  // its low nibble is traffic class
    const bool masked =
        (i > kGrh && i < kGrh + 4) || i == kGrh + 7 || i == kBth + offsetof(wire::Bth, fecn_becn);
    if (masked || version_byte) {
      EXPECT_EQ(st, DecodeStatus::kOk) << i;
    } else {
      EXPECT_NE(st, DecodeStatus::kOk) << i;
    }
  }
}

TEST(RocePacket, V1RejectsABrokenGrh) {
  constexpr size_t kGrh = sizeof(wire::EthHdr);
  Packet p;
  auto f = kSendOnlyV1Frame;
  f[kGrh] = std::byte{0x40};  // IP version 4 in a GRH
  EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kMalformed);
  f = kSendOnlyV1Frame;
  f[kGrh + 6] = std::byte{wire::kIpProtoUdp};  // next header not the BTH
  EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kMalformed);
  for (const unsigned plen : {0U, 15U, 25U, 0xffffU}) {
    f = kSendOnlyV1Frame;
    f[kGrh + 4] = std::byte(plen >> 8);
    f[kGrh + 5] = std::byte(plen & 0xff);
    EXPECT_NE(decode_frame(f, &p), DecodeStatus::kOk) << plen;
  }
  for (size_t n = 0; n < kSendOnlyV1Frame.size(); ++n) {
    std::vector<std::byte> t(kSendOnlyV1Frame.begin(),
                             kSendOnlyV1Frame.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(decode_frame(t, &p), DecodeStatus::kOk) << n;
  }
  // Padding after the GRH's payload (short Ethernet frames are padded)
  // is not part of the packet.
  f = kSendOnlyV1Frame;
  f.resize(f.size() + 6);
  ASSERT_EQ(decode_frame(f, &p), DecodeStatus::kOk);
  EXPECT_EQ(p.payload.size(), 5U);
}

// zlib's crc32 over the same bytes, in one call.
uint32_t zlib_crc32(std::span<const std::byte> b) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): zlib takes bytes
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size())));
}

TEST(RocePacket, Crc32IsZlibsOnRandomInputs) {
  // ISA-L's folding CRC against zlib's table CRC: every length from 0 to
  // 300 (the folding code's tails), then random lengths up to 70,000 from
  // random offsets, continued across a random split as the ICRC continues
  // it over the masked headers and the payload.
  std::mt19937_64 g(26);
  std::vector<std::byte> buf(70000 + 64);
  for (auto& b : buf) {
    b = std::byte(g());
  }
  const std::span<const std::byte> all(buf);
  for (size_t len = 0; len <= 300; ++len) {
    ASSERT_EQ(crc32_update(0, all.subspan(1, len)), zlib_crc32(all.subspan(1, len))) << len;
  }
  for (int i = 0; i < 2000; ++i) {
    const size_t off = g() % 64;
    const size_t len = g() % 70001;
    const size_t cut = len == 0 ? 0 : g() % (len + 1);
    const auto b = all.subspan(off, len);
    const uint32_t whole = zlib_crc32(b);
    ASSERT_EQ(crc32_update(0, b), whole) << off << "+" << len;
    ASSERT_EQ(crc32_update(crc32_update(0, b.first(cut)), b.subspan(cut)), whole)
        << off << "+" << len << " cut at " << cut;
  }
}

TEST(RocePacket, IcrcCatchesEveryCorruptedByte) {
  // Any change breaks the IPv4 header checksum or the ICRC, except in the
  // fields the ICRC masks and nothing else checks: the UDP checksum and the
  // BTH reserved byte.
  constexpr size_t kUdp = sizeof(wire::EthHdr) + sizeof(wire::Ipv4Hdr);
  constexpr size_t kBth = kUdp + sizeof(wire::UdpHdr);
  constexpr size_t kUdpChecksum = kUdp + offsetof(wire::UdpHdr, checksum);
  constexpr size_t kBthReserved = kBth + offsetof(wire::Bth, fecn_becn);
  for (size_t i = sizeof(wire::EthHdr); i < kSendOnlyFrame.size(); ++i) {
    auto f = kSendOnlyFrame;
    f[i] ^= std::byte{0x01};
    Packet p;
    const DecodeStatus st = decode_frame(f, &p);
    const bool masked = i == kUdpChecksum || i == kUdpChecksum + 1 || i == kBthReserved;
    if (masked) {
      EXPECT_EQ(st, DecodeStatus::kOk) << i;
    } else {
      EXPECT_NE(st, DecodeStatus::kOk) << i;
    }
  }
}

TEST(RocePacket, RoundTripsEveryHeader) {
  const std::vector<std::byte> data(300, std::byte{0x5a});
  for (int t = 0; t < 3; ++t) {
    for (int op = 0; op < 32; ++op) {
      const uint8_t code = static_cast<uint8_t>((t == 2 ? 3 : t) << 5 | op);
      const OpcodeInfo& oi = opcode_info(code);
      if (oi.kind == OpKind::kInvalid) {
        continue;
      }
      Packet p;
      p.path = test_path();
      p.path.vlan = 7;
      p.bth.opcode = code;
      p.bth.solicited = true;
      p.bth.dest_qp = 0xabcdef;
      p.bth.psn = 0xfffffe;
      p.reth = {0x1122334455667788ULL, 0x99aabbcc, 0x1000};
      p.aeth_syndrome = aeth_syndrome(kAethNak, kNakRemoteAccessError);
      p.aeth_msn = 0x123456;
      p.atomic = {0x1000, 0x42, 0xdead, 0xbeef};
      p.atomic_ack = 0xfeedfacecafebeefULL;
      p.imm = 0x01020304;
      p.deth = {0x80010000, 0x000001};
      if ((oi.bits & kHasPayload) != 0) {
        p.payload = data;
      }
      std::vector<std::byte> frame;
      encode_frame(p, &frame);
      Packet d;
      ASSERT_EQ(decode_frame(frame, &d), DecodeStatus::kOk) << opcode_name(code);
      EXPECT_EQ(d.bth.opcode, code);
      EXPECT_EQ(d.bth.dest_qp, 0xabcdefU);
      EXPECT_EQ(d.bth.psn, 0xfffffeU);
      EXPECT_TRUE(d.bth.solicited);
      EXPECT_EQ(d.path.vlan, 7);
      EXPECT_EQ(d.payload.size(), p.payload.size());
      if ((oi.bits & kHasReth) != 0) {
        EXPECT_EQ(d.reth.va, p.reth.va);
        EXPECT_EQ(d.reth.rkey, p.reth.rkey);
        EXPECT_EQ(d.reth.length, p.reth.length);
      }
      if ((oi.bits & kHasAeth) != 0) {
        EXPECT_EQ(d.aeth_syndrome, p.aeth_syndrome);
        EXPECT_EQ(d.aeth_msn, p.aeth_msn);
      }
      if ((oi.bits & kHasAtomicEth) != 0) {
        EXPECT_EQ(d.atomic.swap_add, p.atomic.swap_add);
        EXPECT_EQ(d.atomic.compare, p.atomic.compare);
      }
      if ((oi.bits & kHasAtomicAckEth) != 0) {
        EXPECT_EQ(d.atomic_ack, p.atomic_ack);
      }
      if ((oi.bits & kHasImm) != 0) {
        EXPECT_EQ(d.imm, p.imm);
      }
      if ((oi.bits & kHasDeth) != 0) {
        EXPECT_EQ(d.deth.qkey, p.deth.qkey);
        EXPECT_EQ(d.deth.src_qp, p.deth.src_qp);
      }
    }
  }
}

// Every field of two packets, the payload and IP header views included
// (where they point, not only what they hold).
void expect_same(const Packet& a, const Packet& b) {
  EXPECT_EQ(a.path.smac, b.path.smac);
  EXPECT_EQ(a.path.dmac, b.path.dmac);
  EXPECT_EQ(a.path.vlan, b.path.vlan);
  EXPECT_EQ(a.path.ipv4, b.path.ipv4);
  EXPECT_EQ(a.path.roce_v1, b.path.roce_v1);
  EXPECT_EQ(a.path.sgid, b.path.sgid);
  EXPECT_EQ(a.path.dgid, b.path.dgid);
  EXPECT_EQ(a.path.traffic_class, b.path.traffic_class);
  EXPECT_EQ(a.path.hop_limit, b.path.hop_limit);
  EXPECT_EQ(a.path.flow_label, b.path.flow_label);
  EXPECT_EQ(a.path.udp_sport, b.path.udp_sport);
  EXPECT_EQ(a.bth.opcode, b.bth.opcode);
  EXPECT_EQ(a.bth.solicited, b.bth.solicited);
  EXPECT_EQ(a.bth.mig_req, b.bth.mig_req);
  EXPECT_EQ(a.bth.pad, b.bth.pad);
  EXPECT_EQ(a.bth.pkey, b.bth.pkey);
  EXPECT_EQ(a.bth.becn, b.bth.becn);
  EXPECT_EQ(a.bth.dest_qp, b.bth.dest_qp);
  EXPECT_EQ(a.bth.ack_req, b.bth.ack_req);
  EXPECT_EQ(a.bth.psn, b.bth.psn);
  EXPECT_EQ(a.reth.va, b.reth.va);
  EXPECT_EQ(a.reth.rkey, b.reth.rkey);
  EXPECT_EQ(a.reth.length, b.reth.length);
  EXPECT_EQ(a.aeth_syndrome, b.aeth_syndrome);
  EXPECT_EQ(a.aeth_msn, b.aeth_msn);
  EXPECT_EQ(a.atomic.va, b.atomic.va);
  EXPECT_EQ(a.atomic.rkey, b.atomic.rkey);
  EXPECT_EQ(a.atomic.swap_add, b.atomic.swap_add);
  EXPECT_EQ(a.atomic.compare, b.atomic.compare);
  EXPECT_EQ(a.atomic_ack, b.atomic_ack);
  EXPECT_EQ(a.imm, b.imm);
  EXPECT_EQ(a.ieth, b.ieth);
  EXPECT_EQ(a.deth.qkey, b.deth.qkey);
  EXPECT_EQ(a.deth.src_qp, b.deth.src_qp);
  EXPECT_EQ(a.payload.data(), b.payload.data());
  EXPECT_EQ(a.payload.size(), b.payload.size());
  EXPECT_EQ(a.l3.data(), b.l3.data());
  EXPECT_EQ(a.l3.size(), b.l3.size());
}

// Internal loopback does not parse its frames: received_view must give
// exactly what decode_frame would, for every opcode, both IP versions, a
// VLAN or none, every payload length modulo 4, and fields with bits the
// headers cannot carry.
TEST(RocePacket, ReceivedViewIsWhatDecodeGives) {
  std::mt19937_64 g(11);
  const std::vector<std::byte> data(301, std::byte{0x3c});
  int checked = 0;
  for (int code = 0; code < 256; ++code) {
    const OpcodeInfo& oi = opcode_info(static_cast<uint8_t>(code));
    if (oi.kind == OpKind::kInvalid) {
      continue;
    }
    for (int variant = 0; variant < 12; ++variant) {
      SCOPED_TRACE(std::string(opcode_name(static_cast<uint8_t>(code))) + " variant " +
                   std::to_string(variant));
      Packet p;
      p.path = test_path();
      if ((variant & 1) != 0) {
        p.path.ipv4 = false;
        p.path.sgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
        p.path.dgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1};
      }
      if (variant >= 8) {  // RoCEv1, with IPv4-mapped or other GIDs
        p.path.roce_v1 = true;
        p.path.ipv4 = false;
      }
      p.path.vlan = (variant & 2) != 0 ? static_cast<uint16_t>(g() & 0xffff) : kNoVlan;
      if (p.path.vlan == kNoVlan && (variant & 2) != 0) {
        p.path.vlan = 0xf123;
      }
      p.path.traffic_class = static_cast<uint8_t>(g());
      p.path.hop_limit = static_cast<uint8_t>(g());
      p.path.flow_label = static_cast<uint32_t>(g());
      p.path.udp_sport = static_cast<uint16_t>(g());
      p.bth.opcode = static_cast<uint8_t>(code);
      p.bth.solicited = (g() & 1) != 0;
      p.bth.mig_req = (g() & 1) != 0;
      p.bth.pkey = static_cast<uint16_t>(g());
      p.bth.becn = (g() & 1) != 0;
      p.bth.dest_qp = static_cast<uint32_t>(g());
      p.bth.ack_req = (g() & 1) != 0;
      p.bth.psn = static_cast<uint32_t>(g());
      p.reth = {g(), static_cast<uint32_t>(g()), static_cast<uint32_t>(g())};
      p.aeth_syndrome = static_cast<uint8_t>(g());
      p.aeth_msn = static_cast<uint32_t>(g());
      p.atomic = {g(), static_cast<uint32_t>(g()), g(), g()};
      p.atomic_ack = g();
      p.imm = static_cast<uint32_t>(g());
      p.ieth = static_cast<uint32_t>(g());
      p.deth = {static_cast<uint32_t>(g()), static_cast<uint32_t>(g())};
      if ((oi.bits & kHasPayload) != 0) {
        p.payload = std::span(data).first(297 + static_cast<size_t>(variant % 8 / 2));
      }
      std::vector<std::byte> frame;
      const FrameLayout lay = build_frame(p, p.payload.size(), &frame);
      std::copy(p.payload.begin(), p.payload.end(),
                frame.begin() + static_cast<std::ptrdiff_t>(lay.payload));
      seal_frame(frame, lay);
      Packet d;
      ASSERT_EQ(decode_frame(frame, &d), DecodeStatus::kOk);
      expect_same(received_view(p, frame, lay), d);
      ++checked;
    }
  }
  EXPECT_GE(checked, 12 * 30);  // RC, UC, UD and CNP opcodes
}

TEST(RocePacket, Ipv6RoundTrip) {
  Packet p;
  p.path = test_path();
  p.path.ipv4 = false;
  p.path.sgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x76, 0x72, 1};
  p.path.dgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x50, 0x54, 0, 0xff, 0xfe, 0x76, 0x72, 2};
  p.path.flow_label = 0xabcde;
  p.path.traffic_class = 0x28;
  p.bth.opcode = kWriteOnlyImm;
  p.bth.psn = 7;
  std::vector<std::byte> frame;
  encode_frame(p, &frame);
  Packet d;
  ASSERT_EQ(decode_frame(frame, &d), DecodeStatus::kOk);
  EXPECT_FALSE(d.path.ipv4);
  EXPECT_EQ(d.path.dgid, p.path.dgid);
  EXPECT_EQ(d.path.flow_label, 0xabcdeU);
  EXPECT_EQ(d.path.traffic_class, 0x28);
  EXPECT_EQ(d.l3.size(), kIpv6HdrSize);
}

TEST(RocePacket, RejectsWhatIsNotRoceOrIsBroken) {
  Packet p;
  EXPECT_EQ(decode_frame({}, &p), DecodeStatus::kNotRoce);
  constexpr size_t kUdp = sizeof(wire::EthHdr) + sizeof(wire::Ipv4Hdr);
  constexpr size_t kBth = kUdp + sizeof(wire::UdpHdr);
  auto f = kSendOnlyFrame;
  auto udp = wire::load<wire::UdpHdr>(f, kUdp);
  udp.dport.set(53);
  wire::store(std::span(f), kUdp, udp);
  EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kNotRoce);
  f = kSendOnlyFrame;
  auto eth = wire::load<wire::EthHdr>(f, 0);
  eth.ethertype.set(0x0806);  // ARP
  wire::store(std::span(f), 0, eth);
  EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kNotRoce);
  // Truncated anywhere: never OK, never a read past the end.
  for (size_t n = 0; n < kSendOnlyFrame.size(); ++n) {
    std::vector<std::byte> t(kSendOnlyFrame.begin(),
                             kSendOnlyFrame.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(decode_frame(t, &p), DecodeStatus::kOk) << n;
  }
  f = kSendOnlyFrame;
  auto bth = wire::load<wire::Bth>(f, kBth);
  bth.opcode = 0x15;  // reserved RC opcode
  wire::store(std::span(f), kBth, bth);
  EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kBadOpcode);
  f = kSendOnlyFrame;
  bth = wire::load<wire::Bth>(f, kBth);
  bth.flags |= 1;  // transport header version 1
  wire::store(std::span(f), kBth, bth);
  EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kMalformed);
}

TEST(Psn, ArithmeticAcrossTheWrap) {
  EXPECT_EQ(psn_add(0xffffff, 1), 0U);
  EXPECT_EQ(psn_add(0xfffffe, 5), 3U);
  EXPECT_EQ(psn_diff(3, 0xfffffe), 5);
  EXPECT_EQ(psn_diff(0xfffffe, 3), -5);
  EXPECT_TRUE(psn_before(0xffffff, 0));
  EXPECT_TRUE(psn_after(0, 0xffffff));
  EXPECT_FALSE(psn_before(5, 5));
  EXPECT_EQ(psn_diff(0x800000, 0), -0x800000);
  EXPECT_EQ(psn_diff(0x7fffff, 0), 0x7fffff);
}

TEST(Timers, RnrAndAckTimeouts) {
  EXPECT_EQ(rnr_timer_us(0), 655360U);
  EXPECT_EQ(rnr_timer_us(1), 10U);
  EXPECT_EQ(rnr_timer_us(14), 1280U);
  EXPECT_EQ(rnr_timer_us(31), 491520U);
  EXPECT_EQ(ack_timeout_us(0), 0U);
  EXPECT_EQ(ack_timeout_us(14), 67108U);  // 4.096 us * 2^14
  EXPECT_EQ(ack_timeout_us(1), 8U);
}

}  // namespace
