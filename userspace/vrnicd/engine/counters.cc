// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/counters.h"

namespace vrnicd {

Counters::Counters(uint32_t max_sets) : sets_(static_cast<size_t>(max_sets) + 1) {}

void Counters::reset() {
  for (auto& s : sets_) {
    s.reset();
  }
  for (const vrnic_stat s : {VRNIC_STAT_PDS, VRNIC_STAT_MRS, VRNIC_STAT_CQS, VRNIC_STAT_QPS,
                             VRNIC_STAT_SRQS, VRNIC_STAT_MR_PAGES}) {
    port_[s] = 0;
  }
}

void Counters::add_qp(uint32_t set, vrnic_stat s, uint64_t n) {
  port_[s] += n;
  add_set(set, s, n);
}

void Counters::add_set(uint32_t set, vrnic_stat s, uint64_t n) {
  if (set != 0 && set < sets_.size() && sets_[set]) {
    (*sets_[set])[s] += n;
  }
}

uint8_t Counters::alloc_set(uint32_t* id) {
  for (size_t i = 1; i < sets_.size(); ++i) {
    if (!sets_[i]) {
      sets_[i].emplace();
      *id = static_cast<uint32_t>(i);
      return VRNIC_AQ_STATUS_OK;
    }
  }
  return VRNIC_AQ_STATUS_NO_RESOURCES;
}

uint8_t Counters::free_set(uint32_t id) {
  if (!set_exists(id)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  sets_[id].reset();
  return VRNIC_AQ_STATUS_OK;
}

bool Counters::set_exists(uint32_t id) const {
  return id != 0 && id < sets_.size() && sets_[id].has_value();
}

const Counters::Values* Counters::set(uint32_t id) const {
  return set_exists(id) ? &*sets_[id] : nullptr;
}

}  // namespace vrnicd
