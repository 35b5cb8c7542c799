// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Objects of a context shared by fd (ibv_import_device): a PD or an MR
// another process created, used here by its handle.  Unimporting forgets
// the object here; it lives on until its creator destroys it.
#include <cerrno>
#include <new>

#include "uverbs_call.h"
#include "vrnic.h"

namespace vrnic {

ibv_pd* import_pd(ibv_context* ibctx, uint32_t handle) noexcept {
  UverbsCall<2> call(UVERBS_OBJECT_PD, VRNIC_IB_METHOD_PD_QUERY);
  uint32_t pdn = 0;
  call.handle(VRNIC_IB_ATTR_QUERY_PD_HANDLE, handle);
  call.out(VRNIC_IB_ATTR_QUERY_PD_RESP_PDN, &pdn);
  const int err = call.run(ibctx->cmd_fd);
  if (err != 0) {
    errno = err;
    return nullptr;
  }
  auto* pd = new (std::nothrow) Pd{};
  if (pd == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  pd->ibv_pd.context = ibctx;
  pd->ibv_pd.handle = handle;
  pd->pdn = pdn;
  return &pd->ibv_pd;
}

void unimport_pd(ibv_pd* pd) noexcept { delete to_vpd(pd); }

ibv_mr* import_mr(ibv_pd* pd, uint32_t handle) noexcept {
  auto* mr = new (std::nothrow) Mr{};
  if (mr == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  const int err = ibv_cmd_query_mr(pd, &mr->vmr, handle);
  if (err != 0) {
    delete mr;
    errno = err;
    return nullptr;
  }
  return &mr->vmr.ibv_mr;
}

void unimport_mr(ibv_mr* mr) noexcept { delete container<Mr>(mr, offsetof(Mr, vmr.ibv_mr)); }

}  // namespace vrnic
