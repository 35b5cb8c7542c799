// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/engine.h"

#include <algorithm>

namespace vrnicd {
namespace {

constexpr int kSendBudget = 32;       // packets per QP per round
constexpr int kLoopbackBudget = 256;  // frames delivered per round

}  // namespace

Engine::Engine(const DeviceConfig& cfg, const GuestMemory& mem, std::span<std::byte> dm,
               EngineHost& host)
    : host_(host),
      counters_(cfg.limits.max_counter_sets),
      tracer_(clock_),
      qp_ctx_{objects_, router_, host, counters_, clock_, tracer_},
      objects_(cfg, mem, dm, counters_, qp_ctx_),
      router_(objects_, host.port(), counters_) {}

void Engine::reset() {
  objects_.reset();
  router_.reset();
  counters_.reset();
}

uint8_t Engine::modify_qp(uint32_t qpn, const QpAttrs& a) {
  Qp* qp = objects_.find_qp(qpn);
  return qp == nullptr ? VRNIC_AQ_STATUS_NOT_FOUND : qp->modify(a, host_.port());
}

uint8_t Engine::query_qp(uint32_t qpn, QpAttrs* a) const {
  const Qp* qp = objects_.find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  *a = qp->query();
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::dealloc_counter(uint32_t id) {
  if (!counters_.set_exists(id)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (objects_.counter_in_use(id)) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  return counters_.free_set(id);
}

uint8_t Engine::set_qp_counter(uint32_t qpn, uint32_t id) {
  Qp* qp = objects_.find_qp(qpn);
  if (qp == nullptr || (id != 0 && !counters_.set_exists(id))) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  qp->set_counter_set(id);
  return VRNIC_AQ_STATUS_OK;
}

bool Engine::poll() {
  bool progress = router_.poll_loopback(kLoopbackBudget);
  const uint64_t now = clock_.now_us();
  for (Qp* qp : objects_.qps()) {
    progress |= qp->step(now, kSendBudget);
  }
  for (Cq* cq : objects_.timed_cqs()) {
    progress |= cq->tick(now, host_);
  }
  return progress;
}

bool Engine::has_work() {
  if (router_.has_loopback()) {
    return true;
  }
  const uint64_t now = clock_.now_us();
  return std::any_of(objects_.qps().begin(), objects_.qps().end(),
                     [now](Qp* qp) { return qp->has_work(now); }) ||
         std::any_of(objects_.timed_cqs().begin(), objects_.timed_cqs().end(),
                     [now](const Cq* cq) { return cq->deadline() <= now; });
}

uint64_t Engine::next_deadline_us() const {
  uint64_t d = UINT64_MAX;
  for (const Qp* qp : objects_.qps()) {
    d = std::min(d, qp->next_deadline());
  }
  for (const Cq* cq : objects_.timed_cqs()) {
    d = std::min(d, cq->deadline());
  }
  return d;
}

bool Engine::active() const { return !objects_.qps().empty(); }

}  // namespace vrnicd
