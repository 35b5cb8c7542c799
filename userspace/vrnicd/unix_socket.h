// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The address of a unix-domain socket by path.
#pragma once

#include <sys/un.h>

#include <string>

namespace vrnicd {

// Fill *addr for path; false (with *err) when the path does not fit.
bool unix_socket_addr(const std::string& path, sockaddr_un* addr, std::string* err);

}  // namespace vrnicd
