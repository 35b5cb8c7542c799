// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Two QP transports back to back on the host, with memory regions in plain
// buffers and a fake wire that can drop, duplicate and reorder frames
// (seeded, so every run is the same).  Every frame goes through the RoCEv2
// encoder and decoder on its way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "roce/packet.h"
#include "roce/psn.h"
#include "roce/transport.h"

namespace {

using namespace vrnicd::roce;

struct Region {
  uint32_t access = 0;
  uint64_t iova = 0;
  std::vector<std::byte> data;
};

class FakeEnv final : public QpEnv {
 public:
  std::map<uint32_t, Region> regions;  // by key
  std::vector<SendWqe> sq;
  std::deque<RecvWqe> rq;
  uint32_t rq_index = 0;
  uint32_t retired = 0;  // send WQEs retired: the device's sq_ci
  bool runaway = false;
  uint32_t runaway_pi = 0;
  std::map<Refusal, int> refused;
  bool busy = false;  // the device has no room: transmit() says kBusy
  int busy_refusals = 0;
  std::vector<Completion> send_cqes;
  std::vector<Completion> recv_cqes;
  std::vector<std::vector<std::byte>> out;
  std::vector<uint64_t> sent_at;   // the clock as each frame left ...
  std::vector<size_t> sent_sizes;  // ... and its size
  std::vector<QpEvent> events;
  uint64_t clock = 0;
  int retransmits = 0;
  int rnr_naks_rcvd = 0;
  int seq_naks_rcvd = 0;
  bool srq = false;
  int local_ops = 0;
  int remote_invalidations = 0;

  Region* find(uint32_t key) {
    auto it = regions.find(key);
    return it == regions.end() ? nullptr : &it->second;
  }
  MemStatus check(uint32_t key, uint64_t va, uint64_t len, uint32_t need) {
    Region* r = find(key);
    if (r == nullptr) {
      return MemStatus::kBadKey;
    }
    if ((need & ~r->access) != 0) {
      return MemStatus::kNoAccess;
    }
    if (va < r->iova || va + len > r->iova + r->data.size()) {
      return MemStatus::kBounds;
    }
    return MemStatus::kOk;
  }
  MemStatus walk(std::span<const Sge> sges, uint64_t off, size_t n, uint32_t need,
                 const std::function<void(std::byte*, size_t, size_t)>& fn) {
    size_t done = 0;
    for (const Sge& s : sges) {
      if (done == n) {
        break;
      }
      if (off >= s.length) {
        off -= s.length;
        continue;
      }
      const size_t k = std::min<size_t>(s.length - off, n - done);
      const MemStatus m = check(s.lkey, s.addr + off, k, need);
      if (m != MemStatus::kOk) {
        return m;
      }
      Region* r = find(s.lkey);
      fn(r->data.data() + (s.addr + off - r->iova), k, done);
      done += k;
      off = 0;
    }
    return done == n ? MemStatus::kOk : MemStatus::kBounds;
  }

  MemStatus check_local(std::span<const Sge> sges, uint32_t need) override {
    for (const Sge& s : sges) {
      if (s.length != 0) {
        const MemStatus m = check(s.lkey, s.addr, s.length, need);
        if (m != MemStatus::kOk) {
          return m;
        }
      }
    }
    return MemStatus::kOk;
  }
  MemStatus gather(std::span<const Sge> sges, uint64_t off, std::span<std::byte> dst) override {
    return walk(sges, off, dst.size(), 0,
                [&](std::byte* p, size_t k, size_t at) { std::memcpy(dst.data() + at, p, k); });
  }
  MemStatus scatter(std::span<const Sge> sges, uint64_t off,
                    std::span<const std::byte> src) override {
    return walk(sges, off, src.size(), kAccessLocalWrite,
                [&](std::byte* p, size_t k, size_t at) { std::memcpy(p, src.data() + at, k); });
  }
  MemStatus check_remote(uint32_t rkey, uint64_t va, uint64_t len, uint32_t need) override {
    return len == 0 ? MemStatus::kOk : check(rkey, va, len, need);
  }
  MemStatus remote_write(uint32_t rkey, uint64_t va, std::span<const std::byte> src) override {
    const MemStatus m = check_remote(rkey, va, src.size(), kAccessRemoteWrite);
    if (m == MemStatus::kOk && !src.empty()) {
      Region* r = find(rkey);
      std::memcpy(r->data.data() + (va - r->iova), src.data(), src.size());
    }
    return m;
  }
  MemStatus remote_read(uint32_t rkey, uint64_t va, std::span<std::byte> dst) override {
    const MemStatus m = check_remote(rkey, va, dst.size(), kAccessRemoteRead);
    if (m == MemStatus::kOk && !dst.empty()) {
      Region* r = find(rkey);
      std::memcpy(dst.data(), r->data.data() + (va - r->iova), dst.size());
    }
    return m;
  }
  MemStatus remote_atomic(uint32_t rkey, uint64_t va, bool cas, uint64_t cmp_add, uint64_t swap,
                          uint64_t* orig) override {
    const MemStatus m = check_remote(rkey, va, 8, kAccessRemoteAtomic);
    if (m != MemStatus::kOk) {
      return m;
    }
    Region* r = find(rkey);
    uint64_t v = 0;
    std::memcpy(&v, r->data.data() + (va - r->iova), 8);
    *orig = v;
    v = cas ? (v == cmp_add ? swap : v) : v + cmp_add;
    std::memcpy(r->data.data() + (va - r->iova), &v, 8);
    return MemStatus::kOk;
  }
  MemStatus remote_atomic_write(uint32_t rkey, uint64_t va,
                                std::span<const std::byte, 8> bytes) override {
    if ((va & 7) != 0) {
      return MemStatus::kMisaligned;
    }
    const MemStatus m = check_remote(rkey, va, bytes.size(), kAccessRemoteWrite);
    if (m == MemStatus::kOk) {
      Region* r = find(rkey);
      std::memcpy(r->data.data() + (va - r->iova), bytes.data(), bytes.size());
    }
    return m;
  }
  // FLUSH: recorded, checked as the device checks it.
  struct Flush {
    uint32_t rkey;
    uint64_t va;
    uint64_t length;
    bool whole;
    uint32_t type;
  };
  std::vector<Flush> flushes;
  MemStatus remote_flush(uint32_t rkey, uint64_t va, uint64_t length, bool whole,
                         uint32_t type) override {
    Region* r = find(rkey);
    if (r == nullptr) {
      return MemStatus::kBadKey;
    }
    const MemStatus m =
        whole ? ((flush_access(type) & ~r->access) != 0 ? MemStatus::kNoAccess : MemStatus::kOk)
              : check(rkey, va, length, flush_access(type));
    if (m == MemStatus::kOk) {
      flushes.push_back({rkey, va, length, whole, type});
    }
    return m;
  }
  // Memory management: LOCAL_INV and SEND_WITH_INV take a region away;
  // REG_MR is only counted (the device's key states are tested in
  // datapath_test.cc).
  WcStatus local_op(const SendWqe& w, uint8_t* verr) override {
    *verr = 0;
    if (w.opcode == WrOpcode::kLocalInv && regions.erase(w.imm) == 0) {
      *verr = VRNIC_VERR_MR_KEY;
      return WcStatus::kLocQpOpErr;
    }
    ++local_ops;
    return WcStatus::kSuccess;
  }
  bool invalidate_remote(uint32_t rkey) override {
    ++remote_invalidations;
    return regions.erase(rkey) != 0;
  }
  bool read_send_wqe(uint32_t index, SendWqe* wqe, bool* /*bad*/) override {
    if (runaway) {
      *wqe = SendWqe{};
      wqe->wr_id = index;
      return true;
    }
    if (index >= sq.size()) {
      return false;
    }
    *wqe = sq[index];
    return true;
  }
  // A runaway guest keeps its producer index ahead of whatever the device
  // has consumed.
  uint32_t send_producer() override {
    return runaway ? (runaway_pi += 1000) : static_cast<uint32_t>(sq.size());
  }
  bool take_recv_wqe(RecvWqe* wqe, bool* /*bad*/) override {
    if (runaway) {
      *wqe = RecvWqe{};
      wqe->index = rq_index++;
      return true;
    }
    if (rq.empty()) {
      return false;
    }
    *wqe = rq.front();
    rq.pop_front();
    return true;
  }
  bool has_srq() override { return srq; }
  bool recv_pending() override { return runaway || !rq.empty(); }
  void retire_send(uint32_t next_index) override {
    EXPECT_GE(next_index, retired);  // in order, never back
    retired = next_index;
  }
  void complete_send(const Completion& c) override {
    EXPECT_GT(retired, c.wqe_idx);  // the slot is free before the CQE
    send_cqes.push_back(c);
  }
  void complete_recv(const Completion& c) override { recv_cqes.push_back(c); }
  TxStatus transmit(const Packet& pkt, const Payload& payload) override {
    if (busy) {
      ++busy_refusals;
      return TxStatus::kBusy;
    }
    std::vector<std::byte> frame;
    const FrameLayout lay = build_frame(pkt, payload.length, &frame);
    if (!read_payload(payload, std::span(frame).subspan(lay.payload, payload.length))) {
      return TxStatus::kNoMemory;
    }
    seal_frame(frame, lay);
    sent_at.push_back(clock);
    sent_sizes.push_back(frame.size());
    out.push_back(std::move(frame));
    return TxStatus::kSent;
  }
  void event(QpEvent e) override { events.push_back(e); }
  uint64_t now_us() override { return clock; }
  void count_retransmit() override { ++retransmits; }
  void count_rnr_nak(bool sent) override { rnr_naks_rcvd += sent ? 0 : 1; }
  void count_seq_nak(bool sent) override { seq_naks_rcvd += sent ? 0 : 1; }
  void count_refused(Refusal why) override { ++refused[why]; }

  // Helpers for tests.
  uint32_t add_region(uint32_t key, uint64_t iova, size_t size, uint32_t access) {
    Region r;
    r.access = access;
    r.iova = iova;
    r.data.resize(size);
    regions[key] = std::move(r);
    return key;
  }
  void post_recv(uint64_t wr_id, uint32_t key, uint64_t addr, uint32_t len) {
    RecvWqe w;
    w.index = rq_index++;
    w.wr_id = wr_id;
    w.num_sge = 1;
    w.sge[0] = {addr, len, key};
    w.length = len;
    rq.push_back(w);
  }
};

constexpr uint32_t kAll =
    kAccessLocalWrite | kAccessRemoteWrite | kAccessRemoteRead | kAccessRemoteAtomic;

struct Wire {
  double drop = 0;
  double dup = 0;
  double reorder = 0;
  std::mt19937 rng{1};
  int dropped = 0;
};

class TransportPair : public ::testing::Test {
 protected:
  void make(QpType type, uint32_t mtu = 1024,
            const std::function<void(QpConfig&)>& tweak_a = nullptr) {
    QpConfig ca;
    ca.type = type;
    ca.qpn = 10;
    ca.dest_qpn = 11;
    ca.mtu = mtu;
    ca.access = kAll;
    ca.max_rd_atomic = ca.max_dest_rd_atomic = 4;
    ca.min_rnr_timer = 1;  // 10 us
    ca.timeout = 8;        // ~1 ms
    ca.qkey = 0x1111;
    ca.path.sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    ca.path.dgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
    QpConfig cb = ca;
    cb.qpn = 11;
    cb.dest_qpn = 10;
    std::swap(cb.path.sgid, cb.path.dgid);
    if (tweak_a) {
      tweak_a(ca);
    }
    a_ = std::make_unique<QpTransport>(ea_, ca);
    b_ = std::make_unique<QpTransport>(eb_, cb);
    for (QpTransport* t : {a_.get(), b_.get()}) {
      t->set_state(QpState::kInit);
      t->set_rq_psn(0xfffff0);  // start near the wrap
      t->set_sq_psn(0xfffff0);
      t->set_state(QpState::kRtr);
      if (t == a_.get() || b_final_ == QpState::kRts) {
        t->set_state(QpState::kRts);
      }
    }
    ea_.add_region(0x100, 0x10000, 1 << 20, kAll);
    eb_.add_region(0x200, 0x20000, 1 << 20, kAll);
  }

  void deliver(FakeEnv& from, QpTransport& to) {
    auto frames = std::move(from.out);
    from.out.clear();
    if (wire_.reorder > 0 && frames.size() > 1) {
      for (size_t i = 0; i + 1 < frames.size(); ++i) {
        if (std::uniform_real_distribution<>(0, 1)(wire_.rng) < wire_.reorder) {
          std::swap(frames[i], frames[i + 1]);
        }
      }
    }
    for (auto& f : frames) {
      const double r = std::uniform_real_distribution<>(0, 1)(wire_.rng);
      if (r < wire_.drop) {
        ++wire_.dropped;
        continue;
      }
      const int copies = r < wire_.drop + wire_.dup ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        Packet p;
        ASSERT_EQ(decode_frame(f, &p), DecodeStatus::kOk);
        to.receive(p);
      }
    }
  }

  // Run until nothing moves; idle rounds advance the clock to the next
  // timer.  Returns false if it never settles.
  bool run(int max_rounds = 100000) {
    for (int i = 0; i < max_rounds; ++i) {
      bool busy = a_->send_step(16);
      busy |= b_->send_step(16);
      busy |= !ea_.out.empty() || !eb_.out.empty();
      deliver(ea_, *b_);
      deliver(eb_, *a_);
      busy |= a_->timer_step();
      busy |= b_->timer_step();
      if (!busy) {
        const uint64_t next = std::min(a_->next_deadline(), b_->next_deadline());
        if (next == UINT64_MAX) {
          return true;
        }
        ea_.clock = eb_.clock = std::max(next, ea_.clock);
      }
    }
    return false;
  }

  SendWqe wqe(WrOpcode op, uint64_t wr_id, uint64_t laddr, uint32_t len, uint64_t raddr = 0,
              uint32_t rkey = 0x200) {
    SendWqe w;
    w.index = static_cast<uint32_t>(ea_.sq.size());
    w.wr_id = wr_id;
    w.opcode = op;
    w.signaled = true;
    w.num_sge = 1;
    w.sge[0] = {laddr, len, 0x100};
    w.length = len;
    w.remote_addr = raddr;
    w.rkey = rkey;
    return w;
  }

  void fill(FakeEnv& e, uint32_t key, uint64_t va, size_t n, uint32_t seed) {
    Region* r = e.find(key);
    std::mt19937 g(seed);
    for (size_t i = 0; i < n; ++i) {
      r->data[va - r->iova + i] = std::byte(g());
    }
  }
  bool same(FakeEnv& x, uint32_t kx, uint64_t vx, FakeEnv& y, uint32_t ky, uint64_t vy, size_t n) {
    Region* rx = x.find(kx);
    Region* ry = y.find(ky);
    return std::memcmp(rx->data.data() + (vx - rx->iova), ry->data.data() + (vy - ry->iova), n) ==
           0;
  }

  QpState b_final_ = QpState::kRts;  // where make() leaves b
  FakeEnv ea_;
  FakeEnv eb_;
  std::unique_ptr<QpTransport> a_;
  std::unique_ptr<QpTransport> b_;
  Wire wire_;
};

// A guest that keeps its producer indices ahead of the device cannot keep
// a QP in error flushing for ever (issue 9, defect 2): entering the error
// state flushes a bounded number, and each step at most its budget of
// each ring; the rest waits for the next rounds.
TEST_F(TransportPair, FlushingARunawayProducerIsBounded) {
  make(QpType::kRc);
  ea_.runaway = true;
  a_->set_state(QpState::kErr);
  EXPECT_EQ(ea_.send_cqes.size(), 64U);
  EXPECT_EQ(ea_.recv_cqes.size(), 64U);
  for (int round = 0; round < 3; ++round) {
    const size_t sends = ea_.send_cqes.size();
    const size_t recvs = ea_.recv_cqes.size();
    EXPECT_TRUE(a_->send_step(32));
    EXPECT_EQ(ea_.send_cqes.size(), sends + 32);
    EXPECT_EQ(ea_.recv_cqes.size(), recvs + 32);
    EXPECT_TRUE(a_->has_send_work());  // more next round
  }
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kWrFlushErr);
  }
}

// SEND_WITH_INV: the IETH rides on the last packet, the responder
// invalidates the key once (a retransmitted packet is a duplicate), and
// the receive completion names the key.
TEST_F(TransportPair, SendWithInvalidateInvalidatesTheRkeyOnce) {
  make(QpType::kRc);
  wire_.drop = 0.2;
  wire_.dup = 0.1;
  eb_.add_region(0x3a05, 0x90000, 4096, kAll);
  ea_.add_region(0x4b07, 0x90000, 4096, kAll);
  eb_.post_recv(9, 0x200, 0x20000, 8192);
  auto w = wqe(WrOpcode::kSendInv, 5, 0x10000, 3000);
  w.imm = 0x3a05;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].status, WcStatus::kSuccess);
  EXPECT_TRUE(eb_.recv_cqes[0].has_inv);
  EXPECT_FALSE(eb_.recv_cqes[0].has_imm);
  EXPECT_EQ(eb_.recv_cqes[0].imm, 0x3a05U);
  EXPECT_EQ(eb_.recv_cqes[0].byte_len, 3000U);
  EXPECT_EQ(eb_.find(0x3a05), nullptr);
  EXPECT_EQ(eb_.remote_invalidations, 1);
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.send_cqes[0].opcode, WcOpcode::kSend);
  EXPECT_NE(ea_.find(0x4b07), nullptr);  // the sender's keys are its own

  // A key the responder cannot invalidate: IBA class J, both sides fail.
  eb_.post_recv(10, 0x200, 0x20000, 8192);
  wire_.drop = wire_.dup = 0;
  w.index = 1;
  w.wr_id = 6;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 2U);
  EXPECT_EQ(eb_.recv_cqes[1].status, WcStatus::kRemInvReqErr);
  EXPECT_EQ(eb_.recv_cqes[1].vendor_err, VRNIC_VERR_INV_RKEY);
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[1].status, WcStatus::kRemInvReqErr);
  EXPECT_EQ(b_->state(), QpState::kErr);
}

// A READ repeated late, after the requester has its data and has had the
// region invalidated (NVMe-oF: the target READs, then answers with
// SEND_WITH_INV): the replay finds the region gone, is refused and
// counted, and neither QP goes to error.
TEST_F(TransportPair, ALateRepeatedReadOfAnInvalidatedRegionIsDropped) {
  make(QpType::kRc);
  fill(eb_, 0x200, 0x20000, 3000, 9);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x10000, 3000, 0x20000));
  a_->send_step(16);
  ASSERT_EQ(ea_.out.size(), 1U);
  const std::vector<std::byte> request = ea_.out[0];
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 3000));
  eb_.regions.erase(0x200);  // invalidated
  Packet dup;
  ASSERT_EQ(decode_frame(request, &dup), DecodeStatus::kOk);
  b_->receive(dup);
  ASSERT_TRUE(run());
  EXPECT_EQ(b_->state(), QpState::kRts);
  EXPECT_EQ(a_->state(), QpState::kRts);
  EXPECT_EQ(eb_.refused[Refusal::kKey], 1);
  EXPECT_EQ(ea_.send_cqes.size(), 1U);
}

// Repeats of READs the responder has answered (the requester timed out
// while the responses were on their way) are answered again, but they are
// not the requester's outstanding READs: new READs up to max_rd_atomic
// must still be accepted while the replays go out.  Seen with rxe as an
// SRP target: the repeats took the responder's slots, the next READ was
// NAKed as an invalid request and the initiator's QP went to error.
TEST_F(TransportPair, RepeatedReadsDoNotUseUpTheResponderResources) {
  make(QpType::kRc);
  fill(eb_, 0x200, 0x20000, 8 * 512, 5);
  for (uint64_t i = 0; i < 4; ++i) {
    ea_.sq.push_back(wqe(WrOpcode::kRead, i, 0x10000 + i * 512, 512, 0x20000 + i * 512));
  }
  a_->send_step(16);
  ASSERT_EQ(ea_.out.size(), 4U);
  const std::vector<std::vector<std::byte>> requests = ea_.out;
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 4U);
  for (const auto& f : requests) {  // the repeats arrive late
    Packet dup;
    ASSERT_EQ(decode_frame(f, &dup), DecodeStatus::kOk);
    b_->receive(dup);
  }
  for (uint64_t i = 4; i < 8; ++i) {
    ea_.sq.push_back(wqe(WrOpcode::kRead, i, 0x10000 + i * 512, 512, 0x20000 + i * 512));
  }
  a_->send_step(16);
  ASSERT_EQ(ea_.out.size(), 4U);
  deliver(ea_, *b_);
  ASSERT_TRUE(run());
  EXPECT_EQ(b_->state(), QpState::kRts);
  EXPECT_EQ(a_->state(), QpState::kRts);
  EXPECT_EQ(eb_.refused[Refusal::kInvalid], 0);
  ASSERT_EQ(ea_.send_cqes.size(), 8U);
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kSuccess);
  }
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 8 * 512));
}

// SEND_WITH_INV exists on RC only.
TEST_F(TransportPair, SendWithInvalidateOnUcIsRefused) {
  make(QpType::kUc);
  auto w = wqe(WrOpcode::kSendInv, 5, 0x10000, 64);
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(ea_.send_cqes[0].vendor_err, VRNIC_VERR_WQE_QP_TYPE);
}

// LOCAL_INV and REG_MR take effect when the send queue reaches them, but
// complete in order: after the SEND before them is acknowledged.
TEST_F(TransportPair, LocalOpsRunInQueueOrderAndCompleteInOrder) {
  make(QpType::kRc);
  ea_.add_region(0x5c01, 0x90000, 4096, kAll);
  eb_.post_recv(1, 0x200, 0x20000, 8192);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 2000));
  auto inv = wqe(WrOpcode::kLocalInv, 2, 0, 0);
  inv.num_sge = 0;
  inv.imm = 0x5c01;
  ea_.sq.push_back(inv);
  auto reg = wqe(WrOpcode::kRegMr, 3, 0, 0);
  reg.num_sge = 0;
  ea_.sq.push_back(reg);
  a_->send_step(16);
  EXPECT_EQ(ea_.find(0x5c01), nullptr);  // done already ...
  EXPECT_EQ(ea_.local_ops, 2);
  EXPECT_TRUE(ea_.send_cqes.empty());  // ... but not complete before the SEND
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 3U);
  EXPECT_EQ(ea_.send_cqes[0].opcode, WcOpcode::kSend);
  EXPECT_EQ(ea_.send_cqes[1].opcode, WcOpcode::kLocalInv);
  EXPECT_EQ(ea_.send_cqes[1].wr_id, 2U);
  EXPECT_EQ(ea_.send_cqes[2].opcode, WcOpcode::kRegMr);
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kSuccess);
  }
  EXPECT_EQ(ea_.retired, 3U);
  EXPECT_EQ(a_->sq_psn(), psn_add(0xfffff0, 2));  // no PSNs for local work

  // A LOCAL_INV that fails waits for the work before it, then fails.
  ea_.sq.push_back(wqe(WrOpcode::kSend, 4, 0x10000, 100));
  eb_.post_recv(2, 0x200, 0x20000, 8192);
  inv.index = 4;
  inv.wr_id = 5;
  ea_.sq.push_back(inv);  // 0x5c01 is gone
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 5U);
  EXPECT_EQ(ea_.send_cqes[3].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.send_cqes[4].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(ea_.send_cqes[4].vendor_err, VRNIC_VERR_MR_KEY);
  EXPECT_EQ(ea_.send_cqes[4].opcode, WcOpcode::kLocalInv);
  EXPECT_EQ(a_->state(), QpState::kErr);
}

TEST_F(TransportPair, RcSendAcrossManyPacketsAndThePsnWrap) {
  make(QpType::kRc);
  fill(ea_, 0x100, 0x10000, 5000, 1);
  eb_.post_recv(77, 0x200, 0x20000, 8192);
  auto w = wqe(WrOpcode::kSendImm, 5, 0x10000, 5000);
  w.imm = 0xabcd1234;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(eb_.recv_cqes[0].byte_len, 5000U);
  EXPECT_EQ(eb_.recv_cqes[0].wr_id, 77U);
  EXPECT_TRUE(eb_.recv_cqes[0].has_imm);
  EXPECT_EQ(eb_.recv_cqes[0].imm, 0xabcd1234U);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 5000));
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].wr_id, 5U);
  EXPECT_EQ(ea_.send_cqes[0].opcode, WcOpcode::kSend);
  EXPECT_EQ(a_->outstanding(), 0U);
  EXPECT_EQ(a_->sq_psn(), psn_add(0xfffff0, 5));  // 5 packets, across the wrap
}

// While the device has no room (issue 9, defect 4), a requester holds its
// packets back instead of losing them; once there is room, everything goes
// through.
TEST_F(TransportPair, BackpressureHoldsPacketsBack) {
  make(QpType::kRc);
  fill(ea_, 0x100, 0x10000, 3000, 1);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 5, 0x10000, 3000));
  ea_.busy = true;
  a_->send_step(32);
  EXPECT_TRUE(ea_.out.empty());
  EXPECT_GT(ea_.busy_refusals, 0);
  EXPECT_EQ(a_->outstanding(), 1U);
  EXPECT_TRUE(ea_.send_cqes.empty());
  EXPECT_TRUE(a_->has_send_work());  // it will try again
  ea_.busy = false;
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 3000));
}

// An ACK the device has no room for is owed, not dropped: it goes out on
// the responder's next send round, so the requester completes without its
// retry timer.  (Dropped, it left the requester to retry against a peer
// that had seen its receive complete and could be gone: libfabric's
// fi_pingpong then ended in a flushed send.)
TEST_F(TransportPair, AnAckWithNoRoomIsOwedNotDropped) {
  make(QpType::kRc);
  fill(ea_, 0x100, 0x10000, 64, 4);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 7, 0x10000, 64));
  a_->send_step(16);
  eb_.busy = true;
  deliver(ea_, *b_);
  ASSERT_EQ(eb_.recv_cqes.size(), 1U) << "the receive completed";
  EXPECT_GT(eb_.busy_refusals, 0);
  EXPECT_TRUE(eb_.out.empty());
  EXPECT_TRUE(b_->has_send_work()) << "the ACK is owed";
  b_->send_step(16);
  EXPECT_TRUE(eb_.out.empty()) << "still no room";
  eb_.busy = false;
  EXPECT_TRUE(b_->send_step(16));
  ASSERT_EQ(eb_.out.size(), 1U);
  deliver(eb_, *a_);
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.retransmits, 0) << "no retry timer needed";
  EXPECT_FALSE(b_->has_send_work());
  EXPECT_TRUE(run());
  EXPECT_EQ(ea_.retransmits, 0);
}

// The (opcode, PSN) of each frame a side has sent, in order.
std::vector<std::pair<uint8_t, uint32_t>> sent_headers(const FakeEnv& e) {
  std::vector<std::pair<uint8_t, uint32_t>> v;
  for (const auto& f : e.out) {
    Packet p;
    EXPECT_EQ(decode_frame(f, &p), DecodeStatus::kOk);
    v.emplace_back(p.bth.opcode, p.bth.psn);
  }
  return v;
}

// Responses leave in PSN order (IBA 9.7.5.1): the ACK of a SEND that came
// after a READ, and an atomic's ACK, wait behind the READ's responses.  An
// ACK ahead of them would tell the requester that the READ's responses
// were lost, and it would send the READ again.
TEST_F(TransportPair, ResponsesLeaveInPsnOrder) {
  make(QpType::kRc);
  fill(eb_, 0x200, 0x28000, 4000, 3);
  fill(ea_, 0x100, 0x10000, 64, 4);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  eb_.post_recv(2, 0x200, 0x21000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x14000, 4000, 0x28000));
  ea_.sq.push_back(wqe(WrOpcode::kSend, 2, 0x10000, 64));
  auto faa = wqe(WrOpcode::kFetchAdd, 3, 0x18000, 8, 0x20800);
  faa.compare_add = 5;
  ea_.sq.push_back(faa);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 4, 0x10000, 64));
  a_->send_step(16);
  ASSERT_EQ(ea_.out.size(), 4U);
  deliver(ea_, *b_);  // all four requests at once, before b sends anything
  ASSERT_EQ(eb_.recv_cqes.size(), 2U);
  b_->send_step(16);
  const auto h = sent_headers(eb_);
  ASSERT_EQ(h.size(), 6U) << "4 READ responses, the atomic ACK, one coalesced ACK";
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(opcode_info(h[i].first).kind, OpKind::kReadResponse) << i;
  }
  EXPECT_EQ(h[4].first, kAtomicAcknowledge);
  EXPECT_EQ(h[5].first, kAcknowledge);
  for (size_t i = 1; i < h.size(); ++i) {
    EXPECT_TRUE(psn_before(h[i - 1].second, h[i].second)) << "response " << i << " out of order";
  }
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 4U);
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kSuccess);
  }
  EXPECT_EQ(ea_.retransmits, 0) << "nothing was taken for lost";
  EXPECT_TRUE(same(ea_, 0x100, 0x14000, eb_, 0x200, 0x28000, 4000));
}

// A driver's ERR (Qp::modify and DESTROY_QP call send_owed_responses
// first) does not swallow what the responder owes: the READ's responses
// and the ACK of a SEND whose receive completed go out before it, so the
// requester completes both instead of retrying into a QP that is gone.
TEST_F(TransportPair, OwedResponsesLeaveBeforeTheDriversErr) {
  make(QpType::kRc);
  fill(eb_, 0x200, 0x28000, 4000, 3);
  fill(ea_, 0x100, 0x10000, 64, 4);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x14000, 4000, 0x28000));
  ea_.sq.push_back(wqe(WrOpcode::kSend, 2, 0x10000, 64));
  a_->send_step(16);
  deliver(ea_, *b_);  // b takes both; its answers wait for its next round
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  ASSERT_TRUE(eb_.out.empty());
  b_->send_owed_responses();
  b_->set_state(QpState::kErr);
  const auto h = sent_headers(eb_);
  ASSERT_EQ(h.size(), 5U) << "4 READ responses, then the SEND's ACK";
  EXPECT_EQ(h[4].first, kAcknowledge);
  deliver(eb_, *a_);
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kSuccess);
  }
  EXPECT_TRUE(same(ea_, 0x100, 0x14000, eb_, 0x200, 0x28000, 4000));
  // In ERR there is nothing more to send.
  eb_.out.clear();
  b_->send_owed_responses();
  EXPECT_TRUE(eb_.out.empty());
}

// A repeated READ is answered before the ACK that the repeats after it
// bring (the requester went back to the READ, so everything after it comes
// again), and a repeated atomic's answer keeps its place too.
TEST_F(TransportPair, RepeatedResponsesKeepTheirPlace) {
  make(QpType::kRc);
  fill(eb_, 0x200, 0x28000, 2048, 3);
  fill(ea_, 0x100, 0x10000, 64, 4);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x14000, 2048, 0x28000));
  auto faa = wqe(WrOpcode::kFetchAdd, 2, 0x18000, 8, 0x20800);
  faa.compare_add = 5;
  ea_.sq.push_back(faa);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 3, 0x10000, 64));
  a_->send_step(16);
  const std::vector<std::vector<std::byte>> requests = ea_.out;
  deliver(ea_, *b_);
  b_->send_step(16);
  ASSERT_EQ(eb_.out.size(), 4U);
  eb_.out.clear();                  // every response is lost
  for (const auto& f : requests) {  // the requester's go-back-N
    Packet dup;
    ASSERT_EQ(decode_frame(f, &dup), DecodeStatus::kOk);
    b_->receive(dup);
  }
  b_->send_step(16);
  const auto h = sent_headers(eb_);
  ASSERT_EQ(h.size(), 4U) << "2 READ responses, the atomic ACK, the ACK";
  EXPECT_EQ(h[0].first, kReadResponseFirst);
  EXPECT_EQ(h[1].first, kReadResponseLast);
  EXPECT_EQ(h[2].first, kAtomicAcknowledge);
  EXPECT_EQ(h[3].first, kAcknowledge);
  deliver(eb_, *a_);
  ASSERT_EQ(ea_.send_cqes.size(), 3U);
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kSuccess);
  }
  uint64_t v = 0;
  std::memcpy(&v, eb_.find(0x200)->data.data() + 0x800, 8);
  EXPECT_EQ(v, 5U) << "the repeated FETCH_ADD was not carried out again";
  EXPECT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_TRUE(same(ea_, 0x100, 0x14000, eb_, 0x200, 0x28000, 2048));
}

TEST_F(TransportPair, RcWriteReadAndAtomics) {
  make(QpType::kRc);
  fill(ea_, 0x100, 0x10000, 3000, 2);
  fill(eb_, 0x200, 0x28000, 4000, 3);
  uint64_t counter = 100;
  std::memcpy(eb_.find(0x200)->data.data() + 0x800, &counter, 8);
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 1, 0x10000, 3000, 0x21000));
  ea_.sq.push_back(wqe(WrOpcode::kRead, 2, 0x14000, 4000, 0x28000));
  auto faa = wqe(WrOpcode::kFetchAdd, 3, 0x18000, 8, 0x20800);
  faa.compare_add = 5;
  ea_.sq.push_back(faa);
  auto cas = wqe(WrOpcode::kCompareSwap, 4, 0x18008, 8, 0x20800);
  cas.compare_add = 105;
  cas.swap = 7;
  ea_.sq.push_back(cas);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 4U);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ea_.send_cqes[i].status, WcStatus::kSuccess) << i;
    EXPECT_EQ(ea_.send_cqes[i].wr_id, i + 1);
  }
  EXPECT_EQ(ea_.send_cqes[1].opcode, WcOpcode::kRead);
  EXPECT_EQ(ea_.send_cqes[1].byte_len, 4000U);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x21000, 3000));
  EXPECT_TRUE(same(ea_, 0x100, 0x14000, eb_, 0x200, 0x28000, 4000));
  uint64_t v = 0;
  std::memcpy(&v, ea_.find(0x100)->data.data() + 0x8000, 8);
  EXPECT_EQ(v, 100U);  // FETCH_ADD returned the original
  std::memcpy(&v, ea_.find(0x100)->data.data() + 0x8008, 8);
  EXPECT_EQ(v, 105U);  // CMP_AND_SWP returned the original
  std::memcpy(&v, eb_.find(0x200)->data.data() + 0x800, 8);
  EXPECT_EQ(v, 7U);  // and swapped
  EXPECT_TRUE(eb_.recv_cqes.empty());
}

// ATOMIC WRITE (IBA 1.5): the WQE's 8 bytes land at the remote address as
// they were, the answer is an RDMA READ response of no bytes (as rxe
// sends), it completes as ATOMIC_WRITE with byte_len 8, and it counts
// against max_rd_atomic: with a depth of 1 the second waits for the
// first.  A repeat of it is answered again, not carried out again.
TEST_F(TransportPair, AtomicWritePlacesItsEightBytesOnce) {
  make(QpType::kRc, 1024, [](QpConfig& c) { c.max_rd_atomic = 1; });
  auto aw = [&](uint64_t wr_id, uint64_t raddr, uint64_t value) {
    SendWqe w = wqe(WrOpcode::kAtomicWrite, wr_id, 0, 0, raddr);
    w.num_sge = 0;
    w.compare_add = value;
    return w;
  };
  ea_.sq.push_back(aw(1, 0x20800, 0x1122334455667788ULL));
  ea_.sq.push_back(aw(2, 0x20808, 0x99aabbccddeeff00ULL));
  ASSERT_TRUE(a_->send_step(16));
  EXPECT_EQ(a_->sq_next(), 1U) << "the second waits for the first's ACK";
  const std::vector<std::vector<std::byte>> first = ea_.out;
  ASSERT_EQ(first.size(), 1U);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(ea_.send_cqes[i].status, WcStatus::kSuccess) << i;
    EXPECT_EQ(ea_.send_cqes[i].opcode, WcOpcode::kAtomicWrite) << i;
    EXPECT_EQ(ea_.send_cqes[i].byte_len, 8U) << i;
  }
  const std::array<uint8_t, 16> want = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                                        0x00, 0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99};
  std::byte* at = eb_.find(0x200)->data.data() + 0x800;
  EXPECT_EQ(std::memcmp(at, want.data(), want.size()), 0);
  EXPECT_TRUE(eb_.recv_cqes.empty());
  // The first one again, late: answered again, not written again.
  std::memset(at, 0, 8);
  ea_.out = first;
  deliver(ea_, *b_);
  EXPECT_EQ(std::to_integer<int>(at[0]), 0);
  b_->send_step(16);
  ASSERT_EQ(eb_.out.size(), 1U);
  Packet answer;
  ASSERT_EQ(decode_frame(eb_.out[0], &answer), DecodeStatus::kOk);
  EXPECT_EQ(operation_of(answer.bth.opcode), kReadResponseOnly);
  EXPECT_TRUE(answer.payload.empty());
  EXPECT_EQ(answer.bth.psn, Packet{}.bth.psn + 0xfffff0U);
  EXPECT_EQ(b_->state(), QpState::kRts);
}

// An unaligned target is an invalid request; a key or a QP without remote
// write is an access error (remote atomic access is not what it needs);
// neither writes anything.
struct AtomicWriteCase {
  uint64_t raddr;
  uint32_t rkey;
  bool qp_remote_write;
  WcStatus want;
};
class AtomicWriteChecks : public TransportPair,
                          public ::testing::WithParamInterface<AtomicWriteCase> {};

TEST_P(AtomicWriteChecks, NeedsAlignmentAndRemoteWrite) {
  const AtomicWriteCase& c = GetParam();
  make(QpType::kRc);
  if (!c.qp_remote_write) {
    b_->config().access = kAll & ~kAccessRemoteWrite;
  }
  eb_.add_region(0x300, 0x30000, 4096, kAll & ~kAccessRemoteWrite);
  eb_.add_region(0x400, 0x40000, 4096, kAccessLocalWrite | kAccessRemoteWrite);
  SendWqe w = wqe(WrOpcode::kAtomicWrite, 1, 0, 0, c.raddr, c.rkey);
  w.num_sge = 0;
  w.compare_add = ~0ULL;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, c.want);
  EXPECT_EQ(ea_.send_cqes[0].opcode, WcOpcode::kAtomicWrite);
  const bool ok = c.want == WcStatus::kSuccess;
  EXPECT_EQ(b_->state(), ok ? QpState::kRts : QpState::kErr);
  const Region* r = eb_.find(c.rkey);
  EXPECT_EQ(std::count(r->data.begin(), r->data.end(), std::byte{0xff}), ok ? 8 : 0);
}

INSTANTIATE_TEST_SUITE_P(
    TransportPair, AtomicWriteChecks,
    ::testing::Values(AtomicWriteCase{0x20804, 0x200, true, WcStatus::kRemInvReqErr},
                      AtomicWriteCase{0x30000, 0x300, true, WcStatus::kRemAccessErr},
                      AtomicWriteCase{0x20800, 0x200, false, WcStatus::kRemAccessErr},
                      AtomicWriteCase{0x40000, 0x400, true, WcStatus::kSuccess}));

// Only RC carries it, and never as inline data.
TEST_F(TransportPair, AtomicWriteIsRcOnly) {
  make(QpType::kUc);
  SendWqe w = wqe(WrOpcode::kAtomicWrite, 1, 0, 0, 0x20800);
  w.num_sge = 0;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(ea_.send_cqes[0].vendor_err, VRNIC_VERR_WQE_QP_TYPE);
  EXPECT_TRUE(ea_.out.empty());
}

// FLUSH (IBA 1.5): one FETH+RETH request, executed in order after the
// WRITE before it, answered with an RDMA READ response of no bytes, and
// completed as FLUSH with the range's length (as rxe).  At selectivity
// level MR the responder flushes the whole region of the key.
TEST_F(TransportPair, FlushFollowsTheWriteBeforeItAndCompletes) {
  make(QpType::kRc);
  constexpr uint32_t kFlushAll = kAccessFlushGlobal | kAccessFlushPersistent;
  b_->config().access = kAll | kFlushAll;
  eb_.add_region(0x300, 0x30000, 8192, kAll | kFlushAll);
  fill(ea_, 0x100, 0x10000, 4096, 7);
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 1, 0x10000, 4096, 0x30000, 0x300));
  SendWqe f = wqe(WrOpcode::kFlush, 2, 0, 4096, 0x30000, 0x300);
  f.num_sge = 0;
  f.imm = VRNIC_FLUSH_GLOBAL;
  ea_.sq.push_back(f);
  f.wr_id = 3;
  f.imm = VRNIC_FLUSH_PERSISTENT | (VRNIC_FLUSH_LEVEL_MR << 4);
  f.remote_addr = 0;  // ignored at level MR
  ea_.sq.push_back(f);
  a_->send_step(16);
  const auto req = sent_headers(ea_);
  ASSERT_EQ(req.size(), 6U) << "4 WRITE packets, 2 FLUSHes";
  EXPECT_EQ(operation_of(req[4].first), kFlush);
  deliver(ea_, *b_);
  ASSERT_EQ(eb_.flushes.size(), 2U);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x300, 0x30000, 4096)) << "the WRITE came first";
  EXPECT_EQ(eb_.flushes[0].va, 0x30000U);
  EXPECT_EQ(eb_.flushes[0].length, 4096U);
  EXPECT_FALSE(eb_.flushes[0].whole);
  EXPECT_EQ(eb_.flushes[0].type, uint32_t{VRNIC_FLUSH_GLOBAL});
  EXPECT_TRUE(eb_.flushes[1].whole);
  EXPECT_EQ(eb_.flushes[1].type, uint32_t{VRNIC_FLUSH_PERSISTENT});
  b_->send_step(16);
  const auto resp = sent_headers(eb_);
  ASSERT_EQ(resp.size(), 3U) << "the WRITE's ACK, then the two answers";
  EXPECT_EQ(resp[1].first, kReadResponseOnly);
  EXPECT_EQ(resp[2].first, kReadResponseOnly);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 3U);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(ea_.send_cqes[i].status, WcStatus::kSuccess);
    EXPECT_EQ(ea_.send_cqes[i].opcode, WcOpcode::kFlush);
    EXPECT_EQ(ea_.send_cqes[i].byte_len, 4096U);
  }
  EXPECT_EQ(eb_.flushes.size(), 2U) << "nothing repeated";
}

// What a FLUSH needs: a placement type and known bits (else the WQE fails
// at the requester and nothing is sent), an RC QP, the flush rights of the
// type on the responder's QP (else an invalid request NAK, as in rxe) and
// on its key (else a remote access error).
struct FlushCase {
  QpType type;
  uint32_t flags;      // the WQE's VRNIC_FLUSH_*
  uint32_t qp_flush;   // flush rights of b's QP
  uint32_t key_flush;  // flush rights of the key
  WcStatus want;
  uint8_t verr;
};
class FlushChecks : public TransportPair, public ::testing::WithParamInterface<FlushCase> {};

TEST_P(FlushChecks, RefusesWhatItMustRefuse) {
  const FlushCase& c = GetParam();
  make(c.type);
  b_->config().access = kAll | c.qp_flush;
  eb_.add_region(0x300, 0x30000, 4096, kAll | c.key_flush);
  SendWqe f = wqe(WrOpcode::kFlush, 1, 0, 64, 0x30000, 0x300);
  f.num_sge = 0;
  f.imm = c.flags;
  ea_.sq.push_back(f);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, c.want);
  EXPECT_EQ(ea_.send_cqes[0].vendor_err, c.verr);
  EXPECT_EQ(eb_.flushes.size(), c.want == WcStatus::kSuccess ? 1U : 0U);
  const bool local = c.verr == VRNIC_VERR_WQE_FLUSH || c.verr == VRNIC_VERR_WQE_QP_TYPE;
  EXPECT_EQ(b_->state(), local || c.want == WcStatus::kSuccess ? QpState::kRts : QpState::kErr);
}

constexpr uint32_t kFg = kAccessFlushGlobal;
constexpr uint32_t kFp = kAccessFlushPersistent;
INSTANTIATE_TEST_SUITE_P(
    TransportPair, FlushChecks,
    ::testing::Values(
        FlushCase{QpType::kRc, VRNIC_FLUSH_GLOBAL, kFg, kFg, WcStatus::kSuccess, 0},
        FlushCase{QpType::kRc, 0, kFg, kFg, WcStatus::kLocQpOpErr, VRNIC_VERR_WQE_FLUSH},
        FlushCase{QpType::kRc, 0x4, kFg, kFg, WcStatus::kLocQpOpErr, VRNIC_VERR_WQE_FLUSH},
        FlushCase{QpType::kRc, VRNIC_FLUSH_GLOBAL | (2 << 4), kFg, kFg, WcStatus::kLocQpOpErr,
                  VRNIC_VERR_WQE_FLUSH},
        FlushCase{QpType::kUc, VRNIC_FLUSH_GLOBAL, kFg, kFg, WcStatus::kLocQpOpErr,
                  VRNIC_VERR_WQE_QP_TYPE},
        FlushCase{QpType::kRc, VRNIC_FLUSH_GLOBAL, 0, kFg, WcStatus::kRemInvReqErr,
                  VRNIC_VERR_NAK_INVALID},
        FlushCase{QpType::kRc, VRNIC_FLUSH_PERSISTENT, kFg, kFg | kFp, WcStatus::kRemInvReqErr,
                  VRNIC_VERR_NAK_INVALID},
        FlushCase{QpType::kRc, VRNIC_FLUSH_GLOBAL, kFg, 0, WcStatus::kRemAccessErr,
                  VRNIC_VERR_NAK_ACCESS},
        FlushCase{QpType::kRc, VRNIC_FLUSH_GLOBAL | VRNIC_FLUSH_PERSISTENT, kFg | kFp, kFg,
                  WcStatus::kRemAccessErr, VRNIC_VERR_NAK_ACCESS}));

// A WRITE_ONLY to b (QP 11) at its expected PSN, into its region, from
// source GID last byte src (10.0.0.1 is a, b's peer).
Packet write_to_b(uint8_t src, std::span<const std::byte> payload, uint32_t rkey = 0x200,
                  Transport t = Transport::kRc) {
  Packet p;
  p.path.sgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, src};
  p.path.dgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  p.bth.opcode = opcode(t, kWriteOnly);
  p.bth.dest_qp = 11;
  p.bth.psn = 0xfffff0;
  p.reth = {0x20000, rkey, static_cast<uint32_t>(payload.size())};
  p.payload = payload;
  return p;
}

// RC and UC take packets only from the QP's peer (issue 9, defect 5): a
// WRITE with the right QPN, PSN and rkey from any other address is
// refused, counted, and leaves the QP as it was; from the peer it lands.
class PeerCheck : public TransportPair, public ::testing::WithParamInterface<QpType> {};

TEST_P(PeerCheck, PacketsNotFromThePeerAreRefused) {
  make(GetParam());
  const Transport t = GetParam() == QpType::kRc ? Transport::kRc : Transport::kUc;
  const std::vector<std::byte> data(64, std::byte{0x5a});
  b_->receive(write_to_b(9, data, 0x200, t));
  EXPECT_EQ(eb_.refused[Refusal::kAddress], 1);
  EXPECT_EQ(eb_.find(0x200)->data[0], std::byte{0});
  EXPECT_TRUE(eb_.out.empty());  // not even a NAK
  EXPECT_EQ(b_->state(), QpState::kRts);
  b_->receive(write_to_b(1, data, 0x200, t));
  EXPECT_EQ(eb_.find(0x200)->data[0], std::byte{0x5a});
  EXPECT_EQ(eb_.refused[Refusal::kAddress], 1);
}

INSTANTIATE_TEST_SUITE_P(RcAndUc, PeerCheck, ::testing::Values(QpType::kRc, QpType::kUc));

// A UC WRITE through a bad rkey is dropped as UC must, but counted
// (issue 9, defect 5): the QP stays in RTS and takes the next message.
TEST_F(TransportPair, UcKeyViolationsAreCounted) {
  make(QpType::kUc);
  const std::vector<std::byte> data(64, std::byte{0x5a});
  b_->receive(write_to_b(1, data, 0x999, Transport::kUc));
  EXPECT_EQ(eb_.refused[Refusal::kKey], 1);
  EXPECT_EQ(eb_.find(0x200)->data[0], std::byte{0});
  EXPECT_EQ(b_->state(), QpState::kRts);
  Packet next = write_to_b(1, data, 0x200, Transport::kUc);
  next.bth.psn = 0xfffff1;
  b_->receive(next);
  EXPECT_EQ(eb_.find(0x200)->data[0], std::byte{0x5a});
}

// Nor can a UC QP's R_Key be swept from the wire (issue 24, defect 3): a
// sender that tries key after key gets a few tries, then the QP is in
// ERROR with a QP_ACCESS_ERR event, and the right key finds nothing.
// Before, the QP took every guess silently and the right one landed.
TEST_F(TransportPair, UcKeySweepPutsTheQpInError) {
  make(QpType::kUc);
  const std::vector<std::byte> data(64, std::byte{0x5a});
  uint32_t psn = 0xfffff0;
  for (uint32_t key = 0x100; key < 0x200; ++key, psn = (psn + 1) & 0xffffff) {
    Packet p = write_to_b(1, data, key << 8, Transport::kUc);
    p.bth.psn = psn;
    b_->receive(p);
  }
  EXPECT_EQ(b_->state(), QpState::kErr);
  EXPECT_LE(eb_.refused[Refusal::kKey], 16);
  ASSERT_FALSE(eb_.events.empty());
  EXPECT_EQ(eb_.events.back(), QpEvent::kAccessErr);
  Packet right = write_to_b(1, data, 0x200, Transport::kUc);
  right.bth.psn = psn;
  b_->receive(right);
  EXPECT_EQ(eb_.find(0x200)->data[0], std::byte{0});
}

// A responder answers from RTR on: a passive side (as in ib_read_bw's
// server) never moves to RTS, yet must serve READs and atomics.
TEST_F(TransportPair, ResponderInRtrServesReadsAndAtomics) {
  b_final_ = QpState::kRtr;
  make(QpType::kRc);
  fill(eb_, 0x200, 0x28000, 3000, 4);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x14000, 3000, 0x28000));
  auto faa = wqe(WrOpcode::kFetchAdd, 2, 0x18000, 8, 0x20800);
  faa.compare_add = 3;
  ea_.sq.push_back(faa);
  ASSERT_TRUE(run());
  EXPECT_EQ(b_->state(), QpState::kRtr);
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.send_cqes[1].status, WcStatus::kSuccess);
  EXPECT_TRUE(same(ea_, 0x100, 0x14000, eb_, 0x200, 0x28000, 3000));
  uint64_t v = 0;
  std::memcpy(&v, eb_.find(0x200)->data.data() + 0x800, 8);
  EXPECT_EQ(v, 3U);
}

TEST_F(TransportPair, WriteWithImmConsumesAReceive) {
  make(QpType::kRc);
  eb_.post_recv(9, 0x200, 0x20000, 16);
  auto w = wqe(WrOpcode::kWriteImm, 1, 0x10000, 2500, 0x24000);
  w.imm = 42;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].opcode, WcOpcode::kRecvWriteImm);
  EXPECT_EQ(eb_.recv_cqes[0].byte_len, 2500U);
  EXPECT_EQ(eb_.recv_cqes[0].imm, 42U);
}

TEST_F(TransportPair, ReceiverNotReadyRetriesThenSucceeds) {
  make(QpType::kRc);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 100));
  // No receive posted: the first attempts get RNR NAKs.
  for (int i = 0; i < 20; ++i) {
    a_->send_step(16);
    deliver(ea_, *b_);
    deliver(eb_, *a_);
  }
  EXPECT_GE(ea_.rnr_naks_rcvd, 1);
  EXPECT_TRUE(ea_.send_cqes.empty());
  eb_.post_recv(1, 0x200, 0x20000, 100);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
}

// RNR NAKs show the responder alive: however long they go on (rnr_retry
// 7 is for ever), the ACK timeout's retry count must not run out.
TEST_F(TransportPair, LongReceiverNotReadyIsNotATimeout) {
  make(QpType::kRc, 1024, [](QpConfig& c) {
    c.retry_cnt = 1;
    c.timeout = 1;  // 8 us
    c.rnr_retry = 7;
  });
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 100));
  for (int i = 0; i < 200; ++i) {
    a_->send_step(16);
    deliver(ea_, *b_);
    deliver(eb_, *a_);
    ea_.clock = eb_.clock = ea_.clock + 50;  // past several ACK timeouts
    a_->timer_step();
  }
  EXPECT_GE(ea_.rnr_naks_rcvd, 10);
  EXPECT_TRUE(ea_.send_cqes.empty());
  eb_.post_recv(1, 0x200, 0x20000, 100);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
}

TEST_F(TransportPair, ReceiverNotReadyRetriesRunOut) {
  make(QpType::kRc, 1024, [](QpConfig& c) { c.rnr_retry = 2; });
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 100));
  ea_.sq.push_back(wqe(WrOpcode::kSend, 2, 0x10000, 100));
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(ea_.send_cqes[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(ea_.rnr_naks_rcvd, 3);  // the first try and two retries
  EXPECT_EQ(a_->state(), QpState::kErr);
}

TEST_F(TransportPair, RemoteAccessErrors) {
  make(QpType::kRc);
  eb_.regions[0x300] = Region{kAccessLocalWrite, 0x30000, std::vector<std::byte>(4096)};
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 1, 0x10000, 100, 0x30000, 0x300));  // no remote write
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(a_->state(), QpState::kErr);
  EXPECT_EQ(b_->state(), QpState::kErr);
  ASSERT_FALSE(eb_.events.empty());
  EXPECT_EQ(eb_.events.back(), QpEvent::kAccessErr);
  // Nothing was written.
  for (std::byte b : eb_.find(0x300)->data) {
    ASSERT_EQ(b, std::byte{0});
  }
}

TEST_F(TransportPair, ReadOutOfBounds) {
  make(QpType::kRc);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x10000, 100, 0x20000 + (1 << 20) - 10));
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kRemAccessErr);
}

TEST_F(TransportPair, ReadWithUnknownRkey) {
  make(QpType::kRc);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x10000, 100, 0x20000, 0x999));
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kRemAccessErr);
}

TEST_F(TransportPair, LocalProtection) {
  make(QpType::kRc);
  auto bad = wqe(WrOpcode::kSend, 1, 0x10000, 100);
  bad.sge[0].lkey = 0x555;
  ea_.sq.push_back(bad);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 2, 0x10000, 100));
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(ea_.send_cqes[1].status, WcStatus::kWrFlushErr);
}

TEST_F(TransportPair, ReceiveTooSmall) {
  make(QpType::kRc);
  eb_.post_recv(1, 0x200, 0x20000, 10);  // too small
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 100));
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].status, WcStatus::kLocLenErr);
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kRemInvReqErr);
}

TEST_F(TransportPair, ErrorStateFlushesEverything) {
  make(QpType::kRc);
  eb_.post_recv(1, 0x200, 0x20000, 100);
  eb_.post_recv(2, 0x200, 0x20000, 100);
  b_->set_state(QpState::kErr);
  ASSERT_EQ(eb_.recv_cqes.size(), 2U);
  EXPECT_EQ(eb_.recv_cqes[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(eb_.recv_cqes[1].wr_id, 2U);
  // Work posted after the error is flushed too.
  eb_.post_recv(3, 0x200, 0x20000, 100);
  eb_.sq.push_back(wqe(WrOpcode::kSend, 4, 0x10000, 100));
  b_->send_step(16);
  ASSERT_EQ(eb_.recv_cqes.size(), 3U);
  ASSERT_EQ(eb_.send_cqes.size(), 1U);
  EXPECT_EQ(eb_.send_cqes[0].status, WcStatus::kWrFlushErr);
}

TEST_F(TransportPair, UnsignaledWorkCompletesSilently) {
  make(QpType::kRc);
  for (int i = 0; i < 10; ++i) {
    auto w = wqe(WrOpcode::kWrite, static_cast<uint64_t>(i), 0x10000, 64, 0x20000);
    w.signaled = i == 9;
    ea_.sq.push_back(w);
  }
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].wr_id, 9U);
  EXPECT_EQ(ea_.send_cqes[0].wqe_idx, 9U);
}

TEST_F(TransportPair, UdCarriesTheGrhAndTheSource) {
  make(QpType::kUd);
  eb_.post_recv(1, 0x200, 0x20000, 40 + 1024);
  auto w = wqe(WrOpcode::kSend, 1, 0x10000, 500);
  w.remote_qpn = 11;
  w.remote_qkey = 0x1111;
  w.ud_path = a_->config().path;
  fill(ea_, 0x100, 0x10000, 500, 9);
  ea_.sq.push_back(w);
  auto too_big = wqe(WrOpcode::kSend, 2, 0x10000, 2000);
  too_big.ud_path = w.ud_path;
  ea_.sq.push_back(too_big);
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].byte_len, 540U);
  EXPECT_EQ(eb_.recv_cqes[0].src_qp, 10U);
  EXPECT_TRUE(eb_.recv_cqes[0].grh);
  EXPECT_TRUE(eb_.recv_cqes[0].ipv4);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000 + 40, 500));
  // The GRH holds the IPv4 header in its last 20 bytes: version 4, UDP.
  const auto ip = wire::load<wire::Ipv4Hdr>(eb_.find(0x200)->data, kGrhSize - kIpv4HdrSize);
  EXPECT_EQ(ip.version_ihl, wire::kIpv4VersionIhl);
  EXPECT_EQ(ip.protocol, wire::kIpProtoUdp);
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.send_cqes[1].status, WcStatus::kLocLenErr);
}

// UC and UD (IBA 10.3.1): a send WQE that fails takes the send queue to
// SQE, not the QP to ERR: it completes in error, the send after it is
// flushed, a message from the peer is still received, and after RTS the
// QP sends again.  (RC goes to ERR: TransportPair.LocalProtection.)
class SqError : public TransportPair, public ::testing::WithParamInterface<QpType> {};

TEST_P(SqError, AFailedSendStopsOnlyTheSendQueue) {
  make(GetParam());
  auto send = [&](uint64_t wr_id, uint32_t lkey) {
    SendWqe w = wqe(WrOpcode::kSend, wr_id, 0x10000, 100);
    w.sge[0].lkey = lkey;
    w.remote_qpn = 11;
    w.remote_qkey = 0x1111;
    w.ud_path = a_->config().path;
    ea_.sq.push_back(w);
  };
  send(1, 0x999);  // no such key
  send(2, 0x100);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(ea_.send_cqes[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(a_->state(), QpState::kSqe);
  EXPECT_TRUE(ea_.events.empty()) << "no asynchronous event";
  EXPECT_TRUE(eb_.recv_cqes.empty());
  // Its receive queue still works.
  ea_.post_recv(7, 0x100, 0x18000, 1024);
  SendWqe back = wqe(WrOpcode::kSend, 3, 0x20000, 64);
  back.sge[0].lkey = 0x200;
  back.remote_qpn = 10;
  back.remote_qkey = 0x1111;
  back.ud_path = b_->config().path;
  eb_.sq.push_back(back);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.recv_cqes.size(), 1U);
  EXPECT_EQ(ea_.recv_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.recv_cqes[0].wr_id, 7U);
  // RTS again: the next send goes out.
  a_->set_state(QpState::kRts);
  eb_.post_recv(8, 0x200, 0x30000, 1024);
  send(4, 0x100);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 3U);
  EXPECT_EQ(ea_.send_cqes[2].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.send_cqes[2].wr_id, 4U);
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].wr_id, 8U);
}

INSTANTIATE_TEST_SUITE_P(TransportPair, SqError, ::testing::Values(QpType::kUd, QpType::kUc));

TEST_F(TransportPair, UdWrongQkeyIsDropped) {
  make(QpType::kUd);
  eb_.post_recv(1, 0x200, 0x20000, 2000);
  auto w = wqe(WrOpcode::kSend, 1, 0x10000, 10);
  w.remote_qpn = 11;
  w.remote_qkey = 0x2222;
  w.ud_path = a_->config().path;
  ea_.sq.push_back(w);
  ASSERT_TRUE(run());
  EXPECT_TRUE(eb_.recv_cqes.empty());
  EXPECT_EQ(eb_.rq.size(), 1U);
}

TEST_F(TransportPair, UcSendAndWrite) {
  make(QpType::kUc);
  fill(ea_, 0x100, 0x10000, 3000, 4);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 3000));
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 2, 0x10000, 3000, 0x30000));
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].byte_len, 3000U);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 3000));
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x30000, 3000));
  EXPECT_EQ(ea_.send_cqes.size(), 2U);
}

TEST_F(TransportPair, UcDropsAMessageThatLostAPacket) {
  make(QpType::kUc);
  eb_.post_recv(1, 0x200, 0x20000, 4096);
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 3000));
  a_->send_step(16);
  ASSERT_EQ(ea_.out.size(), 3U);
  ea_.out.erase(ea_.out.begin() + 1);  // the middle packet is lost
  deliver(ea_, *b_);
  EXPECT_TRUE(eb_.recv_cqes.empty());
  // The receive WQE serves the next message.
  ea_.sq.push_back(wqe(WrOpcode::kSend, 2, 0x10000, 100));
  ASSERT_TRUE(run());
  ASSERT_EQ(eb_.recv_cqes.size(), 1U);
  EXPECT_EQ(eb_.recv_cqes[0].wr_id, 1U);
  EXPECT_EQ(eb_.recv_cqes[0].byte_len, 100U);
}

TEST_F(TransportPair, FenceWaitsForEarlierReads) {
  make(QpType::kRc);
  ea_.sq.push_back(wqe(WrOpcode::kRead, 1, 0x10000, 2048, 0x20000));
  auto w = wqe(WrOpcode::kSend, 2, 0x10000, 10);
  w.fence = true;
  ea_.sq.push_back(w);
  eb_.post_recv(1, 0x200, 0x30000, 100);
  a_->send_step(16);
  EXPECT_EQ(a_->sq_next(), 1U);  // the fenced send waits
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 2U);
  EXPECT_EQ(ea_.send_cqes[0].wr_id, 1U);
  EXPECT_EQ(ea_.send_cqes[1].wr_id, 2U);
}

TEST_F(TransportPair, PeerGoneEndsInRetryExceeded) {
  make(QpType::kRc, 1024, [](QpConfig& c) { c.retry_cnt = 3; });
  wire_.drop = 1.0;
  ea_.sq.push_back(wqe(WrOpcode::kSend, 1, 0x10000, 100));
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(ea_.retransmits, 3);
}

// One lost packet, one retry: the responder's sequence NAK, told three
// times (a wire that duplicates, or delivers it late), rewinds once and
// uses one retry, so a QP with a single retry still gets through.  Before,
// each copy rewound again and used a retry: RETRY_EXC_ERR.
TEST_F(TransportPair, ARepeatedNakIsOneRetry) {
  make(QpType::kRc, 1024, [](QpConfig& c) { c.retry_cnt = 1; });
  fill(ea_, 0x100, 0x10000, 8192, 7);
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 1, 0x10000, 8192, 0x20000));
  a_->send_step(16);
  auto frames = std::move(ea_.out);
  ea_.out.clear();
  ASSERT_EQ(frames.size(), 8U);
  for (size_t i = 0; i < frames.size(); ++i) {
    if (i == 2) {
      continue;  // lost
    }
    Packet p;
    ASSERT_EQ(decode_frame(frames[i], &p), DecodeStatus::kOk);
    b_->receive(p);
  }
  auto naks = std::move(eb_.out);
  eb_.out.clear();
  ASSERT_FALSE(naks.empty());
  for (int copy = 0; copy < 3; ++copy) {
    for (const auto& f : naks) {
      Packet p;
      ASSERT_EQ(decode_frame(f, &p), DecodeStatus::kOk);
      a_->receive(p);
    }
  }
  EXPECT_EQ(ea_.seq_naks_rcvd, 3);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 8192));
}

// Go-back-N keeps at most 128 packets beyond the oldest unacknowledged
// one on the wire, and the responder's ACKs (one per 32 packets) open it.
TEST_F(TransportPair, SendWindowBoundsPacketsInFlight) {
  make(QpType::kRc, 1024);
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 1, 0x10000, 512 * 1024, 0x20000));
  for (int i = 0; i < 10; ++i) {
    a_->send_step(1000);
  }
  EXPECT_EQ(ea_.out.size(), 128U);
  EXPECT_FALSE(a_->has_send_work());  // nothing to do until an ACK
  deliver(ea_, *b_);
  EXPECT_EQ(eb_.out.size(), 4U);  // coalesced: one ACK per 32 packets
  deliver(eb_, *a_);
  EXPECT_TRUE(a_->has_send_work());
  a_->send_step(1000);
  EXPECT_EQ(ea_.out.size(), 128U);
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.retransmits, 0);
}

// Random loss, duplication and reordering: every byte still arrives, in
// order, exactly once, and every operation completes.
class LossyWire : public TransportPair, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(LossyWire, RcMovesEveryByte) {
  make(QpType::kRc);
  wire_.drop = 0.05;
  wire_.dup = 0.03;
  wire_.reorder = 0.05;
  wire_.rng.seed(GetParam());
  std::mt19937 g(GetParam() + 1);
  constexpr int kMsgs = 120;
  std::vector<uint32_t> lens;
  std::vector<uint64_t> expect_orig;
  uint64_t counter = 1000;
  // The counter lives apart from the message buffers, at remote 0x118000.
  std::memcpy(eb_.find(0x200)->data.data() + 0xf8000, &counter, 8);
  for (int i = 0; i < kMsgs; ++i) {
    const uint32_t len = 1 + g() % 6000;
    lens.push_back(len);
    const uint64_t off = static_cast<uint64_t>(i) * 8192 % 0xe0000;
    const auto id = static_cast<uint64_t>(i);
    fill(ea_, 0x100, 0x10000 + off, len, static_cast<uint32_t>(i));
    switch (i % 4) {
      case 0:
        eb_.post_recv(id, 0x200, 0x20000 + off, 8192);
        ea_.sq.push_back(wqe(WrOpcode::kSend, id, 0x10000 + off, len));
        break;
      case 1:
        ea_.sq.push_back(wqe(WrOpcode::kWrite, id, 0x10000 + off, len, 0x20000 + off));
        break;
      case 2:
        fill(eb_, 0x200, 0x20000 + off, len, static_cast<uint32_t>(i + 1000));
        ea_.sq.push_back(wqe(WrOpcode::kRead, id, 0x10000 + off, len, 0x20000 + off));
        break;
      default: {
        auto w = wqe(WrOpcode::kFetchAdd, id, 0x100000 + static_cast<uint64_t>(i) * 8, 8,
                     0x20000 + 0xf8000);
        w.compare_add = 1;
        ea_.sq.push_back(w);
        expect_orig.push_back(counter++);
        break;
      }
    }
  }
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), static_cast<size_t>(kMsgs));
  size_t atomic = 0;
  for (int i = 0; i < kMsgs; ++i) {
    ASSERT_EQ(ea_.send_cqes[i].status, WcStatus::kSuccess) << i;
    EXPECT_EQ(ea_.send_cqes[i].wr_id, static_cast<uint64_t>(i));
    const uint64_t off = static_cast<uint64_t>(i) * 8192 % 0xe0000;
    if (i % 4 == 3) {
      uint64_t v = 0;
      std::memcpy(&v, ea_.find(0x100)->data.data() + 0xf0000 + i * 8, 8);
      EXPECT_EQ(v, expect_orig[atomic++]) << i;  // each add happened exactly once
    } else if (i % 4 != 0) {
      EXPECT_TRUE(same(ea_, 0x100, 0x10000 + off, eb_, 0x200, 0x20000 + off, lens[i])) << i;
    }
  }
  uint64_t final_counter = 0;
  std::memcpy(&final_counter, eb_.find(0x200)->data.data() + 0xf8000, 8);
  EXPECT_EQ(final_counter, counter);
  ASSERT_EQ(eb_.recv_cqes.size(), static_cast<size_t>(kMsgs / 4));
  for (size_t j = 0; j < eb_.recv_cqes.size(); ++j) {
    EXPECT_EQ(eb_.recv_cqes[j].status, WcStatus::kSuccess);
    EXPECT_EQ(eb_.recv_cqes[j].byte_len, lens[j * 4]);
    EXPECT_EQ(eb_.recv_cqes[j].wr_id, j * 4);
  }
  EXPECT_GT(wire_.dropped, 0);
  EXPECT_GT(ea_.retransmits + eb_.retransmits, 0);
  EXPECT_EQ(a_->state(), QpState::kRts);
  EXPECT_EQ(b_->state(), QpState::kRts);
}

INSTANTIATE_TEST_SUITE_P(Seeds, LossyWire, ::testing::Values(1U, 2U, 3U, 20261130U, 777U));

// ---------------------------------------------------------------------------
// Packet pacing (MODIFY_QP's rate limit)

TEST(Pacer, CreditGrowsWithTimeUpToTheBurst) {
  Pacer p;
  EXPECT_TRUE(p.may_send(0));  // unpaced: always
  EXPECT_FALSE(p.owes());
  p.set(8000, 0, 1000);  // 8 Mbit/s: a byte a microsecond, from t = 1000
  ASSERT_TRUE(p.may_send(1000));
  p.sent(kPacerMinBurstBytes);  // the whole bucket: nothing left
  EXPECT_FALSE(p.may_send(1000));
  EXPECT_TRUE(p.owes());
  EXPECT_EQ(p.ready_at(), 1001U);
  ASSERT_TRUE(p.may_send(1001));  // a byte's credit
  p.sent(100);                    // 99 bytes owed
  EXPECT_EQ(p.ready_at(), 1101U);
  EXPECT_FALSE(p.may_send(1100));  // paid back, none over
  EXPECT_TRUE(p.may_send(1101));
  // A long pause fills the bucket, and no more.
  ASSERT_TRUE(p.may_send(10'000'000));
  p.sent(kPacerMinBurstBytes - 1);
  EXPECT_TRUE(p.may_send(10'000'000));
  p.sent(1);
  EXPECT_FALSE(p.may_send(10'000'000));
  // A burst above the least is the bucket's size.
  p.set(8000, 100'000, 0);
  p.sent(99'999);
  EXPECT_TRUE(p.may_send(0));
  p.sent(1);
  EXPECT_FALSE(p.may_send(0));
  // No overflow at the top rate after a long pause, or at the least rate
  // with the largest burst.
  p.set(kRateLimitMaxKbps, UINT32_MAX, 0);
  p.sent(size_t{UINT32_MAX} + 4096);
  EXPECT_FALSE(p.may_send(0));
  EXPECT_TRUE(p.may_send(UINT64_MAX / 2));
  p.set(kRateLimitMinKbps, UINT32_MAX, 0);
  p.sent(size_t{UINT32_MAX});
  EXPECT_FALSE(p.may_send(0));
  EXPECT_TRUE(p.may_send(1));
}

// A paced RC send queue sends no faster than its rate: before each frame,
// what went out before it fits the bucket plus the credit the time since
// the first frame earned.  The transfer takes the time the rate gives
// (less the bucket), and the data lands whole.
TEST_F(TransportPair, APacedSendQueueKeepsToItsRate) {
  make(QpType::kRc, 1024);
  constexpr uint32_t kKbps = 8000;  // a byte a microsecond
  a_->set_rate_limit(kKbps, 0);
  EXPECT_EQ(a_->rate_limit(), kKbps);
  constexpr int kWrites = 16;
  fill(ea_, 0x100, 0x10000, kWrites * 4096, 7);
  for (int i = 0; i < kWrites; ++i) {
    ea_.sq.push_back(wqe(WrOpcode::kWrite, i, 0x10000 + i * 4096, 4096, 0x20000 + i * 4096));
  }
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), size_t{kWrites});
  for (const Completion& c : ea_.send_cqes) {
    EXPECT_EQ(c.status, WcStatus::kSuccess);
  }
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, kWrites * 4096));
  ASSERT_EQ(ea_.sent_at.size(), size_t{kWrites * 4});  // 1024-byte packets
  const int64_t cap = int64_t{kPacerMinBurstBytes} * 8000;
  uint64_t before = 0;
  for (size_t i = 0; i < ea_.sent_at.size(); ++i) {
    const auto earned = static_cast<int64_t>((ea_.sent_at[i] - ea_.sent_at[0]) * kKbps);
    EXPECT_LT(static_cast<int64_t>(before) * 8000, cap + earned) << "frame " << i;
    before += ea_.sent_sizes[i];
  }
  // All but the last frame paid for: the time is the rate's, to a few us.
  const uint64_t paid = (before - ea_.sent_sizes.back() - kPacerMinBurstBytes) * 8000 / kKbps;
  const uint64_t took = ea_.sent_at.back() - ea_.sent_at[0];
  EXPECT_GE(took + 1, paid);
  EXPECT_LE(took, paid + ea_.sent_at.size());
}

// A message that takes far longer to send than the ACK timeout (16 packets
// at 1 Mbit/s, 9 ms each, against ~1 ms) completes without one retry: a
// paced QP asks for every packet's ACK, and the timer runs only while a
// packet awaits its answer.
TEST_F(TransportPair, ASlowPacedMessageDoesNotTimeOut) {
  make(QpType::kRc, 1024);
  a_->set_rate_limit(kRateLimitMinKbps, 0);
  fill(ea_, 0x100, 0x10000, 16384, 3);
  ea_.sq.push_back(wqe(WrOpcode::kWrite, 1, 0x10000, 16384, 0x20000));
  ASSERT_TRUE(run());
  ASSERT_EQ(ea_.send_cqes.size(), 1U);
  EXPECT_EQ(ea_.send_cqes[0].status, WcStatus::kSuccess);
  EXPECT_EQ(ea_.retransmits, 0);
  EXPECT_EQ(ea_.sent_at.size(), 16U);
  // 15 frames of over 1024 bytes before the last, less the 8448-byte
  // bucket, at 8 us a byte.
  EXPECT_GT(ea_.sent_at.back() - ea_.sent_at.front(), (15 * 1024 - 8448) * 8U)
      << "paced, not at once";
  EXPECT_TRUE(same(ea_, 0x100, 0x10000, eb_, 0x200, 0x20000, 16384));
}

// While the pacer holds a packet back the transport has no work: the engine
// sleeps until the deadline it gives, and then it has.  Unpaced again, it
// sends at once; RESET is the device's business (qp_attr.cc).
TEST_F(TransportPair, APacedQueueSleepsUntilItsCredit) {
  make(QpType::kUd, 1024);
  a_->set_rate_limit(kRateLimitMinKbps, 0);  // 1 Mbit/s
  constexpr size_t kSends = 16;              // more than the bucket holds
  for (size_t i = 0; i < kSends; ++i) {
    SendWqe w = wqe(WrOpcode::kSend, i, 0x10000, 1000);
    w.remote_qpn = 11;
    w.remote_qkey = 0x1111;
    w.ud_path = a_->config().path;
    ea_.sq.push_back(w);
  }
  a_->send_step(32);
  const size_t burst = ea_.out.size();
  EXPECT_GE(burst, 1U);
  EXPECT_LT(burst, kSends);
  EXPECT_FALSE(a_->has_send_work());
  const uint64_t next = a_->next_deadline();
  ASSERT_NE(next, UINT64_MAX);
  ASSERT_GT(next, ea_.clock);
  ea_.clock = next - 1;
  EXPECT_FALSE(a_->has_send_work());
  ea_.clock = next;
  EXPECT_TRUE(a_->has_send_work());
  a_->send_step(32);
  EXPECT_EQ(ea_.out.size(), burst + 1);
  a_->set_rate_limit(0, 0);
  a_->send_step(32);
  EXPECT_EQ(ea_.out.size(), kSends);
  EXPECT_EQ(a_->next_deadline(), UINT64_MAX);
}

}  // namespace
