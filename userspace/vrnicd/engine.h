// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The data engine: protection domains, memory regions, CQs, SRQs and QPs,
// the work rings the driver shares with the device, and the packets that
// flow between QPs.  Each QP's protocol runs in a roce::QpTransport; the
// engine gives it guest memory, rings, completion queues and a port.
//
// Packets to the device's own addresses loop back inside the engine as
// real RoCEv2 frames; others leave through the wire hook.  All of it runs
// on the dispatch thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "config.h"
#include "objects.h"
#include "port.h"
#include "roce/transport.h"
#include "vrnic-hw.h"

namespace vrnicd {

class GuestMemory;
class Engine;

// What the engine needs from the device around it.
class EngineHost {
 public:
  EngineHost() = default;
  virtual ~EngineHost() = default;
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;
  EngineHost(EngineHost&&) = delete;
  EngineHost& operator=(EngineHost&&) = delete;

  // Post a COMPLETION event for cqn to EQ eqn.
  virtual void completion_event(uint32_t eqn, uint32_t cqn) = 0;
  // Post an async event (VRNIC_EQE_TYPE_*).
  virtual void async_event(uint8_t type, uint32_t d0, uint32_t d1) = 0;
  [[nodiscard]] virtual const Port& port() const = 0;
};

// A queue pair: its rings and objects, and the QpEnv its transport uses.
class Qp final : public roce::QpEnv {
 public:
  Qp(Engine& eng, const roce::QpConfig& cfg);

  roce::MemStatus check_local(std::span<const roce::Sge> sges, uint32_t need) override;
  roce::MemStatus gather(std::span<const roce::Sge> sges, uint64_t offset,
                         std::span<std::byte> dst) override;
  roce::MemStatus scatter(std::span<const roce::Sge> sges, uint64_t offset,
                          std::span<const std::byte> src) override;
  roce::MemStatus check_remote(uint32_t rkey, uint64_t va, uint64_t length, uint32_t need) override;
  roce::MemStatus remote_write(uint32_t rkey, uint64_t va, std::span<const std::byte> src) override;
  roce::MemStatus remote_read(uint32_t rkey, uint64_t va, std::span<std::byte> dst) override;
  roce::MemStatus remote_atomic(uint32_t rkey, uint64_t va, bool compare_swap, uint64_t compare_add,
                                uint64_t swap, uint64_t* original) override;
  bool read_send_wqe(uint32_t index, roce::SendWqe* wqe, bool* bad) override;
  uint32_t send_producer() override;
  bool take_recv_wqe(roce::RecvWqe* wqe, bool* bad) override;
  bool has_srq() override { return srq != nullptr; }
  void retire_send(uint32_t next_index) override;
  void complete_send(const roce::Completion& c) override;
  void complete_recv(const roce::Completion& c) override;
  bool transmit(const roce::Packet& pkt, const roce::Payload& payload) override;
  void event(roce::QpEvent e) override;
  uint64_t now_us() override;
  void count_retransmit() override;
  void count_rnr_nak(bool sent) override;
  void count_seq_nak(bool sent) override;
  void count_duplicate() override;
  void count_wqe() override;

  [[nodiscard]] uint32_t recv_producer() const;
  // A per-QP event: the port's counter and the QP's counter set, if any.
  void count(vrnic_stat s, uint64_t n = 1);
  void publish_sq_ci(uint32_t done);
  [[nodiscard]] std::byte* dbrec() const { return buf.page(0); }

  Engine& eng;
  uint32_t qpn = 0;
  uint32_t pdn = 0;
  roce::QpType type = roce::QpType::kRc;
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  Srq* srq = nullptr;
  QueueBuffer buf;
  Ring sq;
  Ring rq;
  uint32_t rq_ci = 0;
  uint32_t max_inline = 0;
  vrnic_qp_attr attr{};  // as last set, for QUERY_QP
  bool fatal = false;    // a CQ overran under it: to ERR after this step
  uint32_t seen_sq_pi = 0;
  uint32_t seen_rq_pi = 0;
  uint32_t published_sq_ci = 0;
  uint32_t counter_set = 0;  // 0: none
  roce::QpTransport tp;
};

class Engine {
 public:
  Engine(const DeviceConfig& cfg, const GuestMemory& mem, EngineHost& host);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Engine(Engine&&) = delete;
  Engine& operator=(Engine&&) = delete;

  // Forget every object, as at device reset.
  void reset();

  // Objects.  Each returns a VRNIC_AQ_STATUS_* value.
  uint8_t create_pd(uint32_t* pdn);
  uint8_t destroy_pd(uint32_t pdn);
  uint8_t reg_mr(const vrnic_aq_reg_mr& c, uint32_t* key);
  uint8_t dereg_mr(uint32_t key);
  uint8_t reg_phys_mr(const vrnic_aq_reg_mr& c, uint32_t* key);
  uint8_t create_cq(const vrnic_aq_create_cq& c, uint32_t* cqn);
  uint8_t destroy_cq(uint32_t cqn);
  uint8_t resize_cq(const vrnic_aq_resize_cq& c, uint32_t* moved);
  uint8_t create_qp(const vrnic_aq_create_qp& c, uint32_t* qpn);
  uint8_t modify_qp(uint32_t qpn, uint32_t mask, const vrnic_qp_attr& a);
  uint8_t query_qp(uint32_t qpn, vrnic_qp_attr* a);
  uint8_t destroy_qp(uint32_t qpn);
  uint8_t create_srq(const vrnic_aq_create_srq& c, uint32_t* srqn);
  uint8_t modify_srq(uint32_t srqn, bool set_limit, uint32_t limit);
  uint8_t query_srq(uint32_t srqn, uint32_t* limit);
  uint8_t destroy_srq(uint32_t srqn);
  uint8_t attach_mcast(uint32_t qpn, const roce::Gid& gid);
  uint8_t detach_mcast(uint32_t qpn, const roce::Gid& gid);
  uint8_t alloc_counter(uint32_t* id);
  uint8_t dealloc_counter(uint32_t id);
  uint8_t set_qp_counter(uint32_t qpn, uint32_t id);
  uint8_t query_counter(uint32_t id, vrnic_stats* s) const;
  void fill_stats(vrnic_stats* s) const;
  [[nodiscard]] bool eq_in_use(uint32_t eqn) const;

  // Data path.  poll() does one round of work; has_work() says whether a
  // round would do anything (the sleep handshake re-checks with it).
  bool poll();
  bool has_work();
  [[nodiscard]] uint64_t next_deadline_us() const;
  [[nodiscard]] bool active() const;

  // Frames: receive_frame() takes a frame from the wire and returns false
  // if it is not RoCEv2 for this device.  The wire hook sends frames that
  // are not for the device itself.
  bool receive_frame(std::span<const std::byte> frame);
  void set_wire(std::function<void(std::span<const std::byte>)> tx) { wire_ = std::move(tx); }

  void count(vrnic_stat s, uint64_t n = 1) { stats_[s] += n; }
  [[nodiscard]] uint64_t stat(vrnic_stat s) const { return stats_[s]; }
  [[nodiscard]] uint64_t now_us() const;

 private:
  friend class Qp;

  Mr* find_mr(uint32_t key, uint32_t pdn);
  Cq* find_cq(uint32_t cqn);
  Qp* find_qp(uint32_t qpn);
  Srq* find_srq(uint32_t srqn);
  bool post_cqe(Cq& cq, const roce::Completion& c, uint32_t qpn, bool recv);
  bool resolve_path(const vrnic_av& av, uint32_t qpn, roce::Path* path) const;
  void send_frame(std::vector<std::byte>&& frame, bool local);
  void deliver(std::span<const std::byte> frame);
  void deliver_decoded(std::span<const std::byte> frame, roce::DecodeStatus st,
                       const roce::Packet& pkt);
  [[nodiscard]] bool is_local(const roce::Packet& pkt) const;
  void deliver_multicast(const roce::Packet& pkt, size_t frame_size);
  void count_qp_rx(const Qp& qp, size_t bytes);
  void step_qp(Qp& qp);

  // A multicast group and the local UD QPs attached to it.
  struct McastGroup {
    roce::Gid gid{};
    std::vector<uint32_t> qpns;
  };
  McastGroup* find_group(const roce::Gid& gid);

  const DeviceConfig& cfg_;
  const GuestMemory& mem_;
  EngineHost& host_;
  std::vector<std::unique_ptr<Pd>> pds_;
  std::vector<std::unique_ptr<Mr>> mrs_;  // by key index
  std::vector<uint8_t> mr_variant_;
  std::vector<std::unique_ptr<Cq>> cqs_;
  std::vector<std::unique_ptr<Qp>> qps_;  // by QPN
  std::vector<std::unique_ptr<Srq>> srqs_;
  std::vector<McastGroup> mcast_;
  // Counter sets by id (index 0 unused); absent when not allocated.
  std::vector<std::optional<std::array<uint64_t, VRNIC_STAT_MAX>>> counter_sets_;
  uint32_t next_qpn_ = 2;
  std::deque<std::vector<std::byte>> loopback_;
  std::vector<std::vector<std::byte>> free_frames_;
  std::function<void(std::span<const std::byte>)> wire_;
  std::array<uint64_t, VRNIC_STAT_MAX> stats_{};
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

}  // namespace vrnicd
