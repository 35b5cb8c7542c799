// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libFuzzer target: Engine::poll against a guest user who owns rings and
// doorbell records and rewrites them while the device reads them.  The
// input is a script of guest actions (raw WQEs, stores anywhere in the
// user's rings and doorbell records, runaway producers, CQ polls, QP
// state changes, engine passes).  While the engine runs, every shared
// word it loads may be rewritten straight after the load (the fuzz build
// of load_acquire32() calls back here), so two reads of the same word can
// disagree, as they can on real hardware with a racing guest.
//
// Beside the attacker, a bystander in its own PD with its own CQ does an
// RDMA WRITE after every input.  It must complete successfully, land its
// bytes and leave the rest of its buffer as it was: whatever one user
// does, the device keeps serving the others and never writes outside what
// a key allows.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_rig.h"
#include "hw_access.h"

namespace {

using vrnic_fuzz::Input;
using vrnic_test::DataPath;

// Memory the attacker may write: its QPs' and CQ's pages.
struct Area {
  std::byte* host;
  size_t size;
};

struct Adversary {
  Input* in = nullptr;
  std::vector<Area> areas;

  [[nodiscard]] bool owns(const void* p) const {
    const auto* b = static_cast<const std::byte*>(p);
    for (const Area& a : areas) {
      if (b >= a.host && b + sizeof(uint32_t) <= a.host + a.size) {
        return true;
      }
    }
    return false;
  }

  // A store of the attacker's at an offset of one of its areas.
  void store_somewhere() {
    const Area& a = areas.at(in->u8() % areas.size());
    const size_t off = (in->get<uint16_t>() % (a.size / sizeof(uint32_t))) * sizeof(uint32_t);
    vrnic::store_release32(a.host + off, in->get<uint32_t>());
  }

  // After the device loaded the word at p: maybe change it, or something
  // else of the attacker's, before the device's next read.
  void after_load(const void* p) {
    if (in == nullptr || in->empty()) {
      return;
    }
    const uint8_t op = in->u8();
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast)
    auto* word = static_cast<std::byte*>(const_cast<void*>(p));
    const uint32_t was = vrnic::load_acquire32(word);  // the hook is off in here
    switch (op >> 5) {
      case 4:
        if (owns(p)) {
          vrnic::store_release32(word, in->get<uint32_t>());
        }
        break;
      case 5:
        if (owns(p)) {
          vrnic::store_release32(word, was + 1 + (op & 0x1f));
        }
        break;
      case 6:
        if (owns(p)) {
          vrnic::store_release32(word, was + (1U << (op & 0x1f)));
        }
        break;
      case 7:
        store_somewhere();
        break;
      default:
        break;  // most loads see what they loaded
    }
  }
};

Adversary g_adversary;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void hook(const void* p) noexcept {
  // Disarm while the hook itself touches shared memory.
  vrnic::fuzz_after_load = nullptr;
  g_adversary.after_load(p);
  vrnic::fuzz_after_load = hook;
}

// Engine passes with the attacker racing it, until it idles or passes run
// out.
void run_hostile(DataPath& dp, int passes) {
  vrnic::fuzz_after_load = hook;
  for (int i = 0, idle = 0; i < passes && idle < 3; ++i) {
    idle = dp.dev().engine_poll_st() ? 0 : idle + 1;
  }
  vrnic::fuzz_after_load = nullptr;
}

// An RC pair in a PD and CQ of its own, which the attacker cannot touch.
class Bystander {
 public:
  static constexpr size_t kBuf = 8192;
  static constexpr size_t kWrite = 256;

  explicit Bystander(DataPath& dp) : dp_(dp) {
    ok_ = dp.create_pd(&pd_) == VRNIC_AQ_STATUS_OK && dp.create_cq(6, &cq_) == VRNIC_AQ_STATUS_OK;
    src_ = dp.alloc(kBuf);
    dst_ = dp.alloc(kBuf);
    ok_ = ok_ &&
          dp.reg_mr(pd_, src_, kBuf, VRNIC_ACCESS_LOCAL_WRITE, &lkey_) == VRNIC_AQ_STATUS_OK &&
          dp.reg_mr(pd_, dst_, kBuf, VRNIC_ACCESS_ALL, &rkey_) == VRNIC_AQ_STATUS_OK &&
          dp.create_qp(pd_, cq_, cq_, &a_) == VRNIC_AQ_STATUS_OK &&
          dp.create_qp(pd_, cq_, cq_, &b_) == VRNIC_AQ_STATUS_OK &&
          dp.connect(a_, b_.qpn) == VRNIC_AQ_STATUS_OK &&
          dp.connect(b_, a_.qpn) == VRNIC_AQ_STATUS_OK;
    std::memset(dp.ram(dst_), kCanary, kBuf);
  }

  [[nodiscard]] bool ok() const { return ok_; }

  // One RDMA WRITE of a fresh pattern: true when it completed, landed and
  // touched nothing else.
  bool write_once() {
    ++round_;
    std::memset(dp_.ram(src_), static_cast<int>(round_ | 1), kBuf);
    DataPath::SendWr wr;
    wr.opcode = VRNIC_WQE_RDMA_WRITE;
    wr.wr_id = round_;
    wr.remote_addr = dst_;
    wr.rkey = rkey_;
    const std::array<vrnic_sge, 1> sge = {{{src_, kWrite, lkey_}}};
    dp_.post_send(a_, wr, sge);
    // Poll until the WRITE completes, not until the engine idles: the
    // attacker may keep the engine busy as long as it likes (with WRITEs
    // of its whole MR, say); the bystander must get its turn all the same.
    std::optional<vrnic::CqeFields> wc;
    for (int i = 0; i < kMaxRounds && !wc; ++i) {
      dp_.run(1);
      wc = dp_.poll(cq_);
    }
    dp_.run(kSettleRounds);
    if (!wc || wc->status != VRNIC_CQE_SUCCESS || wc->wr_id != round_ || dp_.poll(cq_)) {
      return false;
    }
    const std::byte* d = dp_.ram(dst_);
    for (size_t i = 0; i < kBuf; ++i) {
      const auto want = static_cast<std::byte>(i < kWrite ? (round_ | 1) & 0xff : kCanary);
      if (d[i] != want) {
        return false;
      }
    }
    std::memset(dp_.ram(dst_), kCanary, kWrite);
    return true;
  }

 private:
  static constexpr int kCanary = 0x5a;
  static constexpr int kMaxRounds = 100000;  // engine polls the WRITE may take
  static constexpr int kSettleRounds = 8;    // then any second completion shows
  DataPath& dp_;
  bool ok_ = false;
  uint32_t pd_ = 0;
  DataPath::Cq cq_;
  uint64_t src_ = 0;
  uint64_t dst_ = 0;
  uint32_t lkey_ = 0;
  uint32_t rkey_ = 0;
  DataPath::Qp a_;
  DataPath::Qp b_;
  uint64_t round_ = 0;
};

void attacker_areas(vrnic_fuzz::Rig& rig) {
  DataPath& dp = rig.dp();
  g_adversary.areas.clear();
  for (size_t i = 0; i < vrnic_fuzz::Rig::kQps; ++i) {
    const DataPath::Qp& q = rig.qp(i);
    g_adversary.areas.push_back({dp.ram(q.dbrec), q.npages * DataPath::kPage});
  }
  const DataPath::Cq& cq = rig.cq();
  g_adversary.areas.push_back({dp.ram(cq.dbrec), cq.npages * DataPath::kPage});
}

// One action of the attacker's script.
void act(vrnic_fuzz::Rig& rig, Input& in) {
  DataPath& dp = rig.dp();
  const uint8_t op = in.u8();
  DataPath::Qp& qp = rig.qp(op >> 4);
  switch (op & 0x7) {
    case 0:
      dp.post_send_raw(qp, in.bytes(in.u8() + 16));
      break;
    case 1:
      dp.post_recv_raw(qp, in.bytes(in.u8()));
      break;
    case 2:
      g_adversary.store_somewhere();
      break;
    case 3: {  // a producer index anywhere at all
      const size_t field =
          (op & 0x8) != 0 ? offsetof(vrnic_qp_dbrec, rq_pi) : offsetof(vrnic_qp_dbrec, sq_pi);
      vrnic::store_release32(dp.ram(qp.dbrec + field), in.get<uint32_t>());
      break;
    }
    case 4:
      run_hostile(dp, 1 + in.u8() % 32);
      break;
    case 5:
      for (int n = in.u8() % 16; n > 0 && dp.poll(rig.cq()); --n) {
      }
      break;
    case 6: {  // the user's own ibv_modify_qp: to ERR or back to RESET
      vrnic_qp_attr a{};
      a.state = (op & 0x8) != 0 ? VRNIC_QPS_ERR : VRNIC_QPS_RESET;
      dp.modify_qp(qp.qpn, VRNIC_QP_ATTR_STATE, a);
      break;
    }
    default:
      run_hostile(dp, 1);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vrnic_fuzz::Rig rig;
  static Bystander bystander(rig.dp());
  if (!rig.ok() || !bystander.ok()) {
    __builtin_trap();  // the rig itself is broken: fail loudly
  }
  attacker_areas(rig);
  Input in(data, size);
  g_adversary.in = &in;
  for (int n = 0; n < 64 && !in.empty(); ++n) {
    act(rig, in);
  }
  run_hostile(rig.dp(), 500);
  g_adversary.in = nullptr;
  if (!bystander.write_once()) {
    __builtin_trap();  // the attacker got at the bystander
  }
  rig.renew();
  if (!rig.ok()) {
    __builtin_trap();
  }
  return 0;
}
