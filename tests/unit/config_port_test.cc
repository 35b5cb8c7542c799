// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#include <gtest/gtest.h>

#include <getopt.h>

#include <string>
#include <vector>

#include "base/config.h"
#include "engine/port.h"
#include "options.h"

namespace {

using vrnicd::DeviceConfig;
using vrnicd::Port;

TEST(Config, ParseMac) {
  auto m = vrnicd::parse_mac("52:54:00:12:34:5f");
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)[0], 0x52);
  EXPECT_EQ((*m)[5], 0x5f);
  EXPECT_EQ(vrnicd::format_mac(*m), "52:54:00:12:34:5f");
  for (const char* bad : {"", "52:54:00:12:34", "52:54:00:12:34:5f:00", "52-54-00-12-34-5f",
                          "5:54:00:12:34:5f0", "zz:54:00:12:34:5f"}) {
    EXPECT_FALSE(vrnicd::parse_mac(bad)) << bad;
  }
}

TEST(Config, GuidIsModifiedEui64) {
  EXPECT_EQ(vrnicd::mac_to_guid({0x52, 0x54, 0x00, 0x12, 0x34, 0x56}), 0x505400fffe123456ULL);
}

TEST(Config, SetLimit) {
  vrnicd::DeviceLimits l;
  EXPECT_TRUE(vrnicd::set_limit(l, "max_qp=77"));
  EXPECT_EQ(l.max_qp, 77U);
  EXPECT_TRUE(vrnicd::set_limit(l, "max_mr_size=8589934592"));
  EXPECT_EQ(l.max_mr_size, 8589934592ULL);
  EXPECT_FALSE(vrnicd::set_limit(l, "max_qp=0"));
  EXPECT_FALSE(vrnicd::set_limit(l, "max_qp=4294967296"));
  EXPECT_FALSE(vrnicd::set_limit(l, "max_qp"));
  // A key names at most 4095 MR slots (12 index bits).
  EXPECT_TRUE(vrnicd::set_limit(l, "max_mr=4095"));
  EXPECT_FALSE(vrnicd::set_limit(l, "max_mr=4096"));
  EXPECT_FALSE(vrnicd::set_limit(l, "no_such_limit=3"));
  EXPECT_FALSE(vrnicd::set_limit(l, "gid_tbl_len=70000"));
  EXPECT_EQ(l.max_qp, 77U);
}

// vrnicd's command line, as argv.
int parse(std::vector<std::string> args, vrnicd::Options* o) {
  args.insert(args.begin(), "vrnicd");
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  optind = 0;  // getopt starts over
  opterr = 0;
  return vrnicd::parse_options(static_cast<int>(args.size()), argv.data(), o);
}

TEST(Options, EveryOptionTakesItsArgument) {
  vrnicd::Options o;
  ASSERT_EQ(parse({"-s",
                   "/s",
                   "-m",
                   "/m",
                   "--guest-mem-size",
                   "2G",
                   "--mac",
                   "52:54:00:00:00:07",
                   "--wire-connect",
                   "/w",
                   "--nic-connect",
                   "/n",
                   "--drop",
                   "0.05",
                   "--corrupt",
                   "1",
                   "--seed",
                   "9",
                   "--vectors",
                   "8",
                   "--limit",
                   "max_qp=64",
                   "--link-down",
                   "--poll-us",
                   "5",
                   "--doze-tick-us",
                   "40",
                   "--doze-ring",
                   "--bar-size",
                   "2M",
                   "--log-level",
                   "info"},
                  &o),
            0);
  EXPECT_EQ(o.socket_path, "/s");
  EXPECT_EQ(o.guest_mem_path, "/m");
  EXPECT_EQ(o.guest_mem_size, uint64_t{2} << 30);
  EXPECT_EQ(o.dev.mac[5], 7);
  EXPECT_EQ(o.port.wire_connect, "/w");
  EXPECT_EQ(o.port.nic_connect, "/n");
  EXPECT_DOUBLE_EQ(o.port.faults.drop, 0.05);
  EXPECT_DOUBLE_EQ(o.port.faults.corrupt, 1.0);
  EXPECT_EQ(o.port.faults.seed, 9U);
  EXPECT_EQ(o.dev.num_vectors, 8U);
  EXPECT_EQ(o.dev.limits.max_qp, 64U);
  EXPECT_FALSE(o.dev.cable_up);
  EXPECT_EQ(o.poll_us, 5U);
  EXPECT_EQ(o.doze_tick_us, 40U);
  EXPECT_TRUE(o.doze_ring);
  EXPECT_EQ(o.bar_size, size_t{2} << 20);
}

TEST(Options, BadArgumentsExitWithStatus2) {
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"-s", "/s"},                                            // no --guest-mem
           {"-s", "/s", "-m", "/m", "--drop", "1.5"},               // not a probability
           {"-s", "/s", "-m", "/m", "--vectors", "65"},             // out of range
           {"-s", "/s", "-m", "/m", "--mac", "01:00:00:00:00:01"},  // multicast
           {"-s", "/s", "-m", "/m", "--limit", "max_eq=1"},         // too few EQs
           {"-s", "/s", "-m", "/m", "--doze-tick-us", "0"},
           {"-s", "/s", "-m", "/m", "--no-such-option"},
           {"-s", "/s", "-m", "/m", "stray"},
           {"-s", "/s", "-m", "/m", "--nic-socket", "/a", "--nic-connect", "/b"},
           {"-s", "/s", "-m", "/m", "--wire-listen", "/a", "--wire-connect", "/b"}}) {
    vrnicd::Options o;
    EXPECT_EQ(parse(bad, &o), 3) << bad.back();  // exit status 2
  }
}

TEST(Port, StateFollowsNetdevAndCable) {
  DeviceConfig cfg;
  Port p(cfg);
  EXPECT_EQ(p.state(), VRNIC_PORT_DOWN);
  EXPECT_EQ(p.phys_state(), VRNIC_PORT_PHYS_DISABLED);
  p.set_netdev_state(VRNIC_NETDEV_STATE_UP | VRNIC_NETDEV_STATE_CARRIER);
  EXPECT_TRUE(p.update_state());
  EXPECT_EQ(p.state(), VRNIC_PORT_ACTIVE);
  EXPECT_EQ(p.phys_state(), VRNIC_PORT_PHYS_LINK_UP);
  EXPECT_FALSE(p.update_state());
  p.set_cable(false);
  EXPECT_TRUE(p.update_state());
  EXPECT_EQ(p.state(), VRNIC_PORT_DOWN);
  EXPECT_EQ(p.phys_state(), VRNIC_PORT_PHYS_POLLING);
  EXPECT_EQ(p.link_changes(), 2U);
}

TEST(Port, ActiveMtuFollowsEthernetMtu) {
  DeviceConfig cfg;
  Port p(cfg);
  const std::pair<uint32_t, uint8_t> cases[] = {{1500, 3}, {1104, 3}, {1103, 2}, {1000, 2},
                                                {576, 1},  {4176, 5}, {4175, 4}, {9000, 5}};
  for (auto [eth, ib] : cases) {
    p.set_netdev_mtu(eth);
    EXPECT_EQ(p.active_mtu(), ib) << eth;
  }
  cfg.max_mtu = 3;
  p.set_netdev_mtu(9000);
  EXPECT_EQ(p.active_mtu(), 3);
}

}  // namespace
