// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The address of a unix-domain socket by path, and who is on the other
// end of one or owns a file.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <optional>
#include <string>

#include "base/fd.h"

namespace vrnicd {

// Fill *addr for path; false (with *err) when the path does not fit.
bool unix_socket_addr(const std::string& path, sockaddr_un* addr, std::string* err);

// A non-blocking listening stream socket at path (a stale one there is
// replaced); with owner_only, no one but its owner may connect.  An
// invalid fd, with *err, on failure.
UniqueFd listen_unix(const std::string& path, int backlog, bool owner_only, std::string* err);

// Whether uid may hand vrnicd a guest's memory or device: vrnicd's own
// user, or root (who can read any guest's memory anyway).
bool trusted_uid(uid_t uid) noexcept;

// fd (opened from what) is owned by a trusted user; false with *err.
bool owner_is_trusted(int fd, const std::string& what, std::string* err);

// Who is at the other end of the unix socket fd (SO_PEERCRED), or nullopt.
// Async-signal-safe: the keeper, a fork, calls it.
std::optional<ucred> peer_cred(int fd) noexcept;

// The process at the other end of the unix socket fd runs as a trusted
// user (SO_PEERCRED); false with *err.
bool peer_is_trusted(int fd, const std::string& what, std::string* err);

}  // namespace vrnicd
