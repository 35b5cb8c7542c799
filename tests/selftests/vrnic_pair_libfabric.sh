#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libfabric between the two guests: fi_pingpong with -c over the verbs
# provider's msg and dgram endpoints and over verbs;ofi_rxm (rdm, msg and
# tagged), guest 0 serving (libfabric_lib.sh).  Against an rxe peer, both
# ways; ofi_rxm's cases are skipped there with the reason measured on the
# rxe guest: its max_cqe is below the 262144 entries rxm asks for, so rxm
# fails on rxe alone (rxe to rxe as well).
# timeout: 500
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set) by pair_run
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/selftests/libfabric_lib.sh
source "$(dirname "$0")/libfabric_lib.sh"
require_pair

servers=(0)
rxe=
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers+=(1) && rxe=y
ktap_plan $((${#fi_cases[@]} * ${#servers[@]} + 1))
mark=$(dmesg_mark)

# On the rxe guest: what its device offers, for the skip's reason.
if [[ $VRNIC_ROLE == rxe ]]; then
	cqe=$(ibv_devinfo -v -d "$VRNIC_IBDEV" | awk '/max_cqe:/ { print $2 }')
	echo "$cqe" >"$VRNIC_RUN_DIR/pair/rxe-max-cqe"
fi
pair_sync fi-start 60
rxe_cqe=$(cat "$VRNIC_RUN_DIR/pair/rxe-max-cqe" 2>/dev/null)

port=$fi_port
for s in "${servers[@]}"; do
	for c in "${fi_cases[@]}"; do
		port=$((port + 1))
		name=${c%%|*}
		if [[ -n $rxe && $name == *ofi_rxm* && ${rxe_cqe:-0} -lt 262144 ]]; then
			ktap_skip "fi_pingpong $name, vm$s serving" "rxe's max_cqe is ${rxe_cqe:-unknown}; ofi_rxm asks for a CQ of 262144 and fails fi_enable with EINVAL on rxe, rxe to rxe as well"
			continue
		fi
		pair_run "fi-$s-$port" "$s" 200 \
			"fi_pingpong $(fi_options "$c" "$VRNIC_IBDEV") -B $port" \
			"fi_pingpong $(fi_options "$c" "$VRNIC_IBDEV") -P $port \$VRNIC_PEER_IP"
		rc=$?
		fi_check "$name" "$(<"$pair_out")" "$rc" " ($pair_role, vm$s serving)"
	done
done
no_kernel_warnings "$mark" "libfabric"
ktap_finish
