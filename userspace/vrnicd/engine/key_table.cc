// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/key_table.h"

#include <algorithm>
#include <numeric>

#include "hw_access.h"
#include "vrnic-hw.h"

namespace vrnicd {

void KeyTable::reset(uint32_t max_mr) {
  max_mr = std::min<uint32_t>(max_mr, VRNIC_MAX_KEYS);  // 12 index bits
  objects_.clear();
  objects_.resize(static_cast<size_t>(max_mr) + 1);
  free_.resize(max_mr);
  std::iota(free_.begin(), free_.end(), 1U);
  history_.clear();
  history_.resize(static_cast<size_t>(max_mr) + 1);
}

Mr* KeyTable::insert(std::unique_ptr<Mr> mr) {
  const uint32_t index = take_index();
  if (index == 0) {
    return nullptr;
  }
  mr->key = new_key(index);
  objects_[index] = std::move(mr);
  return objects_[index].get();
}

Mr* KeyTable::by_key(uint32_t key) const { return at(vrnic::field_get<VRNIC_KEY_INDEX_MASK>(key)); }

Mr* KeyTable::at(uint32_t index) const {
  return index < objects_.size() ? objects_[index].get() : nullptr;
}

void KeyTable::erase(uint32_t index) {
  if (index < objects_.size() && objects_[index]) {
    objects_[index].reset();
    free_.push_back(index);
  }
}

// The next free index, drawn at random, or 0 when there is none.
uint32_t KeyTable::take_index() {
  if (free_.empty()) {
    return 0;
  }
  std::uniform_int_distribution<size_t> pick(0, free_.size() - 1);
  const size_t i = pick(rng_);
  const uint32_t index = free_[i];
  free_[i] = free_.back();
  free_.pop_back();
  return index;
}

// A key for index: the index, a tag drawn at random from those the index
// has not had in its last kRecentTags keys, and a random first variant
// (the consumer's from then on).  With a quarter of the tags excluded, a
// draw takes 4/3 tries on average.
uint32_t KeyTable::new_key(uint32_t index) {
  auto& slot = history_.at(index);
  if (!slot) {
    slot = std::make_unique<History>();
  }
  History& h = *slot;
  std::uniform_int_distribution<uint32_t> draw(0, kTags - 1);
  uint32_t tag = draw(rng_);
  while (h.recent.test(tag)) {
    tag = draw(rng_);
  }
  if (h.count == kRecentTags) {
    h.recent.reset(h.order[h.next]);
  } else {
    ++h.count;
  }
  h.recent.set(tag);
  h.order[h.next] = static_cast<uint16_t>(tag);
  h.next = (h.next + 1) % kRecentTags;
  return vrnic::field_prep<VRNIC_KEY_INDEX_MASK>(index) |
         vrnic::field_prep<VRNIC_KEY_TAG_MASK>(tag) |
         vrnic::field_prep<VRNIC_KEY_VARIANT_MASK>(static_cast<uint32_t>(rng_()) & 0xff);
}

}  // namespace vrnicd
