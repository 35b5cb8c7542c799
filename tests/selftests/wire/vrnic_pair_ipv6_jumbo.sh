#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# IPv6 GIDs and jumbo frames across the wire.  Both guests raise eth0's
# MTU to 9000 (the RDMA port's active MTU must follow: 4096) and add an
# IPv6 address (a RoCE v2 GID must appear for it); then RC ping-pong with
# 16 KiB messages over the IPv6 GIDs at path MTU 4096 (the vrnic side
# counts its packets: 4096-byte ones, not 1024), and UD ping-pong with
# 4000-byte datagrams.  Against an rxe peer each runs in both directions.
# Everything is put back at the end.
# boots: pair pair-rxe
# tags: wire
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

iters=200
ip6=fd00:99::$((VRNIC_VM + 1))
peer6=fd00:99::$((2 - VRNIC_VM))
servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers=(0 1)
ktap_plan $((2 + 3 * ${#servers[@]}))

restore() {
	ip -6 addr del "$ip6/64" dev "$VRNIC_NETDEV" 2>/dev/null
	ip link set "$VRNIC_NETDEV" mtu 1500
}
trap restore EXIT

ip link set "$VRNIC_NETDEV" mtu 9000
mtu=
for _ in $(seq 50); do
	mtu=$(ibv_devinfo -d "$VRNIC_IBDEV" | awk '/active_mtu/ { print $2; exit }')
	[[ $mtu == 4096 ]] && break
	nap 0.1
done
[[ $mtu == 4096 ]]
ktap_check "$VRNIC_NETDEV MTU 9000: $VRNIC_IBDEV active_mtu $mtu" $?

ip -6 addr add "$ip6/64" dev "$VRNIC_NETDEV" nodad
gix=$(gid_index_of "fd00:0099:0000:0000:0000:0000:0000:000$((VRNIC_VM + 1))" "RoCE v2")
[[ -n $gix ]]
ktap_check "a RoCE v2 GID for $ip6 (index ${gix:-none})" $?
pair_sync ipv6-jumbo.ready 60 || true
ping -6 -c 2 -W 5 -s 8000 "$peer6" >/dev/null 2>&1 || ktap_diag "IPv6 ping of $peer6 with 8000 bytes failed"

port=18900
for server in "${servers[@]}"; do
	port=$((port + 1))
	args="-d $VRNIC_IBDEV -g ${gix:-0} -n $iters -p $port -m 4096 -s 16384"
	name="ibv_rc_pingpong over IPv6 GIDs, MTU 4096, 16 KiB, server vm$server"
	before=$(($(hw_counter tx_packets 2>/dev/null || echo 0) + $(hw_counter rx_packets 2>/dev/null || echo 0)))
	pair_run "v6rc-$server" "$server" 120 "ibv_rc_pingpong $args" "ibv_rc_pingpong $args \$VRNIC_PEER_IP"
	rc=$?
	after=$(($(hw_counter tx_packets 2>/dev/null || echo 0) + $(hw_counter rx_packets 2>/dev/null || echo 0)))
	line=$(grep "iters in" "$pair_out")
	[[ $rc == 0 && $line == "$iters iters in"* ]]
	ktap_check "$name ($pair_role): $line" $? "exit $rc: $(tail -n 6 "$pair_out")"
	if [[ $VRNIC_ROLE == vrnic ]]; then
		# Per round trip, 16 KiB each way: 4 packets and an ACK each way
		# at MTU 4096 (10), 17 at MTU 1024 (34).
		n=$((after - before))
		((n >= 10 * iters && n < 20 * iters))
		ktap_check "4096-byte packets: $n packets for $iters round trips" $?
	else
		ktap_skip "4096-byte packets" "counted on the vrnic side"
	fi
	port=$((port + 1))
	args="-d $VRNIC_IBDEV -g ${gix:-0} -n $iters -p $port -s 4000"
	name="ibv_ud_pingpong over IPv6 GIDs, 4000-byte datagrams, server vm$server"
	pair_run "v6ud-$server" "$server" 120 "ibv_ud_pingpong $args" "ibv_ud_pingpong $args \$VRNIC_PEER_IP"
	rc=$?
	line=$(grep "iters in" "$pair_out")
	[[ $rc == 0 && $line == "$iters iters in"* ]]
	ktap_check "$name ($pair_role): $line" $? "exit $rc: $(tail -n 6 "$pair_out")"
done
pair_sync ipv6-jumbo.done 120 || true
ktap_finish
