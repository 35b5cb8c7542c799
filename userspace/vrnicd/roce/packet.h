// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// RoCE packets as they appear on Ethernet: Ethernet (optionally VLAN
// tagged), then for RoCEv2 IPv4 or IPv6 and UDP to port 4791, for RoCEv1
// Ethertype 0x8915 and a GRH; the InfiniBand base transport header (BTH), the extended headers the
// opcode calls for (RETH, AETH, AtomicETH, AtomicAckETH, ImmDt, IETH, DETH), payload, pad and the
// invariant CRC (ICRC).  Encoding and decoding only: no protocol state.
// Every field from the wire is checked before use; a frame that does not
// parse is rejected, never read past its end.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "roce/headers.h"

namespace vrnicd::roce {

constexpr uint16_t kUdpPort = 4791;
constexpr size_t kIpv4HdrSize = sizeof(wire::Ipv4Hdr);
constexpr size_t kIpv6HdrSize = sizeof(wire::Ipv6Hdr);
constexpr uint32_t kPsnMask = 0xffffff;
constexpr uint32_t kQpnMask = 0xffffff;
constexpr uint32_t kMulticastQpn = 0xffffff;  // the DQPN of a multicast datagram
constexpr uint16_t kDefaultPkey = 0xffff;
constexpr uint16_t kNoVlan = 0xffff;
// A UD receive buffer starts with 40 bytes of GRH (for IPv4: the IPv4
// header in its last 20 bytes).
constexpr size_t kGrhSize = 40;

// BTH opcodes: bits 7:5 the transport, 4:0 the operation.
enum Opcode : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0a,
  kWriteOnlyImm = 0x0b,
  kReadRequest = 0x0c,
  kReadResponseFirst = 0x0d,
  kReadResponseMiddle = 0x0e,
  kReadResponseLast = 0x0f,
  kReadResponseOnly = 0x10,
  kAcknowledge = 0x11,
  kAtomicAcknowledge = 0x12,
  kCompareSwap = 0x13,
  kFetchAdd = 0x14,
  kSendLastInv = 0x16,
  kSendOnlyInv = 0x17,
  kFlush = 0x1c,        // IBA 1.5's RDMA FLUSH: FETH and RETH
  kAtomicWrite = 0x1d,  // IBA 1.5's RDMA ATOMIC WRITE: RETH and 8 bytes
};

enum class Transport : uint8_t { kRc = 0, kUc = 1, kRd = 2, kUd = 3 };
constexpr uint8_t kTransportShift = 5;
constexpr uint8_t opcode(Transport t, uint8_t op) {
  return static_cast<uint8_t>((static_cast<uint8_t>(t) << kTransportShift) | op);
}
constexpr Transport transport_of(uint8_t opcode) {
  return static_cast<Transport>(opcode >> kTransportShift);
}
constexpr uint8_t operation_of(uint8_t opcode) { return opcode & 0x1f; }

// What an opcode carries.
enum HeaderBits : uint16_t {
  kHasReth = 1U << 0,
  kHasAeth = 1U << 1,
  kHasAtomicEth = 1U << 2,
  kHasAtomicAckEth = 1U << 3,
  kHasImm = 1U << 4,
  kHasIeth = 1U << 5,
  kHasDeth = 1U << 6,
  kHasPayload = 1U << 7,
  kIsFirst = 1U << 8,  // first (or only) packet of a message
  kIsLast = 1U << 9,   // last (or only) packet of a message
  kHasFeth = 1U << 10,
};

enum class OpKind : uint8_t {
  kInvalid,
  kSend,
  kWrite,
  kReadRequest,
  kReadResponse,
  kAck,
  kAtomicAck,
  kAtomic,
  kAtomicWrite,
  kFlush,
};

struct OpcodeInfo {
  OpKind kind = OpKind::kInvalid;
  uint16_t bits = 0;
};

// The headers and kind of a full opcode (transport included); kind is
// kInvalid for opcodes vrnic does not know or that the transport forbids.
const OpcodeInfo& opcode_info(uint8_t opcode) noexcept;
const char* opcode_name(uint8_t opcode) noexcept;
size_t ext_headers_size(uint16_t bits) noexcept;

// AETH syndrome: 7:5 type, 4:0 credits, RNR timer or NAK code.
enum AethType : uint8_t { kAethAck = 0, kAethRnrNak = 1, kAethNak = 3 };
enum NakCode : uint8_t {
  kNakPsnSeqError = 0,
  kNakInvalidRequest = 1,
  kNakRemoteAccessError = 2,
  kNakRemoteOperationalError = 3,
  kNakInvalidRdRequest = 4,
};
constexpr uint8_t aeth_syndrome(AethType t, uint8_t value) {
  return static_cast<uint8_t>((static_cast<uint8_t>(t) << 5) | (value & 0x1f));
}
constexpr AethType aeth_type(uint8_t syndrome) { return static_cast<AethType>(syndrome >> 5); }
constexpr uint8_t aeth_value(uint8_t syndrome) { return syndrome & 0x1f; }
// An ACK syndrome with "no credit information".
constexpr uint8_t kAethAckNoCredits = aeth_syndrome(kAethAck, 0x1f);

struct Bth {
  uint8_t opcode = 0;
  bool solicited = false;
  bool mig_req = false;
  uint8_t pad = 0;  // filled in by encode
  uint16_t pkey = kDefaultPkey;
  bool becn = false;
  uint32_t dest_qp = 0;
  bool ack_req = false;
  uint32_t psn = 0;
};

// FLUSH extended transport header: bits 3:0 placement type, 5:4
// selectivity level (VRNIC_FLUSH_*).
constexpr uint32_t kFethMask = 0x3f;

struct Reth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t length = 0;
};

struct AtomicEth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint64_t swap_add = 0;
  uint64_t compare = 0;
};

struct Deth {
  uint32_t qkey = 0;
  uint32_t src_qp = 0;
};

using Gid = std::array<uint8_t, 16>;
using Mac = std::array<uint8_t, 6>;

// The network layer of a RoCE frame, which decides what its ICRC covers.
enum class Network : uint8_t { kIpv4, kIpv6, kRoceV1 };

// Where a packet travels: L2 and L3 addressing.
struct Path {
  Mac smac{};
  Mac dmac{};
  uint16_t vlan = kNoVlan;
  bool ipv4 = true;      // RoCEv2: IPv4-mapped GIDs travel as IPv4
  bool roce_v1 = false;  // RoCEv1: a GRH after Ethertype 0x8915 (ipv4 false)
  Gid sgid{};
  Gid dgid{};
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 64;
  uint32_t flow_label = 0;
  uint16_t udp_sport = 0xc000;
};

bool gid_is_ipv4_mapped(const Gid& gid) noexcept;
// An IPv6 multicast address (ff00::/8) or an IPv4-mapped one (224.0.0.0/4),
// as RoCEv2 multicast GIDs are.
bool gid_is_multicast(const Gid& gid) noexcept;

// A RoCEv2 packet: addressing, BTH and whichever extended headers the
// opcode calls for.  payload is a view (into the frame, when decoded).
struct Packet {
  Path path;
  Bth bth;
  Reth reth;
  uint8_t aeth_syndrome = 0;
  uint32_t aeth_msn = 0;
  AtomicEth atomic;
  uint64_t atomic_ack = 0;
  uint32_t imm = 0;  // ImmDt, as a number
  uint32_t ieth = 0;
  uint32_t feth = 0;  // FLUSH: placement type and selectivity level
  Deth deth;
  std::span<const std::byte> payload;
  std::span<const std::byte> l3;  // decoded: the IP header as received
};

// Offsets of a built frame, for filling in the payload and sealing.
struct FrameLayout {
  Network net = Network::kIpv4;
  size_t l3 = 0;       // start of the IP header (RoCEv1: the GRH)
  size_t bth = 0;      // start of the BTH
  size_t payload = 0;  // start of the payload
  size_t payload_len = 0;
  size_t icrc = 0;  // start of the ICRC
};

// Build all headers of pkt into out (replacing its contents) with room for
// payload_len bytes of payload, which the caller must write at
// out[layout.payload ...] (it holds whatever out held there before) and
// then, for the wire, call seal_frame().
FrameLayout build_frame(const Packet& pkt, size_t payload_len, std::vector<std::byte>* out);
// Where build_frame() puts each part, and the size of the whole frame.
FrameLayout frame_layout(const Packet& pkt, size_t payload_len) noexcept;
size_t frame_size(const Packet& pkt, size_t payload_len) noexcept;
// What decode_frame() gives for frame, which build_frame() built from sent
// at layout (its payload written), without parsing it: for frames that
// never leave the device (FrameRouter's internal loopback).
Packet received_view(const Packet& sent, std::span<const std::byte> frame,
                     const FrameLayout& layout);
// Pad, ICRC: the frame is ready to send.
void seal_frame(std::span<std::byte> frame, const FrameLayout& layout);
// build + copy payload + seal, for small packets.
void encode_frame(const Packet& pkt, std::vector<std::byte>* out);

enum class DecodeStatus : uint8_t {
  kOk,
  kNotRoce,    // not IP/UDP to port 4791 nor RoCEv1's GRH: some other frame
  kMalformed,  // RoCE, but lengths or headers do not add up
  kBadIcrc,
  kBadOpcode,  // an opcode vrnic does not know
};
const char* decode_status_name(DecodeStatus s) noexcept;

// Where the layers of a RoCE frame start, as offsets into the frame.
struct FrameBounds {
  size_t l3 = 0;   // the IP header, or RoCEv1's GRH
  size_t l4 = 0;   // the UDP header (RoCEv1: the BTH)
  size_t bth = 0;  // the BTH: the UDP payload
  size_t end = 0;  // the end of the IP datagram or GRH payload (the frame may be padded)
  Network net = Network::kIpv4;
};

// The network layers only: Ethernet (802.1Q tagged or not), then IPv4
// without options or IPv6, and UDP to port 4791, or RoCEv1's GRH, with
// room for a BTH and an ICRC.  Fills in the addressing part of path.
// kNotRoce for any other frame.
DecodeStatus locate_frame(std::span<const std::byte> frame, Path* path, FrameBounds* bounds);

// Parse a frame.  On kOk, pkt's payload points into frame.
DecodeStatus decode_frame(std::span<const std::byte> frame, Packet* pkt);

// The CRC-32 of the ICRC (IEEE 802.3's, bit-reflected: zlib's crc32 and
// ISA-L's crc32_gzip_refl), continued from crc over bytes; crc 0 starts.
uint32_t crc32_update(uint32_t crc, std::span<const std::byte> bytes) noexcept;

// The ICRC of a frame whose headers start at layout.l3 (for tests).
uint32_t compute_icrc(std::span<const std::byte> frame, size_t l3, size_t bth, size_t end,
                      Network net);

std::string describe(const Packet& pkt);

}  // namespace vrnicd::roce
