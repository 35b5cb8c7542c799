// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Declarations of libibverbs' private provider interface, for the
// rdma-core releases libvrnic is built against:
//
//   VRNIC_RDMA_CORE_MAJOR  VRNIC_IBVERBS_PABI  Debian   provider file
//   44 (44.0)              34                  12       libvrnic-rdmav34.so
//   56 (56.1)              34                  13       libvrnic-rdmav34.so
//   65 (65.0)              65                  sid      libvrnic-rdmav65.so
//
// and 45 to 55, between two of them: the same private ABI and the same
// layouts as 56 (v45.0 grew ibv_qp_ex, v59.0 was the next change), checked
// here against the public headers; built, not tested (Ubuntu 24.04 has 50).
//
// CMake defines both macros (from libibverbs.pc's "Version: 1.14.44.0",
// whose third field is the rdma-core major).  Debian does not install
// rdma-core's infiniband/driver.h, so libvrnic declares what it uses here,
// transcribed from libibverbs/driver.h at tags v44.0 and v56.1 and, for 65,
// from master 691953d8d (PACKAGE_VERSION "65.0"; no v65.0 tag was
// available), checked against Debian's 65.0-1.1 binaries and headers.
// Every layout is pinned below with the numbers measured on x86_64 with
// each release's own headers; a mismatch is a build failure, not a crash
// at run time.
//
// The IBVERBS_PRIVATE_NN number alone does not fix these layouts:
// rdma-core v45.0 appended wr_flush to the public ibv_qp_ex, so verbs_qp
// grew by 8 bytes while the private ABI stayed 34 (v34..v56), and v62.0
// inserted two verbs_context_ops members under IBVERBS_PRIVATE_59.  Hence
// the pins are per rdma-core major, not per private ABI, and a provider
// built for 44 must not be loaded by libibverbs 56 although both are
// "-rdmav34.so".
#pragma once

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <cstddef>
#include <cstdint>
#include <ctime>

#if !defined(VRNIC_RDMA_CORE_MAJOR) || !defined(VRNIC_IBVERBS_PABI)
#error "Define VRNIC_RDMA_CORE_MAJOR (44 to 56, or 65) and VRNIC_IBVERBS_PABI (34 or 65)"
#elif !(                                                                                        \
    (VRNIC_RDMA_CORE_MAJOR >= 44 && VRNIC_RDMA_CORE_MAJOR <= 56 && VRNIC_IBVERBS_PABI == 34) || \
    (VRNIC_RDMA_CORE_MAJOR == 65 && VRNIC_IBVERBS_PABI == 65))
#error \
    "libvrnic knows the private libibverbs ABI of rdma-core 44 to 56 (IBVERBS_PRIVATE_34) and 65 (IBVERBS_PRIVATE_65) only; check this release's libibverbs/driver.h and add its layouts here"
#elif !defined(__x86_64__)
// The numbers below were measured on x86_64.  Other targets differ (for
// one, pthread_mutex_t is 48 bytes on arm64, which moves ibv_qp, ibv_cq
// and ibv_srq) and have not been measured.
#error "libibverbs private layouts are pinned for x86_64 only; measure and add this target's"
#else
#define VRNIC_PABI_SUPPORTED 1
#endif

#ifdef VRNIC_PABI_SUPPORTED  // to the end: nothing else after an #error

// Where rdma-core changed something libvrnic sees, the first release with
// the change (from the tags' libibverbs/driver.h).
#define VRNIC_RDMA_CORE_AT_LEAST(major) (VRNIC_RDMA_CORE_MAJOR >= (major))

// First, that <infiniband/verbs.h> is the release named: the private
// layouts below embed its structs.
#if VRNIC_RDMA_CORE_MAJOR == 44
// v44.0: ibv_qp_ex ends at wr_atomic_write.
static_assert(sizeof(ibv_qp_ex) == 352, "<infiniband/verbs.h> is not rdma-core 44's");
static_assert(sizeof(verbs_context) == 648, "<infiniband/verbs.h> is not rdma-core 44's");
#elif VRNIC_RDMA_CORE_MAJOR <= 56
// v45.0 appended wr_flush to ibv_qp_ex.
static_assert(sizeof(ibv_qp_ex) == 360, "<infiniband/verbs.h> is not rdma-core 45..56's");
static_assert(sizeof(verbs_context) == 648, "<infiniband/verbs.h> is not rdma-core 45..56's");
#elif VRNIC_RDMA_CORE_MAJOR == 65
// v59.0..v64.0 added six ops at the front of verbs_context.
static_assert(sizeof(ibv_qp_ex) == 360, "<infiniband/verbs.h> is not rdma-core 65's");
static_assert(sizeof(verbs_context) == 696, "<infiniband/verbs.h> is not rdma-core 65's");
#endif

extern "C" {

struct list_node {  // ccan/list.h
  list_node* next;
  list_node* prev;
};

enum verbs_match_kind : uint8_t {
  VERBS_MATCH_SENTINEL = 0,
  VERBS_MATCH_PCI = 1,
  VERBS_MATCH_MODALIAS = 2,
  VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
  void* driver_data;
  union {
    const char* modalias;
    uint64_t driver_id;
  } u;
  uint16_t vendor;
  uint16_t device;
  uint8_t kind;
};

struct verbs_sysfs_dev {
  list_node entry;
  void* provider_data;
  const verbs_match_ent* match;
  unsigned int flags;
  char sysfs_name[IBV_SYSFS_NAME_MAX];
  dev_t sysfs_cdev;
  char ibdev_name[IBV_SYSFS_NAME_MAX];
  char ibdev_path[IBV_SYSFS_PATH_MAX];
  char modalias[512];
  uint64_t node_guid;
  uint32_t driver_id;
  ibv_node_type node_type;
  int ibdev_idx;
  uint32_t num_ports;
  uint32_t abi_ver;
  timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
  const char* name;
  uint32_t match_min_abi_version;
  uint32_t match_max_abi_version;
  const verbs_match_ent* match_table;
  const verbs_device_ops** static_providers;
  bool (*match_device)(verbs_sysfs_dev* sysfs_dev);
  verbs_context* (*alloc_context)(ibv_device* device, int cmd_fd, void* private_data);
  verbs_context* (*import_context)(ibv_device* device, int cmd_fd);
  verbs_device* (*alloc_device)(verbs_sysfs_dev* sysfs_dev);
  void (*uninit_device)(verbs_device* device);
};

struct verbs_device {
  ibv_device device;  // must be first
  const verbs_device_ops* ops;
  int refcount;  // atomic_int in C
  list_node entry;
  verbs_sysfs_dev* sysfs;
  uint64_t core_support;
};

enum ibv_mr_type {
  IBV_MR_TYPE_MR,
  IBV_MR_TYPE_NULL_MR,
  IBV_MR_TYPE_IMPORTED_MR,
  IBV_MR_TYPE_DMABUF_MR,
};

// A device memory allocation (rdma-core driver.h).
struct verbs_dm {
  ibv_dm dm;
  uint32_t handle;
};

struct verbs_mr {
  ibv_mr ibv_mr;
  enum ibv_mr_type mr_type;
  int access;
};

struct verbs_xrcd {
  ibv_xrcd xrcd;
  uint32_t comp_mask;
  uint32_t handle;
};

// verbs_qp.comp_mask bits (enum verbs_qp_mask).
enum : uint32_t {
  VERBS_QP_XRCD = 1U << 0,
  VERBS_QP_EX = 1U << 1,
};

// Its size follows the public ibv_qp_ex: 352 bytes in v44, 360 from v45.0
// (wr_flush), so comp_mask, which ibv_qp_to_qp_ex() reads, moves.
struct verbs_qp {
  union {
    ibv_qp qp;
    ibv_qp_ex qp_ex;
  };
  uint32_t comp_mask;
  verbs_xrcd* xrcd;
};

struct verbs_cq {
  union {
    ibv_cq cq;
    ibv_cq_ex cq_ex;
  };
};

struct verbs_srq {
  ibv_srq srq;
  ibv_srq_type srq_type;
  verbs_xrcd* xrcd;
  ibv_cq* cq;
  uint32_t srq_num;
};

// Private types named by the 65 interfaces below; libvrnic passes none.
struct ibv_buf;             // driver.h, v64.0
struct ibv_command_buffer;  // cmd_ioctl.h: driver attribute chains

#if VRNIC_RDMA_CORE_AT_LEAST(59)
// ibv_cmd_create_cq_ex(): a CQ buffer the provider allocated (v59.0).
struct verbs_create_cq_prov_attr {
  struct {
    uint64_t length;
    union {
      uint8_t* ptr;
      struct {
        uint64_t offset;
        int fd;
      } dmabuf;
    };
  } buffer;
};
#endif

// Sorted, exactly as rdma-core declares it; verbs_set_ops() reads it all,
// so it must be the whole struct of the release we run on.  Members added
// since v44.0 are marked with the release that added them; none has been
// removed, reordered or changed its type since v44.0.
struct verbs_context_ops {
  int (*advise_mr)(ibv_pd* pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge* sg_list,
                   uint32_t num_sges);
#if VRNIC_RDMA_CORE_AT_LEAST(64)
  void* (*alloc_buf)(ibv_pd* pd, size_t size, ibv_buf** buf);
#endif
  ibv_dm* (*alloc_dm)(ibv_context* context, ibv_alloc_dm_attr* attr);
#if VRNIC_RDMA_CORE_AT_LEAST(59)
  ibv_dmah* (*alloc_dmah)(ibv_context* context, ibv_dmah_init_attr* attr);
#endif
  ibv_mw* (*alloc_mw)(ibv_pd* pd, ibv_mw_type type);
  ibv_mr* (*alloc_null_mr)(ibv_pd* pd);
  ibv_pd* (*alloc_parent_domain)(ibv_context* context, ibv_parent_domain_init_attr* attr);
  ibv_pd* (*alloc_pd)(ibv_context* context);
  ibv_td* (*alloc_td)(ibv_context* context, ibv_td_init_attr* init_attr);
  void (*async_event)(ibv_context* context, ibv_async_event* event);
  int (*attach_counters_point_flow)(ibv_counters* counters, ibv_counter_attach_attr* attr,
                                    ibv_flow* flow);
  int (*attach_mcast)(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);
  int (*bind_mw)(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* mw_bind);
  int (*close_xrcd)(ibv_xrcd* xrcd);
  void (*cq_event)(ibv_cq* cq);
  ibv_ah* (*create_ah)(ibv_pd* pd, ibv_ah_attr* attr);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  ibv_comp_cntr* (*create_comp_cntr)(ibv_context* context, ibv_comp_cntr_init_attr* attr);
#endif
  ibv_counters* (*create_counters)(ibv_context* context, ibv_counters_init_attr* init_attr);
  ibv_cq* (*create_cq)(ibv_context* context, int cqe, ibv_comp_channel* channel, int comp_vector);
  ibv_cq_ex* (*create_cq_ex)(ibv_context* context, ibv_cq_init_attr_ex* init_attr);
  ibv_flow* (*create_flow)(ibv_qp* qp, ibv_flow_attr* flow_attr);
  ibv_flow_action* (*create_flow_action_esp)(ibv_context* context, ibv_flow_action_esp_attr* attr);
  ibv_qp* (*create_qp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  ibv_qp* (*create_qp_ex)(ibv_context* context, ibv_qp_init_attr_ex* qp_init_attr_ex);
  ibv_rwq_ind_table* (*create_rwq_ind_table)(ibv_context* context,
                                             ibv_rwq_ind_table_init_attr* init_attr);
  ibv_srq* (*create_srq)(ibv_pd* pd, ibv_srq_init_attr* srq_init_attr);
  ibv_srq* (*create_srq_ex)(ibv_context* context, ibv_srq_init_attr_ex* srq_init_attr_ex);
  ibv_wq* (*create_wq)(ibv_context* context, ibv_wq_init_attr* wq_init_attr);
#if VRNIC_RDMA_CORE_AT_LEAST(59)
  int (*dealloc_dmah)(ibv_dmah* dmah);
#endif
  int (*dealloc_mw)(ibv_mw* mw);
  int (*dealloc_pd)(ibv_pd* pd);
  int (*dealloc_td)(ibv_td* td);
  int (*dereg_mr)(verbs_mr* vmr);
  int (*destroy_ah)(ibv_ah* ah);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*destroy_comp_cntr)(ibv_comp_cntr* comp_cntr);
#endif
  int (*destroy_counters)(ibv_counters* counters);
  int (*destroy_cq)(ibv_cq* cq);
  int (*destroy_flow)(ibv_flow* flow);
  int (*destroy_flow_action)(ibv_flow_action* action);
  int (*destroy_qp)(ibv_qp* qp);
  int (*destroy_rwq_ind_table)(ibv_rwq_ind_table* rwq_ind_table);
  int (*destroy_srq)(ibv_srq* srq);
  int (*destroy_wq)(ibv_wq* wq);
  int (*detach_mcast)(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);
#if VRNIC_RDMA_CORE_AT_LEAST(62)
  int (*dm_export_dmabuf_fd)(ibv_dm* dm);
#endif
#if VRNIC_RDMA_CORE_AT_LEAST(64)
  void (*free_buf)(ibv_buf* buf);
#endif
  void (*free_context)(ibv_context* context);
  int (*free_dm)(ibv_dm* dm);
  int (*get_srq_num)(ibv_srq* srq, uint32_t* srq_num);
  ibv_dm* (*import_dm)(ibv_context* context, uint32_t dm_handle);
  ibv_mr* (*import_mr)(ibv_pd* pd, uint32_t mr_handle);
  ibv_pd* (*import_pd)(ibv_context* context, uint32_t pd_handle);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*inc_comp_cntr)(ibv_comp_cntr* comp_cntr, uint64_t amount);
  int (*inc_err_comp_cntr)(ibv_comp_cntr* comp_cntr, uint64_t amount);
#endif
  int (*modify_cq)(ibv_cq* cq, ibv_modify_cq_attr* attr);
  int (*modify_flow_action_esp)(ibv_flow_action* action, ibv_flow_action_esp_attr* attr);
  int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask);
  int (*modify_qp_rate_limit)(ibv_qp* qp, ibv_qp_rate_limit_attr* attr);
  int (*modify_srq)(ibv_srq* srq, ibv_srq_attr* srq_attr, int srq_attr_mask);
  int (*modify_wq)(ibv_wq* wq, ibv_wq_attr* wq_attr);
  ibv_qp* (*open_qp)(ibv_context* context, ibv_qp_open_attr* attr);
  ibv_xrcd* (*open_xrcd)(ibv_context* context, ibv_xrcd_init_attr* xrcd_init_attr);
  int (*poll_cq)(ibv_cq* cq, int num_entries, ibv_wc* wc);
  int (*post_recv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  int (*post_send)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
  int (*post_srq_ops)(ibv_srq* srq, ibv_ops_wr* op, ibv_ops_wr** bad_op);
  int (*post_srq_recv)(ibv_srq* srq, ibv_recv_wr* recv_wr, ibv_recv_wr** bad_recv_wr);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*qp_attach_comp_cntr)(ibv_qp* qp, ibv_comp_cntr* comp_cntr,
                             ibv_qp_attach_comp_cntr_attr* attr);
  int (*query_comp_cntr_caps)(ibv_context* context, ibv_comp_cntr_caps* caps, size_t caps_size);
#endif
  int (*query_device_ex)(ibv_context* context, const ibv_query_device_ex_input* input,
                         ibv_device_attr_ex* attr, size_t attr_size);
  int (*query_ece)(ibv_qp* qp, ibv_ece* ece);
  int (*query_port)(ibv_context* context, uint8_t port_num, ibv_port_attr* port_attr);
#if VRNIC_RDMA_CORE_AT_LEAST(62)
  int (*query_port_speed)(ibv_context* context, uint32_t port_num, uint64_t* speed);
#endif
  int (*query_qp)(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask, ibv_qp_init_attr* init_attr);
  int (*query_qp_data_in_order)(ibv_qp* qp, ibv_wr_opcode op, uint32_t flags);
  int (*query_rt_values)(ibv_context* context, ibv_values_ex* values);
  int (*query_srq)(ibv_srq* srq, ibv_srq_attr* srq_attr);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*read_comp_cntr)(ibv_comp_cntr* comp_cntr, uint64_t* value);
#endif
  int (*read_counters)(ibv_counters* counters, uint64_t* counters_value, uint32_t ncounters,
                       uint32_t flags);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*read_err_comp_cntr)(ibv_comp_cntr* comp_cntr, uint64_t* value);
#endif
  ibv_mr* (*reg_dm_mr)(ibv_pd* pd, ibv_dm* dm, uint64_t dm_offset, size_t length,
                       unsigned int access);
  ibv_mr* (*reg_dmabuf_mr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                           int access);
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, size_t length, uint64_t hca_va, int access);
#if VRNIC_RDMA_CORE_AT_LEAST(59)
  ibv_mr* (*reg_mr_ex)(ibv_pd* pd, ibv_mr_init_attr* mr_init_attr);
#endif
  int (*req_notify_cq)(ibv_cq* cq, int solicited_only);
  int (*rereg_mr)(verbs_mr* vmr, int flags, ibv_pd* pd, void* addr, size_t length, int access);
  int (*resize_cq)(ibv_cq* cq, int cqe);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*set_comp_cntr)(ibv_comp_cntr* comp_cntr, uint64_t value);
#endif
  int (*set_ece)(ibv_qp* qp, ibv_ece* ece);
#if VRNIC_RDMA_CORE_AT_LEAST(65)
  int (*set_err_comp_cntr)(ibv_comp_cntr* comp_cntr, uint64_t value);
#endif
  void (*unimport_dm)(ibv_dm* dm);
  void (*unimport_mr)(ibv_mr* mr);
  void (*unimport_pd)(ibv_pd* pd);
};

// Command buffers are opaque to us: we pass our own mirror layouts,
// checked against the sizes the kernel ABI defines (abi_mirror.h).  Many
// share their names with public functions, hence "struct" at every use.
struct ibv_get_context;
struct ibv_query_port;
struct ibv_alloc_pd;
struct ibv_reg_mr;
struct ibv_rereg_mr;
struct ibv_alloc_mw;
struct ibv_create_cq;
struct ibv_create_cq_ex;
struct ibv_resize_cq;
struct ibv_modify_cq;
struct ibv_create_qp;
struct ibv_create_qp_ex;
struct ibv_modify_qp;
struct ibv_modify_qp_ex;
struct ibv_query_qp;
struct ibv_create_srq;
struct ibv_modify_srq;
struct ibv_query_srq;

// The registration symbol carries the private ABI number ("#define
// verbs_register_driver" in driver.h): verbs_register_driver_34 or _65.
#define VRNIC_PABI_CAT_(a, b) a##b
#define VRNIC_PABI_CAT(a, b) VRNIC_PABI_CAT_(a, b)
#define VRNIC_VERBS_REGISTER_DRIVER_FN VRNIC_PABI_CAT(verbs_register_driver_, VRNIC_IBVERBS_PABI)
void VRNIC_VERBS_REGISTER_DRIVER_FN(const verbs_device_ops* ops);
// Call from a constructor: VRNIC_VERBS_REGISTER_DRIVER(&kDeviceOps);
#define VRNIC_VERBS_REGISTER_DRIVER(ops) VRNIC_VERBS_REGISTER_DRIVER_FN(ops)

// libibverbs loads "lib<name>" VERBS_PROVIDER_SUFFIX (dynamic_driver.c),
// IBVERBS_PROVIDER_SUFFIX "-rdmav${IBVERBS_PABI_VERSION}.so" in CMakeLists.txt.
#define VRNIC_PABI_STR_(x) #x
#define VRNIC_PABI_STR(x) VRNIC_PABI_STR_(x)
#define VRNIC_IBVERBS_PROVIDER_SUFFIX "-rdmav" VRNIC_PABI_STR(VRNIC_IBVERBS_PABI) ".so"

void* _verbs_init_and_alloc_context(ibv_device* device, int cmd_fd, size_t alloc_size,
                                    verbs_context* context_offset, uint32_t driver_id);
void verbs_uninit_context(verbs_context* context);
void verbs_set_ops(verbs_context* vctx, const verbs_context_ops* ops);

#if VRNIC_RDMA_CORE_AT_LEAST(57)
// v57.0 added fd_arr (UVERBS_ATTR_GET_CONTEXT_FD_ARR); NULL sends nothing.
int ibv_cmd_get_context(verbs_context* context, ibv_get_context* cmd, size_t cmd_size,
                        ibv_fd_arr* fd_arr, ib_uverbs_get_context_resp* resp, size_t resp_size);
#else
int ibv_cmd_get_context(verbs_context* context, ibv_get_context* cmd, size_t cmd_size,
                        ib_uverbs_get_context_resp* resp, size_t resp_size);
#endif
int ibv_cmd_query_device_any(ibv_context* context, const ibv_query_device_ex_input* input,
                             ibv_device_attr_ex* attr, size_t attr_size,
                             ib_uverbs_ex_query_device_resp* resp, size_t* resp_size);
int ibv_cmd_query_port(ibv_context* context, uint8_t port_num, ibv_port_attr* port_attr,
                       struct ibv_query_port* cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(ibv_context* context, ibv_pd* pd, struct ibv_alloc_pd* cmd, size_t cmd_size,
                     ib_uverbs_alloc_pd_resp* resp, size_t resp_size);
int ibv_cmd_dealloc_pd(ibv_pd* pd);
int ibv_cmd_reg_mr(ibv_pd* pd, void* addr, size_t length, uint64_t hca_va, int access,
                   verbs_mr* vmr, struct ibv_reg_mr* cmd, size_t cmd_size,
                   ib_uverbs_reg_mr_resp* resp, size_t resp_size);
int ibv_cmd_rereg_mr(verbs_mr* vmr, uint32_t flags, void* addr, size_t length, uint64_t hca_va,
                     int access, ibv_pd* pd, struct ibv_rereg_mr* cmd, size_t cmd_sz,
                     ib_uverbs_rereg_mr_resp* resp, size_t resp_sz);
int ibv_cmd_dereg_mr(verbs_mr* vmr);
int ibv_cmd_alloc_mw(ibv_pd* pd, ibv_mw_type type, ibv_mw* mw, struct ibv_alloc_mw* cmd,
                     size_t cmd_size, ib_uverbs_alloc_mw_resp* resp, size_t resp_size);
int ibv_cmd_dealloc_mw(ibv_mw* mw);
int ibv_cmd_create_cq(ibv_context* context, int cqe, ibv_comp_channel* channel, int comp_vector,
                      ibv_cq* cq, struct ibv_create_cq* cmd, size_t cmd_size,
                      ib_uverbs_create_cq_resp* resp, size_t resp_size);
#if VRNIC_RDMA_CORE_AT_LEAST(59)
// v59.0 added prov_attr; NULL with no CREATE_CQ_CMD_FLAGS_WITH_MEM_* flag
// is the old behaviour.
int ibv_cmd_create_cq_ex(ibv_context* context, const ibv_cq_init_attr_ex* cq_attr,
                         verbs_create_cq_prov_attr* prov_attr, verbs_cq* cq,
                         struct ibv_create_cq_ex* cmd, size_t cmd_size,
                         ib_uverbs_ex_create_cq_resp* resp, size_t resp_size, uint32_t cmd_flags);
#else
int ibv_cmd_create_cq_ex(ibv_context* context, const ibv_cq_init_attr_ex* cq_attr, verbs_cq* cq,
                         struct ibv_create_cq_ex* cmd, size_t cmd_size,
                         ib_uverbs_ex_create_cq_resp* resp, size_t resp_size, uint32_t cmd_flags);
#endif
int ibv_cmd_resize_cq(ibv_cq* cq, int cqe, struct ibv_resize_cq* cmd, size_t cmd_size,
                      ib_uverbs_resize_cq_resp* resp, size_t resp_size);
int ibv_cmd_destroy_cq(ibv_cq* cq);
int ibv_cmd_modify_cq(ibv_cq* cq, ibv_modify_cq_attr* attr, struct ibv_modify_cq* cmd,
                      size_t cmd_size);
int ibv_cmd_create_srq(ibv_pd* pd, ibv_srq* srq, ibv_srq_init_attr* attr,
                       struct ibv_create_srq* cmd, size_t cmd_size, ib_uverbs_create_srq_resp* resp,
                       size_t resp_size);
int ibv_cmd_modify_srq(ibv_srq* srq, ibv_srq_attr* srq_attr, int srq_attr_mask,
                       struct ibv_modify_srq* cmd, size_t cmd_size);
int ibv_cmd_query_srq(ibv_srq* srq, ibv_srq_attr* srq_attr, struct ibv_query_srq* cmd,
                      size_t cmd_size);
int ibv_cmd_destroy_srq(ibv_srq* srq);
int ibv_cmd_create_qp(ibv_pd* pd, ibv_qp* qp, ibv_qp_init_attr* attr, struct ibv_create_qp* cmd,
                      size_t cmd_size, ib_uverbs_create_qp_resp* resp, size_t resp_size);
#if VRNIC_RDMA_CORE_AT_LEAST(64)
// v64.0 added a driver attribute chain; NULL is the old behaviour.
int ibv_cmd_create_qp_ex2(ibv_context* context, verbs_qp* qp, ibv_qp_init_attr_ex* qp_attr,
                          struct ibv_create_qp_ex* cmd, size_t cmd_size,
                          ib_uverbs_ex_create_qp_resp* resp, size_t resp_size,
                          ibv_command_buffer* driver);
#else
int ibv_cmd_create_qp_ex2(ibv_context* context, verbs_qp* qp, ibv_qp_init_attr_ex* qp_attr,
                          struct ibv_create_qp_ex* cmd, size_t cmd_size,
                          ib_uverbs_ex_create_qp_resp* resp, size_t resp_size);
#endif
int ibv_cmd_query_qp(ibv_qp* qp, ibv_qp_attr* qp_attr, int attr_mask,
                     ibv_qp_init_attr* qp_init_attr, struct ibv_query_qp* cmd, size_t cmd_size);
int ibv_cmd_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask, struct ibv_modify_qp* cmd,
                      size_t cmd_size);
int ibv_cmd_modify_qp_ex(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask, struct ibv_modify_qp_ex* cmd,
                         size_t cmd_size, ib_uverbs_ex_modify_qp_resp* resp, size_t resp_size);
int ibv_cmd_free_dm(verbs_dm* dm);
int ibv_cmd_reg_dm_mr(ibv_pd* pd, verbs_dm* dm, uint64_t offset, size_t length, unsigned int access,
                      verbs_mr* vmr, ibv_command_buffer* link);
int ibv_cmd_query_mr(ibv_pd* pd, verbs_mr* vmr, uint32_t mr_handle);
int ibv_cmd_destroy_qp(ibv_qp* qp);
int ibv_cmd_create_ah(ibv_pd* pd, ibv_ah* ah, ibv_ah_attr* attr, ib_uverbs_create_ah_resp* resp,
                      size_t resp_size);
int ibv_cmd_destroy_ah(ibv_ah* ah);
int ibv_cmd_attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);
int ibv_cmd_detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);

}  // extern "C"

// The three commands whose signatures changed, with the v44 signature:
// libvrnic passes no fd array, no provider CQ buffer and no driver chain.
namespace vrnic::pabi {

inline int cmd_get_context(verbs_context* context, struct ibv_get_context* cmd, size_t cmd_size,
                           ib_uverbs_get_context_resp* resp, size_t resp_size) noexcept {
#if VRNIC_RDMA_CORE_AT_LEAST(57)
  return ibv_cmd_get_context(context, cmd, cmd_size, nullptr, resp, resp_size);
#else
  return ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size);
#endif
}

inline int cmd_create_cq_ex(ibv_context* context, const ibv_cq_init_attr_ex* cq_attr, verbs_cq* cq,
                            struct ibv_create_cq_ex* cmd, size_t cmd_size,
                            ib_uverbs_ex_create_cq_resp* resp, size_t resp_size,
                            uint32_t cmd_flags) noexcept {
#if VRNIC_RDMA_CORE_AT_LEAST(59)
  return ibv_cmd_create_cq_ex(context, cq_attr, nullptr, cq, cmd, cmd_size, resp, resp_size,
                              cmd_flags);
#else
  return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size, resp, resp_size, cmd_flags);
#endif
}

inline int cmd_create_qp_ex2(ibv_context* context, verbs_qp* qp, ibv_qp_init_attr_ex* qp_attr,
                             struct ibv_create_qp_ex* cmd, size_t cmd_size,
                             ib_uverbs_ex_create_qp_resp* resp, size_t resp_size) noexcept {
#if VRNIC_RDMA_CORE_AT_LEAST(64)
  return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp, resp_size, nullptr);
#else
  return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp, resp_size);
#endif
}

// The releases whose libibverbs has the layouts of this build: 44; 45 to
// 56 (all as 56); 65.  0 for a release libvrnic does not know.
constexpr int layout_family(int rdma_core_major) noexcept {
  if (rdma_core_major == 44 || rdma_core_major == 65) {
    return rdma_core_major;
  }
  return rdma_core_major >= 45 && rdma_core_major <= 56 ? 56 : 0;
}
inline constexpr int kBuiltFamily = layout_family(VRNIC_RDMA_CORE_MAJOR);
static_assert(kBuiltFamily != 0);

// The rdma-core release of a libibverbs file by its real name
// ("libibverbs.so.1.14.56.1" is 56), or 0.
int rdma_core_major_of(const char* path) noexcept;

// The release of the libibverbs this process runs, or 0 if unknown.  The
// private ABI number does not tell 44 from 56 (both _34): a libvrnic of
// the other's layouts loads without error and misreads verbs_qp.
int running_rdma_core_major() noexcept;

}  // namespace vrnic::pabi

// ---------------------------------------------------------------------------
// Layouts, x86_64.  Measured by compiling each release's own structs (from
// the tag's libibverbs/driver.h) against its installed public headers:
// rdma-core 44.0-2 (Debian 12), 56.1-1 (Debian 13), 65.0-1.1 (sid).

#define VRNIC_PIN_OP(name, index)                                             \
  static_assert(offsetof(verbs_context_ops, name) == (index) * sizeof(void*), \
                "verbs_context_ops." #name " is not at index " #index)

// Unchanged from v44.0 through 65.0.
static_assert(sizeof(list_node) == 16);
static_assert(sizeof(verbs_match_ent) == 24);
static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, device) == 18);
static_assert(offsetof(verbs_match_ent, kind) == 20);
static_assert(sizeof(verbs_device_ops) == 72);
static_assert(offsetof(verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, static_providers) == 24);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, import_context) == 48);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(verbs_device_ops, uninit_device) == 64);
static_assert(sizeof(ibv_device) == 664);
static_assert(sizeof(verbs_device) == 712);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, entry) == 680);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(offsetof(verbs_device, core_support) == 704);
static_assert(sizeof(verbs_sysfs_dev) == 992);
static_assert(offsetof(verbs_sysfs_dev, provider_data) == 16);
static_assert(offsetof(verbs_sysfs_dev, match) == 24);
static_assert(offsetof(verbs_sysfs_dev, flags) == 32);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, node_type) == 956);
static_assert(offsetof(verbs_sysfs_dev, ibdev_idx) == 960);
static_assert(offsetof(verbs_sysfs_dev, num_ports) == 964);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);
static_assert(sizeof(ibv_mr) == 48);
static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);
static_assert(sizeof(ibv_xrcd) == 8);
static_assert(sizeof(verbs_xrcd) == 16);
static_assert(offsetof(verbs_xrcd, handle) == 12);
static_assert(sizeof(ibv_qp) == 160);
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
static_assert(sizeof(ibv_cq) == 128);
static_assert(sizeof(ibv_cq_ex) == 288);
static_assert(sizeof(verbs_cq) == 288);
static_assert(sizeof(ibv_srq) == 128);
static_assert(sizeof(verbs_srq) == 160);
static_assert(offsetof(verbs_srq, srq_type) == 128);
static_assert(offsetof(verbs_srq, xrcd) == 136);
static_assert(offsetof(verbs_srq, cq) == 144);
static_assert(offsetof(verbs_srq, srq_num) == 152);
static_assert(sizeof(ibv_context) == 328);

#if VRNIC_RDMA_CORE_MAJOR == 44
// v44.0: ibv_qp_ex ends at wr_atomic_write; verbs_context_ops has 76 ops.
static_assert(sizeof(ibv_qp_ex) == 352);
static_assert(sizeof(verbs_qp) == 368);
static_assert(offsetof(verbs_qp, comp_mask) == 352);
static_assert(offsetof(verbs_qp, xrcd) == 360);
static_assert(sizeof(verbs_context) == 648);
static_assert(offsetof(verbs_context, context) == 320);
#elif VRNIC_RDMA_CORE_MAJOR <= 56
// v45.0..v56.1: ibv_qp_ex gained wr_flush (v45.0); verbs_context_ops as in v44.0.
static_assert(sizeof(ibv_qp_ex) == 360);
static_assert(sizeof(verbs_qp) == 376);
static_assert(offsetof(verbs_qp, comp_mask) == 360);
static_assert(offsetof(verbs_qp, xrcd) == 368);
static_assert(sizeof(verbs_context) == 648);
static_assert(offsetof(verbs_context, context) == 320);
#elif VRNIC_RDMA_CORE_MAJOR == 65
// 65.0: verbs_context grew by 6 ops at its front (v59.0..v64.0); 93 ops.
static_assert(sizeof(ibv_qp_ex) == 360);
static_assert(sizeof(verbs_qp) == 376);
static_assert(offsetof(verbs_qp, comp_mask) == 360);
static_assert(offsetof(verbs_qp, xrcd) == 368);
static_assert(sizeof(verbs_context) == 696);
static_assert(offsetof(verbs_context, context) == 368);
static_assert(sizeof(verbs_create_cq_prov_attr) == 24);
#endif

#if VRNIC_RDMA_CORE_MAJOR <= 56
// v44.0 == v56.1 libibverbs/driver.h: 76 ops (verbs_set_ops reads 76 in
// both Debian binaries; v59.0 added the next).
static_assert(sizeof(verbs_context_ops) == 76 * sizeof(void*));
VRNIC_PIN_OP(advise_mr, 0);
VRNIC_PIN_OP(alloc_mw, 2);
VRNIC_PIN_OP(alloc_pd, 5);
VRNIC_PIN_OP(attach_mcast, 9);
VRNIC_PIN_OP(bind_mw, 10);
VRNIC_PIN_OP(create_ah, 13);
VRNIC_PIN_OP(create_cq, 15);
VRNIC_PIN_OP(create_cq_ex, 16);
VRNIC_PIN_OP(create_qp, 19);
VRNIC_PIN_OP(create_qp_ex, 20);
VRNIC_PIN_OP(create_srq, 22);
VRNIC_PIN_OP(dealloc_mw, 25);
VRNIC_PIN_OP(dealloc_pd, 26);
VRNIC_PIN_OP(dereg_mr, 28);
VRNIC_PIN_OP(destroy_ah, 29);
VRNIC_PIN_OP(destroy_cq, 31);
VRNIC_PIN_OP(destroy_qp, 34);
VRNIC_PIN_OP(destroy_srq, 36);
VRNIC_PIN_OP(detach_mcast, 38);
VRNIC_PIN_OP(free_context, 39);
VRNIC_PIN_OP(modify_cq, 45);
VRNIC_PIN_OP(modify_qp, 47);
VRNIC_PIN_OP(modify_srq, 49);
VRNIC_PIN_OP(poll_cq, 53);
VRNIC_PIN_OP(post_recv, 54);
VRNIC_PIN_OP(post_send, 55);
VRNIC_PIN_OP(post_srq_recv, 57);
VRNIC_PIN_OP(query_device_ex, 58);
VRNIC_PIN_OP(query_port, 60);
VRNIC_PIN_OP(query_qp, 61);
VRNIC_PIN_OP(query_srq, 64);
VRNIC_PIN_OP(reg_mr, 68);
VRNIC_PIN_OP(req_notify_cq, 69);
VRNIC_PIN_OP(resize_cq, 71);
VRNIC_PIN_OP(unimport_pd, 75);
#elif VRNIC_RDMA_CORE_MAJOR == 65
// 65.0: 93 ops (verbs_set_ops in Debian's 65.0 reads 93); the 17 added
// since v56.1 shift every op after advise_mr.
static_assert(sizeof(verbs_context_ops) == 93 * sizeof(void*));
VRNIC_PIN_OP(advise_mr, 0);
VRNIC_PIN_OP(alloc_mw, 4);
VRNIC_PIN_OP(alloc_pd, 7);
VRNIC_PIN_OP(attach_mcast, 11);
VRNIC_PIN_OP(bind_mw, 12);
VRNIC_PIN_OP(create_ah, 15);
VRNIC_PIN_OP(create_cq, 18);
VRNIC_PIN_OP(create_cq_ex, 19);
VRNIC_PIN_OP(create_qp, 22);
VRNIC_PIN_OP(create_qp_ex, 23);
VRNIC_PIN_OP(create_srq, 25);
VRNIC_PIN_OP(dealloc_mw, 29);
VRNIC_PIN_OP(dealloc_pd, 30);
VRNIC_PIN_OP(dereg_mr, 32);
VRNIC_PIN_OP(destroy_ah, 33);
VRNIC_PIN_OP(destroy_cq, 36);
VRNIC_PIN_OP(destroy_qp, 39);
VRNIC_PIN_OP(destroy_srq, 41);
VRNIC_PIN_OP(detach_mcast, 43);
VRNIC_PIN_OP(free_context, 46);
VRNIC_PIN_OP(modify_cq, 54);
VRNIC_PIN_OP(modify_qp, 56);
VRNIC_PIN_OP(modify_srq, 58);
VRNIC_PIN_OP(poll_cq, 62);
VRNIC_PIN_OP(post_recv, 63);
VRNIC_PIN_OP(post_send, 64);
VRNIC_PIN_OP(post_srq_recv, 66);
VRNIC_PIN_OP(query_device_ex, 69);
VRNIC_PIN_OP(query_port, 71);
VRNIC_PIN_OP(query_qp, 73);
VRNIC_PIN_OP(query_srq, 76);
VRNIC_PIN_OP(reg_mr, 82);
VRNIC_PIN_OP(req_notify_cq, 84);
VRNIC_PIN_OP(resize_cq, 86);
VRNIC_PIN_OP(unimport_pd, 92);
#endif

#undef VRNIC_PIN_OP

#endif  // VRNIC_PABI_SUPPORTED
