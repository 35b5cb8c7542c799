#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# qperf between the two guests: guest 0 serves, guest 1 runs rc_bw, rc_lat,
# rc_rdma_write_bw and rc_rdma_read_lat through rdma_cm (-cm1), then uc_bw
# and ud_lat, which qperf cannot address on RoCE (qperf_lib.sh: reported
# as SKIP only when they fail in exactly that way, on rxe as on vrnic).
# Against an rxe peer, the other way round as well.
# boots: pair pair-rxe
# tags: middleware
# order: 70
# timeout: 400
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set) by pair_run
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/middleware/qperf_lib.sh
source "$(dirname "$0")/qperf_lib.sh"
require_pair

servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers+=(1)
ncases=$((${#qperf_cm_tests[@]} + ${#qperf_roce_error[@]}))
plan=1
for s in "${servers[@]}"; do
	plan=$((plan + (s == VRNIC_VM ? 1 : ncases)))
done
ktap_plan "$plan"
mark=$(dmesg_mark)
lib=$(dirname "$0")/qperf_lib.sh
for s in "${servers[@]}"; do
	pair_run "qperf-$s" "$s" 300 "qperf -lp $qperf_port" \
		"source $lib; qperf_client_all \$VRNIC_PEER_IP"
	rc=$?
	out=$(<"$pair_out")
	if [[ $pair_role == server ]]; then
		# Seen on Linux 6.12's rxe guest, two lines of guests on two
		# cores: qperf's server child, exiting after the work, took a
		# signal whose handler calls exit() again.
		if ((rc == 124)) && [[ -n $pair_stuck ]] && stuck_in_exit "$pair_stuck"; then
			ktap_skip "qperf server on vm$s: told to quit" "qperf deadlocked in its own exit(): its signal handler called exit() while the process was already exiting (stacks: $(grep -cE '__run_exit_handlers|<signal handler called>' "$pair_stuck") exit and signal frames)"
			continue
		fi
		ktap_check "qperf server on vm$s: told to quit" "$rc" "exit $rc" "$(tail -n 5 <<<"$out")"
		continue
	fi
	for t in "${qperf_cm_tests[@]}" "${!qperf_roce_error[@]}"; do
		qperf_case "$t" "$(qperf_section "$out" "$t")" \
			"$(qperf_section_status "$out" "$t")" " to vm$s"
	done
done
no_kernel_warnings "$mark" "qperf"
ktap_finish
