# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# The steps of scripts/check: each step's output, its line in the summary,
# and for a failed step a digest of what failed, repeated at the end.
#
# Steps run in the foreground one after another, or in a lane: a batch of
# steps that runs beside the foreground, one step after another, its
# output kept until lane_finish prints it.  A lane is either in the idle
# scheduling class (it runs only when nothing else wants the CPU), or at
# normal priority (a second line of guests beside the first).
#
#   step NAME CMD...          run now, in the foreground
#   lane_add LANE NAME CMD... add a step to LANE
#   lane_start LANE [idle]    start LANE's steps, in the background
#   lane_finish LANE          wait for LANE; its output and its lines
#   summary                   every step's line, what failed; exits
#

steps=()
results=()
times=()
whys=()
failed=0
steps_dir=$(mktemp -d)
declare -A lane_pids=() lane_count=()

# step NAME CMD...: run one step; a failed step's digest (failure_digest)
# is repeated after the summary, so that the end of a long log says what
# failed.
step() {
	local name=$1 start=$SECONDS rc log
	shift
	echo
	echo "=== $name"
	log=$(mktemp)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	record "$name" "$rc" $((SECONDS - start)) "$log"
	rm -f "$log"
}

# record NAME RC SECONDS LOG: a step's line in the summary.
record() {
	steps+=("$1")
	times+=("$3")
	if (($2 == 0)); then
		results+=(PASS)
	else
		results+=("FAIL (exit $2)")
		whys+=("$(failure_digest "$1" "$4")")
		failed=1
	fi
}

# lane_add LANE NAME CMD...: the lane's next step.  CMD runs in a
# subshell of this script, so it may be one of its functions.
lane_add() {
	local lane=$1 name=$2 n=${lane_count[$1]:-0}
	shift 2
	mkdir -p "$steps_dir/$lane"
	printf '%s\n' "$name" >"$steps_dir/$lane/$n.name"
	printf '%q ' "$@" >"$steps_dir/$lane/$n.cmd"
	lane_count[$lane]=$((n + 1))
}

# lane_run LANE: its steps in order, each one's output in n.log and
# "RC SECONDS" in n.rc.
lane_run() {
	local lane=$1 n start rc
	for ((n = 0; n < ${lane_count[$lane]:-0}; n++)); do
		start=$SECONDS
		eval "$(<"$steps_dir/$lane/$n.cmd")" >"$steps_dir/$lane/$n.log" 2>&1 </dev/null
		rc=$?
		echo "$rc $((SECONDS - start))" >"$steps_dir/$lane/$n.rc"
	done
}

# lane_start LANE [idle]: LANE runs from now on, beside what follows.
lane_start() {
	local lane=$1 idle=${2:-}
	(
		if [[ -n $idle ]]; then
			chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || renice -n 19 -p "$BASHPID" >/dev/null
		fi
		lane_run "$lane"
	) &
	lane_pids[$lane]=$!
}

# lane_names LANE: its steps' names, one a line.
lane_names() {
	local n
	for ((n = 0; n < ${lane_count[$1]:-0}; n++)); do
		cat "$steps_dir/$1/$n.name"
	done
}

# lane_finish LANE: wait for the lane, then each step's output and line
# (a step that never ran, because the lane was killed, fails with 125).
lane_finish() {
	local lane=$1 n rc secs name
	[[ -n ${lane_pids[$lane]:-} ]] && wait "${lane_pids[$lane]}"
	unset "lane_pids[$lane]"
	for ((n = 0; n < ${lane_count[$lane]:-0}; n++)); do
		name=$(<"$steps_dir/$lane/$n.name")
		echo
		echo "=== $name (beside the foreground's steps)"
		cat "$steps_dir/$lane/$n.log" 2>/dev/null
		read -r rc secs 2>/dev/null <"$steps_dir/$lane/$n.rc" || { rc=125 secs=0; }
		record "$name" "$rc" "$secs" "$steps_dir/$lane/$n.log"
	done
	rm -rf "${steps_dir:?}/$lane"
	lane_count[$lane]=0
}

# On Ctrl-C or a kill, the lanes go too.  Each process is stopped
# before its children are found, so that a lane cannot start its next
# step (and guests nobody waits for) in between.
kill_tree() { # pid
	local c
	kill -STOP "$1" 2>/dev/null || return 0
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill -TERM "$1" 2>/dev/null
	kill -CONT "$1" 2>/dev/null
}
lanes_kill() {
	local pid
	for pid in ${lane_pids[@]+"${lane_pids[@]}"}; do kill_tree "$pid"; done
	rm -rf "$steps_dir"
}
trap 'lanes_kill; exit 130' INT TERM HUP

# failure_digest NAME LOG: a few lines that say what failed in a step.
# First the failed test cases (a selftest's own "not ok" lines, each
# once), then the failed selftests and vm-run's verdicts (not its console
# tail), then ctest's and lint's; at most 8 lines, 160 columns each, so
# that every failed step still shows at the end of a long log.  Then the
# first failed case's own diagnostics (its guest's "# # " lines up to
# that guest's next result), at most 16 lines: a failure that shows only
# in the log's tail still says why.  A test that stopped ("Bail out!")
# says so; a step that printed none of these shows its last 6 lines.
failure_digest() {
	local name=$1 log=$2
	echo "--- $name: $(grep -acE 'not ok' "$log") \"not ok\" lines"
	tr -d '\r' <"$log" | awk '
		function tag(s) { return match(s, /^\[vm[0-9]\] /) ? substr(s, 1, RLENGTH) : "" }
		{ last[NR % 6] = $0 }
		state == 1 && tag($0) == pfx && $0 ~ /^(\[vm[0-9]\] )?(# )?(not )?ok / { state = 2 }
		state == 1 && d < 16 && index($0, pfx "# # ") == 1 { diag[d++] = $0 }
		/^(\[vm[0-9]\] )?# not ok / {
			if (!state) { state = 1; pfx = tag($0) }
			if (!seen[$0]++) c[n1++] = $0; next
		}
		/^(\[vm[0-9]\] )?not ok / || /^vm-run: [^ ]/ || /Bail out!/ { if (!seen[$0]++) v[n2++] = $0; next }
		/^(\[vm[0-9]\] )?(# )*ok / { next }
		/Failed|FAILED|^lint: .*(fail|bad)|error:/ { if (!seen[$0]++) o[n3++] = $0 }
		END {
			k = 0
			for (i = 0; i < n1 && i < 4; i++) print c[i]; k = i
			for (i = 0; i < n2 && k < 7; i++) { print v[i]; k++ }
			for (i = 0; i < n3 && k < 8; i++) { print o[i]; k++ }
			if (d) print "    the first failed case said:"
			for (i = 0; i < d; i++) print "    " diag[i]
			if (k || d) exit
			print "    it printed no failed case; its last lines:"
			for (i = NR - 5; i <= NR; i++) if (i > 0) print "    " last[i % 6]
		}' | cut -c1-160
}

# summary [WHO]: a line per step, what failed, and the verdict (WHO, by
# default "make check", says it); exits.
summary() {
	local i width=0 who=${1:-make check}
	echo
	echo "=== summary"
	for i in "${!steps[@]}"; do
		((${#steps[i]} > width)) && width=${#steps[i]}
	done
	for i in "${!steps[@]}"; do
		printf '%-*s %-16s %5ss\n' "$width" "${steps[$i]}" "${results[$i]}" "${times[$i]}"
	done
	if ((${#whys[@]})); then
		echo
		echo "=== what failed (the full lines are above, in each step's output)"
		printf '%s\n' "${whys[@]}"
	fi
	rm -rf "$steps_dir"
	if ((failed)); then
		echo "$who: FAILED"
		exit 1
	fi
	echo "$who: all passed"
	exit 0
}
