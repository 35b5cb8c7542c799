#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of scripts/lib/steps.sh, the steps and lanes of
# make check, with stand-in steps: two lanes run at once, beside the
# foreground; a lane started idle runs in the idle scheduling class; a
# lane's output waits for lane_finish and comes under its step's name;
# every step has its line in the summary, in the order they were
# recorded; a failed step's digest names its "not ok" line and the
# summary exits 1; a test's "Bail out!" line and, from a step that
# printed no failed case, its last lines make the digest; a killed lane's
# remaining steps fail.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"

ktap_plan 8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The stand-in run: lane a's first step waits for lane b's, and b's for
# the foreground's, so that they finish only if all three run at once.
cat >"$tmp/run.sh" <<'RUN'
source "$1/scripts/lib/steps.sh"
t=$2
meet() { # MINE THEIRS: leave MINE, wait up to 20 s for THEIRS
	touch "$t/$1"
	for ((i = 0; i < 200; i++)); do [[ -e $t/$2 ]] && return 0; sleep 0.1; done
	echo "no $2 within 20 s"
	return 1
}
a1() { meet a1 b1 && echo "a1 says hello"; }
a2() { echo "not ok 1 a2's case"; echo "a2: on $(chrt -p "$BASHPID")"; return 3; }
b1() { meet b1 fg && echo "b1 met the foreground"; echo "b1: on $(chrt -p "$BASHPID")"; }
lane_add a "step a1" a1
lane_add a "step a2" a2
lane_add b "step b1" b1
lane_start a idle
lane_start b
step "step fg" meet fg a1
lane_finish b
lane_finish a
summary "stand-in"
RUN
# In the normal class (make check runs ctest in its idle lane), if we
# may leave the idle class.
normal=(chrt --other 0)
"${normal[@]}" true 2>/dev/null || normal=()
out=$(timeout 60 "${normal[@]}" bash "$tmp/run.sh" "$repo" "$tmp" 2>&1)
rc=$?

[[ $rc == 1 ]]
ktap_check "a failed step fails the run (exit 1)" $? "exit $rc" "$out"
grep -q "a1 says hello" <<<"$out" && grep -q "b1 met the foreground" <<<"$out"
ktap_check "two lanes and the foreground run at once" $? "$out"
grep -q "a2: on .*SCHED_IDLE" <<<"$out" &&
	{ ((${#normal[@]} == 0)) || grep -q "b1: on .*SCHED_OTHER" <<<"$out"; }
ktap_check "a lane started idle is in the idle scheduling class, the other lane not" $? \
	"$(grep -E '^(a2|b1):' <<<"$out")"
# Lane b's output comes after the foreground's step, under its name.
[[ $(grep -n -e '^=== step fg$' -e '^=== step b1 (beside' -e '^b1 met' <<<"$out" | cut -d: -f2- | tr '\n' '|') == \
	"=== step fg|=== step b1 (beside the foreground's steps)|b1 met the foreground|" ]]
ktap_check "a lane's output waits for lane_finish, under its step's name" $? "$out"
summary_lines=$(sed -n '/^=== summary$/,/^$/p' <<<"$out" | grep '^step' | sed -E 's/ +[0-9]+s$//; s/  +/ /g' | tr '\n' '|')
[[ $summary_lines == "step fg PASS|step b1 PASS|step a1 PASS|step a2 FAIL (exit 3)|" ]]
ktap_check "every step has its line, in the order recorded" $? "$summary_lines"
digest=$(sed -n '/^=== what failed/,$p' <<<"$out")
grep -q "^--- step a2: 1 \"not ok\" lines" <<<"$digest" && grep -q "^not ok 1 a2's case" <<<"$digest" &&
	[[ $(tail -n 1 <<<"$out") == "stand-in: FAILED" ]]
ktap_check "the failed step's digest follows the summary" $? "$out"

# A test that stopped, and a step that said nothing a digest knows.
cat >"$tmp/digest.sh" <<'RUN'
source "$1/scripts/lib/steps.sh"
bails() { printf 'TAP version 13\n1..3\nok 1 first\nBail out! no container\n'; return 1; }
quiet() { seq 1 20 | sed 's/^/line /'; return 2; }
step "step bails" bails
step "step quiet" quiet
summary "stand-in"
RUN
out=$(timeout 60 bash "$tmp/digest.sh" "$repo" 2>&1)
digest=$(sed -n '/^=== what failed/,$p' <<<"$out")
want=$(printf '%s\n' '--- step bails: 0 "not ok" lines' 'Bail out! no container' \
	'--- step quiet: 0 "not ok" lines' '    it printed no failed case; its last lines:' \
	'    line 15' '    line 16' '    line 17' '    line 18' '    line 19' '    line 20')
[[ $(grep -v -e '^=== what failed' -e '^stand-in: FAILED' <<<"$digest") == "$want" ]]
ktap_check "the digest shows a test's Bail out! line, and a quiet step's last lines" $? "$digest"

# A lane killed in its first step: that step and the one after it fail.
cat >"$tmp/kill.sh" <<'RUN'
source "$1/scripts/lib/steps.sh"
slow() { touch "$2"; sleep 30; }
lane_add k "step slow" slow "$2/slow"
lane_add k "step never" true
lane_start k
for ((i = 0; i < 100; i++)); do [[ -e $2/slow ]] && break; sleep 0.1; done
kill_tree "${lane_pids[k]}"
lane_finish k
summary "stand-in"
RUN
out=$(timeout 60 bash "$tmp/kill.sh" "$repo" "$tmp" 2>&1)
rc=$?
[[ $rc == 1 ]] && grep -Eq '^step slow +FAIL \(exit 1(43|25)\)' <<<"$out" &&
	grep -Eq '^step never +FAIL \(exit 125\)' <<<"$out"
ktap_check "a killed lane: its step and the next fail" $? "exit $rc" "$out"
ktap_finish
