# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# qperf's RDMA tests, for vrnic_qperf.sh (one guest) and vrnic_pair_qperf.sh.
# qperf 0.4.11 tells its peer only a LID, never a GID.  On RoCE every QP
# and AH needs a GRH, so its RC tests run only through rdma_cm (-cm1),
# and uc_bw and ud_lat, which it cannot run through rdma_cm, fail on any
# RoCE device (mlx5 and rxe give the same EINVAL).

# The tests that qperf runs with -cm1, and the figure each reports.
qperf_cm_tests=(rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_lat)
# The tests that qperf cannot address on RoCE, and the error each gives.
declare -A qperf_roce_error=(
	[uc_bw]="failed to modify QP to RTR: Invalid argument"
	[ud_lat]="failed to create address handle: Invalid argument"
)
qperf_port=19765
# The guest harness (where_stuck, pair_where) for the client commands that
# pair_run starts with this file alone.
if ! declare -F where_stuck >/dev/null; then
	# shellcheck source=scripts/lib/guest.sh
	source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/guest.sh"
fi

# qperf_figure OUTPUT: "bw = 991 MB/sec" or "latency = 197 us", or nothing.
# qperf groups thousands with a comma ("bw = 1,000 MB/sec"): it goes.
qperf_figure() {
	grep -Eom1 '(bw|latency) += +[0-9][0-9,.]* [A-Za-z/]+' <<<"$1" | tr -s ' ' | tr -d ,
}

# qperf_case TEST OUTPUT STATUS [WHERE]: one result for a qperf client run.
qperf_case() {
	local t=$1 out=$2 rc=$3 where=${4:-} fig
	fig=$(qperf_figure "$out")
	if [[ $rc == 124 ]] && grep -q '^# qperf hung' <<<"$out"; then
		qperf_hung "qperf $t$where" "$out"
		return
	fi
	# The server, stuck in qperf's own exit() deadlock after the test
	# before (seen on Linux 6.12's rxe guest), accepts nobody: qperf's
	# bug, not vrnic's.  Any other silence fails.
	if [[ $rc != 0 ]] && grep -q "^# qperf's server did not answer" <<<"$out" &&
		stuck_in_exit <(printf '%s\n' "$out"); then
		ktap_skip "qperf $t$where" "qperf's server did not answer: it was deadlocked in its own exit() (stacks: $(grep -cE '__run_exit_handlers|<signal handler called>' <<<"$out") exit and signal frames)"
		ktap_diag "$out"
		return
	fi
	if [[ -n ${qperf_roce_error[$t]:-} ]]; then
		if [[ -z $fig ]] && grep -qF "${qperf_roce_error[$t]}" <<<"$out"; then
			ktap_skip "qperf $t$where" "qperf sends no GID and RoCE needs one: \"${qperf_roce_error[$t]}\" (rxe and mlx5 the same)"
			return
		fi
		[[ $rc == 0 && -n $fig ]]
		ktap_check "qperf $t$where: ${fig:-no result}" $? "exit $rc" "$(tail -n 5 <<<"$out")"
		return
	fi
	[[ $rc == 0 && -n $fig && ! $fig =~ \ 0(\.0*)?\  ]]
	ktap_check "qperf -cm1 $t$where: ${fig:-no result}" $? "exit $rc" "$(tail -n 5 <<<"$out")"
}

# qperf_hung NAME OUTPUT: the result of a client run that qperf_client_one
# found hung.  qperf's own deadlock is not vrnic's failure: seen on Linux
# 6.12 (vrnic against rxe, two lines of guests on two cores), a process of
# qperf's, exiting through error(), took a signal whose handler called
# exit() again, and waited for ever on glibc's exit lock, which it held
# itself (stuck_in_exit); its peer waited on the socket with it.  Any
# other hang fails, with where both sides waited.
qperf_hung() {
	if stuck_in_exit <(printf '%s\n' "$2"); then
		ktap_skip "$1" "qperf deadlocked in its own exit(): its signal handler called exit() while the process was already exiting (the report: $(grep -c '^## pid' <<<"$2") processes, $(grep -cE '__run_exit_handlers|<signal handler called>' <<<"$2") exit and signal frames)"
		# The evidence, for whoever reads the log.
		ktap_diag "$2"
		return
	fi
	ktap_not_ok "$1: hung" "$2"
}

# qperf_client_one TEST SERVER_IP [SERVER_PID]: one client run.  A client
# still running after 60 s is killed (status 124), after where it waited
# (wait_bounded) and a "# qperf hung" line, and where its server waited:
# SERVER_PID's tree in this guest, or else pair_run's server (pair_where).
qperf_client_one() {
	local pid rc
	# shellcheck disable=SC2046,SC2091 # the command line, split into words
	$(qperf_client_cmd "$1" "$2") 2>&1 &
	pid=$!
	# (SIGKILL, as wait_bounded sends: qperf's handler for the others
	# calls exit().)
	wait_bounded 60 "$pid" ${3:+"$3"}
	rc=$?
	((rc == 124)) || return "$rc"
	echo "# qperf hung: the client, above, was still running after 60 s"
	if [[ -z ${3:-} && -n ${PAIR_TAG:-} ]]; then
		echo "# and its server:"
		pair_where "qperf-$1"
	fi
	return 124
}

# qperf_client_cmd TEST SERVER_IP: the command line of one client run.
qperf_client_cmd() {
	local t=$1 ip=$2 cm=
	[[ -z ${qperf_roce_error[$t]:-} ]] && cm=-cm1
	echo "qperf $ip -lp $qperf_port $cm -t 2 $t"
}

# qperf_message_lost OUTPUT STATUS: whether a client run failed with its
# server's error message lost ("server: " alone; see qperf_client_all).
qperf_message_lost() {
	(($2 != 0)) && grep -qx 'server: *' <<<"$1"
}

# qperf_client_all SERVER_IP: every test against one server, each output
# after a "=== TEST" line and followed by "=== exit STATUS"; then the
# server is told to quit.  A test whose server failed but whose message
# came through empty ("server: " alone) runs once more: qperf's server
# sends its error after an urgent byte, and its client, reading up to
# the mark in a SIGURG handler while its main code reads the same socket,
# can lose the text (seen once: ud_lat, Debian 13's stack, two lines of
# guests).
qperf_client_all() {
	local t out rc
	for t in "${qperf_cm_tests[@]}" "${!qperf_roce_error[@]}"; do
		echo "=== $t"
		out=$(qperf_client_one "$t" "$1")
		rc=$?
		if qperf_message_lost "$out" "$rc"; then
			printf '%s\n# qperf lost its server'"'"'s error message; once more\n' "$out"
			out=$(qperf_client_one "$t" "$1")
			rc=$?
		fi
		# A server that does not answer: where it waits, for qperf_case.
		if ((rc != 0)) && [[ -n ${PAIR_TAG:-} ]] &&
			grep -q 'failed to receive node information: timed out' <<<"$out"; then
			out+=$'\n# qperf'"'"'s server did not answer; where it waits:\n'$(pair_where "qperf-$t-silent")
		fi
		printf '%s\n=== exit %s\n' "$out" "$rc"
	done
	qperf "$1" -lp "$qperf_port" quit
}

# qperf_section OUTPUT TEST: what qperf_client_all printed for TEST.
qperf_section() {
	awk -v t="$2" '$0 == "=== " t { on = 1; next } /^=== exit/ { if (on) exit } on' <<<"$1"
}

# qperf_section_status OUTPUT TEST: that test's exit status.
qperf_section_status() {
	awk -v t="$2" '$0 == "=== " t { on = 1; next } /^=== exit/ { if (on) { print $3; exit } }' <<<"$1"
}
