// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device the data-path fuzzers attack: one vrnicd Device over a fake
// guest RAM (see tests/unit/datapath.h) with connected pairs of RC, UC and
// UD QPs, an MR over their buffers, and receives posted.  reset() brings
// it back to that state between inputs, so that inputs are independent.
#pragma once

#include <array>
#include <cstdint>

#include "datapath.h"
#include "log.h"

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

  // Connected QPs with empty rings and four receives each; an empty CQ.
  void reset() {
    drain();
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
  std::array<DataPath::Qp, kQps> qps_;
};

}  // namespace vrnic_fuzz
