// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device's object tables: protection domains, memory regions, CQs,
// SRQs, QPs and multicast groups, indexed the way the driver names them
// (PDN, key, CQN, SRQN, QPN).  Creation checks what needs the tables and
// guest memory; the parameters come validated from admin_verbs.cc.
// Every method returns a VRNIC_AQ_STATUS_* value.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/config.h"
#include "engine/cq.h"
#include "engine/key_table.h"
#include "engine/objects.h"
#include "engine/params.h"
#include "engine/qp.h"

namespace vrnicd {

class Counters;
class GuestMemory;

class ObjectTable {
 public:
  ObjectTable(const DeviceConfig& cfg, const GuestMemory& mem, std::span<std::byte> dm,
              Counters& counters, const QpContext& qp_ctx);

  // Forget every object, as at device reset.
  void reset();

  // The guest RAM that regions map.
  [[nodiscard]] const GuestMemory& memory() const { return mem_; }
  // The device memory that F_DM regions map.
  [[nodiscard]] std::span<std::byte> device_memory() const { return dm_; }

  uint8_t create_pd(uint32_t* pdn);
  uint8_t destroy_pd(uint32_t pdn);
  uint8_t reg_mr(const RegMrParams& p, uint32_t* key);
  uint8_t dereg_mr(uint32_t key);
  // A registered region changed in place: it keeps its key, and on error
  // stays as it was.
  uint8_t rereg_mr(const ReregMrParams& p);
  uint8_t alloc_mr(uint32_t pdn, uint32_t max_pages, uint32_t* key);
  // The memory management WQEs of a QP of PD pdn: VRNIC_VERR_NONE, or why
  // they fail (VRNIC_VERR_MR_*).  A failure changes nothing.
  uint8_t fast_reg(uint32_t pdn, const vrnic::FastRegFields& r);
  uint8_t invalidate(uint32_t key, uint32_t pdn);
  // SEND_WITH_INV received by QP qpn: only a valid MR's current key, or a
  // type 2 window's bound to that QP.
  bool invalidate_remote(uint32_t key, uint32_t pdn, uint32_t qpn);
  uint8_t alloc_mw(uint32_t pdn, uint32_t type, uint32_t* key);
  uint8_t dealloc_mw(uint32_t key);
  // BIND_MW from QP qpn of PD pdn: VRNIC_VERR_NONE or VRNIC_VERR_MW_*.
  uint8_t bind_mw(uint32_t pdn, uint32_t qpn, const vrnic::BindMwFields& b);
  uint8_t create_cq(const CreateCqParams& p, uint32_t* cqn);
  uint8_t resize_cq(const ResizeCqParams& p, uint32_t* moved);
  // Completion event moderation (see Cq::moderate).
  uint8_t modify_cq(uint32_t cqn, uint32_t count, uint32_t period_us);
  uint8_t destroy_cq(uint32_t cqn);
  uint8_t create_srq(const CreateSrqParams& p, uint32_t* srqn);
  uint8_t modify_srq(uint32_t srqn, bool set_limit, uint32_t limit);
  uint8_t resize_srq(const ResizeSrqParams& p, uint32_t* moved);
  uint8_t query_srq(uint32_t srqn, uint32_t* limit);
  uint8_t destroy_srq(uint32_t srqn);
  uint8_t create_qp(const CreateQpParams& p, uint32_t* qpn);
  uint8_t destroy_qp(uint32_t qpn);
  uint8_t attach_mcast(uint32_t qpn, const roce::Gid& gid);
  uint8_t detach_mcast(uint32_t qpn, const roce::Gid& gid);

  // The valid MR of key if it belongs to PD pdn (not a window).
  [[nodiscard]] const Mr* find_mr(uint32_t key, uint32_t pdn) const;
  // What an rkey reaches from QP qpn of PD pdn: the region whose memory it
  // is, and (through a window) the bound window, whose range and rights
  // apply too.  nullptr if nothing.
  [[nodiscard]] const Mr* find_remote(uint32_t key, uint32_t pdn, uint32_t qpn,
                                      const Mr** window) const;
  [[nodiscard]] Qp* find_qp(uint32_t qpn) const;
  // The local members of multicast group gid (nullptr: no such group).
  [[nodiscard]] const std::vector<uint32_t>* group(const roce::Gid& gid) const;
  [[nodiscard]] bool eq_in_use(uint32_t eqn) const;
  [[nodiscard]] bool counter_in_use(uint32_t id) const;
  // The QPs that exist, by QPN: what the engine runs, without a walk
  // over every QPN the device could have.
  [[nodiscard]] std::span<Qp* const> qps() const { return live_qps_; }
  // The CQs whose moderation has a timer: what the engine ticks.
  [[nodiscard]] std::span<Cq* const> timed_cqs() const { return timed_cqs_; }

 private:
  struct McastGroup {
    roce::Gid gid{};
    std::vector<uint32_t> qpns;
  };

  [[nodiscard]] bool pd_exists(uint32_t pdn) const;
  [[nodiscard]] Cq* find_cq(uint32_t cqn) const;
  [[nodiscard]] Srq* find_srq(uint32_t srqn) const;
  McastGroup* find_group(const roce::Gid& gid);
  uint8_t qp_links(const CreateQpParams& p, QpLinks* links) const;
  [[nodiscard]] int qp_slot(bool gsi) const;
  void add_mr(std::unique_ptr<Mr> mr, uint32_t* key);
  uint8_t map_dm_pages(const RegMrParams& p, Mr* mr) const;
  [[nodiscard]] Mr* fast_reg_mr(uint32_t key, uint32_t pdn) const;
  void unbind(Mr* mw);
  uint8_t invalidate_key(uint32_t key, uint32_t pdn, const uint32_t* remote_qpn);
  void remove_mr(uint32_t index);

  const DeviceConfig& cfg_;
  const GuestMemory& mem_;
  std::span<std::byte> dm_;
  Counters& counters_;
  QpContext qp_ctx_;
  std::vector<std::unique_ptr<Pd>> pds_;  // by PDN
  KeyTable keys_;                         // MRs and windows
  std::vector<std::unique_ptr<Cq>> cqs_;
  std::vector<Cq*> timed_cqs_;  // the cqs_ with a moderation period
  std::vector<std::unique_ptr<Srq>> srqs_;
  std::vector<std::unique_ptr<Qp>> qps_;  // by QPN
  std::vector<Qp*> live_qps_;             // the non-null qps_, by QPN
  std::vector<McastGroup> mcast_;
  uint32_t next_qpn_ = 2;
};

}  // namespace vrnicd
