#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libfabric between the two guests: fi_pingpong with -c over the verbs
# provider's msg and dgram endpoints and over verbs;ofi_rxm (rdm, msg and
# tagged), guest 0 serving (libfabric_lib.sh).  Against an rxe peer, both
# ways; the rxe guest first tries ofi_rxm on rxe alone, and where that
# fails (rxe's max_cqe, 32767, is below the CQ of 262144 that rxm asks
# for) the rxm cases are skipped with what rxe said.
# boots: pair pair-rxe
# tags: middleware slow
# order: 70
# timeout: 500
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set) by pair_run
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/middleware/libfabric_lib.sh
source "$(dirname "$0")/libfabric_lib.sh"
require_pair

servers=(0)
rxe=
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers+=(1) && rxe=y
ktap_plan $((${#fi_cases[@]} * ${#servers[@]} + 1))
mark=$(dmesg_mark)

# On the rxe guest: does ofi_rxm run on rxe alone (server and client on
# rxe0)?  Where it does not, its cases across the wire are skipped with
# what it said there, and rxe's max_cqe.
if [[ $VRNIC_ROLE == rxe ]]; then
	cqe=$(ibv_devinfo -v -d "$VRNIC_IBDEV" | awk '/max_cqe:/ { print $2 }')
	rxm="-p verbs;ofi_rxm -e rdm -d $VRNIC_IBDEV -I 5 -S 64"
	# shellcheck disable=SC2086 # the options, split into words
	timeout 30 fi_pingpong $rxm -B "$fi_port" >/tmp/rxm-alone 2>&1 &
	sleep 1
	# shellcheck disable=SC2086
	timeout 30 fi_pingpong $rxm -P "$fi_port" "$VRNIC_IP" >>/tmp/rxm-alone 2>&1
	wait
	alone=$(grep -m1 -o 'fi_enable().*' /tmp/rxm-alone)
	echo "$cqe|$alone" >"$VRNIC_RUN_DIR/pair/rxe-rxm"
fi
pair_sync fi-start 90
IFS='|' read -r rxe_cqe rxe_alone 2>/dev/null <"$VRNIC_RUN_DIR/pair/rxe-rxm"

port=$fi_port
for s in "${servers[@]}"; do
	for c in "${fi_cases[@]}"; do
		port=$((port + 1))
		name=${c%%|*}
		if [[ -n $rxe && $name == *ofi_rxm* && -n ${rxe_alone:-} ]]; then
			ktap_skip "fi_pingpong $name, vm$s serving" "rxm fails on rxe alone (rxe0 to rxe0: $rxe_alone): rxe's max_cqe is $rxe_cqe, rxm asks for a CQ of 262144"
			continue
		fi
		before=$(transport_counters)
		pair_run "fi-$s-$port" "$s" 200 \
			"fi_pingpong $(fi_options "$c" "$VRNIC_IBDEV") -B $port" \
			"fi_pingpong $(fi_options "$c" "$VRNIC_IBDEV") -P $port \$VRNIC_PEER_IP"
		rc=$?
		# Retransmissions, duplicates, NAKs: what the wire saw, on each
		# side, for a case that fails on the other.
		ktap_diag "fi-$s-$port ($pair_role): $VRNIC_IBDEV's transport counters gained $(transport_counters_since "$before")"
		fi_check "$name" "$(<"$pair_out")" "$rc" " ($pair_role, vm$s serving)"
	done
done
no_kernel_warnings "$mark" "libfabric"
ktap_finish
