#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# ibv_devices and ibv_devinfo -v through libvrnic: the transport, link
# layer and port state, the CQ moderation limits, the ATOMIC_WRITE
# capability, packet pacing and device memory, every limit the device
# reports (compared with what vrnicd says it serves), and the RoCEv2 and
# RoCEv1 GIDs of the NIC's IPv4 address, with a ping-pong over the v1 one.
# boots: one
# tags: smoke device stack
# order: 10
source "$(dirname "$0")/../lib.sh"
require_vm

info=${VRNIC_VRNICD_INFO:-}
keys=(fw_ver node_guid sys_image_guid vendor_id vendor_part_id hw_ver
	max_mr_size page_size_cap max_qp max_qp_wr max_sge max_sge_rd max_cq
	max_cqe max_mr max_pd max_qp_rd_atom max_qp_init_rd_atom max_mcast_grp
	max_mcast_qp_attach max_ah max_srq max_srq_wr max_srq_sge max_pkeys
	local_ca_ack_delay phys_port_cnt gid_tbl_len max_mtu)
ktap_plan $((16 + ${#keys[@]}))

devices=$(ibv_devices 2>&1)
grep -Eq "^\s+$VRNIC_IBDEV\s+[0-9a-f]{16}$" <<<"$devices"
ktap_check "ibv_devices lists $VRNIC_IBDEV" $? "$devices"

out=$(ibv_devinfo -v -d "$VRNIC_IBDEV" 2>&1)
status=$?
ktap_check "ibv_devinfo -v succeeds" $status "$out"

# "key: value" as ibv_devinfo prints it (first occurrence).
field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }' <<<"$out"; }

[[ $(field transport) == "InfiniBand (0)" ]]
ktap_check "transport is InfiniBand" $? "transport: $(field transport)"
[[ $(field link_layer) == Ethernet ]]
ktap_check "link_layer is Ethernet" $? "link_layer: $(field link_layer)"
[[ $(field state) == "PORT_ACTIVE (4)" ]]
ktap_check "port state is PORT_ACTIVE" $? "state: $(field state)"
# The NIC has a 1500-byte MTU: RoCE payloads of 1024 bytes fit, 2048 do not.
[[ $(field active_mtu) == "1024 (3)" ]]
ktap_check "active_mtu is 1024 on a 1500-byte link" $? "active_mtu: $(field active_mtu)"
[[ $(field phys_state) == "LINK_UP (5)" ]]
ktap_check "phys_state is LINK_UP" $? "phys_state: $(field phys_state)"

gidline=$(grep -E "GID\[ *$VRNIC_GID_INDEX\]:" <<<"$out")
[[ $gidline == *"::ffff:$VRNIC_IP, RoCE v2" ]]
ktap_check "GID[$VRNIC_GID_INDEX] is ::ffff:$VRNIC_IP, RoCE v2" $? "$gidline"
# Its RoCEv1 twin (VRNIC_DEV_CAP_ROCE_V1), as mlx5 lists both; ibv_devinfo
# writes a v1 GID out in full, not as an IPv4-mapped address.
# shellcheck disable=SC2086 # the address's four octets, split
printf -v hex '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${VRNIC_IP//./ }
v1line=$(grep -E "GID\[ *[0-9]+\]:\s+($hex|::ffff:$VRNIC_IP), RoCE v1" <<<"$out")
v1=$(sed -E 's/^.*GID\[ *([0-9]+)\].*$/\1/' <<<"$v1line")
[[ -n $v1 && $v1 != "$VRNIC_GID_INDEX" ]]
ktap_check "GID[${v1:-none}] is ::ffff:$VRNIC_IP, RoCE v1" $? "$(grep -E 'GID\[' <<<"$out")"
# RC over it, inside the device (its own GID: internal loopback).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 60 ibv_rc_pingpong -d "$VRNIC_IBDEV" -g "${v1:-0}" -p 18531 -n 200 -s 4096 -c >"$tmp/srv" 2>&1 &
srv=$!
wait_listening 18531 >/dev/null 2>&1 || nap 1
timeout 60 ibv_rc_pingpong -d "$VRNIC_IBDEV" -g "${v1:-0}" -p 18531 -n 200 -s 4096 -c 127.0.0.1 >"$tmp/cli" 2>&1
crc=$?
wait "$srv"
src=$?
line=$(grep 'iters in' "$tmp/cli")
[[ $crc == 0 && $src == 0 && $line == "200 iters in"* ]]
ktap_check "ibv_rc_pingpong over the RoCE v1 GID, data checked: $line" $? \
	"exit $crc/$src: $(tail -n 3 "$tmp/cli" "$tmp/srv")"

# Completion event moderation (ibv_modify_cq), with ConnectX's limits.
[[ $(field max_cq_count) == 65535 ]]
ktap_check "cq moderation: max_cq_count 65535" $? "max_cq_count: $(field max_cq_count)"
[[ $(field max_cq_period) == "4095 us" ]]
ktap_check "cq moderation: max_cq_period 4095 us" $? "max_cq_period: $(field max_cq_period)"

# ATOMIC_WRITE: the kernel's IB_UVERBS_DEVICE_ATOMIC_WRITE, bit 40 of
# device_cap_flags_ex, which ibv_devinfo has no name for.
ex=$(field device_cap_flags_ex)
[[ $ex == 0x* ]] && (((ex >> 40) & 1))
ktap_check "device_cap_flags_ex has ATOMIC_WRITE (bit 40)" $? "device_cap_flags_ex: ${ex:-none}"

# Packet pacing (IBV_QP_RATE_LIMIT): 1 Mbit/s to 100 Gbit/s, for RC, UC
# and UD; ibv_devinfo names only UD of the three (and RAW_PACKET).
pp=$(sed -n '/packet_pacing_caps:/,/^\t[a-z]/p' <<<"$out")
[[ $(field qp_rate_limit_min) == 1000kbps ]]
ktap_check "packet pacing: qp_rate_limit_min 1000kbps" $? "$pp"
[[ $(field qp_rate_limit_max) == 100000000kbps ]] && grep -q SUPPORT_UD <<<"$pp"
ktap_check "packet pacing: qp_rate_limit_max 100000000kbps, UD among the QP types" $? "$pp"

# Device memory (ibv_alloc_dm): vrnicd's default 512 KiB of BAR2.
dm=$(grep 'maximum available device memory' <<<"$out")
[[ $dm =~ memory:[[:space:]]*524288Bytes ]]
ktap_check "device memory: 524288 bytes" $? "${dm:-no device memory line}"

# Each limit as vrnicd serves it, and as the application sees it.
if [[ ! -r $info ]]; then
	for k in "${keys[@]}"; do
		ktap_skip "$k matches the device" "no vrnicd info file at '$info'"
	done
else
	for k in "${keys[@]}"; do
		want=$(awk -v k="$k:" '$1 == k { print $2; exit }' "$info")
		got=$(field "$k")
		# ibv_devinfo adds the enum after MTUs: "4096 (5)".
		got=${got%% (*}
		[[ -n $want && $got == "$want" ]]
		ktap_check "$k matches the device ($want)" $? "device: '$want', ibv_devinfo: '$got'"
	done
fi

ktap_finish
