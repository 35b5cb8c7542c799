#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The guest harness's hang report on the host: where_stuck describes a
# live process tree, and stuck_in_exit tells a thread that called exit()
# from a signal handler during exit() (qperf's deadlock, as where_stuck
# reported it in a 6.12 guest) from other waits.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/guest.sh
source scripts/lib/guest.sh >/dev/null 2>&1
fail=0
check() { # NAME STATUS
	if [[ $2 == 0 ]]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"; kill "$pid" 2>/dev/null' EXIT

# qperf's server child, abridged from that report.
cat >"$dir/exit-in-exit" <<'R'
## pid 2036: qperf -lp 19765
### thread 2036 (qperf): State:	S (sleeping), wchan futex_wait_queue
Thread 1 (Thread 0x7ff6613dc740 (LWP 2036) "qperf"):
#0  futex_wait (private=0, expected=2, futex_word=0x7ff66166a2c8 <__exit_funcs_lock>)
#2  0x00007ff6614d3670 in __run_exit_handlers (status=1, listp=0x7ff661668820 <__exit_funcs>)
#3  0x00007ff6614d369a in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:146
#6  <signal handler called>
#14 0x00007ff6615695eb in __unregister_atfork (dso_handle=dso_handle@entry=0x5598dbe95008)
#20 0x00007ff6614d355d in __run_exit_handlers (status=1, listp=0x7ff661668820 <__exit_funcs>)
#21 0x00007ff6614d369a in __GI_exit (status=<optimized out>) at ./stdlib/exit.c:146
#23 0x00005598dbe850b7 in error ()
R
stuck_in_exit "$dir/exit-in-exit"
check "exit() from a handler during exit() is recognised" $?

# The same frames in two threads: each thread on its own is no deadlock.
cat >"$dir/two-threads" <<'R'
Thread 2 (Thread 0x7f36c076e6c0 (LWP 707) "t"):
#0  0x00007ff6614d3670 in __run_exit_handlers (status=1)
Thread 1 (Thread 0x7f36c0bbb740 (LWP 704) "t"):
#0  <signal handler called>
#1  0x00007ff6614d3670 in __run_exit_handlers (status=1)
R
! stuck_in_exit "$dir/two-threads"
check "frames of different threads are not joined" $?

# A signal during exit() whose handler returns is no deadlock either.
sed '/^#2 /d' "$dir/exit-in-exit" >"$dir/one-exit"
! stuck_in_exit "$dir/one-exit"
check "a signal inside one exit() is not the deadlock" $?

# A live tree: each process and thread with its state and wait channel.
timeout 30 bash -c 'sleep 29 | cat' &
pid=$!
sleep 0.5
where_stuck "$pid" >"$dir/live" 2>&1
[[ $(grep -c '^## pid ' "$dir/live") -ge 3 ]] && grep -q '^### thread .*(sleep): State:' "$dir/live"
check "where_stuck lists the timeout, bash, sleep and cat of a live tree" $?
! stuck_in_exit "$dir/live"
check "a process asleep in nanosleep is not the deadlock" $?
# wait_bounded: a child's own status in time; past the limit, where it
# and its peer wait, the child killed, and 124.
(exit 5) &
wait_bounded 5 $!
check "wait_bounded passes a child's exit status through" $(($? == 5 ? 0 : 1))
sleep 30 &
peer=$!
bash -c 'sleep 31' &
slow=$!
out=$(wait_bounded 1 "$slow" "$peer")
rc=$?
# SIGKILL takes effect when the child next runs, after $(...) may have
# returned; this shell's wait sees it killed (137) rather than racing it.
wait "$slow" 2>/dev/null
killed=$?
[[ $rc == 124 && $killed == 137 ]] &&
	grep -q "^# pid $slow still running after 1 s" <<<"$out" &&
	grep -q "^## pid $peer: sleep 30" <<<"$out"
check "wait_bounded reports a child past its limit and its peer, and kills the child" $?
kill "$peer"
# pair_where: a client asks, the server's side answers with its tree.
export PAIR_TAG=$dir/case.1.0
sleep 30 &
srv=$!
(for _ in $(seq 150); do pair_answer_where "$srv" "$PAIR_TAG"; sleep 0.1; done) &
answerer=$!
out=$(pair_where probe)
grep -q "^## pid $srv: sleep 30" <<<"$out"
check "pair_where brings the server's where_stuck report" $?
kill "$srv"
wait "$srv" 2>/dev/null
out=$(pair_where probe2)
[[ $out == "# the server has ended" ]]
check "pair_where says so when the server has ended" $?
kill "$answerer" 2>/dev/null
[[ -z $(compgen -G "$PAIR_TAG.where-*.ask") ]]
check "each question was answered and taken away" $?
unset PAIR_TAG

# qperf_hung: qperf's own deadlock is a skip, any other hang a failure.
qperf() { # stands in for qperf in qperf_client_one
	echo "qperf $*"
	return 3
}
verdict() { # REPORT_FILE
	(
		# shellcheck source=tests/selftests/lib.sh
		source tests/selftests/lib.sh
		# shellcheck source=tests/selftests/middleware/qperf_lib.sh
		source tests/selftests/middleware/qperf_lib.sh
		qperf_case ud_lat "# qperf hung: the client ...
$(<"$1")" 124
	)
}
# (Whole outputs, not pipes: grep -q would end the pipe early, and
# pipefail would count that against the producer.)
out=$(verdict "$dir/exit-in-exit")
grep -q '^ok 1 qperf ud_lat # SKIP qperf deadlocked in its own exit()' <<<"$out" &&
	grep -q '^# #14 .*__unregister_atfork' <<<"$out"
check "a qperf hung in its own exit() is qperf's bug (SKIP), with its stacks" $?
out=$(verdict "$dir/live")
grep -q '^not ok 1 qperf ud_lat: hung' <<<"$out"
check "a qperf hung anywhere else fails" $?
(
	source tests/selftests/lib.sh
	source tests/selftests/middleware/qperf_lib.sh
	out=$(qperf_client_one rc_bw 10.0.0.1)
	rc=$?
	[[ $rc == 3 && $out == "qperf 10.0.0.1 -lp $qperf_port -cm1 -t 2 rc_bw" ]]
)
check "qperf_client_one passes a client's output and status through" $?

# qperf_client_all: a server error that came through empty is asked once
# more; the second run's verdict counts.
lost_message() { # HOW_MANY_EMPTY: qperf_client_all's ud_lat verdict
	(
		source tests/selftests/lib.sh
		source tests/selftests/middleware/qperf_lib.sh
		empty=$1
		qperf() {
			case $* in
			*ud_lat)
				# (A file: each run is in a subshell of its own.)
				n=$(($(cat "$dir/runs" 2>/dev/null || echo 0) + 1))
				echo "$n" >"$dir/runs"
				if ((n <= empty)); then echo "server: "; else echo "server: ${qperf_roce_error[ud_lat]}"; fi
				return 1 ;;
			*) echo "bw = 1 MB/sec" ;;
			esac
		}
		rm -f "$dir/runs"
		out=$(qperf_client_all 10.0.0.1)
		qperf_case ud_lat "$(qperf_section "$out" ud_lat)" "$(qperf_section_status "$out" ud_lat)"
		echo "runs: $(<"$dir/runs")"
	)
}
# A server that does not answer: the client asks where it waits; stuck in
# qperf's exit() deadlock is a skip, anything else a failure.
silent_server() { # REPORT_FILE: qperf_client_all's uc_bw verdict
	(
		source tests/selftests/lib.sh
		source tests/selftests/middleware/qperf_lib.sh
		report=$1
		PAIR_TAG=$dir/tag
		qperf() {
			case $* in
			*uc_bw) echo "failed to receive node information: timed out"; return 1 ;;
			*) echo "bw = 1 MB/sec" ;;
			esac
		}
		pair_where() { cat "$report"; }
		out=$(qperf_client_all 10.0.0.1)
		qperf_case uc_bw "$(qperf_section "$out" uc_bw)" "$(qperf_section_status "$out" uc_bw)"
	)
}
out=$(silent_server "$dir/exit-in-exit")
grep -q "^ok 1 qperf uc_bw # SKIP qperf's server did not answer: it was deadlocked" <<<"$out"
check "a qperf server that does not answer, deadlocked in its exit(): SKIP" $?
out=$(silent_server "$dir/live")
grep -q '^not ok 1 qperf uc_bw: no result' <<<"$out"
check "a qperf server that does not answer for another reason: a failure" $?

out=$(lost_message 1)
grep -q '^ok 1 qperf ud_lat # SKIP' <<<"$out" && grep -qx 'runs: 2' <<<"$out"
check "a server error that came through empty runs once more" $?
out=$(lost_message 2)
grep -q '^not ok 1 qperf ud_lat: no result' <<<"$out" && grep -qx 'runs: 2' <<<"$out"
check "and twice empty is a failure" $?
exit "$fail"
