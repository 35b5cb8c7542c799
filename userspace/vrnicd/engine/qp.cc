// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/qp.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include "engine/address.h"
#include "engine/counters.h"
#include "engine/cq.h"
#include "engine/engine_host.h"
#include "engine/frame_router.h"
#include "engine/object_table.h"
#include "engine/trace.h"
#include "hw_access.h"
#include "queue_entry.h"
#include "roce/packet.h"

namespace vrnicd {
namespace {

using roce::MemStatus;

uint32_t load_le32(const std::byte* p) { return vrnic::le32(vrnic::load_acquire32(p)); }

// The header fields of a send WQE, whether or not the rest of it parses:
// even a malformed WQE completes, with its wr_id.
void header_of(const vrnic::SqeFields& f, roce::SendWqe* w) {
  w->wr_id = f.wr_id;
  w->opcode = static_cast<roce::WrOpcode>(f.opcode);
  w->signaled = f.signaled;
  w->solicited = f.solicited;
  w->fence = f.fence;
  w->is_inline = f.is_inline;
  w->imm = f.imm;
  w->remote_addr = f.remote_addr;
  w->rkey = f.rkey;
  w->compare_add = f.compare_add;
  w->swap = f.swap;
  w->remote_qpn = f.remote_qpn & roce::kQpnMask;
  w->remote_qkey = f.remote_qkey;
  w->reg = f.reg;
  w->bind = f.bind;
}

}  // namespace

Qp::Qp(const QpContext& ctx, const roce::QpConfig& cfg, uint32_t pdn, const QpLinks& links)
    : ctx_(ctx), pdn_(pdn), links_(links), tp_(*this, cfg) {}

uint8_t Qp::create(const QpContext& ctx, const GuestMemory& mem, uint32_t qpn,
                   const CreateQpParams& p, const QpLinks& links, std::unique_ptr<Qp>* out) {
  roce::QpConfig cfg;
  cfg.type = p.type;
  cfg.qpn = qpn;
  cfg.sq_sig_all = p.sq_sig_all;
  cfg.max_inline = p.max_inline;
  cfg.gsi = p.gsi;
  cfg.block_self_mcast_lb = p.block_self_mcast_lb;
  // Attributes the driver has not set read back as 0.
  cfg.timeout = cfg.retry_cnt = cfg.rnr_retry = 0;
  cfg.max_rd_atomic = cfg.max_dest_rd_atomic = 0;
  auto qp = std::unique_ptr<Qp>(new Qp(ctx, cfg, p.pdn, links));
  if (!qp->buf_.map(mem, p.buf.pbl_addr, p.buf.npages)) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  qp->sq_ = {&qp->buf_, p.sq.first_page, p.sq.log_depth, p.sq.log_stride};
  if (!qp->sq_.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  if (links.srq == nullptr) {
    qp->rq_ = {&qp->buf_, p.rq.first_page, p.rq.log_depth, p.rq.log_stride};
    if (!qp->rq_.fits()) {
      return VRNIC_AQ_STATUS_BAD_PARAM;
    }
  }
  *out = std::move(qp);
  return VRNIC_AQ_STATUS_OK;
}

// ---------------------------------------------------------------------------
// Driven by the engine

bool Qp::step(uint64_t now, int budget) {
  bool progress = false;
  if (tp_.next_deadline() <= now) {
    progress |= tp_.timer_step();
  }
  const uint32_t spi = send_producer();
  const uint32_t rpi = recv_producer();
  if (spi != seen_sq_pi_ || rpi != seen_rq_pi_ || tp_.has_send_work()) {
    seen_sq_pi_ = spi;
    seen_rq_pi_ = rpi;
    progress |= tp_.send_step(budget);
  }
  progress |= enter_error_if_fatal();
  return progress;
}

bool Qp::has_work(uint64_t now) {
  return send_producer() != seen_sq_pi_ || recv_producer() != seen_rq_pi_ || tp_.has_send_work() ||
         tp_.next_deadline() <= now;
}

void Qp::receive(const roce::Packet& pkt, size_t frame_size) {
  // The port counted the packet; its counter set counts it too.
  ctx_.counters.add_set(counter_set_, VRNIC_STAT_RX_PACKETS);
  ctx_.counters.add_set(counter_set_, VRNIC_STAT_RX_BYTES, frame_size);
  ++stats_.rx_packets;
  if (ctx_.tracer.active()) {
    ctx_.tracer.packet(qpn(), false, pkt, pkt.payload.size(), frame_size);
  }
  tp_.receive(pkt);
  enter_error_if_fatal();
}

// A CQ overran under the QP (or its send ring's producer cannot be right):
// a local catastrophic error, reported once.  A QP already in error stays
// quiet, however often its rings are found wrong: true only when the QP
// changed state.
bool Qp::enter_error_if_fatal() {
  if (!fatal_) {
    return false;
  }
  fatal_ = false;
  if (tp_.state() == roce::QpState::kErr) {
    return false;
  }
  ctx_.host.async_event(VRNIC_EQE_TYPE_QP_FATAL, qpn(), 0);
  tp_.set_state(roce::QpState::kErr);
  return true;
}

// ---------------------------------------------------------------------------
// Rings

uint32_t Qp::send_producer() { return load_le32(dbrec() + offsetof(vrnic_qp_dbrec, sq_pi)); }

uint32_t Qp::recv_producer() const {
  if (links_.srq != nullptr) {
    return load_le32(links_.srq->dbrec() + offsetof(vrnic_srq_dbrec, pi));
  }
  return load_le32(dbrec() + offsetof(vrnic_qp_dbrec, rq_pi));
}

bool Qp::recv_pending() { return links_.srq == nullptr && recv_producer() != rq_ci_; }

// The send ring slot of a WQE is free again once the WQE has completed,
// as on rxe: so at most max_send_wr WQEs are ever outstanding.
void Qp::publish_sq_ci(uint32_t done) {
  if (done != published_sq_ci_) {
    published_sq_ci_ = done;
    vrnic::store_release32(dbrec() + offsetof(vrnic_qp_dbrec, sq_ci), vrnic::to_le32(done));
  }
}

// Back to empty rings after RESET: the driver restarts its producers at 0.
void Qp::reset_rings() {
  rq_ci_ = 0;
  seen_sq_pi_ = seen_rq_pi_ = 0;
  published_sq_ci_ = UINT32_MAX;
  publish_sq_ci(0);
  vrnic::store_release32(dbrec() + offsetof(vrnic_qp_dbrec, rq_ci), 0);
}

// A posted send WQE the device cannot run: it completes in error with why.
bool Qp::refuse_wqe(roce::SendWqe* wqe, bool* bad, uint32_t why) {
  wqe->vendor_err = static_cast<uint8_t>(why);
  *bad = true;
  return false;
}

bool Qp::read_send_wqe(uint32_t index, roce::SendWqe* wqe, bool* bad) {
  const bool ok = fetch_send_wqe(index, wqe, bad);
  if (ok && ctx_.tracer.active()) {
    ctx_.tracer.wqe(qpn(), *wqe);
  }
  return ok;
}

// A WQE copy's buffer holds the largest stride the device accepts.
static_assert((1U << VRNIC_WQE_MAX_LOG_STRIDE) <= kPageSize);

bool Qp::fetch_send_wqe(uint32_t index, roce::SendWqe* wqe, bool* bad) {
  const uint32_t posted = send_producer() - index;
  if (posted == 0) {
    return false;
  }
  if (posted > sq_.depth()) {
    fatal_ = true;  // a producer index that cannot be right
    return false;
  }
  // A copy: the guest may write the slot while we look at it.  Only the
  // stride's bytes are copied and read: the rest of the page-sized buffer
  // is left as it is (zeroing 4 KiB a WQE was a tenth of a small WRITE).
  const size_t stride = size_t{1} << sq_.log_stride;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): written before read
  std::array<std::byte, kPageSize> raw;
  std::memcpy(raw.data(), sq_.entry(index), stride);
  vrnic::SqeFields f;
  const bool ud = type() == roce::QpType::kUd;
  const uint32_t error = vrnic::sqe_parse(std::span(raw.data(), stride), ud, &f);
  header_of(f, wqe);
  if (error != VRNIC_VERR_NONE) {
    return refuse_wqe(wqe, bad, error);
  }
  if (ud && !wqe->is_local() &&
      !resolve_path(address_from_wire(f.av), qpn(), ctx_.host.port(), &wqe->ud_path)) {
    return refuse_wqe(wqe, bad, VRNIC_VERR_WQE_AV);
  }
  if (f.is_inline) {
    if (f.inline_data.size() > cfg().max_inline) {
      return refuse_wqe(wqe, bad, VRNIC_VERR_WQE_INLINE);
    }
    wqe->inline_data.assign(f.inline_data.begin(), f.inline_data.end());
    wqe->length = f.inline_data.size();
    wqe->num_sge = 0;
    return true;
  }
  wqe->num_sge = f.num_sge;
  wqe->sge = f.sge;
  wqe->length = f.flush_length;  // FLUSH's range; 0 for the rest
  for (uint32_t i = 0; i < f.num_sge; ++i) {
    wqe->length += f.sge[i].length;
  }
  return true;
}

bool Qp::take_recv_wqe(roce::RecvWqe* wqe, bool* bad) {
  Srq* srq = links_.srq;
  const Ring& ring = srq != nullptr ? srq->ring : rq_;
  uint32_t& ci = srq != nullptr ? srq->ci : rq_ci_;
  const uint32_t pi = recv_producer();
  const uint32_t posted = pi - ci;
  if (posted == 0 || posted > ring.depth()) {
    return false;
  }
  const uint32_t index = ci++;
  const size_t stride = size_t{1} << ring.log_stride;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): as in fetch_send_wqe
  std::array<std::byte, kPageSize> raw;
  std::memcpy(raw.data(), ring.entry(index), stride);
  vrnic::RqeFields f;
  const bool ok = vrnic::rqe_parse(std::span(raw.data(), stride), &f) == VRNIC_VERR_NONE;
  wqe->index = index;
  wqe->wr_id = f.wr_id;
  if (!ok) {
    *bad = true;
    return false;
  }
  wqe->num_sge = f.num_sge;
  wqe->sge = f.sge;
  wqe->length = 0;
  for (uint32_t i = 0; i < f.num_sge; ++i) {
    wqe->length += f.sge[i].length;
  }
  vrnic::store_release32(srq != nullptr ? srq->dbrec() + offsetof(vrnic_srq_dbrec, ci)
                                        : dbrec() + offsetof(vrnic_qp_dbrec, rq_ci),
                         vrnic::to_le32(ci));
  if (srq != nullptr && srq->limit != 0 && pi - srq->ci < srq->limit) {
    srq->limit = 0;  // one event per arm
    ctx_.host.async_event(VRNIC_EQE_TYPE_SRQ_LIMIT, srq->srqn, 0);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Memory, through the keys of the QP's PD

const Mr* Qp::find_mr(uint32_t key) const { return ctx_.objects.find_mr(key, pdn_); }

roce::WcStatus Qp::local_op(const roce::SendWqe& w, uint8_t* verr) {
  if (w.opcode == roce::WrOpcode::kBindMw) {
    *verr = ctx_.objects.bind_mw(pdn_, qpn(), w.bind);
    return *verr == VRNIC_VERR_NONE ? roce::WcStatus::kSuccess : roce::WcStatus::kMwBindErr;
  }
  *verr = w.opcode == roce::WrOpcode::kRegMr ? ctx_.objects.fast_reg(pdn_, w.reg)
                                             : ctx_.objects.invalidate(w.imm, pdn_);
  return *verr == VRNIC_VERR_NONE ? roce::WcStatus::kSuccess : roce::WcStatus::kLocQpOpErr;
}

bool Qp::invalidate_remote(uint32_t rkey) {
  return ctx_.objects.invalidate_remote(rkey, pdn_, qpn());
}

MemStatus Qp::check_local(std::span<const roce::Sge> sges, uint32_t need) {
  for (const roce::Sge& s : sges) {
    if (s.length == 0) {
      continue;
    }
    const Mr* mr = find_mr(s.lkey);
    if (mr == nullptr) {
      return MemStatus::kBadKey;
    }
    if ((need & ~mr->access) != 0) {
      return MemStatus::kNoAccess;
    }
    if (!mr->contains(s.addr, s.length)) {
      return MemStatus::kBounds;
    }
  }
  return MemStatus::kOk;
}

MemStatus Qp::gather(std::span<const roce::Sge> sges, uint64_t offset, std::span<std::byte> dst) {
  size_t done = 0;
  for (const roce::Sge& s : sges) {
    if (done == dst.size()) {
      break;
    }
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(s.length - offset, dst.size() - done));
    const Mr* mr = find_mr(s.lkey);
    if (mr == nullptr) {
      return MemStatus::kBadKey;
    }
    if (!mr->contains(s.addr + offset, n)) {
      return MemStatus::kBounds;
    }
    mr->read(s.addr + offset, dst.subspan(done, n));
    done += n;
    offset = 0;
  }
  return done == dst.size() ? MemStatus::kOk : MemStatus::kBounds;
}

MemStatus Qp::scatter(std::span<const roce::Sge> sges, uint64_t offset,
                      std::span<const std::byte> src) {
  return scatter_in(pdn_, sges, offset, src);
}

// The SGEs of a WQE posted to an SRQ carry lkeys of the SRQ's PD, which
// need not be the QP's.
MemStatus Qp::scatter_recv(std::span<const roce::Sge> sges, uint64_t offset,
                           std::span<const std::byte> src) {
  return scatter_in(links_.srq != nullptr ? links_.srq->pdn : pdn_, sges, offset, src);
}

MemStatus Qp::scatter_in(uint32_t pdn, std::span<const roce::Sge> sges, uint64_t offset,
                         std::span<const std::byte> src) {
  size_t done = 0;
  for (const roce::Sge& s : sges) {
    if (done == src.size()) {
      break;
    }
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(s.length - offset, src.size() - done));
    const Mr* mr = ctx_.objects.find_mr(s.lkey, pdn);
    if (mr == nullptr) {
      return MemStatus::kBadKey;
    }
    if ((mr->access & VRNIC_ACCESS_LOCAL_WRITE) == 0) {
      return MemStatus::kNoAccess;
    }
    if (!mr->contains(s.addr + offset, n)) {
      return MemStatus::kBounds;
    }
    mr->write(s.addr + offset, src.subspan(done, n));
    done += n;
    offset = 0;
  }
  return done == src.size() ? MemStatus::kOk : MemStatus::kBounds;
}

// Remote access of length bytes at *va through rkey: the key is looked up
// once, and *mr is the region whose memory it reaches.  Through a window,
// the window's rights and range (within the MR's) apply; a zero-based
// window takes *va as an offset into it, and *va becomes the MR's address.
MemStatus Qp::access_remote(uint32_t rkey, uint64_t* va, uint64_t length, uint32_t need,
                            const Mr** mr) const {
  const Mr* window = nullptr;
  *mr = ctx_.objects.find_remote(rkey, pdn_, qpn(), &window);
  if (*mr == nullptr) {
    return MemStatus::kBadKey;
  }
  const Mr* rights = window != nullptr ? window : *mr;
  if ((need & ~rights->access) != 0) {
    return MemStatus::kNoAccess;
  }
  if (window != nullptr && window->zero_based) {
    if (*va > window->length || length > window->length - *va) {
      return MemStatus::kBounds;
    }
    *va += window->iova;
    return (*mr)->contains(*va, length) ? MemStatus::kOk : MemStatus::kBounds;
  }
  return rights->contains(*va, length) && (*mr)->contains(*va, length) ? MemStatus::kOk
                                                                       : MemStatus::kBounds;
}

MemStatus Qp::check_remote(uint32_t rkey, uint64_t va, uint64_t length, uint32_t need) {
  if (length == 0) {
    return MemStatus::kOk;  // zero-length operations name no memory
  }
  const Mr* mr = nullptr;
  return access_remote(rkey, &va, length, need, &mr);
}

MemStatus Qp::remote_write(uint32_t rkey, uint64_t va, std::span<const std::byte> src) {
  if (src.empty()) {
    return MemStatus::kOk;
  }
  const Mr* mr = nullptr;
  const MemStatus m = access_remote(rkey, &va, src.size(), VRNIC_ACCESS_REMOTE_WRITE, &mr);
  if (m == MemStatus::kOk) {
    mr->write(va, src);
  }
  return m;
}

MemStatus Qp::remote_read(uint32_t rkey, uint64_t va, std::span<std::byte> dst) {
  if (dst.empty()) {
    return MemStatus::kOk;
  }
  const Mr* mr = nullptr;
  const MemStatus m = access_remote(rkey, &va, dst.size(), VRNIC_ACCESS_REMOTE_READ, &mr);
  if (m == MemStatus::kOk) {
    mr->read(va, dst);
  }
  return m;
}

// The aligned guest word an atomic or ATOMIC WRITE reaches through rkey
// with access need.  An aligned word never straddles a page.
MemStatus Qp::remote_word(uint32_t rkey, uint64_t va, uint32_t need, uint64_t** word) {
  if ((va & 7) != 0) {
    return MemStatus::kMisaligned;
  }
  const Mr* mr = nullptr;
  const MemStatus m = access_remote(rkey, &va, sizeof(uint64_t), need, &mr);
  if (m != MemStatus::kOk) {
    return m;
  }
  if ((va & 7) != 0) {
    return MemStatus::kMisaligned;  // through a zero-based window that starts unaligned
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  *word = reinterpret_cast<uint64_t*>(mr->word(va));
  return MemStatus::kOk;
}

MemStatus Qp::remote_atomic(uint32_t rkey, uint64_t va, bool compare_swap, uint64_t compare_add,
                            uint64_t swap, uint64_t* original) {
  uint64_t* w = nullptr;
  const MemStatus m = remote_word(rkey, va, VRNIC_ACCESS_REMOTE_ATOMIC, &w);
  if (m != MemStatus::kOk) {
    return m;
  }
  std::atomic_ref<uint64_t> word(*w);
  if (compare_swap) {
    uint64_t expected = compare_add;
    word.compare_exchange_strong(expected, swap);
    *original = expected;
  } else {
    *original = word.fetch_add(compare_add);
  }
  return MemStatus::kOk;
}

MemStatus Qp::remote_atomic_write(uint32_t rkey, uint64_t va, std::span<const std::byte, 8> bytes) {
  uint64_t* w = nullptr;
  const MemStatus m = remote_word(rkey, va, VRNIC_ACCESS_REMOTE_WRITE, &w);
  if (m != MemStatus::kOk) {
    return m;
  }
  uint64_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof(value));
  std::atomic_ref<uint64_t>(*w).store(value, std::memory_order_release);
  return MemStatus::kOk;
}

// FLUSH: every store the device made is already in guest memory, so
// global visibility is a fence; persistence writes the range's pages
// through to guest RAM's file (on a persistent file system only: the
// device announces it only then).
MemStatus Qp::remote_flush(uint32_t rkey, uint64_t va, uint64_t length, bool whole, uint32_t type) {
  const GuestMemory& mem = ctx_.objects.memory();
  const uint32_t need = roce::flush_access(type);
  const Mr* mr = nullptr;
  if (whole) {
    const Mr* window = nullptr;
    mr = ctx_.objects.find_remote(rkey, pdn_, qpn(), &window);
    if (mr == nullptr) {
      return MemStatus::kBadKey;
    }
    const Mr* rights = window != nullptr ? window : mr;
    if ((need & ~rights->access) != 0) {
      return MemStatus::kNoAccess;
    }
    va = rights->iova;  // a window's iova is where it starts in its region
    length = rights->length;
  } else {
    const MemStatus m = access_remote(rkey, &va, length, need, &mr);
    if (m != MemStatus::kOk) {
      return m;
    }
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if ((type & VRNIC_FLUSH_PERSISTENT) == 0) {
    return MemStatus::kOk;
  }
  if (!mem.persistent()) {
    return MemStatus::kNoAccess;
  }
  bool ok = true;
  if (mr->phys != nullptr && whole) {
    for (const GuestMemory::Region& r : mem.regions()) {  // the local DMA key: all of RAM
      ok = mem.persist(r.host, r.size) && ok;
    }
  } else {
    mr->for_each_span(va, length,
                      [&](const std::byte* p, size_t n) { ok = mem.persist(p, n) && ok; });
  }
  return ok ? MemStatus::kOk : MemStatus::kNoAccess;
}

// ---------------------------------------------------------------------------
// Completions, frames, events and counters

// The transport retires a WQE before its CQE appears: a consumer that polls
// the CQE may post into the slot at once.
void Qp::retire_send(uint32_t next_index) { publish_sq_ci(next_index); }

// Completions in error: counted, and the last one that is not a flush
// kept (the flushes that follow it say nothing new).
void Qp::note_completion(bool send, const roce::Completion& c) {
  if (ctx_.tracer.active()) {
    ctx_.tracer.cqe(qpn(), send, c);
  }
  if (c.status == roce::WcStatus::kSuccess) {
    return;
  }
  ++stats_.errors;
  if (c.status != roce::WcStatus::kWrFlushErr) {
    stats_.last_error = QpStats::LastError{.t_us = ctx_.clock.now_us(),
                                           .send = send,
                                           .opcode = c.opcode,
                                           .status = c.status,
                                           .vendor_err = c.vendor_err,
                                           .wr_id = c.wr_id};
  }
}

void Qp::complete_send(const roce::Completion& c) {
  note_completion(true, c);
  if (links_.send_cq->post(c, qpn(), ctx_.host, ctx_.clock)) {
    ctx_.counters.add(VRNIC_STAT_CQES);
  } else {
    fatal_ = true;
  }
}

void Qp::complete_recv(const roce::Completion& c) {
  note_completion(false, c);
  if (links_.recv_cq->post(c, qpn(), ctx_.host, ctx_.clock)) {
    ctx_.counters.add(VRNIC_STAT_CQES);
  } else {
    fatal_ = true;
  }
}

roce::TxStatus Qp::transmit(const roce::Packet& pkt, const roce::Payload& payload) {
  if (!ctx_.router.has_room(pkt.path.dgid)) {
    return roce::TxStatus::kBusy;
  }
  std::vector<std::byte> frame = ctx_.router.take_buffer();
  const roce::FrameLayout lay = roce::build_frame(pkt, payload.length, &frame);
  if (!read_payload(payload, std::span(frame).subspan(lay.payload, payload.length))) {
    ctx_.router.recycle(std::move(frame));
    return roce::TxStatus::kNoMemory;
  }
  ++stats_.tx_packets;
  if (ctx_.tracer.active()) {
    ctx_.tracer.packet(qpn(), true, pkt, payload.length, frame.size());
  }
  count(VRNIC_STAT_TX_PACKETS);
  count(VRNIC_STAT_TX_BYTES, frame.size());
  ctx_.router.send(std::move(frame), lay, pkt);
  return roce::TxStatus::kSent;
}

void Qp::event(roce::QpEvent e) { ctx_.host.async_event(static_cast<uint8_t>(e), qpn(), 0); }
uint64_t Qp::now_us() { return ctx_.clock.now_us(); }
void Qp::count_retransmit() {
  ++stats_.retransmits;
  count(VRNIC_STAT_RETRANSMITS);
}
void Qp::count_rnr_nak(bool sent) {
  ++(sent ? stats_.rnr_naks_sent : stats_.rnr_naks_rcvd);
  count(sent ? VRNIC_STAT_RNR_NAKS_SENT : VRNIC_STAT_RNR_NAKS_RCVD);
}
void Qp::count_seq_nak(bool sent) {
  ++(sent ? stats_.seq_naks_sent : stats_.seq_naks_rcvd);
  count(sent ? VRNIC_STAT_SEQ_NAKS_SENT : VRNIC_STAT_SEQ_NAKS_RCVD);
}
void Qp::count_duplicate() {
  ++stats_.duplicates;
  count(VRNIC_STAT_DUPLICATES);
}
void Qp::count_wqe() {
  ++stats_.wqes;
  count(VRNIC_STAT_WQES);
}
void Qp::count_refused(roce::Refusal why) {
  ++stats_.refused;
  switch (why) {
    case roce::Refusal::kAddress:
      ctx_.counters.add(VRNIC_STAT_RX_ADDR_ERRORS);
      return;
    case roce::Refusal::kKey:
      ctx_.counters.add(VRNIC_STAT_RX_KEY_ERRORS);
      return;
    case roce::Refusal::kQkey:
      ctx_.counters.add(VRNIC_STAT_RX_QKEY_ERRORS);
      return;
    case roce::Refusal::kPkey:
      ctx_.counters.add(VRNIC_STAT_RX_PKEY_ERRORS);
      return;
    case roce::Refusal::kInvalid:
      ctx_.counters.add(VRNIC_STAT_RX_INVALID);
      return;
    case roce::Refusal::kNoBuffer:
      ctx_.counters.add(VRNIC_STAT_RX_NO_BUFFER);
      return;
  }
}

void Qp::count(vrnic_stat s, uint64_t n) { ctx_.counters.add_qp(counter_set_, s, n); }

}  // namespace vrnicd
