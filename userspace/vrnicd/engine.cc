// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include "guest_memory.h"
#include "hw_access.h"
#include "log.h"
#include "roce/packet.h"

namespace vrnicd {
namespace {

using roce::MemStatus;

constexpr int kSendBudget = 32;       // packets per QP per round
constexpr int kLoopbackBudget = 256;  // frames delivered per round
constexpr size_t kMaxFramePool = 256;
constexpr uint32_t kCqeLogStride = VRNIC_CQE_LOG_SIZE;

template <typename T>
int free_slot(const std::vector<std::unique_ptr<T>>& v, size_t first) {
  for (size_t i = first; i < v.size(); ++i) {
    if (!v[i]) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

uint32_t load_le32(const std::byte* p) { return vrnic::le32(vrnic::load_acquire32(p)); }

uint32_t log2_floor(uint32_t v) {
  return v == 0 ? 0 : 31 - static_cast<uint32_t>(__builtin_clz(v));
}

roce::QpState to_state(uint32_t s) { return static_cast<roce::QpState>(s); }

// The QP state transitions the IB specification allows, with the
// attributes each requires (IBA 11.2.5, as ib_modify_qp_is_ok() has them).
bool transition_ok(roce::QpState cur, roce::QpState next, roce::QpType type, uint32_t mask) {
  using roce::QpState;
  using roce::QpType;
  if (next == QpState::kReset || next == QpState::kErr) {
    return true;
  }
  auto has = [&](uint32_t bits) { return (mask & bits) == bits; };
  switch (cur) {
    case QpState::kReset:
      if (next != QpState::kInit) {
        return false;
      }
      return has(VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT) &&
             has(type == QpType::kUd ? VRNIC_QP_ATTR_QKEY : VRNIC_QP_ATTR_ACCESS);
    case QpState::kInit:
      if (next == QpState::kInit) {
        return true;
      }
      if (next != QpState::kRtr) {
        return false;
      }
      if (type == QpType::kRc) {
        return has(VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN |
                   VRNIC_QP_ATTR_RQ_PSN | VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
                   VRNIC_QP_ATTR_MIN_RNR_TIMER);
      }
      if (type == QpType::kUc) {
        return has(VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN |
                   VRNIC_QP_ATTR_RQ_PSN);
      }
      return true;
    case QpState::kRtr:
      if (next != QpState::kRts) {
        return false;
      }
      if (type == QpType::kRc) {
        return has(VRNIC_QP_ATTR_SQ_PSN | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                   VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_MAX_RD_ATOMIC);
      }
      return has(VRNIC_QP_ATTR_SQ_PSN);
    case QpState::kRts:
    case QpState::kSqd:
      return next == QpState::kRts || next == QpState::kSqd;
    case QpState::kSqe:
      return next == QpState::kRts && type != QpType::kRc;
    case QpState::kErr:
      return false;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// Qp: the QpEnv of one queue pair.

Qp::Qp(Engine& e, const roce::QpConfig& cfg) : eng(e), tp(*this, cfg) {}

uint32_t Qp::send_producer() { return load_le32(dbrec() + offsetof(vrnic_qp_dbrec, sq_pi)); }

// The send ring slot of a WQE is free again once the WQE has completed,
// as on rxe: so at most max_send_wr WQEs are ever outstanding.
void Qp::publish_sq_ci(uint32_t done) {
  if (done != published_sq_ci) {
    published_sq_ci = done;
    vrnic::store_release32(dbrec() + offsetof(vrnic_qp_dbrec, sq_ci), vrnic::to_le32(done));
  }
}

uint32_t Qp::recv_producer() const {
  if (srq != nullptr) {
    return load_le32(srq->dbrec() + offsetof(vrnic_srq_dbrec, pi));
  }
  return load_le32(dbrec() + offsetof(vrnic_qp_dbrec, rq_pi));
}

MemStatus Qp::check_local(std::span<const roce::Sge> sges, uint32_t need) {
  for (const roce::Sge& s : sges) {
    if (s.length == 0) {
      continue;
    }
    const Mr* mr = eng.find_mr(s.lkey, pdn);
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
    const Mr* mr = eng.find_mr(s.lkey, pdn);
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
    const Mr* mr = eng.find_mr(s.lkey, pdn);
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

MemStatus Qp::check_remote(uint32_t rkey, uint64_t va, uint64_t length, uint32_t need) {
  if (length == 0) {
    return MemStatus::kOk;  // zero-length operations name no memory
  }
  const Mr* mr = eng.find_mr(rkey, pdn);
  if (mr == nullptr) {
    return MemStatus::kBadKey;
  }
  if ((need & ~mr->access) != 0) {
    return MemStatus::kNoAccess;
  }
  return mr->contains(va, length) ? MemStatus::kOk : MemStatus::kBounds;
}

MemStatus Qp::remote_write(uint32_t rkey, uint64_t va, std::span<const std::byte> src) {
  const MemStatus m = check_remote(rkey, va, src.size(), VRNIC_ACCESS_REMOTE_WRITE);
  if (m == MemStatus::kOk && !src.empty()) {
    eng.find_mr(rkey, pdn)->write(va, src);
  }
  return m;
}

MemStatus Qp::remote_read(uint32_t rkey, uint64_t va, std::span<std::byte> dst) {
  const MemStatus m = check_remote(rkey, va, dst.size(), VRNIC_ACCESS_REMOTE_READ);
  if (m == MemStatus::kOk && !dst.empty()) {
    eng.find_mr(rkey, pdn)->read(va, dst);
  }
  return m;
}

MemStatus Qp::remote_atomic(uint32_t rkey, uint64_t va, bool compare_swap, uint64_t compare_add,
                            uint64_t swap, uint64_t* original) {
  if ((va & 7) != 0) {
    return MemStatus::kMisaligned;
  }
  const MemStatus m = check_remote(rkey, va, sizeof(uint64_t), VRNIC_ACCESS_REMOTE_ATOMIC);
  if (m != MemStatus::kOk) {
    return m;
  }
  // An aligned word never straddles a page.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  auto* w = reinterpret_cast<uint64_t*>(eng.find_mr(rkey, pdn)->word(va));
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

bool Qp::read_send_wqe(uint32_t index, roce::SendWqe* wqe, bool* bad) {
  const uint32_t posted = send_producer() - index;
  if (posted == 0) {
    return false;
  }
  if (posted > sq.depth()) {
    fatal = true;  // a producer index that cannot be right
    return false;
  }
  const size_t stride = size_t{1} << sq.log_stride;
  std::array<std::byte, kPageSize> raw{};
  std::memcpy(raw.data(), sq.entry(index), stride);
  vrnic_sqe h{};
  std::memcpy(&h, raw.data(), sizeof(h));
  const uint32_t ctrl = vrnic::le32(h.ctrl);
  wqe->wr_id = vrnic::le64(h.wr_id);
  const uint32_t op = vrnic::field_get<VRNIC_WQE_CTRL_OPCODE_MASK>(ctrl);
  wqe->opcode = static_cast<roce::WrOpcode>(op);
  wqe->signaled = (ctrl & VRNIC_WQE_CTRL_SIGNALED) != 0;
  wqe->solicited = (ctrl & VRNIC_WQE_CTRL_SOLICITED) != 0;
  wqe->fence = (ctrl & VRNIC_WQE_CTRL_FENCE) != 0;
  wqe->is_inline = (ctrl & VRNIC_WQE_CTRL_INLINE) != 0;
  wqe->imm = vrnic::le32(h.imm_data);
  wqe->remote_addr = vrnic::le64(h.remote_addr);
  wqe->rkey = vrnic::le32(h.rkey);
  wqe->compare_add = vrnic::le64(h.compare_add);
  wqe->swap = vrnic::le64(h.swap);
  wqe->remote_qpn = vrnic::le32(h.remote_qpn) & roce::kQpnMask;
  wqe->remote_qkey = vrnic::le32(h.remote_qkey);
  if (op > VRNIC_WQE_ATOMIC_FETCH_AND_ADD) {
    *bad = true;
    return false;
  }
  size_t data = VRNIC_SQE_DATA_OFFSET;
  if (type == roce::QpType::kUd) {
    vrnic_av av{};
    std::memcpy(&av, raw.data() + VRNIC_SQE_DATA_OFFSET, sizeof(av));
    if (!eng.resolve_path(av, qpn, &wqe->ud_path)) {
      *bad = true;
      return false;
    }
    data = VRNIC_SQE_UD_DATA_OFFSET;
  }
  if (data > stride) {
    *bad = true;
    return false;
  }
  if (wqe->is_inline) {
    const uint32_t len = vrnic::le32(h.length);
    if (len > stride - data || len > max_inline) {
      *bad = true;
      return false;
    }
    wqe->inline_data.assign(raw.begin() + static_cast<std::ptrdiff_t>(data),
                            raw.begin() + static_cast<std::ptrdiff_t>(data + len));
    wqe->length = len;
    wqe->num_sge = 0;
    return true;
  }
  const uint32_t nsge = vrnic::field_get<VRNIC_WQE_CTRL_NUM_SGE_MASK>(ctrl);
  if (nsge > roce::kMaxSge || data + nsge * sizeof(vrnic_sge) > stride) {
    *bad = true;
    return false;
  }
  wqe->num_sge = nsge;
  wqe->length = 0;
  for (uint32_t i = 0; i < nsge; ++i) {
    vrnic_sge s{};
    std::memcpy(&s, raw.data() + data + i * sizeof(s), sizeof(s));
    wqe->sge[i] = {vrnic::le64(s.addr), vrnic::le32(s.length), vrnic::le32(s.lkey)};
    wqe->length += wqe->sge[i].length;
  }
  return true;
}

bool Qp::take_recv_wqe(roce::RecvWqe* wqe, bool* bad) {
  const Ring& ring = srq != nullptr ? srq->ring : rq;
  uint32_t& ci = srq != nullptr ? srq->ci : rq_ci;
  const uint32_t pi = recv_producer();
  const uint32_t posted = pi - ci;
  if (posted == 0 || posted > ring.depth()) {
    return false;
  }
  const uint32_t index = ci++;
  const size_t stride = size_t{1} << ring.log_stride;
  std::array<std::byte, kPageSize> raw{};
  std::memcpy(raw.data(), ring.entry(index), stride);
  vrnic_rqe h{};
  std::memcpy(&h, raw.data(), sizeof(h));
  wqe->index = index;
  wqe->wr_id = vrnic::le64(h.wr_id);
  const uint32_t nsge = vrnic::le32(h.num_sge);
  if (nsge > roce::kMaxSge || sizeof(h) + nsge * sizeof(vrnic_sge) > stride) {
    *bad = true;
    return false;
  }
  wqe->num_sge = nsge;
  wqe->length = 0;
  for (uint32_t i = 0; i < nsge; ++i) {
    vrnic_sge s{};
    std::memcpy(&s, raw.data() + sizeof(h) + i * sizeof(s), sizeof(s));
    wqe->sge[i] = {vrnic::le64(s.addr), vrnic::le32(s.length), vrnic::le32(s.lkey)};
    wqe->length += wqe->sge[i].length;
  }
  vrnic::store_release32(srq != nullptr ? srq->dbrec() + offsetof(vrnic_srq_dbrec, ci)
                                        : dbrec() + offsetof(vrnic_qp_dbrec, rq_ci),
                         vrnic::to_le32(ci));
  if (srq != nullptr && srq->limit != 0 && pi - srq->ci < srq->limit) {
    srq->limit = 0;  // one event per arm
    eng.host_.async_event(VRNIC_EQE_TYPE_SRQ_LIMIT, srq->srqn, 0);
  }
  return true;
}

// The transport retires a WQE before its CQE appears: a consumer that
// polls the CQE may post into the slot at once.
void Qp::retire_send(uint32_t next_index) { publish_sq_ci(next_index); }

void Qp::complete_send(const roce::Completion& c) {
  if (!eng.post_cqe(*send_cq, c, qpn, false)) {
    fatal = true;
  }
}

void Qp::complete_recv(const roce::Completion& c) {
  if (!eng.post_cqe(*recv_cq, c, qpn, true)) {
    fatal = true;
  }
}

bool Qp::transmit(const roce::Packet& pkt, const roce::Payload& payload) {
  std::vector<std::byte> frame;
  if (!eng.free_frames_.empty()) {
    frame = std::move(eng.free_frames_.back());
    eng.free_frames_.pop_back();
  }
  const roce::FrameLayout lay = roce::build_frame(pkt, payload.length, &frame);
  if (!read_payload(payload, std::span(frame).subspan(lay.payload, payload.length))) {
    eng.free_frames_.push_back(std::move(frame));
    return false;
  }
  roce::seal_frame(frame, lay);
  count(VRNIC_STAT_TX_PACKETS);
  count(VRNIC_STAT_TX_BYTES, frame.size());
  if (roce::gid_is_multicast(pkt.path.dgid) && eng.find_group(pkt.path.dgid) != nullptr) {
    // Members on this port get a copy too (multicast loopback).
    eng.loopback_.push_back(frame);
  }
  eng.send_frame(std::move(frame), eng.is_local(pkt));
  return true;
}

void Qp::event(roce::QpEvent e) { eng.host_.async_event(static_cast<uint8_t>(e), qpn, 0); }
uint64_t Qp::now_us() { return eng.now_us(); }
void Qp::count_retransmit() { count(VRNIC_STAT_RETRANSMITS); }
void Qp::count_rnr_nak(bool sent) {
  count(sent ? VRNIC_STAT_RNR_NAKS_SENT : VRNIC_STAT_RNR_NAKS_RCVD);
}
void Qp::count_seq_nak(bool sent) {
  count(sent ? VRNIC_STAT_SEQ_NAKS_SENT : VRNIC_STAT_SEQ_NAKS_RCVD);
}
void Qp::count_duplicate() { count(VRNIC_STAT_DUPLICATES); }
void Qp::count_wqe() { count(VRNIC_STAT_WQES); }

void Qp::count(vrnic_stat s, uint64_t n) {
  eng.count(s, n);
  if (counter_set != 0) {
    (*eng.counter_sets_[counter_set])[s] += n;
  }
}

// ---------------------------------------------------------------------------
// Engine

Engine::Engine(const DeviceConfig& cfg, const GuestMemory& mem, EngineHost& host)
    : cfg_(cfg), mem_(mem), host_(host) {
  reset();
}

Engine::~Engine() = default;

void Engine::reset() {
  qps_.clear();
  srqs_.clear();
  cqs_.clear();
  mrs_.clear();
  pds_.clear();
  qps_.resize(static_cast<size_t>(cfg_.limits.max_qp) + 2);
  srqs_.resize(static_cast<size_t>(cfg_.limits.max_srq) + 1);
  cqs_.resize(static_cast<size_t>(cfg_.limits.max_cq) + 1);
  mrs_.resize(static_cast<size_t>(cfg_.limits.max_mr) + 1);
  mr_variant_.resize(mrs_.size());
  pds_.resize(static_cast<size_t>(cfg_.limits.max_pd) + 1);
  loopback_.clear();
  mcast_.clear();
  counter_sets_.clear();
  counter_sets_.resize(static_cast<size_t>(cfg_.limits.max_counter_sets) + 1);
  next_qpn_ = 2;
  stats_[VRNIC_STAT_PDS] = stats_[VRNIC_STAT_MRS] = stats_[VRNIC_STAT_CQS] = 0;
  stats_[VRNIC_STAT_QPS] = stats_[VRNIC_STAT_SRQS] = stats_[VRNIC_STAT_MR_PAGES] = 0;
}

uint64_t Engine::now_us() const {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - epoch_)
                                   .count());
}

Mr* Engine::find_mr(uint32_t key, uint32_t pdn) {
  const uint32_t idx = vrnic::field_get<VRNIC_KEY_INDEX_MASK>(key);
  if (idx >= mrs_.size() || !mrs_[idx] || mrs_[idx]->key != key || mrs_[idx]->pdn != pdn) {
    return nullptr;
  }
  return mrs_[idx].get();
}

Cq* Engine::find_cq(uint32_t cqn) { return cqn < cqs_.size() ? cqs_[cqn].get() : nullptr; }
Qp* Engine::find_qp(uint32_t qpn) { return qpn < qps_.size() ? qps_[qpn].get() : nullptr; }
Srq* Engine::find_srq(uint32_t srqn) { return srqn < srqs_.size() ? srqs_[srqn].get() : nullptr; }

bool Engine::eq_in_use(uint32_t eqn) const {
  return std::any_of(cqs_.begin(), cqs_.end(),
                     [eqn](const auto& cq) { return cq && cq->eqn == eqn; });
}

uint8_t Engine::create_pd(uint32_t* pdn) {
  const int slot = free_slot(pds_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  pds_[static_cast<size_t>(slot)] = std::make_unique<Pd>();
  *pdn = static_cast<uint32_t>(slot);
  ++stats_[VRNIC_STAT_PDS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::destroy_pd(uint32_t pdn) {
  if (pdn == 0 || pdn >= pds_.size() || !pds_[pdn]) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (pds_[pdn]->refs != 0) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  pds_[pdn].reset();
  --stats_[VRNIC_STAT_PDS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::reg_mr(const vrnic_aq_reg_mr& c, uint32_t* key) {
  const uint32_t flags = vrnic::le32(c.hdr.flags);
  const uint32_t pdn = vrnic::le32(c.pdn);
  const uint32_t access = vrnic::le32(c.access);
  const uint32_t shift = vrnic::le32(c.page_shift);
  const uint32_t npages = vrnic::le32(c.npages);
  const uint64_t iova = vrnic::le64(c.iova);
  const uint64_t length = vrnic::le64(c.length);
  const uint64_t pbl = vrnic::le64(c.pbl_addr);
  constexpr uint32_t kMaxPages = VRNIC_PBL_ENTRIES_PER_PAGE * VRNIC_PBL_ENTRIES_PER_PAGE;
  if ((flags & VRNIC_AQ_REG_MR_F_PHYS) != 0) {
    return reg_phys_mr(c, key);
  }
  if ((flags & ~VRNIC_AQ_REG_MR_F_INDIRECT) != 0 || pdn == 0 || pdn >= pds_.size() || !pds_[pdn] ||
      (access & ~VRNIC_ACCESS_ALL) != 0 || shift < VRNIC_MR_MIN_PAGE_SHIFT ||
      shift > VRNIC_MR_MAX_PAGE_SHIFT || length == 0 || length > cfg_.limits.max_mr_size ||
      iova + length < iova || npages == 0 || npages > kMaxPages) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const uint64_t psize = 1ULL << shift;
  const uint64_t base = iova & ~(psize - 1);
  const uint64_t needed = (iova - base + length + psize - 1) >> shift;
  if (needed != npages) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const int slot = free_slot(mrs_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }

  // The page list, direct or through a list of list pages.
  std::vector<uint64_t> gpas(npages);
  auto read_list = [&](uint64_t addr, uint32_t n, uint64_t* out) {
    if (addr % sizeof(uint64_t) != 0) {
      return false;
    }
    return mem_.read(addr, out, static_cast<size_t>(n) * sizeof(uint64_t));
  };
  if ((flags & VRNIC_AQ_REG_MR_F_INDIRECT) != 0) {
    const uint32_t nlists = (npages + VRNIC_PBL_ENTRIES_PER_PAGE - 1) / VRNIC_PBL_ENTRIES_PER_PAGE;
    std::vector<uint64_t> lists(nlists);
    if (!read_list(pbl, nlists, lists.data())) {
      return VRNIC_AQ_STATUS_BAD_ADDR;
    }
    for (uint32_t i = 0; i < nlists; ++i) {
      const uint32_t n =
          std::min<uint32_t>(VRNIC_PBL_ENTRIES_PER_PAGE, npages - i * VRNIC_PBL_ENTRIES_PER_PAGE);
      if (vrnic::le64(lists[i]) % kPageSize != 0 ||
          !read_list(vrnic::le64(lists[i]), n,
                     gpas.data() + static_cast<size_t>(i) * VRNIC_PBL_ENTRIES_PER_PAGE)) {
        return VRNIC_AQ_STATUS_BAD_ADDR;
      }
    }
  } else if (!read_list(pbl, npages, gpas.data())) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }

  auto mr = std::make_unique<Mr>();
  mr->pages.reserve(npages);
  for (uint64_t g : gpas) {
    const uint64_t gpa = vrnic::le64(g);
    std::byte* host = gpa % psize == 0 ? mem_.translate(gpa, psize) : nullptr;
    if (host == nullptr) {
      return VRNIC_AQ_STATUS_BAD_ADDR;
    }
    mr->pages.push_back(host);
  }
  const auto idx = static_cast<uint32_t>(slot);
  mr->key = vrnic::field_prep<VRNIC_KEY_INDEX_MASK>(idx) |
            vrnic::field_prep<VRNIC_KEY_VARIANT_MASK>(++mr_variant_[idx]);
  mr->pdn = pdn;
  mr->access = access;
  mr->iova = iova;
  mr->length = length;
  mr->page_shift = shift;
  mr->base = base;
  *key = mr->key;
  mrs_[idx] = std::move(mr);
  ++pds_[pdn]->refs;
  ++stats_[VRNIC_STAT_MRS];
  stats_[VRNIC_STAT_MR_PAGES] += npages;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::reg_phys_mr(const vrnic_aq_reg_mr& c, uint32_t* key) {
  const uint32_t pdn = vrnic::le32(c.pdn);
  const uint32_t access = vrnic::le32(c.access);
  if (vrnic::le32(c.hdr.flags) != VRNIC_AQ_REG_MR_F_PHYS || pdn == 0 || pdn >= pds_.size() ||
      !pds_[pdn] || (access & ~VRNIC_ACCESS_ALL) != 0 || c.iova != 0 || c.length != 0 ||
      c.npages != 0 || c.page_shift != 0 || c.pbl_addr != 0) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const int slot = free_slot(mrs_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto mr = std::make_unique<Mr>();
  const auto idx = static_cast<uint32_t>(slot);
  mr->key = vrnic::field_prep<VRNIC_KEY_INDEX_MASK>(idx) |
            vrnic::field_prep<VRNIC_KEY_VARIANT_MASK>(++mr_variant_[idx]);
  mr->pdn = pdn;
  mr->access = access;
  mr->length = UINT64_MAX;
  mr->phys = &mem_;
  *key = mr->key;
  mrs_[idx] = std::move(mr);
  ++pds_[pdn]->refs;
  ++stats_[VRNIC_STAT_MRS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::dereg_mr(uint32_t key) {
  const uint32_t idx = vrnic::field_get<VRNIC_KEY_INDEX_MASK>(key);
  if (idx >= mrs_.size() || !mrs_[idx] || mrs_[idx]->key != key) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  --pds_[mrs_[idx]->pdn]->refs;
  stats_[VRNIC_STAT_MR_PAGES] -= mrs_[idx]->pages.size();
  mrs_[idx].reset();
  --stats_[VRNIC_STAT_MRS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::create_cq(const vrnic_aq_create_cq& c, uint32_t* cqn) {
  const uint32_t log_depth = vrnic::le32(c.log_depth);
  if (vrnic::le32(c.hdr.flags) != 0 || log_depth < 1 ||
      log_depth > log2_floor(cfg_.limits.max_cqe) + 1) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const int slot = free_slot(cqs_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto cq = std::make_unique<Cq>();
  if (!cq->buf.map(mem_, vrnic::le64(c.buf.pbl_addr), vrnic::le32(c.buf.npages))) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  cq->ring = {&cq->buf, 1, log_depth, kCqeLogStride};
  if (!cq->ring.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  cq->cqn = static_cast<uint32_t>(slot);
  cq->eqn = vrnic::le32(c.eqn);
  cq->fired_sn = load_le32(cq->dbrec() + offsetof(vrnic_cq_dbrec, arm_sn));
  *cqn = cq->cqn;
  cqs_[cq->cqn] = std::move(cq);
  ++stats_[VRNIC_STAT_CQS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::destroy_cq(uint32_t cqn) {
  Cq* cq = find_cq(cqn);
  if (cq == nullptr || cqn == 0) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (cq->refs != 0) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  cqs_[cqn].reset();
  --stats_[VRNIC_STAT_CQS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::resize_cq(const vrnic_aq_resize_cq& c, uint32_t* moved) {
  Cq* cq = find_cq(vrnic::le32(c.cqn));
  const uint32_t log_depth = vrnic::le32(c.log_depth);
  if (cq == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (vrnic::le32(c.hdr.flags) != 0 || log_depth < 1 ||
      log_depth > log2_floor(cfg_.limits.max_cqe) + 1) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  QueueBuffer nb;
  if (!nb.map(mem_, vrnic::le64(c.buf.pbl_addr), vrnic::le32(c.buf.npages))) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  Ring nr{&nb, 1, log_depth, kCqeLogStride};
  if (!nr.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const uint32_t ci = load_le32(cq->dbrec() + offsetof(vrnic_cq_dbrec, ci));
  const uint32_t pending = std::min(cq->pi - ci, cq->ring.depth());
  if (pending > nr.depth()) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  for (uint32_t i = 0; i < pending; ++i) {
    vrnic_cqe e{};
    std::memcpy(&e, cq->ring.entry(ci + i), sizeof(e));
    const uint32_t info = (vrnic::le32(e.info) & ~VRNIC_CQE_OWNER_MASK) |
                          vrnic::field_prep<VRNIC_CQE_OWNER_MASK>(vrnic::ring_owner(i, log_depth));
    std::byte* dst = nr.entry(i);
    std::memcpy(dst, &e, offsetof(vrnic_cqe, info));
    vrnic::store_release32(dst + offsetof(vrnic_cqe, info), vrnic::to_le32(info));
  }
  cq->buf = std::move(nb);
  cq->ring = {&cq->buf, 1, log_depth, kCqeLogStride};
  cq->pi = pending;
  cq->fired_sn = load_le32(cq->dbrec() + offsetof(vrnic_cq_dbrec, arm_sn));
  *moved = pending;
  return VRNIC_AQ_STATUS_OK;
}

bool Engine::post_cqe(Cq& cq, const roce::Completion& c, uint32_t qpn, bool recv) {
  if (cq.error) {
    return false;
  }
  const uint32_t ci = load_le32(cq.dbrec() + offsetof(vrnic_cq_dbrec, ci));
  if (cq.pi - ci >= cq.ring.depth()) {
    cq.error = true;
    LOG_WARN("CQ %u overrun (depth %u)", cq.cqn, cq.ring.depth());
    host_.async_event(VRNIC_EQE_TYPE_CQ_ERROR, cq.cqn, 0);
    return false;
  }
  vrnic_cqe e{};
  e.wr_id = vrnic::to_le64(c.wr_id);
  e.byte_len = vrnic::to_le32(c.byte_len);
  e.imm_data = vrnic::to_le32(c.imm);
  e.qpn = vrnic::to_le32(qpn);
  e.src_qp = vrnic::to_le32(c.src_qp);
  e.wqe_idx = vrnic::to_le32(c.wqe_idx);
  const uint32_t info =
      vrnic::field_prep<VRNIC_CQE_OPCODE_MASK>(static_cast<uint32_t>(c.opcode)) |
      vrnic::field_prep<VRNIC_CQE_STATUS_MASK>(static_cast<uint32_t>(c.status)) |
      (c.has_imm ? VRNIC_CQE_F_IMM : 0) | (c.grh ? VRNIC_CQE_F_GRH : 0) |
      (c.ipv4 ? VRNIC_CQE_F_IPV4 : 0) |
      vrnic::field_prep<VRNIC_CQE_OWNER_MASK>(vrnic::ring_owner(cq.pi, cq.ring.log_depth));
  std::byte* slot = cq.ring.entry(cq.pi);
  std::memcpy(slot, &e, offsetof(vrnic_cqe, info));
  // The owner word last: the consumer reads nothing before it.
  vrnic::store_release32(slot + offsetof(vrnic_cqe, info), vrnic::to_le32(info));
  ++cq.pi;
  ++stats_[VRNIC_STAT_CQES];
  (void)recv;

  // Notification: once per arm, for any completion or (solicited-only)
  // for a solicited or failed one.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint32_t sn = load_le32(cq.dbrec() + offsetof(vrnic_cq_dbrec, arm_sn));
  if (sn != cq.fired_sn) {
    const uint32_t flags = load_le32(cq.dbrec() + offsetof(vrnic_cq_dbrec, arm_flags));
    if ((flags & VRNIC_CQ_ARM_SOLICITED) == 0 || c.solicited ||
        c.status != roce::WcStatus::kSuccess) {
      cq.fired_sn = sn;
      host_.completion_event(cq.eqn, cq.cqn);
    }
  }
  return true;
}

bool Engine::resolve_path(const vrnic_av& av, uint32_t qpn, roce::Path* path) const {
  const auto& gids = host_.port().gids();
  if (av.sgid_index >= gids.size() || !gids[av.sgid_index].valid) {
    return false;
  }
  const GidEntry& g = gids[av.sgid_index];
  std::copy(std::begin(g.gid), std::end(g.gid), path->sgid.begin());
  std::copy(std::begin(av.dgid), std::end(av.dgid), path->dgid.begin());
  path->ipv4 = roce::gid_is_ipv4_mapped(path->sgid);
  if (path->ipv4 != roce::gid_is_ipv4_mapped(path->dgid)) {
    return false;
  }
  std::copy(g.mac.begin(), g.mac.end(), path->smac.begin());
  std::copy(std::begin(av.dmac), std::end(av.dmac), path->dmac.begin());
  const uint16_t vlan = vrnic::le16(av.vlan_id);
  path->vlan = g.vlan_id != roce::kNoVlan ? g.vlan_id : (vlan <= 4095 ? vlan : roce::kNoVlan);
  path->traffic_class = av.traffic_class;
  path->hop_limit = av.hop_limit != 0 ? av.hop_limit : 64;
  path->flow_label = vrnic::le32(av.flow_label) & 0xfffff;
  // RoCEv2 spreads flows over UDP source ports 0xc000..0xffff.
  const uint32_t h = (path->flow_label != 0 ? path->flow_label : qpn) * 2654435761U;
  path->udp_sport = static_cast<uint16_t>(0xc000 | (h >> 18));
  return true;
}

uint8_t Engine::create_qp(const vrnic_aq_create_qp& c, uint32_t* qpn) {
  const uint32_t flags = vrnic::le32(c.hdr.flags);
  const uint32_t t = vrnic::le32(c.type);
  const uint32_t pdn = vrnic::le32(c.pdn);
  Cq* scq = find_cq(vrnic::le32(c.send_cqn));
  Cq* rcq = find_cq(vrnic::le32(c.recv_cqn));
  Srq* srq = nullptr;
  const uint32_t max_wr = cfg_.limits.max_qp_wr;
  const bool gsi = (flags & VRNIC_AQ_CREATE_QP_F_GSI) != 0;
  if ((flags & ~(VRNIC_AQ_CREATE_QP_F_SQ_SIG_ALL | VRNIC_AQ_CREATE_QP_F_SRQ |
                 VRNIC_AQ_CREATE_QP_F_GSI)) != 0 ||
      (t != VRNIC_QPT_RC && t != VRNIC_QPT_UC && t != VRNIC_QPT_UD) || (gsi && t != VRNIC_QPT_UD) ||
      pdn == 0 || pdn >= pds_.size() || !pds_[pdn] || scq == nullptr || rcq == nullptr ||
      c.sq_log_stride < VRNIC_WQE_MIN_LOG_STRIDE || c.sq_log_stride > VRNIC_WQE_MAX_LOG_STRIDE ||
      (1U << c.sq_log_depth) > max_wr) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  if ((flags & VRNIC_AQ_CREATE_QP_F_SRQ) != 0) {
    srq = find_srq(vrnic::le32(c.srqn));
    if (srq == nullptr || t == VRNIC_QPT_UC) {
      return VRNIC_AQ_STATUS_BAD_PARAM;
    }
  } else if (c.rq_log_stride < VRNIC_RQE_MIN_LOG_STRIDE ||
             c.rq_log_stride > VRNIC_WQE_MAX_LOG_STRIDE || (1U << c.rq_log_depth) > max_wr) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const uint32_t data = t == VRNIC_QPT_UD ? VRNIC_SQE_UD_DATA_OFFSET : VRNIC_SQE_DATA_OFFSET;
  const uint32_t max_inline = vrnic::le32(c.max_inline);
  if (data + max_inline > (1U << c.sq_log_stride) || max_inline > cfg_.limits.max_inline_data) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  // QPNs are handed out round robin so that a new QP does not reuse the
  // number of one that just went away.
  int slot = -1;
  if (gsi) {
    // QP1 is the GSI QP's alone; ordinary QPs start at 2.
    if (qps_.size() <= VRNIC_GSI_QPN) {
      return VRNIC_AQ_STATUS_NO_RESOURCES;
    }
    if (qps_[VRNIC_GSI_QPN]) {
      return VRNIC_AQ_STATUS_BUSY;
    }
    slot = VRNIC_GSI_QPN;
  } else {
    slot = free_slot(qps_, next_qpn_);
    if (slot < 0) {
      slot = free_slot(qps_, 2);
    }
  }
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  roce::QpConfig cfg;
  cfg.type = static_cast<roce::QpType>(t);
  cfg.qpn = static_cast<uint32_t>(slot);
  cfg.sq_sig_all = (flags & VRNIC_AQ_CREATE_QP_F_SQ_SIG_ALL) != 0;
  cfg.max_inline = max_inline;
  cfg.gsi = gsi;
  auto qp = std::make_unique<Qp>(*this, cfg);
  if (!qp->buf.map(mem_, vrnic::le64(c.buf.pbl_addr), vrnic::le32(c.buf.npages))) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  qp->sq = {&qp->buf, vrnic::le16(c.sq_page), c.sq_log_depth, c.sq_log_stride};
  if (!qp->sq.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  if (srq == nullptr) {
    qp->rq = {&qp->buf, vrnic::le16(c.rq_page), c.rq_log_depth, c.rq_log_stride};
    if (!qp->rq.fits()) {
      return VRNIC_AQ_STATUS_BAD_PARAM;
    }
  }
  qp->qpn = cfg.qpn;
  qp->pdn = pdn;
  qp->type = cfg.type;
  qp->send_cq = scq;
  qp->recv_cq = rcq;
  qp->srq = srq;
  qp->max_inline = max_inline;
  qp->attr.state = VRNIC_QPS_RESET;
  ++pds_[pdn]->refs;
  ++scq->refs;
  ++rcq->refs;
  if (srq != nullptr) {
    ++srq->refs;
  }
  *qpn = cfg.qpn;
  if (!gsi) {
    next_qpn_ = cfg.qpn + 1 < qps_.size() ? cfg.qpn + 1 : 2;
  }
  qps_[cfg.qpn] = std::move(qp);
  ++stats_[VRNIC_STAT_QPS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::modify_qp(uint32_t qpn, uint32_t mask, const vrnic_qp_attr& a) {
  Qp* qp = find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  const roce::QpState cur = qp->tp.state();
  const uint32_t want = vrnic::le32(a.state);
  if ((mask & ~VRNIC_QP_ATTR_ALL) != 0 ||
      ((mask & VRNIC_QP_ATTR_STATE) != 0 && want > VRNIC_QPS_ERR)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const roce::QpState next = (mask & VRNIC_QP_ATTR_STATE) != 0 ? to_state(want) : cur;
  if (!transition_ok(cur, next, qp->type, mask)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const uint32_t mtu = vrnic::le32(a.path_mtu);
  if (((mask & VRNIC_QP_ATTR_ACCESS) != 0 && (vrnic::le32(a.access) & ~VRNIC_ACCESS_ALL) != 0) ||
      ((mask & VRNIC_QP_ATTR_PATH_MTU) != 0 && (mtu < 1 || mtu > 5)) ||
      ((mask & VRNIC_QP_ATTR_PKEY_INDEX) != 0 && vrnic::le16(a.pkey_index) != 0) ||
      ((mask & VRNIC_QP_ATTR_PORT) != 0 && a.port != 1) ||
      ((mask & VRNIC_QP_ATTR_TIMEOUT) != 0 && a.timeout > 31) ||
      ((mask & VRNIC_QP_ATTR_RETRY_CNT) != 0 && a.retry_cnt > 7) ||
      ((mask & VRNIC_QP_ATTR_RNR_RETRY) != 0 && a.rnr_retry > 7) ||
      ((mask & VRNIC_QP_ATTR_MIN_RNR_TIMER) != 0 && a.min_rnr_timer > 31) ||
      ((mask & VRNIC_QP_ATTR_MAX_RD_ATOMIC) != 0 &&
       a.max_rd_atomic > cfg_.limits.max_qp_init_rd_atom) ||
      ((mask & VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC) != 0 &&
       a.max_dest_rd_atomic > cfg_.limits.max_qp_rd_atom)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  roce::Path path;
  if ((mask & VRNIC_QP_ATTR_AV) != 0 && qp->type != roce::QpType::kUd &&
      !resolve_path(a.av, qpn, &path)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }

  roce::QpConfig& c = qp->tp.config();
  vrnic_qp_attr& s = qp->attr;
  if ((mask & VRNIC_QP_ATTR_ACCESS) != 0) {
    c.access = vrnic::le32(a.access);
    s.access = a.access;
  }
  if ((mask & VRNIC_QP_ATTR_PATH_MTU) != 0) {
    const uint32_t port_mtu = host_.port().active_mtu();
    c.mtu = 128U << std::min(mtu, port_mtu);
    s.path_mtu = a.path_mtu;
  }
  if ((mask & VRNIC_QP_ATTR_DEST_QPN) != 0) {
    c.dest_qpn = vrnic::le32(a.dest_qpn) & roce::kQpnMask;
    s.dest_qpn = vrnic::to_le32(c.dest_qpn);
  }
  if ((mask & VRNIC_QP_ATTR_QKEY) != 0) {
    c.qkey = vrnic::le32(a.qkey);
    s.qkey = a.qkey;
  }
  if ((mask & VRNIC_QP_ATTR_PKEY_INDEX) != 0) {
    s.pkey_index = a.pkey_index;
  }
  if ((mask & VRNIC_QP_ATTR_PORT) != 0) {
    s.port = a.port;
  }
  if ((mask & VRNIC_QP_ATTR_TIMEOUT) != 0) {
    c.timeout = s.timeout = a.timeout;
  }
  if ((mask & VRNIC_QP_ATTR_RETRY_CNT) != 0) {
    c.retry_cnt = s.retry_cnt = a.retry_cnt;
  }
  if ((mask & VRNIC_QP_ATTR_RNR_RETRY) != 0) {
    c.rnr_retry = s.rnr_retry = a.rnr_retry;
  }
  if ((mask & VRNIC_QP_ATTR_MIN_RNR_TIMER) != 0) {
    c.min_rnr_timer = s.min_rnr_timer = a.min_rnr_timer;
  }
  if ((mask & VRNIC_QP_ATTR_MAX_RD_ATOMIC) != 0) {
    c.max_rd_atomic = s.max_rd_atomic = a.max_rd_atomic;
  }
  if ((mask & VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC) != 0) {
    c.max_dest_rd_atomic = s.max_dest_rd_atomic = a.max_dest_rd_atomic;
  }
  if ((mask & VRNIC_QP_ATTR_SQD_ASYNC_NOTIFY) != 0) {
    s.sqd_async_notify = a.sqd_async_notify;
  }
  if ((mask & VRNIC_QP_ATTR_AV) != 0) {
    s.av = a.av;
    if (qp->type != roce::QpType::kUd) {
      c.path = path;
    }
  }
  if ((mask & VRNIC_QP_ATTR_RQ_PSN) != 0) {
    qp->tp.set_rq_psn(vrnic::le32(a.rq_psn));
  }
  if ((mask & VRNIC_QP_ATTR_SQ_PSN) != 0) {
    qp->tp.set_sq_psn(vrnic::le32(a.sq_psn));
  }
  if (qp->type == roce::QpType::kUd) {
    c.mtu = 128U << host_.port().active_mtu();  // datagrams fit the port MTU
  }
  if (next != cur) {
    qp->tp.set_state(next);
    if (next == roce::QpState::kReset) {
      // Back to empty rings: the driver restarts its producers at 0.
      qp->rq_ci = 0;
      qp->seen_sq_pi = qp->seen_rq_pi = 0;
      qp->published_sq_ci = UINT32_MAX;
      qp->publish_sq_ci(0);
      vrnic::store_release32(qp->dbrec() + offsetof(vrnic_qp_dbrec, rq_ci), 0);
    }
  }
  s.state = vrnic::to_le32(static_cast<uint32_t>(qp->tp.state()));
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::query_qp(uint32_t qpn, vrnic_qp_attr* a) {
  Qp* qp = find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  *a = qp->attr;
  a->state = vrnic::to_le32(static_cast<uint32_t>(qp->tp.state()));
  a->sq_psn = vrnic::to_le32(qp->tp.sq_psn());
  a->rq_psn = vrnic::to_le32(qp->tp.rq_psn());
  a->sq_draining = qp->tp.sq_draining() ? 1 : 0;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::destroy_qp(uint32_t qpn) {
  Qp* qp = find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  --pds_[qp->pdn]->refs;
  --qp->send_cq->refs;
  --qp->recv_cq->refs;
  if (qp->srq != nullptr) {
    --qp->srq->refs;
  }
  for (McastGroup& g : mcast_) {
    std::erase(g.qpns, qpn);
  }
  std::erase_if(mcast_, [](const McastGroup& g) { return g.qpns.empty(); });
  qps_[qpn].reset();
  --stats_[VRNIC_STAT_QPS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::attach_mcast(uint32_t qpn, const roce::Gid& gid) {
  const Qp* qp = find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (qp->type != roce::QpType::kUd || qp->tp.config().gsi || !roce::gid_is_multicast(gid)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  McastGroup* g = find_group(gid);
  if (g == nullptr) {
    if (mcast_.size() >= cfg_.limits.max_mcast_grp) {
      return VRNIC_AQ_STATUS_NO_RESOURCES;
    }
    g = &mcast_.emplace_back(McastGroup{gid, {}});
  }
  if (std::find(g->qpns.begin(), g->qpns.end(), qpn) != g->qpns.end()) {
    return VRNIC_AQ_STATUS_OK;
  }
  if (g->qpns.size() >= cfg_.limits.max_mcast_qp_attach) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  g->qpns.push_back(qpn);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::detach_mcast(uint32_t qpn, const roce::Gid& gid) {
  McastGroup* g = find_group(gid);
  if (find_qp(qpn) == nullptr || g == nullptr || std::erase(g->qpns, qpn) == 0) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  std::erase_if(mcast_, [](const McastGroup& m) { return m.qpns.empty(); });
  return VRNIC_AQ_STATUS_OK;
}

Engine::McastGroup* Engine::find_group(const roce::Gid& gid) {
  auto it =
      std::find_if(mcast_.begin(), mcast_.end(), [&](const McastGroup& g) { return g.gid == gid; });
  return it == mcast_.end() ? nullptr : &*it;
}

// A received packet for qp: into its counter set (the port counted it).
void Engine::count_qp_rx(const Qp& qp, size_t bytes) {
  if (qp.counter_set != 0) {
    auto& set = *counter_sets_[qp.counter_set];
    ++set[VRNIC_STAT_RX_PACKETS];
    set[VRNIC_STAT_RX_BYTES] += bytes;
  }
}

uint8_t Engine::alloc_counter(uint32_t* id) {
  for (size_t i = 1; i < counter_sets_.size(); ++i) {
    if (!counter_sets_[i]) {
      counter_sets_[i].emplace();
      *id = static_cast<uint32_t>(i);
      return VRNIC_AQ_STATUS_OK;
    }
  }
  return VRNIC_AQ_STATUS_NO_RESOURCES;
}

uint8_t Engine::dealloc_counter(uint32_t id) {
  if (id == 0 || id >= counter_sets_.size() || !counter_sets_[id]) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  for (const auto& qp : qps_) {
    if (qp && qp->counter_set == id) {
      return VRNIC_AQ_STATUS_BUSY;
    }
  }
  counter_sets_[id].reset();
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::set_qp_counter(uint32_t qpn, uint32_t id) {
  Qp* qp = find_qp(qpn);
  if (qp == nullptr || id >= counter_sets_.size() || (id != 0 && !counter_sets_[id])) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  qp->counter_set = id;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::query_counter(uint32_t id, vrnic_stats* s) const {
  if (id == 0 || id >= counter_sets_.size() || !counter_sets_[id]) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  *s = vrnic_stats{};
  for (size_t i = 0; i < VRNIC_STAT_MAX; ++i) {
    s->counter[i] = vrnic::to_le64((*counter_sets_[id])[i]);
  }
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::create_srq(const vrnic_aq_create_srq& c, uint32_t* srqn) {
  const uint32_t pdn = vrnic::le32(c.pdn);
  if (vrnic::le32(c.hdr.flags) != 0 || pdn == 0 || pdn >= pds_.size() || !pds_[pdn] ||
      c.log_stride < VRNIC_RQE_MIN_LOG_STRIDE || c.log_stride > VRNIC_WQE_MAX_LOG_STRIDE ||
      (1U << c.log_depth) > cfg_.limits.max_srq_wr) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const int slot = free_slot(srqs_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto srq = std::make_unique<Srq>();
  if (!srq->buf.map(mem_, vrnic::le64(c.buf.pbl_addr), vrnic::le32(c.buf.npages))) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  srq->ring = {&srq->buf, vrnic::le16(c.ring_page), c.log_depth, c.log_stride};
  if (!srq->ring.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  srq->srqn = static_cast<uint32_t>(slot);
  srq->pdn = pdn;
  srq->limit = vrnic::le32(c.limit);
  *srqn = srq->srqn;
  srqs_[srq->srqn] = std::move(srq);
  ++pds_[pdn]->refs;
  ++stats_[VRNIC_STAT_SRQS];
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::modify_srq(uint32_t srqn, bool set_limit, uint32_t limit) {
  Srq* srq = find_srq(srqn);
  if (srq == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (set_limit) {
    if (limit > srq->ring.depth()) {
      return VRNIC_AQ_STATUS_BAD_PARAM;
    }
    srq->limit = limit;
  }
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::query_srq(uint32_t srqn, uint32_t* limit) {
  Srq* srq = find_srq(srqn);
  if (srq == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  *limit = srq->limit;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t Engine::destroy_srq(uint32_t srqn) {
  Srq* srq = find_srq(srqn);
  if (srq == nullptr || srqn == 0) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (srq->refs != 0) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  --pds_[srq->pdn]->refs;
  srqs_[srqn].reset();
  --stats_[VRNIC_STAT_SRQS];
  return VRNIC_AQ_STATUS_OK;
}

void Engine::fill_stats(vrnic_stats* s) const {
  *s = vrnic_stats{};
  for (size_t i = 0; i < VRNIC_STAT_MAX; ++i) {
    s->counter[i] = vrnic::to_le64(stats_[i]);
  }
}

// ---------------------------------------------------------------------------
// Packets

bool Engine::is_local(const roce::Packet& pkt) const {
  for (const GidEntry& g : host_.port().gids()) {
    if (g.valid && std::equal(std::begin(g.gid), std::end(g.gid), pkt.path.dgid.begin())) {
      return true;
    }
  }
  return false;
}

void Engine::send_frame(std::vector<std::byte>&& frame, bool local) {
  if (local) {
    loopback_.push_back(std::move(frame));
    return;
  }
  if (wire_) {
    wire_(frame);
  } else {
    ++stats_[VRNIC_STAT_RX_DROPPED];
  }
  if (free_frames_.size() < kMaxFramePool) {
    free_frames_.push_back(std::move(frame));
  }
}

void Engine::deliver(std::span<const std::byte> frame) {
  roce::Packet pkt;
  deliver_decoded(frame, roce::decode_frame(frame, &pkt), pkt);
}

void Engine::deliver_decoded(std::span<const std::byte> frame, roce::DecodeStatus st,
                             const roce::Packet& pkt) {
  if (st != roce::DecodeStatus::kOk) {
    ++stats_[st == roce::DecodeStatus::kBadIcrc ? VRNIC_STAT_ICRC_ERRORS : VRNIC_STAT_RX_DROPPED];
    return;
  }
  ++stats_[VRNIC_STAT_RX_PACKETS];
  stats_[VRNIC_STAT_RX_BYTES] += frame.size();
  if (roce::gid_is_multicast(pkt.path.dgid)) {
    deliver_multicast(pkt, frame.size());
    return;
  }
  if (!is_local(pkt)) {
    ++stats_[VRNIC_STAT_RX_DROPPED];
    return;
  }
  Qp* qp = find_qp(pkt.bth.dest_qp);
  if (qp == nullptr) {
    ++stats_[VRNIC_STAT_RX_DROPPED];
    return;
  }
  count_qp_rx(*qp, frame.size());
  qp->tp.receive(pkt);
  if (qp->fatal) {
    step_qp(*qp);
  }
}

// A multicast datagram: a copy to every UD QP attached to the group.  Only
// QPN 0xFFFFFF addresses a group (IBA 10.5.2.1).
void Engine::deliver_multicast(const roce::Packet& pkt, size_t frame_size) {
  const McastGroup* g = find_group(pkt.path.dgid);
  if (g == nullptr || pkt.bth.dest_qp != roce::kMulticastQpn ||
      roce::transport_of(pkt.bth.opcode) != roce::Transport::kUd) {
    ++stats_[VRNIC_STAT_RX_DROPPED];
    return;
  }
  for (const uint32_t qpn : g->qpns) {
    Qp* qp = find_qp(qpn);
    if (qp != nullptr) {
      count_qp_rx(*qp, frame_size);
      qp->tp.receive(pkt);
      if (qp->fatal) {
        step_qp(*qp);
      }
    }
  }
}

bool Engine::receive_frame(std::span<const std::byte> frame) {
  // Decoded once: the ICRC check is the costly part.
  roce::Packet pkt;
  const roce::DecodeStatus st = roce::decode_frame(frame, &pkt);
  if (st == roce::DecodeStatus::kNotRoce) {
    return false;
  }
  deliver_decoded(frame, st, pkt);
  return true;
}

void Engine::step_qp(Qp& qp) {
  if (qp.fatal) {
    qp.fatal = false;
    host_.async_event(VRNIC_EQE_TYPE_QP_FATAL, qp.qpn, 0);
    qp.tp.set_state(roce::QpState::kErr);
  }
}

bool Engine::poll() {
  bool progress = false;
  for (int i = 0; i < kLoopbackBudget && !loopback_.empty(); ++i) {
    std::vector<std::byte> frame = std::move(loopback_.front());
    loopback_.pop_front();
    deliver(frame);
    if (free_frames_.size() < kMaxFramePool) {
      free_frames_.push_back(std::move(frame));
    }
    progress = true;
  }
  const uint64_t now = now_us();
  for (auto& q : qps_) {
    if (!q) {
      continue;
    }
    Qp& qp = *q;
    if (qp.tp.next_deadline() <= now) {
      progress |= qp.tp.timer_step();
    }
    const uint32_t spi = qp.send_producer();
    const uint32_t rpi = qp.recv_producer();
    if (spi != qp.seen_sq_pi || rpi != qp.seen_rq_pi || qp.tp.has_send_work()) {
      qp.seen_sq_pi = spi;
      qp.seen_rq_pi = rpi;
      progress |= qp.tp.send_step(kSendBudget);
    }
    if (qp.fatal) {
      step_qp(qp);
      progress = true;
    }
  }
  return progress;
}

bool Engine::has_work() {
  if (!loopback_.empty()) {
    return true;
  }
  const uint64_t now = now_us();
  for (auto& q : qps_) {
    if (q && (q->send_producer() != q->seen_sq_pi || q->recv_producer() != q->seen_rq_pi ||
              q->tp.has_send_work() || q->tp.next_deadline() <= now)) {
      return true;
    }
  }
  return false;
}

uint64_t Engine::next_deadline_us() const {
  uint64_t d = UINT64_MAX;
  for (const auto& q : qps_) {
    if (q) {
      d = std::min(d, q->tp.next_deadline());
    }
  }
  return d;
}

bool Engine::active() const {
  return std::any_of(qps_.begin(), qps_.end(), [](const auto& q) { return q != nullptr; });
}

}  // namespace vrnicd
