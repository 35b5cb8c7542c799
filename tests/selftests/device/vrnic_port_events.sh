#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Port state follows the paired netdev: taking it down makes the port
# PORT_DOWN and delivers IBV_EVENT_PORT_ERR to applications; bringing it
# back up makes it PORT_ACTIVE with IBV_EVENT_PORT_ACTIVE.
# boots: one
# tags: device
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 7

tmp=$(mktemp -d)
watch_pid=
cleanup() {
	[[ -n $watch_pid ]] && kill "$watch_pid" 2>/dev/null
	ip link set "$VRNIC_NETDEV" up 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

port_state() { ibv_devinfo -d "$VRNIC_IBDEV" | awk '$1 == "state:" { print $2; exit }'; }
events() { cat "$tmp/events"; }

stdbuf -oL ibv_asyncwatch -d "$VRNIC_IBDEV" >"$tmp/events" 2>&1 &
watch_pid=$!
retry 50 0.1 grep -q "async event FD" "$tmp/events"
ktap_check "ibv_asyncwatch is watching $VRNIC_IBDEV" $? "$(events)"

ip link set "$VRNIC_NETDEV" down
retry 50 0.2 bash -c "[[ \$(ibv_devinfo -d $VRNIC_IBDEV | awk '\$1 == \"state:\" { print \$2; exit }') == PORT_DOWN ]]"
ktap_check "port is PORT_DOWN after 'ip link set $VRNIC_NETDEV down'" $? "state: $(port_state)"
retry 50 0.1 grep -q "IBV_EVENT_PORT_ERR.*port 1" "$tmp/events"
ktap_check "IBV_EVENT_PORT_ERR delivered for port 1" $? "$(events)"
link=$(rdma link show "$VRNIC_IBDEV/1")
[[ $link == *" state DOWN "* ]]
ktap_check "rdma link shows state DOWN" $? "$link"

ip link set "$VRNIC_NETDEV" up
retry 50 0.2 bash -c "[[ \$(ibv_devinfo -d $VRNIC_IBDEV | awk '\$1 == \"state:\" { print \$2; exit }') == PORT_ACTIVE ]]"
ktap_check "port is PORT_ACTIVE after 'ip link set $VRNIC_NETDEV up'" $? "state: $(port_state)"
retry 50 0.1 grep -q "IBV_EVENT_PORT_ACTIVE.*port 1" "$tmp/events"
ktap_check "IBV_EVENT_PORT_ACTIVE delivered for port 1" $? "$(events)"

# The RoCEv2 GID of the address comes back with the link.
gid_ok() {
	[[ $(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/gids/$VRNIC_GID_INDEX") == \
		*":ffff:$(printf '%02x%02x:%02x%02x' ${VRNIC_IP//./ })" ]]
}
retry 50 0.2 gid_ok
ktap_check "RoCEv2 GID for $VRNIC_IP is back at index $VRNIC_GID_INDEX" $?

ktap_finish
