#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two guests: the NICs reach each other through the vrnicd Ethernet ports
# (ARP and ICMP), and the RDMA port is ACTIVE with the cable plugged in.
# boots: pair pair-rxe
# tags: smoke wire
# order: 10
source "$(dirname "$0")/../lib.sh"
require_pair

ktap_plan 3

state=$(rdma link show "$VRNIC_IBDEV/1")
[[ $state == *"state ACTIVE"* && $state == *"physical_state LINK_UP"* ]]
ktap_check "$VRNIC_IBDEV/1 is ACTIVE, LINK_UP" $? "$state"

pair_sync ping.start || true
out=$(ping -c 5 -i 0.3 -W 5 "$VRNIC_PEER_IP" 2>&1)
ok=1
[[ $out == *" 0% packet loss"* ]] && ok=0
ktap_check "ping $VRNIC_PEER_IP: $(grep -o '[0-9]* received' <<<"$out")" "$ok" "$out"

peer_mac=$(printf '52:54:00:76:72:%02x' $((2 - VRNIC_VM)))
neigh=$(ip neigh show "$VRNIC_PEER_IP" dev "$VRNIC_NETDEV")
[[ $neigh == *"lladdr $peer_mac"* ]]
ktap_check "ARP resolved $VRNIC_PEER_IP to $peer_mac" $? "$neigh"
pair_sync ping.done || true
ktap_finish
