#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RoCEv1 (Ethertype 0x8915) between two vrnic guests.  Beside each RoCE v2
# GID the device's GID table holds a "IB/RoCE v1" one, as on mlx5, and
# ibv_devinfo -v lists it.  Over the v1 GID of the guests' IPv4 addresses:
# vrnic_xfer (RC WRITE, READ, SEND and atomics, every byte checked),
# ibv_ud_pingpong (UD, the GRH as received), and rping through rdma_cm
# switched to v1 by its configfs default_roce_mode.  Guest 0's wire
# capture of the test must hold only RoCEv1 frames, which tshark decodes
# as InfiniBand with nothing malformed.
# boots: pair-tap
# tags: wire
# order: 15
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

cap=$VRNIC_RUN_DIR/wire-0.pcap
ktap_plan 9

port=/sys/class/infiniband/$VRNIC_IBDEV/ports/1
# shellcheck disable=SC2086 # the address's four octets, split
printf -v gid '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${VRNIC_IP//./ }
v1=$(gid_index_of "$gid" "IB/RoCE v1")
[[ -n $v1 ]]
ktap_check "a RoCE v1 GID for $VRNIC_IP (index ${v1:-none}) beside the v2 one (index $VRNIC_GID_INDEX)" $? \
	"$(grep -H . "$port"/gid_attrs/types/* 2>/dev/null | grep -v ': *$' | head -n 8)"
v1=${v1:-0}

line=$(ibv_devinfo -v -d "$VRNIC_IBDEV" | grep -E "GID\[ *$v1\]:")
[[ $line == *"RoCE v1"* ]]
ktap_check "ibv_devinfo -v: ${line//$'\t'/ }" $?

# What guest 0's capture holds from here on: only this test's frames.
settle() { nap 0.5; stat -c %s "$cap" 2>/dev/null || echo 0; }
pair_sync roce-v1.quiet || true
start=$(settle)

xfer="$VRNIC_BUILD/tests/selftests/vrnic_xfer -d $VRNIC_IBDEV -g $v1 -p 19310 -b 1M -s 256K -m 64K -t 18"
pair_run roce-v1-xfer 1 300 "$xfer" "$xfer \$VRNIC_PEER_IP"
rc=$?
ktap_check "vrnic_xfer over the v1 GIDs ($pair_role): $(grep '^verified' "$pair_out")" "$rc" \
	"$(tail -n 5 "$pair_out")"

args="-d $VRNIC_IBDEV -g $v1 -n 50 -p 19311 -s 1024"
pair_run roce-v1-ud 1 120 "ibv_ud_pingpong $args" "ibv_ud_pingpong $args \$VRNIC_PEER_IP"
rc=$?
line=$(grep "iters in" "$pair_out")
[[ $rc == 0 && $line == "50 iters in"* ]]
ktap_check "ibv_ud_pingpong over the v1 GIDs ($pair_role): $line" $? "exit $rc: $(tail -n 6 "$pair_out")"

# rdma_cm picks the GID type of its configfs default_roce_mode.
cfg=/sys/kernel/config/rdma_cm
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config 2>/dev/null
modprobe rdma_cm 2>/dev/null
mode=$cfg/$VRNIC_IBDEV/ports/1/default_roce_mode
made=
[[ -d $cfg/$VRNIC_IBDEV ]] || { mkdir "$cfg/$VRNIC_IBDEV" 2>/dev/null && made=1; }
restore() {
	[[ -w $mode ]] && echo "RoCE v2" >"$mode"
	[[ -n $made ]] && rmdir "$cfg/$VRNIC_IBDEV" 2>/dev/null
}
trap restore EXIT
echo "IB/RoCE v1" >"$mode" 2>/dev/null
got=$(cat "$mode" 2>/dev/null)
[[ $got == "IB/RoCE v1" ]]
ktap_check "rdma_cm's default_roce_mode for $VRNIC_IBDEV: ${got:-unset}" $?
pair_run roce-v1-rping 0 120 "rping -s -a \$VRNIC_IP -p 7178 -C 20 -V -v" "rping -c -a \$VRNIC_PEER_IP -p 7178 -C 20 -V -v"
rc=$?
if rping_teardown_race "$rc" "$pair_out"; then
	ktap_diag "rping exited 255 in its own teardown race, after the run (rping_teardown_race): counted as 0"
	rc=0
fi
ok=1
[[ $rc == 0 ]] && { [[ $pair_role == server ]] || grep -q 'ping data: rdma-ping-19' "$pair_out"; } && ok=0
ktap_check "rping -C 20 -V through rdma_cm in RoCE v1 mode ($pair_role)" "$ok" \
	"exit $rc: $(grep -Ev '^(server )?ping data: ' "$pair_out" | tail -n 8)"
restore
trap - EXIT
pair_sync roce-v1.done 120 || true

if [[ $VRNIC_VM != 0 || ! -f $cap ]] || ! command -v tshark >/dev/null; then
	why="guest 0 reads the capture"
	[[ $VRNIC_VM == 0 ]] && why="no capture (scripts/vm-run --pcap) or no tshark (make setup)"
	for t in "RoCEv1 frames" "nothing malformed" "no RoCEv2 frame"; do
		ktap_skip "$t" "$why"
	done
	ktap_finish
	exit
fi
end=$(settle)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ head -c 24 "$cap"; tail -c +$((start + 1)) "$cap" | head -c $((end - start)); } >"$tmp/x.pcap"
n=$(tshark -r "$tmp/x.pcap" -Y 'eth.type == 0x8915 && infiniband.bth.opcode' 2>"$tmp/err" | wc -l)
ops=$(tshark -r "$tmp/x.pcap" -Y 'eth.type == 0x8915' -T fields -e infiniband.bth.opcode 2>/dev/null |
	sort -n | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
# At least the xfer's two rounds of 256 KiB WRITE, READ and SEND at MTU
# 1024 (1,536 frames), and the UD datagrams (opcode 100, UD SEND_ONLY):
# ibv_ud_pingpong's 2 x 50, rdma_cm's MADs.
ud=$(tshark -r "$tmp/x.pcap" -Y 'eth.type == 0x8915 && infiniband.bth.opcode == 100' 2>/dev/null | wc -l)
((n >= 1536 && ud >= 100))
ktap_check "tshark decodes $n RoCEv1 frames (Ethertype 0x8915) as InfiniBand; opcodes $ops" $? \
	"$(head -n 5 "$tmp/err")"
bad=$(tshark -r "$tmp/x.pcap" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
((bad == 0))
ktap_check "no malformed frames" $? \
	"$(tshark -r "$tmp/x.pcap" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | head -n 5)"
v2=$(tshark -r "$tmp/x.pcap" -Y 'udp.dstport == 4791' 2>/dev/null | wc -l)
((v2 == 0))
ktap_check "no RoCEv2 frame among them ($v2)" $? \
	"$(tshark -r "$tmp/x.pcap" -Y 'udp.dstport == 4791' 2>/dev/null | head -n 5)"
ktap_finish
