// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "device/device.h"

#include <atomic>
#include <cinttypes>
#include <cstring>

#include "base/bar2.h"
#include "base/guest_memory.h"
#include "base/irq.h"
#include "base/log.h"
#include "hw_access.h"
#include "roce/pacer.h"
#include "wire/eth_port.h"

namespace vrnicd {
namespace {

uint64_t reg64(const Bar2& bar, uint32_t lo) {
  return static_cast<uint64_t>(bar.reg(lo)) | (static_cast<uint64_t>(bar.reg(lo + 4)) << 32);
}

}  // namespace

const char* device_state_name(uint32_t s) noexcept {
  switch (s) {
    case VRNIC_STATE_RESET:
      return "RESET";
    case VRNIC_STATE_READY:
      return "READY";
    case VRNIC_STATE_FATAL:
      return "FATAL";
    case VRNIC_STATE_GONE:
      return "GONE";
    default:
      return "?";
  }
}

Device::Device(const DeviceConfig& cfg, Bar2& bar, const GuestMemory& mem, IrqSink& irq)
    : cfg_(cfg),
      bar_(bar),
      mem_(mem),
      irq_(irq),
      eqs_(cfg.limits.max_eq),
      port_(cfg),
      engine_(cfg, mem, bar.device_memory(), *this) {}

void Device::init_registers_st() {
  bar_.clear();
  bar_.set_reg(VRNIC_REG_MAGIC, VRNIC_MAGIC);
  bar_.set_reg(VRNIC_REG_VERSION,
               vrnic::field_prep<VRNIC_VERSION_MAJOR_MASK>(VRNIC_VERSION_MAJOR) |
                   vrnic::field_prep<VRNIC_VERSION_MINOR_MASK>(VRNIC_VERSION_MINOR));
  bar_.set_reg(VRNIC_REG_CAPS_LO, VRNIC_CAP_ROCE_V2 | VRNIC_CAP_DB_SUPPRESS | VRNIC_CAP_HEARTBEAT);
  bar_.set_reg(VRNIC_REG_CAPS_HI, 0);
  bar_.set_reg(VRNIC_REG_DB_PEER, kDevicePeerId);
  bar_.set_reg(VRNIC_REG_NUM_VECTORS, cfg_.num_vectors);
  bar_.set_reg(VRNIC_REG_QUEUE_LIMITS,
               vrnic::field_prep<VRNIC_QUEUE_LIMITS_AQ_MAX_MASK>(kAqMaxLogDepth) |
                   vrnic::field_prep<VRNIC_QUEUE_LIMITS_AEQ_MAX_MASK>(kAeqMaxLogDepth) |
                   vrnic::field_prep<VRNIC_QUEUE_LIMITS_EQ_MAX_MASK>(kEqMaxLogDepth) |
                   vrnic::field_prep<VRNIC_QUEUE_LIMITS_MIN_MASK>(kMinLogDepth));
  bar_.set_reg(VRNIC_REG_HEARTBEAT_MS, cfg_.heartbeat_ms);
  bar_.set_status(VRNIC_STATUS_DB_PEER, kDevicePeerId);
  // No data queue is active, so the engine is asleep: producers must ring.
  bar_.set_status(VRNIC_STATUS_ENGINE_ASLEEP, 1);
  reset_st();
}

const EventQueue* Device::eq(uint32_t eqn) const noexcept {
  if (eqn == 0) {
    return aeq_.get();
  }
  return eqn < eqs_.size() ? eqs_[eqn].get() : nullptr;
}

void Device::reset_st() {
  engine_.reset();
  aq_.clear();
  aeq_.reset();
  for (auto& e : eqs_) {
    e.reset();
  }
  port_.reset();
  admin_stalled_ = false;
  for (uint32_t off = VRNIC_REG_AQ_SQ_BASE_LO; off <= VRNIC_REG_AEQ_OVERFLOW; off += 4) {
    bar_.set_reg(off, 0);
  }
  bar_.set_reg(VRNIC_REG_FATAL_CODE, VRNIC_FATAL_NONE);
  bar_.set_reg(VRNIC_REG_STATE, VRNIC_STATE_RESET);
  state_ = VRNIC_STATE_RESET;
  ++counters_.resets;
  LOG_DBG("device reset");
}

void Device::fatal_st(uint32_t code) {
  LOG_WARN("device entering FATAL state, code %u", code);
  state_ = VRNIC_STATE_FATAL;
  bar_.set_reg(VRNIC_REG_FATAL_CODE, code);
  bar_.set_reg(VRNIC_REG_STATE, VRNIC_STATE_FATAL);
  raise_st(0);
}

void Device::enable_st() {
  const uint32_t aq_log = bar_.reg(VRNIC_REG_AQ_DEPTH);
  const uint32_t aeq_log = bar_.reg(VRNIC_REG_AEQ_DEPTH);
  const uint64_t sq = reg64(bar_, VRNIC_REG_AQ_SQ_BASE_LO);
  const uint64_t cq = reg64(bar_, VRNIC_REG_AQ_CQ_BASE_LO);
  const uint64_t aeq = reg64(bar_, VRNIC_REG_AEQ_BASE_LO);

  const char* why = nullptr;
  std::byte* sq_host = nullptr;
  std::byte* cq_host = nullptr;
  std::byte* aeq_host = nullptr;
  if (aq_log < kMinLogDepth || aq_log > kAqMaxLogDepth) {
    why = "AQ_DEPTH out of range";
  } else if (aeq_log < kMinLogDepth || aeq_log > kAeqMaxLogDepth) {
    why = "AEQ_DEPTH out of range";
  } else if (sq % kRingAlign != 0 || cq % kRingAlign != 0 || aeq % kRingAlign != 0) {
    why = "ring base not 4 KiB aligned";
  } else if ((sq_host = mem_.translate(sq, sizeof(vrnic_aq_cmd) << aq_log)) == nullptr ||
             (cq_host = mem_.translate(cq, sizeof(vrnic_aq_cqe) << aq_log)) == nullptr ||
             (aeq_host = mem_.translate(aeq, sizeof(vrnic_eqe) << aeq_log)) == nullptr) {
    why = "ring outside guest RAM";
  }
  if (why != nullptr) {
    log_guest_error("ENABLE refused: %s (aq %#" PRIx64 "/%#" PRIx64 " depth 2^%u, aeq %#" PRIx64
                    " depth 2^%u)",
                    why, sq, cq, aq_log, aeq, aeq_log);
    fatal_st(VRNIC_FATAL_BAD_CONFIG);
    return;
  }
  aq_.configure(sq_host, cq_host, aq_log);
  aeq_ = std::make_unique<EventQueue>(0, aeq_host, aeq_log, 0, nullptr);
  state_ = VRNIC_STATE_READY;
  bar_.set_reg(VRNIC_REG_STATE, VRNIC_STATE_READY);
  LOG_INFO("device enabled: admin queue depth %u, async EQ depth %u", 1U << aq_log, 1U << aeq_log);
}

void Device::on_ctrl_doorbell_st() {
  const uint32_t ctrl = bar_.reg(VRNIC_REG_CTRL);
  if ((ctrl & VRNIC_CTRL_RESET) != 0) {
    if (state_ != VRNIC_STATE_GONE) {
      LOG_INFO("reset requested in state %s", device_state_name(state_));
      reset_st();
      // Clearing CTRL acknowledges the reset.
      bar_.set_reg(VRNIC_REG_CTRL, 0);
    }
    return;
  }
  switch (state_) {
    case VRNIC_STATE_RESET:
      if ((ctrl & VRNIC_CTRL_ENABLE) != 0) {
        enable_st();
      }
      break;
    case VRNIC_STATE_READY:
      if ((ctrl & VRNIC_CTRL_ENABLE) == 0) {
        LOG_INFO("driver cleared ENABLE; resetting");
        reset_st();
        break;
      }
      if (!admin_stalled_) {
        process_admin_st();
      }
      if (state_ == VRNIC_STATE_READY) {
        check_eq_arms_st();
      }
      break;
    default:
      break;
  }
}

void Device::stall_admin_st() {
  LOG_WARN("fault injection: the admin queue stalls until the next reset");
  admin_stalled_ = true;
}

void Device::on_heartbeat_st() { bar_.set_reg(VRNIC_REG_HEARTBEAT, ++heartbeat_); }

void Device::on_disconnect_st() { init_registers_st(); }

void Device::shutdown_st() {
  state_ = VRNIC_STATE_GONE;
  bar_.set_reg(VRNIC_REG_FATAL_CODE, VRNIC_FATAL_SHUTDOWN);
  bar_.set_reg(VRNIC_REG_STATE, VRNIC_STATE_GONE);
  raise_st(0);
}

void Device::set_cable_st(bool up) {
  port_.set_cable(up);
  if (port_.update_state()) {
    port_changed_st();
  }
}

void Device::raise_st(uint32_t vector) {
  ++counters_.irqs;
  irq_.raise(vector);
}

void Device::process_admin_st() {
  uint32_t completed = 0;
  const auto outcome = aq_.process(
      bar_, [this](const vrnic_aq_cmd& cmd) { return execute_st(cmd); }, &completed);
  if (outcome == AdminQueue::Outcome::kOverrun) {
    log_guest_error("admin queue indices inconsistent (SQ_PI %u, CQ_CI %u, SQ_CI %u)",
                    bar_.reg(VRNIC_REG_AQ_SQ_PI), bar_.reg(VRNIC_REG_AQ_CQ_CI), aq_.sq_ci());
    fatal_st(VRNIC_FATAL_AQ_OVERRUN);
    return;
  }
  if (completed != 0) {
    raise_st(0);
  }
}

void Device::check_eq_arms_st() {
  for (auto& e : eqs_) {
    if (e && e->pending(e->dbrec_ci()) && e->take_arm()) {
      raise_st(e->vector());
    }
  }
}

void Device::post_async_st(uint8_t type, uint32_t d0, uint32_t d1, uint32_t d2) {
  if (!aeq_) {
    return;
  }
  if (!aeq_->post(bar_.reg(VRNIC_REG_AEQ_CI), type, d0, d1, d2)) {
    ++counters_.async_dropped;
    bar_.set_reg(VRNIC_REG_AEQ_OVERFLOW, static_cast<uint32_t>(counters_.async_dropped));
    return;
  }
  ++counters_.async_events;
  raise_st(0);
}

bool Device::post_eq_st(uint32_t eqn, uint8_t type, uint32_t d0, uint32_t d1, uint32_t d2) {
  if (eqn == 0) {
    if (!aeq_ || !aeq_->post(bar_.reg(VRNIC_REG_AEQ_CI), type, d0, d1, d2)) {
      return false;
    }
    raise_st(0);
    return true;
  }
  EventQueue* e = eqn < eqs_.size() ? eqs_[eqn].get() : nullptr;
  if (e == nullptr) {
    return false;
  }
  if (!e->post(e->dbrec_ci(), type, d0, d1, d2)) {
    post_async_st(VRNIC_EQE_TYPE_EQ_OVERRUN, eqn, 0, 0);
    return false;
  }
  if (e->take_arm()) {
    raise_st(e->vector());
  }
  return true;
}

void Device::completion_event(uint32_t eqn, uint32_t cqn) {
  if (!post_eq_st(eqn, VRNIC_EQE_TYPE_COMPLETION, cqn, 0, 0)) {
    LOG_DBG("completion event for CQ %u lost on EQ %u", cqn, eqn);
  }
}

void Device::async_event(uint8_t type, uint32_t d0, uint32_t d1) { post_async_st(type, d0, d1, 0); }

// RESET takes effect when it is written, not when its doorbell is read: a
// vrnicd that was stalled (stopped, or starved by the host) while the
// driver gave up on it and freed its pages must not execute, on resuming,
// the frames and WQEs queued meanwhile.  So CTRL is read before every
// frame and every engine pass, and a RESET (or ENABLE cleared) found there
// is carried out at once.  Returns whether the device may do DMA.
bool Device::dma_allowed_st() {
  if (state_ == VRNIC_STATE_RESET || state_ == VRNIC_STATE_GONE) {
    return false;
  }
  const uint32_t ctrl = bar_.reg(VRNIC_REG_CTRL);
  if ((ctrl & VRNIC_CTRL_RESET) != 0) {
    LOG_INFO("reset written in state %s; stopping before its doorbell", device_state_name(state_));
    reset_st();
    bar_.set_reg(VRNIC_REG_CTRL, 0);
    return false;
  }
  if (state_ != VRNIC_STATE_READY) {
    return false;  // FATAL: everything but RESET waits
  }
  if ((ctrl & VRNIC_CTRL_ENABLE) == 0) {
    LOG_INFO("driver cleared ENABLE; resetting");
    reset_st();
    return false;
  }
  return true;
}

// Outside READY (in RESET, or FATAL with the objects still there) the
// device runs no QP and lets no frame reach one: the driver may already
// have taken back the memory the objects name.  Nor does a frame reach a
// QP while the port is not ACTIVE (the netdev is down, say): a pulled
// link carries nothing, and the QPs find out as on real hardware, by
// their timers.
bool Device::engine_poll_st() { return dma_allowed_st() && engine_.poll(); }

bool Device::receive_frame_st(std::span<const std::byte> frame) {
  if (dma_allowed_st() && port_.state() == VRNIC_PORT_ACTIVE) {
    return engine_.receive_frame(frame);
  }
  if (!is_roce_frame(frame)) {
    return false;
  }
  engine_.count(VRNIC_STAT_RX_DROPPED);
  return true;
}

bool Device::engine_prepare_sleep_st(bool doze) {
  bar_.set_status(VRNIC_STATUS_ENGINE_ASLEEP, 1);
  // Producers write their record, fence, then read the flag; we write the
  // flag, fence, then read their records.  One of us sees the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (dma_allowed_st() && engine_.has_work()) {
    bar_.set_status(VRNIC_STATUS_ENGINE_ASLEEP, 0);
    return false;
  }
  if (!doze) {
    engine_.count(VRNIC_STAT_ENGINE_SLEEPS);
  }
  return true;
}

void Device::engine_wake_st() { bar_.set_status(VRNIC_STATUS_ENGINE_ASLEEP, 0); }

void Device::on_engine_doorbell_st(uint64_t count) { engine_.count(VRNIC_STAT_DOORBELLS, count); }

void Device::port_changed_st() {
  LOG_INFO("port 1 is now %s (phys state %u)",
           port_.state() == VRNIC_PORT_ACTIVE ? "ACTIVE" : "DOWN", port_.phys_state());
  if (state_ == VRNIC_STATE_READY) {
    post_async_st(VRNIC_EQE_TYPE_PORT_CHANGE, 1, port_.state(), port_.phys_state());
  }
}

void Device::fill_device_attr(vrnic_device_attr& a) const noexcept {
  const DeviceLimits& l = cfg_.limits;
  a = vrnic_device_attr{};
  a.fw_version = vrnic::to_le64(cfg_.fw_version);
  a.node_guid = vrnic::to_le64(mac_to_guid(cfg_.mac));
  a.sys_image_guid = a.node_guid;
  a.max_mr_size = vrnic::to_le64(l.max_mr_size);
  a.page_size_cap = vrnic::to_le64(0xfffff000ULL);  // 4 KiB .. 2 GiB pages
  a.vendor_id = vrnic::to_le32(cfg_.vendor_id);
  a.vendor_part_id = vrnic::to_le32(cfg_.vendor_part_id);
  a.hw_version = vrnic::to_le32(cfg_.hw_version);
  a.dev_caps = vrnic::to_le32(
      VRNIC_DEV_CAP_RC | VRNIC_DEV_CAP_UC | VRNIC_DEV_CAP_UD | VRNIC_DEV_CAP_SRQ |
      VRNIC_DEV_CAP_SRQ_RESIZE | VRNIC_DEV_CAP_ATOMIC | VRNIC_DEV_CAP_RC_RNR_NAK_GEN |
      VRNIC_DEV_CAP_MEM_MGT_EXT | VRNIC_DEV_CAP_MW | VRNIC_DEV_CAP_REREG_MR |
      VRNIC_DEV_CAP_BLOCK_MCAST_LB | VRNIC_DEV_CAP_CQ_MODERATION | VRNIC_DEV_CAP_ATOMIC_WRITE |
      VRNIC_DEV_CAP_FLUSH_GLOBAL | VRNIC_DEV_CAP_ROCE_V1 | VRNIC_DEV_CAP_RATE_LIMIT |
      (bar_.device_memory().empty() ? 0U : VRNIC_DEV_CAP_DM) |
      (mem_.persistent() ? VRNIC_DEV_CAP_FLUSH_PERSISTENT : 0U));
  a.max_qp = vrnic::to_le32(l.max_qp);
  a.max_qp_wr = vrnic::to_le32(l.max_qp_wr);
  a.max_send_sge = vrnic::to_le32(l.max_send_sge);
  a.max_recv_sge = vrnic::to_le32(l.max_recv_sge);
  a.max_sge_rd = vrnic::to_le32(l.max_sge_rd);
  a.max_cq = vrnic::to_le32(l.max_cq);
  a.max_cqe = vrnic::to_le32(l.max_cqe);
  a.max_mr = vrnic::to_le32(l.max_mr);
  a.max_pd = vrnic::to_le32(l.max_pd);
  a.max_qp_rd_atom = vrnic::to_le32(l.max_qp_rd_atom);
  a.max_qp_init_rd_atom = vrnic::to_le32(l.max_qp_init_rd_atom);
  a.max_srq = vrnic::to_le32(l.max_srq);
  a.max_srq_wr = vrnic::to_le32(l.max_srq_wr);
  a.max_srq_sge = vrnic::to_le32(l.max_srq_sge);
  a.max_ah = vrnic::to_le32(l.max_ah);
  a.max_inline_data = vrnic::to_le32(l.max_inline_data);
  a.max_mcast_grp = vrnic::to_le32(l.max_mcast_grp);
  a.max_mcast_qp_attach = vrnic::to_le32(l.max_mcast_qp_attach);
  a.max_pkeys = vrnic::to_le32(1);
  a.max_eq = vrnic::to_le32(l.max_eq);
  a.max_fast_reg_page_list_len = vrnic::to_le32(l.max_fast_reg_page_list_len);
  a.max_mw = vrnic::to_le32(l.max_mr);  // windows take MR keys
  a.local_ca_ack_delay = vrnic::to_le32(15);
  a.num_ports = vrnic::to_le32(1);
  a.max_counter_sets = vrnic::to_le32(l.max_counter_sets);
  a.rate_limit_min = vrnic::to_le32(roce::kRateLimitMinKbps);
  a.rate_limit_max = vrnic::to_le32(roce::kRateLimitMaxKbps);
  if (const std::span<std::byte> dm = bar_.device_memory(); !dm.empty()) {
    a.dm_offset = vrnic::to_le32(static_cast<uint32_t>(dm.data() - bar_.data()));
    a.dm_size = vrnic::to_le32(static_cast<uint32_t>(dm.size()));
  }
  std::memcpy(a.mac, cfg_.mac.data(), cfg_.mac.size());
}

}  // namespace vrnicd
