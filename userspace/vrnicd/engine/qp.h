// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// A queue pair as the device runs it.  Its protocol is a roce::QpTransport;
// this class is the transport's QpEnv, its one view of the device: the send
// and receive rings in guest memory, memory access checked against the keys
// of the QP's PD, completion queues, the frame router and the counters.
//
// The engine drives it from above (step(), receive(), modify()); the
// transport calls down into it; it calls down into the object table, the
// CQs and the router, and never back up.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "engine/objects.h"
#include "engine/params.h"
#include "roce/transport.h"
#include "vrnic-hw.h"

namespace vrnicd {

class Clock;
class Counters;
class Cq;
class EngineHost;
class FrameRouter;
class ObjectTable;
class Port;
class Tracer;

// What a QP uses of the device around it.
struct QpContext {
  ObjectTable& objects;
  FrameRouter& router;
  EngineHost& host;
  Counters& counters;
  const Clock& clock;
  Tracer& tracer;
};

// What a QP did, for vrnicctl: its own counters, and its last error.
struct QpStats {
  uint64_t tx_packets = 0;
  uint64_t rx_packets = 0;
  uint64_t wqes = 0;
  uint64_t retransmits = 0;
  uint64_t rnr_naks_sent = 0;
  uint64_t rnr_naks_rcvd = 0;
  uint64_t seq_naks_sent = 0;
  uint64_t seq_naks_rcvd = 0;
  uint64_t duplicates = 0;
  uint64_t refused = 0;  // packets refused (bad key, address, order ...)
  uint64_t errors = 0;   // completions in error, flushes included
  struct LastError {
    uint64_t t_us = 0;
    bool send = false;  // a send completion, or a receive one
    roce::WcOpcode opcode = roce::WcOpcode::kSend;
    roce::WcStatus status = roce::WcStatus::kSuccess;
    uint8_t vendor_err = 0;
    uint64_t wr_id = 0;
  };
  // The last completion in error other than a flush (flushes follow it).
  std::optional<LastError> last_error;
};

// The objects a new QP uses, looked up (and checked) by the object table.
struct QpLinks {
  Cq* send_cq = nullptr;
  Cq* recv_cq = nullptr;
  Srq* srq = nullptr;
};

class Qp final : public roce::QpEnv {
 public:
  // Map the QP's buffer and rings; VRNIC_AQ_STATUS_*.
  static uint8_t create(const QpContext& ctx, const GuestMemory& mem, uint32_t qpn,
                        const CreateQpParams& p, const QpLinks& links, std::unique_ptr<Qp>* out);

  // One round of work: timers, then up to budget packets.  true if it did
  // anything.
  bool step(uint64_t now, int budget);
  // Whether step() would do anything now.
  [[nodiscard]] bool has_work(uint64_t now);
  [[nodiscard]] uint64_t next_deadline() const { return tp_.next_deadline(); }
  // A packet addressed to this QP, from a frame of frame_size bytes.
  void receive(const roce::Packet& pkt, size_t frame_size);

  // MODIFY_QP and QUERY_QP (qp_attr.cc).
  uint8_t modify(const QpAttrs& a, const Port& port);
  [[nodiscard]] QpAttrs query() const;

  [[nodiscard]] uint32_t qpn() const { return cfg().qpn; }
  [[nodiscard]] uint32_t pdn() const { return pdn_; }
  [[nodiscard]] roce::QpType type() const { return cfg().type; }
  [[nodiscard]] bool gsi() const { return cfg().gsi; }
  [[nodiscard]] bool blocks_self_mcast_lb() const { return cfg().block_self_mcast_lb; }
  [[nodiscard]] const QpLinks& links() const { return links_; }
  // Before DESTROY_QP: what the QP owes its peer leaves first.
  void send_owed_responses() { tp_.send_owed_responses(); }
  [[nodiscard]] uint32_t counter_set() const { return counter_set_; }
  [[nodiscard]] const QpStats& stats() const { return stats_; }
  [[nodiscard]] roce::QpTransport::Status transport_status() const { return tp_.status(); }
  void set_counter_set(uint32_t id) { counter_set_ = id; }

  // roce::QpEnv
  roce::MemStatus check_local(std::span<const roce::Sge> sges, uint32_t need) override;
  roce::MemStatus gather(std::span<const roce::Sge> sges, uint64_t offset,
                         std::span<std::byte> dst) override;
  roce::MemStatus scatter(std::span<const roce::Sge> sges, uint64_t offset,
                          std::span<const std::byte> src) override;
  roce::MemStatus scatter_recv(std::span<const roce::Sge> sges, uint64_t offset,
                               std::span<const std::byte> src) override;
  roce::MemStatus check_remote(uint32_t rkey, uint64_t va, uint64_t length, uint32_t need) override;
  roce::MemStatus remote_write(uint32_t rkey, uint64_t va, std::span<const std::byte> src) override;
  roce::MemStatus remote_read(uint32_t rkey, uint64_t va, std::span<std::byte> dst) override;
  roce::MemStatus remote_atomic(uint32_t rkey, uint64_t va, bool compare_swap, uint64_t compare_add,
                                uint64_t swap, uint64_t* original) override;
  roce::MemStatus remote_atomic_write(uint32_t rkey, uint64_t va,
                                      std::span<const std::byte, 8> bytes) override;
  roce::MemStatus remote_flush(uint32_t rkey, uint64_t va, uint64_t length, bool whole,
                               uint32_t type) override;
  roce::WcStatus local_op(const roce::SendWqe& w, uint8_t* verr) override;
  bool invalidate_remote(uint32_t rkey) override;
  bool read_send_wqe(uint32_t index, roce::SendWqe* wqe, bool* bad) override;
  uint32_t send_producer() override;
  bool take_recv_wqe(roce::RecvWqe* wqe, bool* bad) override;
  bool has_srq() override { return links_.srq != nullptr; }
  bool recv_pending() override;
  void retire_send(uint32_t next_index) override;
  void complete_send(const roce::Completion& c) override;
  void complete_recv(const roce::Completion& c) override;
  roce::TxStatus transmit(const roce::Packet& pkt, const roce::Payload& payload) override;
  void event(roce::QpEvent e) override;
  uint64_t now_us() override;
  void count_retransmit() override;
  void count_rnr_nak(bool sent) override;
  void count_seq_nak(bool sent) override;
  void count_duplicate() override;
  void count_wqe() override;
  void count_refused(roce::Refusal why) override;

 private:
  // The attributes only the device keeps, for QUERY_QP: the transport's
  // configuration holds the rest, so each attribute lives once.
  struct Extra {
    uint32_t path_mtu = 0;
    uint16_t pkey_index = 0;
    uint8_t port = 0;
    uint8_t sqd_async_notify = 0;
    AddressVector av;
  };

  Qp(const QpContext& ctx, const roce::QpConfig& cfg, uint32_t pdn, const QpLinks& links);
  [[nodiscard]] const roce::QpConfig& cfg() const { return tp_.config(); }
  [[nodiscard]] std::byte* dbrec() const { return buf_.page(0); }
  [[nodiscard]] uint32_t recv_producer() const;
  bool fetch_send_wqe(uint32_t index, roce::SendWqe* wqe, bool* bad);
  static bool refuse_wqe(roce::SendWqe* wqe, bool* bad, uint32_t why);
  [[nodiscard]] const Mr* find_mr(uint32_t key) const;
  roce::MemStatus remote_word(uint32_t rkey, uint64_t va, uint32_t need, uint64_t** word);
  roce::MemStatus access_remote(uint32_t rkey, uint64_t* va, uint64_t length, uint32_t need,
                                const Mr** mr) const;
  roce::MemStatus scatter_in(uint32_t pdn, std::span<const roce::Sge> sges, uint64_t offset,
                             std::span<const std::byte> src);
  void count(vrnic_stat s, uint64_t n = 1);
  void note_completion(bool send, const roce::Completion& c);
  void publish_sq_ci(uint32_t done);
  bool enter_error_if_fatal();
  void apply(const QpAttrs& a, const Port& port, const roce::Path& path);
  void reset_rings();

  QpContext ctx_;
  uint32_t pdn_;
  QpLinks links_;
  QueueBuffer buf_;
  Ring sq_;
  Ring rq_;
  uint32_t rq_ci_ = 0;
  Extra extra_;
  bool fatal_ = false;  // a CQ overran under it: to ERR after this step
  uint32_t seen_sq_pi_ = 0;
  uint32_t seen_rq_pi_ = 0;
  uint32_t published_sq_ci_ = 0;
  uint32_t counter_set_ = 0;  // 0: none
  QpStats stats_;
  roce::QpTransport tp_;
};

}  // namespace vrnicd
