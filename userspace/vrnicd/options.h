// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd's command line.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "base/bar2.h"
#include "base/config.h"
#include "wire/eth_port.h"

namespace vrnicd {

struct Options {
  std::string socket_path;
  std::string guest_mem_path;
  uint64_t guest_mem_size = 0;
  EthPort::Options port;
  std::string info_file;
  std::string control_path;  // empty: beside the socket (control_path_for)
  std::string log_file;
  size_t bar_size = Bar2::kDefaultSize;
  // Measured on a 2-core TCG host with two busy vCPUs: spinning steals
  // the core a vCPU needs, and ticks under ~15 us make vrnicd a CPU hog
  // that the host scheduler punishes; 25 us ticks and no spin give the
  // best ping-pong latency (see make bench).
  uint32_t poll_us = 0;
  uint32_t doze_us = 20000;
  uint32_t doze_tick_us = 25;
  // While dozing, ENGINE_ASLEEP is set too: producers ring, and a doorbell
  // ends the tick at once.
  bool doze_ring = false;
  DeviceConfig dev;
};

void usage(std::FILE* out);

// Parse the command line into o.  Returns 0 to go on, otherwise the exit
// status + 1 (--help: 0; a bad option: 2, with the reason on stderr).
int parse_options(int argc, char** argv, Options* o);

}  // namespace vrnicd
