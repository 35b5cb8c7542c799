// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

UniqueFd listen_unix(const std::string& path, int backlog, bool owner_only, std::string* err) {
  sockaddr_un addr{};
  if (!unix_socket_addr(path, &addr, err)) {
    return {};
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) {
    *err = std::string("socket: ") + std::strerror(errno);
    return {};
  }
  ::unlink(path.c_str());
  const mode_t old = owner_only ? ::umask(0077) : 0;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  const int rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  if (owner_only) {
    ::umask(old);
  }
  if (rc != 0 || ::listen(fd.get(), backlog) != 0) {
    *err = path + ": " + std::strerror(errno);
    return {};
  }
  return fd;
}

}  // namespace vrnicd
