// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// make bench-engine: vrnicd's Device alone, host-native, on one core.  The
// host tests' rig (datapath.h) stands in for the guest: its fake guest RAM
// holds the rings, the work requests are written with libvrnic's encoder
// and the completions read with its decoder, and the engine is polled by
// hand, with no VM and no QEMU.  Two RC QPs talk through the device's own
// GID (internal loopback: frames built and delivered inside the device,
// unsealed), or through two devices whose ports are cabled ("cable" rows:
// every frame sealed with its ICRC, copied onto the cable, and parsed and
// checked at the other end, as between two vrnicds without the socket).
//
// The rows, for each of the two: work requests per second
// (items_per_second) for 64 B RDMA WRITE, 8 B SEND and 8 B fetch-and-add,
// and bytes per second for 64 KiB RDMA WRITE and READ, each at path MTU
// 1024 and 4096.  Each iteration
// posts a batch of signaled work requests and polls the engine until
// their completions (and, for SEND, the receives') are in.  First comes
// the physical limit: host memcpy of 64 KiB (make bench prints these
// beside the guests' figures).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

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

// A connected RC pair, a sending to b, each with a CQ and a registered
// buffer: on one device (internal loopback), or on two devices whose
// ports are cabled (every frame sealed, copied onto the cable and parsed
// and checked at the other end, as between two vrnicds).
class Rig {
 public:
  Rig(uint32_t path_mtu, bool cabled) {
    a_.dp = std::make_unique<DataPath>();  // 32 MiB of guest RAM: on the heap
    DataPath* dpb = a_.dp.get();
    if (cabled) {
      b_.dp = std::make_unique<DataPath>();
      b_.dp->set_host(2);
      dpb = b_.dp.get();
    }
    ok_ = a_.dp->bring_up() && (!cabled || dpb->bring_up()) && a_.make(*a_.dp) && b_.make(*dpb) &&
          a_.connect(*a_.dp, b_, *dpb, path_mtu) && b_.connect(*dpb, a_, *a_.dp, path_mtu);
    b_.on = dpb;
    a_.on = a_.dp.get();
    if (ok_ && cabled) {
      cable_.emplace(*a_.dp, *b_.dp);
    }
  }

  [[nodiscard]] bool ok() const { return ok_; }

  // n work requests of opcode and len bytes from a, each signaled, with a
  // receive posted on b for each SEND; runs the engine (and the cable)
  // until every completion is in.  False if one failed.
  bool round(uint32_t opcode, uint32_t len, uint32_t n) {
    const vrnic_sge local{a_.buf, len, a_.key};
    const vrnic_sge remote{b_.buf, len, b_.key};
    uint32_t want = n;
    if (opcode == VRNIC_WQE_SEND) {
      for (uint32_t i = 0; i < n; ++i) {
        b_.on->post_recv(b_.qp, i, std::span(&remote, 1));
      }
      want += n;
    }
    DataPath::SendWr wr;
    wr.opcode = opcode;
    wr.remote_addr = b_.buf;
    wr.rkey = b_.key;
    wr.compare_add = 1;
    for (uint32_t i = 0; i < n; ++i) {
      wr.wr_id = i;
      a_.on->post_send(a_.qp, wr, std::span(&local, 1));
    }
    bool good = true;
    for (uint32_t got = 0; got < want;) {
      if (cable_) {
        cable_->step();
      } else {
        a_.on->run(1);
      }
      for (End* e : {&a_, &b_}) {
        while (auto c = e->on->poll(e->cq)) {
          good = good && c->status == VRNIC_CQE_SUCCESS;
          ++got;
        }
      }
    }
    return good;
  }

 private:
  struct End {
    std::unique_ptr<DataPath> dp;  // its own device, or none (a's)
    DataPath* on = nullptr;        // the device it is on
    uint32_t pd = 0;
    DataPath::Cq cq;
    DataPath::Qp qp;
    uint64_t buf = 0;
    uint32_t key = 0;

    bool make(DataPath& d) {
      qp.sq_log_depth = 8;
      qp.rq_log_depth = 8;
      return d.create_pd(&pd) == VRNIC_AQ_STATUS_OK && d.create_cq(10, &cq) == VRNIC_AQ_STATUS_OK &&
             d.create_qp(pd, cq, cq, &qp) == VRNIC_AQ_STATUS_OK && (buf = d.alloc(kMaxMsg)) != 0 &&
             d.reg_mr(pd, buf, kMaxMsg, VRNIC_ACCESS_ALL, &key) == VRNIC_AQ_STATUS_OK;
    }
    bool connect(DataPath& d, const End& peer, const DataPath& peer_dp, uint32_t path_mtu) const {
      return d.connect(qp, peer.qp.qpn, VRNIC_ACCESS_ALL, path_mtu, peer_dp.av()) ==
             VRNIC_AQ_STATUS_OK;
    }
  };

  bool ok_ = false;
  End a_;
  End b_;
  std::optional<vrnic_test::Cable> cable_;
};

void engine_rig(benchmark::State& state, bool cabled, uint32_t opcode, uint32_t len, uint32_t mtu) {
  auto rig = std::make_unique<Rig>(mtu, cabled);
  if (!rig->ok()) {
    state.SkipWithError("the device refused the setup");
    return;
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    if (!rig->round(opcode, len, kBatch)) {
      state.SkipWithError("a work request completed in error");
      return;
    }
  }
  const auto wrs = static_cast<int64_t>(state.iterations()) * kBatch;
  state.SetItemsProcessed(wrs);
  state.SetBytesProcessed(wrs * len);
}

// The physical limit beside the rows: the host copying 64 KiB on one core,
// between buffers as large as the rows' (and as warm in the cache).
void host_memcpy(benchmark::State& state) {
  std::vector<std::byte> src(kMaxMsg, std::byte{1});
  std::vector<std::byte> dst(kMaxMsg);
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the idiom
    std::memcpy(dst.data(), src.data(), kMaxMsg);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kMaxMsg);
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
  benchmark::RegisterBenchmark("host memcpy 64 KiB", host_memcpy);
  for (const bool cabled : {false, true}) {
    for (const uint32_t mtu : {kMtu1024, kMtu4096}) {
      for (const Row& r : kRows) {
        const std::string name = std::string(cabled ? "cable " : "loopback ") + r.name + ", MTU " +
                                 std::to_string(128U << mtu);
        benchmark::RegisterBenchmark(name.c_str(), engine_rig, cabled, r.opcode, r.len, mtu);
      }
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
