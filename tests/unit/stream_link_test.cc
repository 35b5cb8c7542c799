// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// QEMU stream framing (32-bit big-endian length + frame), as used between
// the guest's virtio-net and vrnicd's Ethernet port.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <cstring>
#include <vector>

#include "stream_link.h"

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
