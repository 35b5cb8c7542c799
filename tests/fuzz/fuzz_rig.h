// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device the data-path fuzzers attack: one vrnicd Device over a fake
// guest RAM (see tests/unit/datapath.h) with connected pairs of RC, UC and
// UD QPs, an MR over their buffers, a fast-register MR, a type 1 and a
// type 2 window, and receives posted.  reset() brings it back to that
// state between inputs, so that inputs are independent.  patch_keys()
// puts the rig's keys into a raw WQE, so that fast registration, binds
// and invalidations get past the key lookup.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/log.h"
#include "datapath.h"

namespace vrnic_fuzz {

using vrnic_test::DataPath;

// Reads a fuzzer's input front to back; zeros once it runs out.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool empty() const { return pos_ >= size_; }
  [[nodiscard]] size_t left() const { return size_ - pos_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  template <typename T>
  T get() {
    T v{};
    for (size_t i = 0; i < sizeof(T); ++i) {
      v = static_cast<T>((v << 8) | u8());
    }
    return v;
  }
  std::span<const std::byte> bytes(size_t n) {
    n = std::min(n, left());
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
    std::span<const std::byte> s(reinterpret_cast<const std::byte*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

class Rig {
 public:
  static constexpr size_t kBuf = 256 * 1024;
  static constexpr size_t kQps = 6;  // RC a, b; UC a, b; UD a, b

  Rig() {
    vrnicd::log_set_level(vrnicd::LogLevel::kError);
    ok_ = dp_.bring_up() && dp_.create_pd(&pd_) == VRNIC_AQ_STATUS_OK &&
          dp_.create_cq(12, &cq_) == VRNIC_AQ_STATUS_OK;
    buf_ = dp_.alloc(kBuf);
    ok_ = ok_ && dp_.reg_mr(pd_, buf_, kBuf, VRNIC_ACCESS_ALL, &key_) == VRNIC_AQ_STATUS_OK &&
          dp_.reg_mr(pd_, buf_, kBuf / 2, VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_READ,
                     &ro_key_) == VRNIC_AQ_STATUS_OK;
    constexpr std::array<uint32_t, 3> kTypes = {VRNIC_QPT_RC, VRNIC_QPT_UC, VRNIC_QPT_UD};
    for (size_t i = 0; i < kQps && ok_; ++i) {
      qps_.at(i).type = kTypes.at(i / 2);
      ok_ = dp_.create_qp(pd_, cq_, cq_, &qps_.at(i)) == VRNIC_AQ_STATUS_OK;
    }
    if (ok_) {
      reset();
    }
  }

  // The MRs and windows: the two MRs, the fast-register MR, the windows.
  static constexpr size_t kKeys = 5;
  [[nodiscard]] uint32_t key(size_t i) const {
    const std::array<uint32_t, kKeys> k = {key_, ro_key_, frwr_key_, mw1_key_, mw2_key_};
    return k.at(i % kKeys);
  }

  // Put one of the rig's keys where a raw send WQE of the opcode in its
  // header names a key: REG_MR's key, BIND_MW's window and MR,
  // LOCAL_INV's and SEND_WITH_INV's key, an RDMA rkey, the first SGE's
  // lkey.  sel chooses the keys; the low 8 bits (the consumer's part of a
  // fast-register key) may change.
  void patch_keys(std::vector<std::byte>* wqe, uint8_t sel) const {
    const auto put = [wqe](size_t off, uint32_t v) {
      if (off + sizeof(v) <= wqe->size()) {
        std::memcpy(wqe->data() + off, &v, sizeof(v));
      }
    };
    if (wqe->size() < 16) {
      return;
    }
    const auto opcode = static_cast<uint8_t>((*wqe)[8]);
    const uint32_t k = key(sel) ^ ((sel & 0x80) != 0 ? (sel & 0x7) : 0);
    switch (opcode) {
      case VRNIC_WQE_REG_MR:
        put(offsetof(vrnic_sqe_reg_mr, key), k);
        break;
      case VRNIC_WQE_BIND_MW:
        put(offsetof(vrnic_sqe_bind_mw, rkey), key(3 + (sel & 1)) ^ (sel & 0x70));
        put(offsetof(vrnic_sqe_bind_mw, mr_lkey), key(sel >> 1));
        break;
      case VRNIC_WQE_LOCAL_INV:
      case VRNIC_WQE_SEND_WITH_INV:
        put(offsetof(vrnic_sqe, imm_data), k);
        break;
      default:
        put(offsetof(vrnic_sqe, rkey), k);
        put(VRNIC_SQE_DATA_OFFSET + offsetof(vrnic_sge, lkey), key(sel >> 3));
        break;
    }
  }

  // Connected QPs with empty rings and four receives each; an empty CQ.
  void reset() {
    drain();
    renew_keys();
    vrnic_qp_attr a{};
    a.state = VRNIC_QPS_RESET;
    for (auto& q : qps_) {
      dp_.modify_qp(q.qpn, VRNIC_QP_ATTR_STATE, a);
      q.sq_pi = q.rq_pi = 0;
      vrnic::store_release32(dp_.ram(q.dbrec + offsetof(vrnic_qp_dbrec, sq_pi)), 0);
      vrnic::store_release32(dp_.ram(q.dbrec + offsetof(vrnic_qp_dbrec, rq_pi)), 0);
    }
    for (size_t i = 0; i < kQps; i += 2) {
      dp_.connect(qps_.at(i), qps_.at(i + 1).qpn);
      dp_.connect(qps_.at(i + 1), qps_.at(i).qpn);
    }
    for (size_t i = 0; i < kQps; ++i) {
      for (uint32_t r = 0; r < 4; ++r) {
        const uint64_t at = buf_ + (i * 4 + r) * 8192;
        const std::array<vrnic_sge, 2> sges = {{{at, 4096, key_}, {at + 4096, 4096, key_}}};
        dp_.post_recv(qps_.at(i), r, sges);
      }
    }
  }

  // The CQ and QPs destroyed and created again in the same guest memory,
  // then reset(): for inputs that may leave them in any state at all.
  void renew() {
    for (auto& q : qps_) {
      dp_.destroy_qp(q.qpn);
    }
    dp_.destroy_cq(cq_.cqn);
    ok_ = dp_.recreate_cq(&cq_) == VRNIC_AQ_STATUS_OK;
    for (size_t i = 0; i < kQps && ok_; ++i) {
      ok_ = dp_.recreate_qp(pd_, cq_, cq_, &qps_.at(i)) == VRNIC_AQ_STATUS_OK;
    }
    if (ok_) {
      reset();
    }
  }

  void drain() {
    while (dp_.poll(cq_)) {
    }
  }

  // The fast-register MR and the windows, made again: free, unbound.
  void renew_keys() {
    for (const uint32_t mw : {mw1_key_, mw2_key_}) {
      if (mw != 0) {
        auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_DEALLOC_MW);
        c.dereg_mr.key = mw;
        dp_.drv().exec_status(c);
      }
    }
    if (frwr_key_ != 0) {
      auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
      c.dereg_mr.key = frwr_key_;
      dp_.drv().exec_status(c);
    }
    auto fr = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MR);
    fr.alloc_mr.pdn = pd_;
    fr.alloc_mr.max_pages = 16;
    ok_ = ok_ && dp_.exec_result(fr, &frwr_key_) == VRNIC_AQ_STATUS_OK;
    for (const auto& [type, key] :
         {std::pair{VRNIC_MW_TYPE_1, &mw1_key_}, std::pair{VRNIC_MW_TYPE_2, &mw2_key_}}) {
      auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MW);
      c.alloc_mw.pdn = pd_;
      c.alloc_mw.type = type;
      ok_ = ok_ && dp_.exec_result(c, key) == VRNIC_AQ_STATUS_OK;
    }
  }

  [[nodiscard]] bool ok() const { return ok_; }
  DataPath& dp() { return dp_; }
  DataPath::Qp& qp(size_t i) { return qps_.at(i % kQps); }
  DataPath::Cq& cq() { return cq_; }

 private:
  DataPath dp_;
  bool ok_ = false;
  uint32_t pd_ = 0;
  DataPath::Cq cq_;
  uint64_t buf_ = 0;
  uint32_t key_ = 0;
  uint32_t ro_key_ = 0;
  uint32_t frwr_key_ = 0;
  uint32_t mw1_key_ = 0;
  uint32_t mw2_key_ = 0;
  std::array<DataPath::Qp, kQps> qps_;
};

}  // namespace vrnic_fuzz
