// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The headers of a RoCEv2 frame as they lie on the wire: Ethernet, the
// 802.1Q tag, IPv4, IPv6, UDP, and the InfiniBand transport headers (BTH,
// RETH, AETH, AtomicETH, AtomicAckETH, ImmDt, IETH, DETH; IBA volume 1,
// chapter 9.2-9.3, and annex A17 for RoCEv2).
//
// Every multi-byte field is big endian and is read and written only through
// its named Be<N> member, so no code outside this file knows a byte offset
// into a header.  The structs are arrays of bytes: no padding, alignment 1,
// and their sizes are asserted against the standards.  Frames are never
// cast to these types; headers are copied in and out with load()/store().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace vrnicd::roce::wire {

// An N-byte big-endian unsigned integer.
template <size_t N>
struct Be {
  static_assert(N >= 1 && N <= 8);
  std::array<uint8_t, N> b{};

  [[nodiscard]] constexpr uint64_t value() const noexcept {
    uint64_t v = 0;
    for (uint8_t x : b) {
      v = (v << 8) | x;
    }
    return v;
  }
  constexpr void set(uint64_t v) noexcept {
    for (size_t i = N; i-- > 0;) {
      b[i] = static_cast<uint8_t>(v);
      v >>= 8;
    }
  }
  // Every bit set: what the ICRC masks variant fields to.
  constexpr void set_ones() noexcept { b.fill(0xff); }
};

using Be16 = Be<2>;
using Be24 = Be<3>;
using Be32 = Be<4>;
using Be64 = Be<8>;

constexpr uint16_t get16(const Be16& f) noexcept { return static_cast<uint16_t>(f.value()); }
constexpr uint32_t get24(const Be24& f) noexcept { return static_cast<uint32_t>(f.value()); }
constexpr uint32_t get32(const Be32& f) noexcept { return static_cast<uint32_t>(f.value()); }
constexpr uint64_t get64(const Be64& f) noexcept { return f.value(); }

// ---------------------------------------------------------------------------
// Ethernet and IP

struct EthHdr {
  std::array<uint8_t, 6> dst{};
  std::array<uint8_t, 6> src{};
  Be16 ethertype{};
};
static_assert(sizeof(EthHdr) == 14);

// 802.1Q: the tag sits where the EtherType was, and the real EtherType
// follows it.
struct VlanTag {
  Be16 tci{};  // 15:13 priority, 12 DEI, 11:0 VLAN ID
  Be16 ethertype{};
};
static_assert(sizeof(VlanTag) == 4);

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
constexpr uint16_t kEtherTypeVlan = 0x8100;
constexpr uint16_t kVlanIdMask = 0x0fff;

struct Ipv4Hdr {
  uint8_t version_ihl{};  // 7:4 version, 3:0 header length in 32-bit words
  uint8_t tos{};          // DSCP and ECN: the traffic class
  Be16 total_length{};
  Be16 id{};
  Be16 frag{};  // 14 don't fragment, 13 more fragments, 12:0 offset
  uint8_t ttl{};
  uint8_t protocol{};
  Be16 checksum{};
  std::array<uint8_t, 4> saddr{};
  std::array<uint8_t, 4> daddr{};
};
static_assert(sizeof(Ipv4Hdr) == 20);

constexpr uint8_t kIpv4VersionIhl = 0x45;  // version 4, no options
constexpr uint16_t kIpv4DontFragment = 0x4000;
constexpr uint16_t kIpv4FragmentMask = 0x3fff;  // more fragments, offset
constexpr uint8_t kIpProtoUdp = 17;

struct Ipv6Hdr {
  Be32 version_class_flow{};  // 31:28 version, 27:20 traffic class, 19:0 flow label
  Be16 payload_length{};
  uint8_t next_header{};
  uint8_t hop_limit{};
  std::array<uint8_t, 16> saddr{};
  std::array<uint8_t, 16> daddr{};
};
static_assert(sizeof(Ipv6Hdr) == 40);

constexpr uint32_t kIpv6VersionShift = 28;
// RoCEv1 (IBTA annex A16): Ethertype 0x8915, then a GRH, which has the
// IPv6 header's layout (version 6), its next header the BTH.
constexpr uint16_t kEtherTypeRoceV1 = 0x8915;
constexpr uint8_t kGrhNextHeaderBth = 0x1b;
constexpr uint32_t kIpv6ClassShift = 20;
constexpr uint32_t kIpv6FlowLabelMask = 0xfffff;

constexpr uint32_t ipv6_word0(uint8_t traffic_class, uint32_t flow_label) noexcept {
  return (6U << kIpv6VersionShift) | (static_cast<uint32_t>(traffic_class) << kIpv6ClassShift) |
         (flow_label & kIpv6FlowLabelMask);
}

struct UdpHdr {
  Be16 sport{};
  Be16 dport{};
  Be16 length{};    // header and payload
  Be16 checksum{};  // 0 for RoCEv2: the ICRC protects the packet
};
static_assert(sizeof(UdpHdr) == 8);

// ---------------------------------------------------------------------------
// InfiniBand transport headers

// Base transport header.
struct Bth {
  uint8_t opcode{};
  uint8_t flags{};  // 7 solicited event, 6 migration request, 5:4 pad count, 3:0 version
  Be16 pkey{};
  uint8_t fecn_becn{};  // 7 FECN, 6 BECN, 5:0 reserved (variant: masked in the ICRC)
  Be24 dest_qp{};
  uint8_t ack_req{};  // 7 acknowledge request, 6:0 reserved
  Be24 psn{};
};
static_assert(sizeof(Bth) == 12);

constexpr uint8_t kBthSolicited = 0x80;
constexpr uint8_t kBthMigReq = 0x40;
constexpr uint8_t kBthPadShift = 4;
constexpr uint8_t kBthPadMask = 0x30;
constexpr uint8_t kBthVersionMask = 0x0f;  // transport header version: 0
constexpr uint8_t kBthBecn = 0x40;
constexpr uint8_t kBthAckReq = 0x80;

// RDMA extended transport header: WRITE (first or only) and READ request.
struct Reth {
  Be64 va{};
  Be32 rkey{};
  Be32 dma_length{};
};
static_assert(sizeof(Reth) == 16);

// FLUSH extended transport header (IBA 1.5): placement type and
// selectivity level in the low bits, the rest reserved.
struct Feth {
  Be32 bits{};
};
static_assert(sizeof(Feth) == 4);

// ACK extended transport header.
struct Aeth {
  uint8_t syndrome{};  // 7:5 type, 4:0 credits, RNR timer or NAK code
  Be24 msn{};
};
static_assert(sizeof(Aeth) == 4);

// Atomic extended transport header: COMPARE_SWAP and FETCH_ADD requests.
struct AtomicEth {
  Be64 va{};
  Be32 rkey{};
  Be64 swap_add{};
  Be64 compare{};
};
static_assert(sizeof(AtomicEth) == 28);

// Atomic acknowledge extended transport header: the original value.
struct AtomicAckEth {
  Be64 original{};
};
static_assert(sizeof(AtomicAckEth) == 8);

// Immediate data.
struct ImmDt {
  Be32 imm{};
};
static_assert(sizeof(ImmDt) == 4);

// Invalidate extended transport header: the rkey SEND_WITH_INVALIDATE names.
struct Ieth {
  Be32 rkey{};
};
static_assert(sizeof(Ieth) == 4);

// Datagram extended transport header: UD.
struct Deth {
  Be32 qkey{};
  uint8_t reserved{};
  Be24 src_qp{};
};
static_assert(sizeof(Deth) == 8);

// The invariant CRC ends the packet, least significant byte first.
constexpr size_t kIcrcSize = 4;

// ---------------------------------------------------------------------------
// Copying headers in and out of frames.  The caller has checked that the
// header lies inside the frame.

template <typename H>
H load(std::span<const std::byte> frame, size_t off) noexcept {
  H h;
  std::memcpy(&h, frame.data() + off, sizeof(H));
  return h;
}

template <typename H>
void store(std::span<std::byte> frame, size_t off, const H& h) noexcept {
  std::memcpy(frame.data() + off, &h, sizeof(H));
}

}  // namespace vrnicd::roce::wire
