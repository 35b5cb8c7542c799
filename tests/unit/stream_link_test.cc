// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// QEMU stream framing (32-bit big-endian length + frame), as used between
// the guest's virtio-net and vrnicd's Ethernet port; the stream and UDP
// links' held frames (one system call for an engine round's frames).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/event_loop.h"
#include "base/fd.h"
#include "wire/datagram_link.h"
#include "wire/stream_link.h"

namespace {

std::vector<std::byte> framed(const std::vector<std::vector<uint8_t>>& frames) {
  std::vector<std::byte> out;
  for (const auto& f : frames) {
    const uint32_t be = htonl(static_cast<uint32_t>(f.size()));
    const auto* p = reinterpret_cast<const std::byte*>(&be);
    out.insert(out.end(), p, p + 4);
    for (uint8_t b : f) {
      out.push_back(std::byte{b});
    }
  }
  return out;
}

std::vector<size_t> sizes_of(std::span<const std::byte> buf, std::optional<size_t>* consumed) {
  std::vector<size_t> sizes;
  *consumed = vrnicd::parse_stream_frames(
      buf, [&](std::span<const std::byte> f) { sizes.push_back(f.size()); });
  return sizes;
}

TEST(StreamFraming, SplitsCompleteFramesAndKeepsTheRest) {
  auto buf = framed({std::vector<uint8_t>(60, 1), std::vector<uint8_t>(1514, 2)});
  std::optional<size_t> consumed;
  EXPECT_EQ(sizes_of(buf, &consumed), (std::vector<size_t>{60, 1514}));
  EXPECT_EQ(consumed, buf.size());

  // A frame cut anywhere is left for later, whole.
  for (size_t cut = 1; cut < buf.size(); cut += 97) {
    auto part = std::span<const std::byte>(buf).first(cut);
    auto sizes = sizes_of(part, &consumed);
    ASSERT_TRUE(consumed);
    if (cut < 64) {
      EXPECT_TRUE(sizes.empty());
      EXPECT_EQ(*consumed, 0U);
    } else {
      EXPECT_EQ(sizes, (std::vector<size_t>{60}));
      EXPECT_EQ(*consumed, 64U);
    }
  }
}

TEST(StreamFraming, FrameBytesArePassedThrough) {
  auto buf = framed({{0xde, 0xad, 0xbe, 0xef}});
  std::vector<uint8_t> got;
  vrnicd::parse_stream_frames(buf, [&](std::span<const std::byte> f) {
    for (std::byte b : f) {
      got.push_back(static_cast<uint8_t>(b));
    }
  });
  EXPECT_EQ(got, (std::vector<uint8_t>{0xde, 0xad, 0xbe, 0xef}));
}

TEST(StreamFraming, RejectsLengthsQemuNeverSends) {
  std::optional<size_t> consumed;
  auto zero = framed({{}});
  sizes_of(zero, &consumed);
  EXPECT_FALSE(consumed);

  std::vector<std::byte> huge(8);
  const uint32_t be = htonl(static_cast<uint32_t>(vrnicd::StreamLink::kMaxFrame + 1));
  std::memcpy(huge.data(), &be, 4);
  sizes_of(huge, &consumed);
  EXPECT_FALSE(consumed);

  // A bad length after a good frame still delivers the good one first.
  auto mixed = framed({{7, 7}});
  mixed.insert(mixed.end(), huge.begin(), huge.end());
  EXPECT_EQ(sizes_of(mixed, &consumed), (std::vector<size_t>{2}));
  EXPECT_FALSE(consumed);
}

}  // namespace

namespace {

// A peer on the other end of a listening StreamLink, connected with a
// small receive buffer, that reads only when asked.
vrnicd::UniqueFd connect_peer(const std::string& path) {
  vrnicd::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int rcvbuf = 16384;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, path.c_str(), sizeof(sa.sun_path) - 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    return {};
  }
  return fd;
}

}  // namespace

namespace {

// A listening StreamLink in a directory of its own, and a peer connected
// to it (connect_peer); ok once the link has taken the connection.
struct Connected {
  explicit Connected(vrnicd::StreamLink::RxHandler rx) : link(loop, "test", std::move(rx)) {
    ok = ::mkdtemp(dir.data()) != nullptr && link.listen(path(), &err);
    if (ok) {
      peer = connect_peer(path());
    }
    for (int i = 0; ok && peer.valid() && i < 100 && !link.connected(); ++i) {
      loop.run_once(10);
    }
    ok = ok && link.connected();
  }
  ~Connected() {
    ::unlink(path().c_str());
    ::rmdir(dir.data());
  }
  Connected(const Connected&) = delete;
  Connected& operator=(const Connected&) = delete;
  Connected(Connected&&) = delete;
  Connected& operator=(Connected&&) = delete;
  [[nodiscard]] std::string path() const { return std::string(dir.data()) + "/link"; }

  std::array<char, 25> dir{"/tmp/vrnic-stream-XXXXXX"};
  std::string err;
  bool ok = false;
  vrnicd::EventLoop loop;
  vrnicd::StreamLink link;
  vrnicd::UniqueFd peer;
};

}  // namespace

// A peer that reads steadily but slower than the offered load (issue 24,
// defect 4): the link's memory stays bounded, frames beyond the bound are
// dropped and counted, and what the peer reads is still a whole stream of
// whole frames, in order.  Before, the queue freed nothing until it
// drained to empty, and grew for as long as the load went on.
TEST(StreamLink, SlowReaderHoldsBoundedMemory) {
  Connected c([](std::span<const std::byte>) {});
  ASSERT_TRUE(c.ok) << c.err;
  vrnicd::EventLoop& loop = c.loop;
  vrnicd::StreamLink& link = c.link;
  const vrnicd::UniqueFd& peer = c.peer;

  constexpr size_t kFrame = 16384;
  constexpr uint32_t kFrames = 4096;  // 64 MiB offered, half of it read
  std::vector<std::byte> frame(kFrame);
  std::vector<std::byte> got;
  std::vector<std::byte> chunk(kFrame / 2);
  uint32_t last = 0;
  uint32_t frames_read = 0;
  bool in_order = true;
  size_t held = 0;
  const auto drain_parsed = [&] {
    const auto used = vrnicd::parse_stream_frames(got, [&](std::span<const std::byte> f) {
      uint32_t seq = 0;
      std::memcpy(&seq, f.data(), sizeof(seq));
      in_order = in_order && f.size() == kFrame && seq > last &&
                 std::all_of(f.begin() + 4, f.end(),
                             [&](std::byte b) { return b == std::byte(seq & 0xff); });
      last = seq;
      ++frames_read;
    });
    ASSERT_TRUE(used.has_value());
    got.erase(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(*used));
  };
  for (uint32_t seq = 1; seq <= kFrames; ++seq) {
    std::memcpy(frame.data(), &seq, sizeof(seq));
    std::fill(frame.begin() + 4, frame.end(), std::byte(seq & 0xff));
    link.send(frame);
    const ssize_t n = ::recv(peer.get(), chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      got.insert(got.end(), chunk.begin(), chunk.begin() + n);
      drain_parsed();
    }
    loop.run_once(0);
    held = std::max(held, link.held_bytes());
  }
  EXPECT_LE(held, vrnicd::StreamLink::kMaxHeld);
  EXPECT_GT(link.tx_dropped, 0U);
  EXPECT_EQ(link.tx_frames + link.tx_dropped, kFrames);
  EXPECT_TRUE(in_order);
  EXPECT_GT(frames_read, 0U);

  // Once the reader catches up, everything queued arrives.
  for (int i = 0; i < 100000 && link.queued_bytes() > 0; ++i) {
    const ssize_t n = ::recv(peer.get(), chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      got.insert(got.end(), chunk.begin(), chunk.begin() + n);
    }
    loop.run_once(0);
  }
  for (ssize_t n = 1; n > 0;) {
    n = ::recv(peer.get(), chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      got.insert(got.end(), chunk.begin(), chunk.begin() + n);
    }
  }
  drain_parsed();
  EXPECT_EQ(link.queued_bytes(), 0U);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(frames_read, link.tx_frames);
  EXPECT_TRUE(in_order);
}

// Held frames wait for release(), then leave in order, all of them.
TEST(StreamLink, HeldFramesLeaveTogetherAtRelease) {
  Connected c([](std::span<const std::byte>) {});
  ASSERT_TRUE(c.ok) << c.err;
  vrnicd::StreamLink& link = c.link;
  const vrnicd::UniqueFd& peer = c.peer;
  link.hold();
  std::vector<std::byte> frame(100);
  for (uint8_t seq = 1; seq <= 10; ++seq) {
    std::fill(frame.begin(), frame.end(), std::byte{seq});
    ASSERT_TRUE(link.send(frame));
  }
  std::vector<std::byte> got(4096);
  EXPECT_LT(::recv(peer.get(), got.data(), got.size(), MSG_DONTWAIT), 0) << "sent while held";
  EXPECT_EQ(link.queued_bytes(), 10U * 104);
  link.release();
  EXPECT_EQ(link.queued_bytes(), 0U);
  const ssize_t n = ::recv(peer.get(), got.data(), got.size(), MSG_DONTWAIT);
  ASSERT_EQ(n, 10 * 104);
  std::vector<uint8_t> seqs;
  const auto used = vrnicd::parse_stream_frames(
      std::span(got.data(), static_cast<size_t>(n)),
      [&](std::span<const std::byte> f) { seqs.push_back(static_cast<uint8_t>(f[0])); });
  EXPECT_EQ(used, static_cast<size_t>(n));
  EXPECT_EQ(seqs, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(link.tx_frames, 10U);
  // Released: the next frame goes at once.
  ASSERT_TRUE(link.send(frame));
  EXPECT_EQ(::recv(peer.get(), got.data(), got.size(), MSG_DONTWAIT), 104);
}

namespace {

// A UDP socket on 127.0.0.1 at a port of the kernel's choice; its port.
vrnicd::UniqueFd udp_socket(uint16_t* port) {
  vrnicd::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    return {};
  }
  *port = ntohs(sa.sin_port);
  return fd;
}

}  // namespace

// Over UDP, held frames leave at release() (or when a batch is full), one
// datagram each, in order.
TEST(DatagramLink, HeldFramesLeaveTogetherAtRelease) {
  uint16_t peer_port = 0;
  uint16_t free_port = 0;
  vrnicd::UniqueFd peer = udp_socket(&peer_port);
  ASSERT_TRUE(peer.valid());
  udp_socket(&free_port);  // closed again: a port for the link
  vrnicd::EventLoop loop;
  vrnicd::DatagramLink link(loop, [](std::span<const std::byte>) {});
  std::string err;
  ASSERT_TRUE(link.open_udp("127.0.0.1:" + std::to_string(free_port),
                            "127.0.0.1:" + std::to_string(peer_port), &err))
      << err;
  constexpr size_t kFrames = vrnicd::DatagramLink::kMaxBatch + 36;
  link.hold();
  std::vector<std::byte> frame(60);
  for (size_t seq = 0; seq < kFrames; ++seq) {
    std::fill(frame.begin(), frame.end(), std::byte(seq));
    ASSERT_TRUE(link.send(frame));
  }
  std::vector<uint8_t> seqs;
  std::vector<std::byte> got(2048);
  const auto drain = [&] {
    for (ssize_t n = 0; (n = ::recv(peer.get(), got.data(), got.size(), MSG_DONTWAIT)) > 0;) {
      EXPECT_EQ(n, 60);
      seqs.push_back(static_cast<uint8_t>(got[0]));
    }
  };
  drain();
  EXPECT_EQ(seqs.size(), vrnicd::DatagramLink::kMaxBatch) << "a full batch leaves at once";
  link.release();
  drain();
  ASSERT_EQ(seqs.size(), kFrames);
  for (size_t i = 0; i < kFrames; ++i) {
    EXPECT_EQ(seqs[i], static_cast<uint8_t>(i));
  }
  EXPECT_EQ(link.tx_frames, kFrames);
  EXPECT_EQ(link.tx_dropped, 0U);
}

// Frames arrive whole and in order however the stream is cut: a length
// split across reads, a frame across many, the largest frame QEMU sends,
// and many small frames in one read.
TEST(StreamLink, FramesArriveWholeWhateverTheReadsCut) {
  std::vector<std::vector<std::byte>> got;
  Connected c([&](std::span<const std::byte> f) { got.emplace_back(f.begin(), f.end()); });
  ASSERT_TRUE(c.ok) << c.err;
  vrnicd::EventLoop& loop = c.loop;
  vrnicd::StreamLink& link = c.link;
  const vrnicd::UniqueFd& peer = c.peer;
  std::mt19937 rng(5);
  std::vector<std::vector<std::byte>> sent;
  std::vector<std::byte> stream;
  for (int i = 0; i < 300; ++i) {
    const size_t len = i == 100 ? vrnicd::StreamLink::kMaxFrame : 1 + rng() % 3000;
    std::vector<std::byte> f(len);
    for (auto& b : f) {
      b = std::byte(rng());
    }
    const uint32_t be = htonl(static_cast<uint32_t>(len));
    const auto* p = reinterpret_cast<const std::byte*>(&be);
    stream.insert(stream.end(), p, p + 4);
    stream.insert(stream.end(), f.begin(), f.end());
    sent.push_back(std::move(f));
  }
  for (size_t off = 0; off < stream.size();) {
    // Pieces of 1 byte to 20 KiB, each read by the link before the next.
    const size_t piece = std::min<size_t>(stream.size() - off, 1 + rng() % 20000);
    ASSERT_EQ(::send(peer.get(), stream.data() + off, piece, 0), static_cast<ssize_t>(piece));
    off += piece;
    for (int i = 0; i < 10; ++i) {
      loop.run_once(0);
    }
  }
  for (int i = 0; i < 1000 && got.size() < sent.size(); ++i) {
    loop.run_once(1);
  }
  EXPECT_TRUE(link.connected());
  EXPECT_EQ(got.size(), sent.size());
  EXPECT_TRUE(got == sent);
  EXPECT_EQ(link.rx_frames, sent.size());
}
