// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The address of a unix-domain socket by path.
#pragma once

#include <sys/types.h>
#include <sys/un.h>

#include <string>

#include "fd.h"

namespace vrnicd {

// Fill *addr for path; false (with *err) when the path does not fit.
bool unix_socket_addr(const std::string& path, sockaddr_un* addr, std::string* err);

// A non-blocking listening stream socket at path (a stale one there is
// replaced); with owner_only, no one but its owner may connect.  An
// invalid fd, with *err, on failure.
UniqueFd listen_unix(const std::string& path, int backlog, bool owner_only, std::string* err);

}  // namespace vrnicd
