// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device's identity and limits as a text file, one "key: value" line
// each, formatted the way ibv_devinfo -v prints them.  Tests compare the
// two to prove that what the device reports reaches applications intact.
#pragma once

#include <string>

namespace vrnicd {

class Device;

bool write_info_file(const std::string& path, const Device& dev);
std::string info_text(const Device& dev);

}  // namespace vrnicd
