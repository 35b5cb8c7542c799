// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "engine/object_table.h"

#include <algorithm>
#include <cstring>

#include "base/guest_memory.h"
#include "engine/counters.h"
#include "hw_access.h"

namespace vrnicd {
namespace {

template <typename T>
int free_slot(const std::vector<std::unique_ptr<T>>& v, size_t first) {
  for (size_t i = first; i < v.size(); ++i) {
    if (!v[i]) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

template <typename T>
T* find(const std::vector<std::unique_ptr<T>>& v, uint32_t i) {
  return i < v.size() ? v[i].get() : nullptr;
}

template <typename Groups>
auto* find_in(Groups& groups, const roce::Gid& gid) {
  auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.gid == gid; });
  return it == groups.end() ? nullptr : &*it;
}

// Whether two keys have the same index and tag: a WQE may change only a
// key's variant (the consumer's byte).
bool same_device_key(uint32_t a, uint32_t b) { return ((a ^ b) & VRNIC_KEY_DEVICE_MASK) == 0; }

}  // namespace

ObjectTable::ObjectTable(const DeviceConfig& cfg, const GuestMemory& mem, std::span<std::byte> dm,
                         Counters& counters, const QpContext& qp_ctx)
    : cfg_(cfg), mem_(mem), dm_(dm), counters_(counters), qp_ctx_(qp_ctx) {
  reset();
}

void ObjectTable::reset() {
  qps_.clear();
  live_qps_.clear();
  srqs_.clear();
  timed_cqs_.clear();
  cqs_.clear();
  pds_.clear();
  mcast_.clear();
  const DeviceLimits& l = cfg_.limits;
  qps_.resize(static_cast<size_t>(l.max_qp) + 2);
  srqs_.resize(static_cast<size_t>(l.max_srq) + 1);
  cqs_.resize(static_cast<size_t>(l.max_cq) + 1);
  keys_.reset(l.max_mr);
  pds_.resize(static_cast<size_t>(l.max_pd) + 1);
  next_qpn_ = 2;
}

bool ObjectTable::pd_exists(uint32_t pdn) const { return pdn != 0 && find(pds_, pdn) != nullptr; }
Cq* ObjectTable::find_cq(uint32_t cqn) const { return find(cqs_, cqn); }
Srq* ObjectTable::find_srq(uint32_t srqn) const { return find(srqs_, srqn); }
Qp* ObjectTable::find_qp(uint32_t qpn) const { return find(qps_, qpn); }

const Mr* ObjectTable::find_mr(uint32_t key, uint32_t pdn) const {
  const Mr* mr = keys_.by_key(key);
  return mr != nullptr && mr->key == key && mr->pdn == pdn && mr->state == MrState::kValid &&
                 mr->mw_type == 0
             ? mr
             : nullptr;
}

const Mr* ObjectTable::find_remote(uint32_t key, uint32_t pdn, uint32_t qpn,
                                   const Mr** window) const {
  *window = nullptr;
  const Mr* mr = keys_.by_key(key);
  if (mr == nullptr || mr->key != key || mr->pdn != pdn || mr->state != MrState::kValid) {
    return nullptr;
  }
  if (mr->mw_type == 0) {
    return mr;
  }
  if (mr->mw_type == VRNIC_MW_TYPE_2 && mr->mw_qpn != qpn) {
    return nullptr;
  }
  *window = mr;
  return keys_.at(mr->mw_mr);  // a bound window's MR cannot go before it
}

bool ObjectTable::eq_in_use(uint32_t eqn) const {
  return std::any_of(cqs_.begin(), cqs_.end(),
                     [eqn](const auto& cq) { return cq && cq->eqn() == eqn; });
}

bool ObjectTable::counter_in_use(uint32_t id) const {
  return std::any_of(live_qps_.begin(), live_qps_.end(),
                     [id](const Qp* qp) { return qp->counter_set() == id; });
}

// ---------------------------------------------------------------------------
// PDs and MRs

uint8_t ObjectTable::create_pd(uint32_t* pdn) {
  const int slot = free_slot(pds_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  pds_[static_cast<size_t>(slot)] = std::make_unique<Pd>();
  *pdn = static_cast<uint32_t>(slot);
  counters_.add(VRNIC_STAT_PDS);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::destroy_pd(uint32_t pdn) {
  if (!pd_exists(pdn)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (pds_[pdn]->refs != 0) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  pds_[pdn].reset();
  counters_.sub(VRNIC_STAT_PDS);
  return VRNIC_AQ_STATUS_OK;
}

// Into the key table, with a new key; the caller saw that it is not full.
void ObjectTable::add_mr(std::unique_ptr<Mr> mr, uint32_t* key) {
  ++pds_[mr->pdn]->refs;
  counters_.add(VRNIC_STAT_MRS);
  counters_.add(VRNIC_STAT_MR_PAGES, mr->pages.size());
  *key = keys_.insert(std::move(mr))->key;
}

// A region of device memory: its pages are the device's own, from byte
// p.pbl_addr on, and must lie inside it.
uint8_t ObjectTable::map_dm_pages(const RegMrParams& p, Mr* mr) const {
  const uint64_t span = uint64_t{p.npages} << p.page_shift;
  if (dm_.empty() || p.pbl_addr > dm_.size() || span > dm_.size() - p.pbl_addr) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  mr->dm = true;
  mr->pages.reserve(p.npages);
  for (uint64_t i = 0; i < p.npages; ++i) {
    mr->pages.push_back(dm_.data() + p.pbl_addr + (i << p.page_shift));
  }
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::reg_mr(const RegMrParams& p, uint32_t* key) {
  if (!pd_exists(p.pdn)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  if (keys_.full()) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto mr = std::make_unique<Mr>();
  mr->pdn = p.pdn;
  mr->access = p.access;
  if (p.phys) {
    mr->length = UINT64_MAX;
    mr->phys = &mem_;
  } else {
    const uint8_t st = p.dm ? map_dm_pages(p, mr.get()) : map_mr_pages(mem_, p, mr.get());
    if (st != VRNIC_AQ_STATUS_OK) {
      return st;
    }
    mr->iova = p.iova;
    mr->length = p.length;
    mr->page_shift = p.page_shift;
    mr->base = p.iova & ~((1ULL << p.page_shift) - 1);
  }
  add_mr(std::move(mr), key);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::dereg_mr(uint32_t key) {
  const uint32_t idx = vrnic::field_get<VRNIC_KEY_INDEX_MASK>(key);
  const Mr* mr = keys_.at(idx);
  // A fast-register MR's variant is the consumer's: its index and tag
  // name it.
  if (mr == nullptr || mr->mw_type != 0 ||
      (mr->fast_reg ? !same_device_key(mr->key, key) : mr->key != key)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (mr->windows != 0) {
    return VRNIC_AQ_STATUS_BUSY;  // windows are bound to it (IB 10.6.7.2.1)
  }
  counters_.sub(VRNIC_STAT_MR_PAGES, mr->pages.size());
  counters_.sub(VRNIC_STAT_MRS);
  remove_mr(idx);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::rereg_mr(const ReregMrParams& p) {
  Mr* mr = keys_.at(vrnic::field_get<VRNIC_KEY_INDEX_MASK>(p.key));
  // Only a region of REG_MR, named by its exact key.
  if (mr == nullptr || mr->mw_type != 0 || mr->fast_reg || mr->phys != nullptr || mr->dm ||
      mr->key != p.key) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (mr->windows != 0) {
    return VRNIC_AQ_STATUS_BUSY;  // windows are bound to it, as for DEREG_MR
  }
  if (p.pd && !pd_exists(p.reg.pdn)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;  // as REG_MR says of a PD that is not
  }
  // The new translation first: a page list that is not RAM changes nothing.
  Mr next;
  if (p.trans) {
    if (const uint8_t st = map_mr_pages(mem_, p.reg, &next); st != VRNIC_AQ_STATUS_OK) {
      return st;
    }
    counters_.sub(VRNIC_STAT_MR_PAGES, mr->pages.size());
    counters_.add(VRNIC_STAT_MR_PAGES, next.pages.size());
    mr->pages = std::move(next.pages);
    mr->iova = p.reg.iova;
    mr->length = p.reg.length;
    mr->page_shift = p.reg.page_shift;
    mr->base = p.reg.iova & ~((1ULL << p.reg.page_shift) - 1);
  }
  if (p.pd) {
    --pds_[mr->pdn]->refs;
    mr->pdn = p.reg.pdn;
    ++pds_[mr->pdn]->refs;
  }
  if (p.access) {
    mr->access = p.reg.access;
  }
  return VRNIC_AQ_STATUS_OK;
}

void ObjectTable::remove_mr(uint32_t index) {
  --pds_[keys_.at(index)->pdn]->refs;
  keys_.erase(index);
}

// ---------------------------------------------------------------------------
// Memory windows

uint8_t ObjectTable::alloc_mw(uint32_t pdn, uint32_t type, uint32_t* key) {
  if (!pd_exists(pdn)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (keys_.full()) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto mw = std::make_unique<Mr>();
  mw->pdn = pdn;
  mw->mw_type = static_cast<uint8_t>(type);
  mw->state = MrState::kFree;
  ++pds_[pdn]->refs;
  *key = keys_.insert(std::move(mw))->key;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::dealloc_mw(uint32_t key) {
  const uint32_t idx = vrnic::field_get<VRNIC_KEY_INDEX_MASK>(key);
  Mr* mw = keys_.at(idx);
  if (mw == nullptr || mw->mw_type == 0 || !same_device_key(mw->key, key)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  unbind(mw);
  remove_mr(idx);
  return VRNIC_AQ_STATUS_OK;
}

// A bound window lets go of its MR.
void ObjectTable::unbind(Mr* mw) {
  if (mw->state == MrState::kValid) {
    --keys_.at(mw->mw_mr)->windows;
  }
  mw->state = MrState::kFree;
}

// IB 10.6.7.3: the window must be of the QP's PD (type 2: free), the MR
// valid, of the PD and with MW_BIND access, the range within it, and the
// rights ones the MR can back (remote write and atomic need local write).
// Only a type 2 window may be zero-based (IB 10.6.7.2.2).
uint8_t ObjectTable::bind_mw(uint32_t pdn, uint32_t qpn, const vrnic::BindMwFields& b) {
  Mr* mw = keys_.by_key(b.rkey);
  if (mw == nullptr || mw->mw_type == 0 || mw->pdn != pdn || !same_device_key(mw->key, b.rkey)) {
    return VRNIC_VERR_MW_KEY;
  }
  if (mw->mw_type == VRNIC_MW_TYPE_2 && (mw->state == MrState::kValid || b.length == 0)) {
    return VRNIC_VERR_MW_STATE;
  }
  if (b.length == 0) {  // type 1: unbind
    unbind(mw);
    mw->key = b.rkey;
    return VRNIC_VERR_NONE;
  }
  const Mr* mr = find_mr(b.mr_lkey, pdn);
  if (mr == nullptr || mr->phys != nullptr || (mr->access & VRNIC_ACCESS_MW_BIND) == 0) {
    return VRNIC_VERR_MW_MR;
  }
  constexpr uint32_t kRemote =
      VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_READ | VRNIC_ACCESS_REMOTE_ATOMIC;
  const uint32_t allowed =
      kRemote | (mw->mw_type == VRNIC_MW_TYPE_2 ? uint32_t{VRNIC_ACCESS_ZERO_BASED} : 0U);
  if ((b.access & ~allowed) != 0 ||
      ((b.access & (VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_ATOMIC)) != 0 &&
       (mr->access & VRNIC_ACCESS_LOCAL_WRITE) == 0)) {
    return VRNIC_VERR_MW_ACCESS;
  }
  if (!mr->contains(b.addr, b.length)) {
    return VRNIC_VERR_MW_BOUNDS;
  }
  const uint32_t mr_index = vrnic::field_get<VRNIC_KEY_INDEX_MASK>(mr->key);
  unbind(mw);  // type 1 may be bound again
  ++keys_.at(mr_index)->windows;
  mw->mw_mr = mr_index;
  mw->mw_qpn = qpn;
  mw->key = b.rkey;
  mw->iova = b.addr;
  mw->length = b.length;
  mw->access = b.access & kRemote;
  mw->zero_based = (b.access & VRNIC_ACCESS_ZERO_BASED) != 0;
  mw->state = MrState::kValid;
  return VRNIC_VERR_NONE;
}

uint8_t ObjectTable::alloc_mr(uint32_t pdn, uint32_t max_pages, uint32_t* key) {
  if (!pd_exists(pdn)) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (keys_.full()) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto mr = std::make_unique<Mr>();
  mr->pdn = pdn;
  mr->fast_reg = true;
  mr->state = MrState::kFree;
  mr->max_pages = max_pages;
  add_mr(std::move(mr), key);
  return VRNIC_AQ_STATUS_OK;
}

// The fast-register MR that key's index names, if it is of PD pdn.
Mr* ObjectTable::fast_reg_mr(uint32_t key, uint32_t pdn) const {
  Mr* mr = keys_.by_key(key);
  return mr != nullptr && mr->fast_reg && mr->pdn == pdn && same_device_key(mr->key, key) ? mr
                                                                                          : nullptr;
}

uint8_t ObjectTable::fast_reg(uint32_t pdn, const vrnic::FastRegFields& r) {
  Mr* mr = fast_reg_mr(r.key, pdn);
  if (mr == nullptr) {
    return VRNIC_VERR_MR_KEY;
  }
  if (mr->state == MrState::kValid) {
    return VRNIC_VERR_MR_STATE;
  }
  if (r.page_shift < VRNIC_MR_MIN_PAGE_SHIFT || r.page_shift > VRNIC_MR_MAX_PAGE_SHIFT ||
      r.npages == 0 || r.npages > mr->max_pages || r.length > cfg_.limits.max_mr_size ||
      r.iova + r.length < r.iova || (r.access & ~VRNIC_ACCESS_ALL) != 0) {
    return VRNIC_VERR_MR_PAGES;
  }
  // The pages cover the region.
  const uint64_t psize = 1ULL << r.page_shift;
  const uint64_t base = r.iova & ~(psize - 1);
  if ((r.iova - base + r.length + psize - 1) >> r.page_shift > r.npages) {
    return VRNIC_VERR_MR_PAGES;
  }
  RegMrParams p;
  p.pdn = pdn;
  p.page_shift = r.page_shift;
  p.npages = r.npages;
  p.pbl_addr = r.pbl_addr;
  Mr next;
  if (map_mr_pages(mem_, p, &next) != VRNIC_AQ_STATUS_OK) {
    return VRNIC_VERR_MR_PBL;
  }
  counters_.sub(VRNIC_STAT_MR_PAGES, mr->pages.size());
  counters_.add(VRNIC_STAT_MR_PAGES, next.pages.size());
  mr->pages = std::move(next.pages);
  mr->key = r.key;
  mr->access = r.access;
  mr->iova = r.iova;
  mr->length = r.length;
  mr->page_shift = r.page_shift;
  mr->base = base;
  mr->state = MrState::kValid;
  return VRNIC_VERR_NONE;
}

// Invalidation names the current key of a fast-register MR of the PD with
// no window bound to it, or of a bound type 2 window.  LOCAL_INV
// (remote_qpn nullptr) may name an MR in any state; a SEND_WITH_INV
// received only a valid MR, or a window bound to the receiving QP.
uint8_t ObjectTable::invalidate_key(uint32_t key, uint32_t pdn, const uint32_t* remote_qpn) {
  Mr* mr = keys_.by_key(key);
  if (mr == nullptr || mr->key != key || mr->pdn != pdn) {
    return VRNIC_VERR_MR_KEY;
  }
  if (mr->mw_type == VRNIC_MW_TYPE_2) {
    if (mr->state != MrState::kValid || (remote_qpn != nullptr && mr->mw_qpn != *remote_qpn)) {
      return VRNIC_VERR_MR_KEY;
    }
    unbind(mr);
    return VRNIC_VERR_NONE;
  }
  if (!mr->fast_reg || (remote_qpn != nullptr && mr->state != MrState::kValid)) {
    return VRNIC_VERR_MR_KEY;
  }
  if (mr->windows != 0) {
    return VRNIC_VERR_MR_STATE;
  }
  mr->state = MrState::kInvalid;
  return VRNIC_VERR_NONE;
}

uint8_t ObjectTable::invalidate(uint32_t key, uint32_t pdn) {
  return invalidate_key(key, pdn, nullptr);
}

bool ObjectTable::invalidate_remote(uint32_t key, uint32_t pdn, uint32_t qpn) {
  return invalidate_key(key, pdn, &qpn) == VRNIC_VERR_NONE;
}

// ---------------------------------------------------------------------------
// CQs and SRQs

uint8_t ObjectTable::create_cq(const CreateCqParams& p, uint32_t* cqn) {
  const int slot = free_slot(cqs_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  std::unique_ptr<Cq> cq;
  const uint8_t st = Cq::create(mem_, static_cast<uint32_t>(slot), p, &cq);
  if (st != VRNIC_AQ_STATUS_OK) {
    return st;
  }
  *cqn = cq->cqn();
  cqs_[*cqn] = std::move(cq);
  counters_.add(VRNIC_STAT_CQS);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::resize_cq(const ResizeCqParams& p, uint32_t* moved) {
  Cq* cq = find_cq(p.cqn);
  return cq == nullptr ? VRNIC_AQ_STATUS_NOT_FOUND : cq->resize(mem_, p, moved);
}

uint8_t ObjectTable::modify_cq(uint32_t cqn, uint32_t count, uint32_t period_us) {
  Cq* cq = find_cq(cqn);
  if (cq == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  cq->moderate(count, period_us, qp_ctx_.clock.now_us(), qp_ctx_.host);
  std::erase(timed_cqs_, cq);
  if (cq->timed()) {
    timed_cqs_.push_back(cq);
  }
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::destroy_cq(uint32_t cqn) {
  const Cq* cq = find_cq(cqn);
  if (cq == nullptr || cqn == 0) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (cq->refs != 0) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  std::erase(timed_cqs_, cq);
  cqs_[cqn].reset();
  counters_.sub(VRNIC_STAT_CQS);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::create_srq(const CreateSrqParams& p, uint32_t* srqn) {
  if (!pd_exists(p.pdn)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const int slot = free_slot(srqs_, 1);
  if (slot < 0) {
    return VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  auto srq = std::make_unique<Srq>();
  if (!srq->buf.map(mem_, p.buf.pbl_addr, p.buf.npages)) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  srq->ring = {&srq->buf, p.ring.first_page, p.ring.log_depth, p.ring.log_stride};
  if (!srq->ring.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  srq->srqn = static_cast<uint32_t>(slot);
  srq->pdn = p.pdn;
  srq->limit = p.limit;
  *srqn = srq->srqn;
  srqs_[srq->srqn] = std::move(srq);
  ++pds_[p.pdn]->refs;
  counters_.add(VRNIC_STAT_SRQS);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::modify_srq(uint32_t srqn, bool set_limit, uint32_t limit) {
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

// The WQEs posted and not taken move, in order, to the new ring from
// index 0; the new record says so (pi their count, ci 0).  A WQE a QP has
// taken already is the QP's, whatever happens to the ring.
uint8_t ObjectTable::resize_srq(const ResizeSrqParams& p, uint32_t* moved) {
  Srq* srq = find_srq(p.srqn);
  if (srq == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  QueueBuffer nb;
  if (!nb.map(mem_, p.buf.pbl_addr, p.buf.npages)) {
    return VRNIC_AQ_STATUS_BAD_ADDR;
  }
  const Ring nr{&nb, p.first_page, p.log_depth, srq->ring.log_stride};
  if (!nr.fits()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const uint32_t pi =
      vrnic::le32(vrnic::load_acquire32(srq->dbrec() + offsetof(vrnic_srq_dbrec, pi)));
  const uint32_t posted = pi - srq->ci;
  // A producer more than a ring ahead is the driver's error; a depth below
  // what is posted or below the armed limit is a bad value (EINVAL on rxe).
  if (posted > srq->ring.depth() || posted > nr.depth() || srq->limit > nr.depth()) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  const size_t stride = size_t{1} << nr.log_stride;
  for (uint32_t i = 0; i < posted; ++i) {
    std::memcpy(nr.entry(i), srq->ring.entry(srq->ci + i), stride);
  }
  srq->buf = std::move(nb);
  srq->ring = {&srq->buf, p.first_page, p.log_depth, nr.log_stride};
  srq->ci = 0;
  vrnic::store_release32(srq->dbrec() + offsetof(vrnic_srq_dbrec, ci), vrnic::to_le32(0));
  vrnic::store_release32(srq->dbrec() + offsetof(vrnic_srq_dbrec, pi), vrnic::to_le32(posted));
  *moved = posted;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::query_srq(uint32_t srqn, uint32_t* limit) {
  const Srq* srq = find_srq(srqn);
  if (srq == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  *limit = srq->limit;
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::destroy_srq(uint32_t srqn) {
  const Srq* srq = find_srq(srqn);
  if (srq == nullptr || srqn == 0) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (srq->refs != 0) {
    return VRNIC_AQ_STATUS_BUSY;
  }
  --pds_[srq->pdn]->refs;
  srqs_[srqn].reset();
  counters_.sub(VRNIC_STAT_SRQS);
  return VRNIC_AQ_STATUS_OK;
}

// ---------------------------------------------------------------------------
// QPs and multicast groups

// The objects a new QP names, which must exist.
uint8_t ObjectTable::qp_links(const CreateQpParams& p, QpLinks* links) const {
  links->send_cq = find_cq(p.send_cqn);
  links->recv_cq = find_cq(p.recv_cqn);
  links->srq = p.srqn ? find_srq(*p.srqn) : nullptr;
  if (!pd_exists(p.pdn) || links->send_cq == nullptr || links->recv_cq == nullptr ||
      (p.srqn && links->srq == nullptr)) {
    return VRNIC_AQ_STATUS_BAD_PARAM;
  }
  return VRNIC_AQ_STATUS_OK;
}

// QP 1 is the GSI QP's alone; other QPs are numbered from 2, round robin,
// so that a new QP does not reuse the number of one that just went away.
// -1: none free; 0: QP 1 exists already.
int ObjectTable::qp_slot(bool gsi) const {
  if (gsi) {
    if (qps_.size() <= VRNIC_GSI_QPN) {
      return -1;
    }
    return qps_[VRNIC_GSI_QPN] ? 0 : VRNIC_GSI_QPN;
  }
  const int slot = free_slot(qps_, next_qpn_);
  return slot >= 0 ? slot : free_slot(qps_, 2);
}

uint8_t ObjectTable::create_qp(const CreateQpParams& p, uint32_t* qpn) {
  QpLinks links;
  if (const uint8_t st = qp_links(p, &links); st != VRNIC_AQ_STATUS_OK) {
    return st;
  }
  const int slot = qp_slot(p.gsi);
  if (slot <= 0) {
    return slot == 0 ? VRNIC_AQ_STATUS_BUSY : VRNIC_AQ_STATUS_NO_RESOURCES;
  }
  std::unique_ptr<Qp> qp;
  const auto n = static_cast<uint32_t>(slot);
  if (const uint8_t st = Qp::create(qp_ctx_, mem_, n, p, links, &qp); st != VRNIC_AQ_STATUS_OK) {
    return st;
  }
  ++pds_[p.pdn]->refs;
  ++links.send_cq->refs;
  ++links.recv_cq->refs;
  if (links.srq != nullptr) {
    ++links.srq->refs;
  }
  if (!p.gsi) {
    next_qpn_ = n + 1 < qps_.size() ? n + 1 : 2;
  }
  qps_[n] = std::move(qp);
  live_qps_.insert(std::upper_bound(live_qps_.begin(), live_qps_.end(), n,
                                    [](uint32_t q, const Qp* x) { return q < x->qpn(); }),
                   qps_[n].get());
  *qpn = n;
  counters_.add(VRNIC_STAT_QPS);
  return VRNIC_AQ_STATUS_OK;
}

uint8_t ObjectTable::destroy_qp(uint32_t qpn) {
  Qp* qp = find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  qp->send_owed_responses();
  const QpLinks& links = qp->links();
  --pds_[qp->pdn()]->refs;
  --links.send_cq->refs;
  --links.recv_cq->refs;
  if (links.srq != nullptr) {
    --links.srq->refs;
  }
  // A type 2 window is bound to its QP and goes free with it: a later QP
  // with the same number must not inherit it.
  for (const auto& mw : keys_.all()) {
    if (mw && mw->mw_type == VRNIC_MW_TYPE_2 && mw->state == MrState::kValid && mw->mw_qpn == qpn) {
      unbind(mw.get());
    }
  }
  for (McastGroup& g : mcast_) {
    std::erase(g.qpns, qpn);
  }
  std::erase_if(mcast_, [](const McastGroup& g) { return g.qpns.empty(); });
  std::erase(live_qps_, qps_[qpn].get());
  qps_[qpn].reset();
  counters_.sub(VRNIC_STAT_QPS);
  return VRNIC_AQ_STATUS_OK;
}

ObjectTable::McastGroup* ObjectTable::find_group(const roce::Gid& gid) {
  return find_in(mcast_, gid);
}

const std::vector<uint32_t>* ObjectTable::group(const roce::Gid& gid) const {
  const McastGroup* g = find_in(mcast_, gid);
  return g == nullptr ? nullptr : &g->qpns;
}

uint8_t ObjectTable::attach_mcast(uint32_t qpn, const roce::Gid& gid) {
  const Qp* qp = find_qp(qpn);
  if (qp == nullptr) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  if (qp->type() != roce::QpType::kUd || qp->gsi()) {
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

uint8_t ObjectTable::detach_mcast(uint32_t qpn, const roce::Gid& gid) {
  McastGroup* g = find_group(gid);
  if (find_qp(qpn) == nullptr || g == nullptr || std::erase(g->qpns, qpn) == 0) {
    return VRNIC_AQ_STATUS_NOT_FOUND;
  }
  std::erase_if(mcast_, [](const McastGroup& m) { return m.qpns.empty(); });
  return VRNIC_AQ_STATUS_OK;
}

}  // namespace vrnicd
