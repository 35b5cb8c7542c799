#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# qperf in one guest: its server and client on the same vrnic0.  rc_bw,
# rc_lat, rc_rdma_write_bw and rc_rdma_read_lat through rdma_cm (-cm1) must
# each report a figure.  uc_bw and ud_lat cannot be addressed on RoCE by
# qperf (no GID exchange, see qperf_lib.sh): they are reported as SKIP, but
# only when they fail in exactly that way.
# boots: one
# tags: middleware
# order: 70
# timeout: 300
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/middleware/qperf_lib.sh
source "$(dirname "$0")/qperf_lib.sh"
require_vm

ktap_plan $((${#qperf_cm_tests[@]} + ${#qperf_roce_error[@]} + 1))
mark=$(dmesg_mark)
# run_one TEST: a fresh server and one client run; sets out and rc.
run_one() {
	local srv
	qperf -lp "$qperf_port" >/tmp/qperf-server.log 2>&1 &
	srv=$!
	wait_listening "$qperf_port"
	out=$(qperf_client_one "$1" "$VRNIC_IP" "$srv")
	rc=$?
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
}
for t in "${qperf_cm_tests[@]}" uc_bw ud_lat; do
	run_one "$t"
	# qperf can lose its server's error message (qperf_lib.sh): once more,
	# as the two-guest test does.
	if qperf_message_lost "$out" "$rc"; then
		ktap_diag "qperf $t: the server's error message was lost; once more"
		run_one "$t"
	fi
	qperf_case "$t" "$out" "$rc"
done
no_kernel_warnings "$mark" "qperf"
ktap_finish
