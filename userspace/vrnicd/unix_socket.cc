// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "unix_socket.h"

#include <sys/socket.h>

#include <cstring>

namespace vrnicd {

bool unix_socket_addr(const std::string& path, sockaddr_un* addr, std::string* err) {
  *addr = {};
  if (path.size() >= sizeof(addr->sun_path)) {
    *err = path + ": socket path too long";
    return false;
  }
  addr->sun_family = AF_UNIX;
  std::memcpy(addr->sun_path, path.c_str(), path.size() + 1);
  return true;
}

}  // namespace vrnicd
