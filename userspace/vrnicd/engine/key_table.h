// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The memory-key table: the MRs and memory windows by key index, and the
// keys they get.  A key is index (31:20) | tag (19:8) | variant (7:0); the
// device draws a free index at random, and the tag from those the index
// has not had in its last kRecentTags keys, so that a freed key cannot be
// steered back to its index (hw-spec, "Memory regions").  What the objects
// mean (PDs, windows, access) is the ObjectTable's.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "engine/objects.h"

namespace vrnicd {

class KeyTable {
 public:
  // Empty, with room for max_mr objects (at most VRNIC_MAX_KEYS).
  void reset(uint32_t max_mr);

  [[nodiscard]] bool full() const { return free_.empty(); }
  // Put mr in a free index drawn at random and give it a new key (mr->key);
  // nullptr when the table is full.
  Mr* insert(std::unique_ptr<Mr> mr);
  // The object at the index that key names, whatever its tag and variant.
  [[nodiscard]] Mr* by_key(uint32_t key) const;
  [[nodiscard]] Mr* at(uint32_t index) const;
  // The object at index goes, and the index is free again.
  void erase(uint32_t index);
  // Every index, empty ones included.
  [[nodiscard]] std::span<const std::unique_ptr<Mr>> all() const { return objects_; }

 private:
  uint32_t take_index();
  uint32_t new_key(uint32_t index);

  std::vector<std::unique_ptr<Mr>> objects_;  // by key index; 0 is never used
  // Free indices, drawn at random: which index a registration gets says
  // nothing about the ones before it.
  std::vector<uint32_t> free_;
  // Per index handed out so far, the tags of its last kRecentTags keys:
  // a new key's tag is drawn from the others, so a freed key does not come
  // back before its index has had kRecentTags more, and the next tag is
  // never narrowed down to fewer than kTags - kRecentTags choices.
  static constexpr uint32_t kTags = 1U << 12;
  static constexpr uint32_t kRecentTags = kTags / 4;
  struct History {
    std::bitset<kTags> recent;
    std::array<uint16_t, kRecentTags> order{};  // a ring, oldest at next
    uint32_t next = 0;
    uint32_t count = 0;
  };
  std::vector<std::unique_ptr<History>> history_;  // by index, made at first use
  std::mt19937 rng_{std::random_device{}()};
};

}  // namespace vrnicd
