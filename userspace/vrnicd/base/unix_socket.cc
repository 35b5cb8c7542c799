// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include "base/unix_socket.h"

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

bool trusted_uid(uid_t uid) noexcept { return uid == ::geteuid() || uid == 0; }

bool owner_is_trusted(int fd, const std::string& what, std::string* err) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *err = what + ": " + std::strerror(errno);
    return false;
  }
  if (!trusted_uid(st.st_uid)) {
    *err = what + ": owned by uid " + std::to_string(st.st_uid) + ", not by vrnicd's user (uid " +
           std::to_string(::geteuid()) + "); refusing it";
    return false;
  }
  return true;
}

std::optional<ucred> peer_cred(int fd) noexcept {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return std::nullopt;
  }
  return cred;
}

bool peer_is_trusted(int fd, const std::string& what, std::string* err) {
  const std::optional<ucred> cred = peer_cred(fd);
  if (!cred) {
    *err = what + ": SO_PEERCRED: " + std::strerror(errno);
    return false;
  }
  if (!trusted_uid(cred->uid)) {
    *err = what + ": the peer (pid " + std::to_string(cred->pid) + ") runs as uid " +
           std::to_string(cred->uid) + ", not as vrnicd's user (uid " +
           std::to_string(::geteuid()) + "); refusing it";
    return false;
  }
  return true;
}

}  // namespace vrnicd
