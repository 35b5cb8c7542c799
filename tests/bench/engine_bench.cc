// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// make bench-engine: vrnicd's Device alone, host-native, on one core.  The
// host tests' rig (datapath.h) stands in for the guest: its fake guest RAM
// holds the rings, the work requests are written with libvrnic's encoder
// and the completions read with its decoder, and the engine is polled by
// hand, with no VM, no QEMU and no wire in between.  Two RC QPs talk
// through the device's own GID (internal loopback), so every message is
// segmented into RoCEv2 frames, ICRC'd, parsed and checked as it would be
// on a wire.
//
// The rows: work requests per second (items_per_second) for 64 B RDMA
// WRITE, 8 B SEND and 8 B fetch-and-add, and bytes per second for 64 KiB
// RDMA WRITE and READ, each at path MTU 1024 and 4096.  Each iteration
// posts a batch of signaled work requests and polls the engine until
// their completions (and, for SEND, the receives') are in.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/log.h"
#include "datapath.h"

namespace {

using vrnic_test::DataPath;

constexpr uint32_t kMtu1024 = 3;  // IB path MTU encodings
constexpr uint32_t kMtu4096 = 5;
constexpr uint32_t kMaxMsg = uint32_t{64} << 10;
// Work requests posted before the engine runs: a send queue of 256 and a
// CQ of 1024 hold a batch and its completions.
constexpr uint32_t kBatch = 32;

// A connected RC pair, a sending to b, with a registered buffer each.
class Loopback {
 public:
  explicit Loopback(uint32_t path_mtu) {
    ok_ = dp_.bring_up() && dp_.create_pd(&pd_) == VRNIC_AQ_STATUS_OK &&
          dp_.create_cq(10, &cq_) == VRNIC_AQ_STATUS_OK && make_qp(&a_) && make_qp(&b_) &&
          (buf_a_ = dp_.alloc(kMaxMsg)) != 0 && (buf_b_ = dp_.alloc(kMaxMsg)) != 0 &&
          dp_.reg_mr(pd_, buf_a_, kMaxMsg, VRNIC_ACCESS_ALL, &key_a_) == VRNIC_AQ_STATUS_OK &&
          dp_.reg_mr(pd_, buf_b_, kMaxMsg, VRNIC_ACCESS_ALL, &key_b_) == VRNIC_AQ_STATUS_OK &&
          dp_.connect(a_, b_.qpn, VRNIC_ACCESS_ALL, path_mtu) == VRNIC_AQ_STATUS_OK &&
          dp_.connect(b_, a_.qpn, VRNIC_ACCESS_ALL, path_mtu) == VRNIC_AQ_STATUS_OK;
  }

  [[nodiscard]] bool ok() const { return ok_; }

  // n work requests of opcode and len bytes from a, each signaled, with a
  // receive posted on b for each SEND; runs the engine until every
  // completion is in.  False if one failed.
  bool round(uint32_t opcode, uint32_t len, uint32_t n) {
    const vrnic_sge local{buf_a_, len, key_a_};
    const vrnic_sge remote{buf_b_, len, key_b_};
    uint32_t want = n;
    if (opcode == VRNIC_WQE_SEND) {
      for (uint32_t i = 0; i < n; ++i) {
        dp_.post_recv(b_, i, std::span(&remote, 1));
      }
      want += n;
    }
    DataPath::SendWr wr;
    wr.opcode = opcode;
    wr.remote_addr = buf_b_;
    wr.rkey = key_b_;
    wr.compare_add = 1;
    for (uint32_t i = 0; i < n; ++i) {
      wr.wr_id = i;
      dp_.post_send(a_, wr, std::span(&local, 1));
    }
    bool good = true;
    for (uint32_t got = 0; got < want;) {
      dp_.run(1);
      while (auto e = dp_.poll(cq_)) {
        good = good && e->status == VRNIC_CQE_SUCCESS;
        ++got;
      }
    }
    return good;
  }

 private:
  bool make_qp(DataPath::Qp* qp) {
    qp->sq_log_depth = 8;
    qp->rq_log_depth = 8;
    return dp_.create_qp(pd_, cq_, cq_, qp) == VRNIC_AQ_STATUS_OK;
  }

  DataPath dp_;
  bool ok_ = false;
  uint32_t pd_ = 0;
  DataPath::Cq cq_;
  DataPath::Qp a_;
  DataPath::Qp b_;
  uint64_t buf_a_ = 0;
  uint64_t buf_b_ = 0;
  uint32_t key_a_ = 0;
  uint32_t key_b_ = 0;
};

void engine_loopback(benchmark::State& state, uint32_t opcode, uint32_t len, uint32_t mtu) {
  // The rig's guest RAM is 32 MiB: on the heap.
  auto lb = std::make_unique<Loopback>(mtu);
  if (!lb->ok()) {
    state.SkipWithError("the device refused the loopback setup");
    return;
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    if (!lb->round(opcode, len, kBatch)) {
      state.SkipWithError("a work request completed in error");
      return;
    }
  }
  const auto wrs = static_cast<int64_t>(state.iterations()) * kBatch;
  state.SetItemsProcessed(wrs);
  state.SetBytesProcessed(wrs * len);
}

struct Row {
  const char* name;
  uint32_t opcode;
  uint32_t len;
};

constexpr Row kRows[] = {
    {"write 64 B", VRNIC_WQE_RDMA_WRITE, 64},
    {"send 8 B", VRNIC_WQE_SEND, 8},
    {"fetch-add 8 B", VRNIC_WQE_ATOMIC_FETCH_AND_ADD, 8},
    {"write 64 KiB", VRNIC_WQE_RDMA_WRITE, kMaxMsg},
    {"read 64 KiB", VRNIC_WQE_RDMA_READ, kMaxMsg},
};

}  // namespace

int main(int argc, char** argv) {
  // Each row brings a device up: no "device enabled" lines between rows.
  vrnicd::log_set_level(vrnicd::LogLevel::kWarn);
  for (const uint32_t mtu : {kMtu1024, kMtu4096}) {
    for (const Row& r : kRows) {
      const std::string name =
          std::string("loopback ") + r.name + ", MTU " + std::to_string(128U << mtu);
      benchmark::RegisterBenchmark(name.c_str(), engine_loopback, r.opcode, r.len, mtu);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
