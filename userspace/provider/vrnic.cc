// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic registration: which devices are ours and the verbs we serve.
#include "vrnic.h"

#include <unistd.h>

#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace vrnic {
namespace {

// vrnic is a QEMU ivshmem-doorbell function (1af4:1110), which is not
// specific to vrnic: match_device() below makes the final call.
constexpr std::array<verbs_match_ent, 2> kMatchTable = {{
    {nullptr, {nullptr}, VRNIC_PCI_VENDOR_ID, VRNIC_PCI_DEVICE_ID, VERBS_MATCH_PCI},
    {},
}};

// A device is ours when the vrnic kernel driver is bound to its PCI
// function: <ibdev_path>/device/driver points at .../drivers/vrnic.
bool match_device(verbs_sysfs_dev* sysfs_dev) noexcept {
  const std::string link = std::string(sysfs_dev->ibdev_path) + "/device/driver";
  std::array<char, 256> target{};
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (n <= 0) {
    return false;
  }
  const char* base = std::strrchr(target.data(), '/');
  base = base != nullptr ? base + 1 : target.data();
  const bool ours = std::strcmp(base, VRNIC_DRIVER_NAME) == 0;
  debug("%s: driver %s: %s", sysfs_dev->ibdev_name, base, ours ? "ours" : "not ours");
  return ours;
}

verbs_device* alloc_device(verbs_sysfs_dev* /*sysfs_dev*/) noexcept {
  // libibverbs requires the ibv_device part zeroed: calloc, not new.
  auto* dev = static_cast<Device*>(std::calloc(1, sizeof(Device)));  // NOLINT(*-no-malloc)
  return dev != nullptr ? &dev->vdev : nullptr;
}

void uninit_device(verbs_device* vdev) noexcept {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  std::free(reinterpret_cast<Device*>(vdev));  // NOLINT(*-no-malloc)
}

const verbs_device_ops kDeviceOps = {
    .name = "vrnic",
    .match_min_abi_version = VRNIC_UVERBS_ABI_VERSION,
    .match_max_abi_version = VRNIC_UVERBS_ABI_VERSION,
    .match_table = kMatchTable.data(),
    .static_providers = nullptr,
    .match_device = match_device,
    .alloc_context = alloc_context,
    .import_context = nullptr,
    .alloc_device = alloc_device,
    .uninit_device = uninit_device,
};

__attribute__((constructor)) void register_driver() noexcept {
  verbs_register_driver_34(&kDeviceOps);
}

}  // namespace

void debug(const char* fmt, ...) noexcept {
  static const bool enabled = [] {
    const char* v = std::getenv("VRNIC_DEBUG");
    return v != nullptr && std::strcmp(v, "0") != 0;
  }();
  if (!enabled) {
    return;
  }
  std::fputs("libvrnic: ", stderr);
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fputc('\n', stderr);
}

}  // namespace vrnic
