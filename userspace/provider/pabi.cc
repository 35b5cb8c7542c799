// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Which rdma-core release's libibverbs this process runs: libvrnic
// registers only under one whose private layouts it was built with
// (ibverbs_private.h).
#include <dlfcn.h>

#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ibverbs_private.h"

namespace vrnic::pabi {

int rdma_core_major_of(const char* path) noexcept {
  const char* base = std::strrchr(path, '/');
  base = base != nullptr ? base + 1 : path;
  unsigned int soname = 0;
  unsigned int minor = 0;
  unsigned int major = 0;
  // NOLINTNEXTLINE(cert-err34-c): the count of fields is what is checked
  if (std::sscanf(base, "libibverbs.so.%u.%u.%u", &soname, &minor, &major) != 3) {
    return 0;
  }
  return major <= 1000 ? static_cast<int>(major) : 0;
}

int running_rdma_core_major() noexcept {
  Dl_info info{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  if (dladdr(reinterpret_cast<void*>(&verbs_set_ops), &info) == 0 || info.dli_fname == nullptr) {
    return 0;
  }
  std::array<char, PATH_MAX> real{};
  if (::realpath(info.dli_fname, real.data()) == nullptr) {
    return 0;
  }
  return rdma_core_major_of(real.data());
}

}  // namespace vrnic::pabi
