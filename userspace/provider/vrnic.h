// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic: the libibverbs provider for vrnic devices.  Objects embed the
// libibverbs ones; every entry point is extern "C" and noexcept.
//
// The data path is kernel bypass: send and receive rings, completion
// rings and their doorbell records are mapped from the kernel, and the
// BAR0 doorbell is written directly, only when the device's status page
// says the engine sleeps (see "Doorbell suppression" in the hardware spec).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hw_access.h"
#include "ibverbs_private.h"
#include "queue_entry.h"
#include "vrnic-abi.h"

namespace vrnic {

struct Device {
  verbs_device vdev;
};

// Allocated by libibverbs with calloc(), so plain data only.
struct Context {
  verbs_context ibv_ctx;
  void* db_page;            // BAR0 page, or nullptr without user doorbells
  const void* status_page;  // BAR2 status page, read-only
  size_t page_size;
  uint32_t db_offset;
  uint32_t db_peer;
  uint32_t flags;  // VRNIC_UCTX_F_*
  uint32_t max_inline_data;
};

struct Pd {
  ibv_pd ibv_pd{};
  uint32_t pdn{};
};

struct Mr {
  verbs_mr vmr{};
};

// A device memory allocation, mapped at map.
struct Dm {
  verbs_dm vdm{};
  void* map{};
  size_t map_size{};
  uint64_t length{};
};

struct Ah {
  ibv_ah ibv_ah{};
  vrnic_av av{};
};

// A mapping of a queue buffer (page 0: doorbell records, then rings).
struct QueueMap {
  void* base = nullptr;
  size_t size = 0;
  [[nodiscard]] std::byte* at(size_t off) const { return static_cast<std::byte*>(base) + off; }
};

struct Cq {
  verbs_cq vcq{};
  Context* ctx{};
  pthread_spinlock_t lock{};
  QueueMap map{};
  std::byte* ring{};
  std::byte* dbrec{};
  uint32_t log_depth{};
  uint32_t ci{};
  uint32_t cqn{};
  uint32_t arm_sn{};
  bool ex{};        // created with ibv_create_cq_ex
  CqeFields cur{};  // the entry start_poll/next_poll look at
  bool have_cur{};
};

// A receive ring libvrnic produces into: a QP's receive queue or an SRQ.
struct RecvRing {
  std::byte* base{};
  std::byte* pi_rec{};        // our producer index, in the doorbell record
  const std::byte* ci_rec{};  // the device's consumer index
  uint32_t log_depth{};
  uint32_t log_stride{};
  uint32_t max_sge{};
  uint32_t pi{};
};

struct Srq {
  verbs_srq vsrq{};
  Context* ctx{};
  pthread_spinlock_t lock{};
  QueueMap map{};
  RecvRing ring{};
};

struct Qp {
  verbs_qp vqp{};
  Context* ctx{};
  QueueMap map{};
  std::byte* dbrec{};
  ibv_qp_type type{};
  bool sq_sig_all{};
  Srq* srq{};
  // Send ring
  pthread_spinlock_t sq_lock{};
  std::byte* sq{};
  uint32_t sq_log_depth{};
  uint32_t sq_log_stride{};
  uint32_t sq_pi{};
  uint32_t max_send_sge{};
  uint32_t max_inline{};
  // Receive ring
  pthread_spinlock_t rq_lock{};
  RecvRing rq{};
  // ibv_wr_* in progress: between wr_start and wr_complete/wr_abort.
  uint32_t wr_pi{};    // producer index after the WQEs built so far
  SqeWriter wr_wqe{};  // the WQE being built, if valid()
  int wr_err{};
};

inline Context* to_vctx(ibv_context* ctx) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  return reinterpret_cast<Context*>(reinterpret_cast<char*>(ctx) -
                                    offsetof(Context, ibv_ctx.context));
}
template <typename T, typename B>
T* container(B* base, size_t offset) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  return reinterpret_cast<T*>(reinterpret_cast<char*>(base) - offset);
}
inline Pd* to_vpd(ibv_pd* pd) noexcept { return container<Pd>(pd, offsetof(Pd, ibv_pd)); }
inline Ah* to_vah(ibv_ah* ah) noexcept { return container<Ah>(ah, offsetof(Ah, ibv_ah)); }
inline Cq* to_vcq(ibv_cq* cq) noexcept { return container<Cq>(cq, offsetof(Cq, vcq.cq)); }
inline Cq* to_vcq_ex(ibv_cq_ex* cq) noexcept { return container<Cq>(cq, offsetof(Cq, vcq.cq_ex)); }
inline Qp* to_vqp(ibv_qp* qp) noexcept { return container<Qp>(qp, offsetof(Qp, vqp.qp)); }
inline Qp* to_vqp_ex(ibv_qp_ex* qp) noexcept { return container<Qp>(qp, offsetof(Qp, vqp.qp_ex)); }
inline Srq* to_vsrq(ibv_srq* srq) noexcept { return container<Srq>(srq, offsetof(Srq, vsrq.srq)); }

// The functions a busy application calls in a loop (ibv_poll_cq and the
// ibv_cq_ex polling calls).  Under QEMU's TCG, translated code cannot chain
// across a guest page boundary, so a hot loop that straddles one runs
// slower: a 32-byte shift of libvrnic's code once moved ib_send_lat's
// average latency by 15%.  Aligned to 512 bytes, a function shorter than
// that never straddles a page.
#define VRNIC_HOT_LOOP [[gnu::aligned(512)]]

// Holds a spin lock for a scope.
class SpinGuard {
 public:
  explicit SpinGuard(pthread_spinlock_t* l) noexcept : l_(l) { pthread_spin_lock(l_); }
  ~SpinGuard() { pthread_spin_unlock(l_); }
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;
  SpinGuard(SpinGuard&&) = delete;
  SpinGuard& operator=(SpinGuard&&) = delete;

 private:
  pthread_spinlock_t* l_;
};

// Ring the ENGINE doorbell if the device sleeps.  The caller has just
// published a producer index; the fence orders that write before the read
// of the flag (the device does the mirror image before it sleeps).
inline void ring_engine(const Context* ctx) noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ctx->db_page == nullptr || load_acquire32(static_cast<const std::byte*>(ctx->status_page) +
                                                VRNIC_STATUS_ENGINE_ASLEEP) == 0) {
    return;
  }
  auto* reg = static_cast<std::byte*>(ctx->db_page) + ctx->db_offset;
  const uint32_t value = field_prep<VRNIC_DOORBELL_PEER_MASK>(ctx->db_peer) |
                         field_prep<VRNIC_DOORBELL_CHANNEL_MASK>(VRNIC_DB_CHANNEL_ENGINE);
  // An MMIO write: volatile, and after the fence above.
  *reinterpret_cast<volatile uint32_t*>(reg) = value;  // NOLINT
}

// Map a queue buffer the kernel offered at key; false (errno set) on failure.
bool map_queue(Context* ctx, uint64_t key, size_t size, QueueMap* map) noexcept;
void unmap_queue(QueueMap* map) noexcept;

// vrnic.cc: whether a context is one of ours (vrnicdv checks).
bool is_vrnic_context(ibv_context* ctx) noexcept;

// vrnic.cc
verbs_context* alloc_context(ibv_device* ibdev, int cmd_fd, void* private_data) noexcept;
verbs_context* import_context(ibv_device* ibdev, int cmd_fd) noexcept;

// import.cc
ibv_pd* import_pd(ibv_context* ctx, uint32_t handle) noexcept;
void unimport_pd(ibv_pd* pd) noexcept;
ibv_mr* import_mr(ibv_pd* pd, uint32_t handle) noexcept;
void unimport_mr(ibv_mr* mr) noexcept;

// dm.cc
ibv_dm* alloc_dm(ibv_context* ctx, ibv_alloc_dm_attr* attr) noexcept;
int free_dm(ibv_dm* dm) noexcept;
ibv_dm* import_dm(ibv_context* ctx, uint32_t handle) noexcept;
void unimport_dm(ibv_dm* dm) noexcept;
ibv_mr* reg_dm_mr(ibv_pd* pd, ibv_dm* dm, uint64_t offset, size_t length,
                  unsigned int access) noexcept;

// verbs.cc
void free_context(ibv_context* ibctx) noexcept;
int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t attr_size) noexcept;
int query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) noexcept;
ibv_pd* alloc_pd(ibv_context* ctx) noexcept;
int dealloc_pd(ibv_pd* pd) noexcept;
ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, uint64_t hca_va, int access) noexcept;
int rereg_mr(verbs_mr* vmr, int flags, ibv_pd* pd, void* addr, size_t length, int access) noexcept;
int dereg_mr(verbs_mr* vmr) noexcept;
ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) noexcept;
int dealloc_mw(ibv_mw* mw) noexcept;
int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* mw_bind) noexcept;
ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) noexcept;
int destroy_ah(ibv_ah* ah) noexcept;
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept;
int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) noexcept;

// cq.cc
ibv_cq* create_cq(ibv_context* ctx, int cqe, ibv_comp_channel* channel, int comp_vector) noexcept;
ibv_cq_ex* create_cq_ex(ibv_context* ctx, ibv_cq_init_attr_ex* attr) noexcept;
int destroy_cq(ibv_cq* cq) noexcept;
int resize_cq(ibv_cq* cq, int cqe) noexcept;
int modify_cq(ibv_cq* cq, ibv_modify_cq_attr* attr) noexcept;

// post.cc: the posting fast path
// The send opcodes (IBV_QP_EX_WITH_*) a QP type supports; 0: no such type.
uint64_t send_ops_for(ibv_qp_type type) noexcept;
// The IBV_QP_EX_WITH_* bit of a work request opcode; 0: vrnic lacks it.
uint64_t send_op_bit(ibv_wr_opcode op) noexcept;
// IBV_QP_EX_WITH_FLUSH where libibverbs has it (rdma-core 45 on), else 0.
uint64_t flush_send_ops() noexcept;
// Install the ibv_wr_*() callbacks for send_ops_flags.
void set_wr_ops(Qp* qp, uint64_t send_ops_flags) noexcept;
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) noexcept;
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept;
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept;
// Post receive work requests to a ring whose lock the caller holds.
int post_recv_ring(Context* ctx, RecvRing* ring, ibv_recv_wr* wr, ibv_recv_wr** bad) noexcept;

// poll.cc: the polling fast path
int poll_cq(ibv_cq* cq, int ne, ibv_wc* wc) noexcept;
int req_notify_cq(ibv_cq* cq, int solicited_only) noexcept;
// Install the ibv_cq_ex polling callbacks for wc_flags.
void set_ex_ops(Cq* cq, uint64_t wc_flags) noexcept;
// Give the slots consumed so far back to the device.
void publish_ci(Cq* cq) noexcept;
// Drop the completions of QP qpn not yet polled (it was destroyed).
void clean_cq(Cq* cq, uint32_t qpn) noexcept;

// qp.cc
ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) noexcept;
ibv_qp* create_qp_ex(ibv_context* ctx, ibv_qp_init_attr_ex* attr) noexcept;
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) noexcept;
int modify_qp_rate_limit(ibv_qp* qp, ibv_qp_rate_limit_attr* attr) noexcept;
int query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) noexcept;
int destroy_qp(ibv_qp* qp) noexcept;

// srq.cc
ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) noexcept;
int modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) noexcept;
int query_srq(ibv_srq* srq, ibv_srq_attr* attr) noexcept;
int destroy_srq(ibv_srq* srq) noexcept;

// Debug output, enabled with VRNIC_DEBUG=1.
void debug(const char* fmt, ...) noexcept __attribute__((format(printf, 1, 2)));
// A one-time explanation on stderr of why something cannot work.
void explain_once(const char* msg) noexcept;

}  // namespace vrnic
