#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libfabric in one guest: fi_info lists vrnic0 under the verbs provider
# (msg and dgram domains) and under verbs;ofi_rxm (rdm), and fi_pingpong's
# server and client on the same vrnic0 check every message over each
# endpoint type (libfabric_lib.sh).
# boots: one
# tags: middleware slow
# order: 70
# timeout: 400
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/middleware/libfabric_lib.sh
source "$(dirname "$0")/libfabric_lib.sh"
require_vm

ktap_plan $((${#fi_cases[@]} + 3))
mark=$(dmesg_mark)

out=$(timeout 30 fi_info -p verbs 2>&1)
rc=$?
domains=$(grep -o 'domain: .*' <<<"$out" | sort -u | cut -d' ' -f2 | xargs)
[[ $rc == 0 ]] && grep -qx "$VRNIC_IBDEV" <<<"${domains// /$'\n'}" &&
	grep -qx "$VRNIC_IBDEV-dgram" <<<"${domains// /$'\n'}"
ktap_check "fi_info -p verbs: domains $domains" $? "exit $rc" "$(tail -n 8 <<<"$out")"
out=$(timeout 30 fi_info -p 'verbs;ofi_rxm' 2>&1)
rc=$?
[[ $rc == 0 ]] && grep -q "type: FI_EP_RDM" <<<"$out" && grep -q "domain: $VRNIC_IBDEV\$" <<<"$out"
ktap_check "fi_info -p 'verbs;ofi_rxm': FI_EP_RDM on $VRNIC_IBDEV" $? "exit $rc" \
	"$(tail -n 8 <<<"$out")"

port=$fi_port
for c in "${fi_cases[@]}"; do
	port=$((port + 1))
	opts=$(fi_options "$c" "$VRNIC_IBDEV")
	srv=$(mktemp)
	timeout 120 bash -c "fi_pingpong $opts -B $port" >"$srv" 2>&1 &
	pid=$!
	wait_listening "$port"
	out=$(timeout 120 bash -c "fi_pingpong $opts -P $port $VRNIC_IP" 2>&1)
	rc=$?
	wait "$pid"
	src=$?
	fi_check "${c%%|*}" "$out"$'\n'"$(cat "$srv")" $((rc || src))
	rm -f "$srv"
done
no_kernel_warnings "$mark" "libfabric"
ktap_finish
