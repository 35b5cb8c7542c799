#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of vm-run's watch over its guests (scripts/lib/vm-watch.sh)
# without a guest: a sleeping process stands in for QEMU, a file for its
# console.  A guest whose kernel reports a CPU stuck past the limit ends
# the wait at once, as a hang that says why, and so does one that has not
# booted in the boot limit; a shorter lockup, or none, leaves the wait to
# the deadline.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"
# shellcheck source=scripts/lib/vm-requests.sh
source "$repo/scripts/lib/vm-requests.sh"
# shellcheck source=scripts/lib/vm-qemu.sh
source "$repo/scripts/lib/vm-qemu.sh"
# shellcheck source=scripts/lib/vm-watch.sh
source "$repo/scripts/lib/vm-watch.sh"

ktap_plan 10
tmp=$(mktemp -d)
sleep 300 &
stand_in=$!
trap 'kill -KILL "$stand_in" 2>/dev/null; rm -rf "$tmp"' EXIT
# What vm-run has that the watch reads.
here=$repo/scripts
vms=1
run=$tmp
sockdir=$tmp
shm_prefix=$tmp/ram
rams=()
pids_qemu=("$stand_in")
pids_tail=()
pids_vrnicd=()
killed=()
consoles=("$tmp/console-0.log")
mkdir -p "$run/host"

# lockup SECONDS: the line a 6.1 guest's watchdog prints.
lockup() {
	echo "[  412.569853] watchdog: BUG: soft lockup - CPU#1 stuck for ${1}s! [vrnic_nfsrdma.s:1447]"
}

# watch DEADLINE: watch_guests with that timeout, its messages in
# watch.err and how long it took in took.
watch() {
	local start=$SECONDS
	timeout=$1
	watch_guests 2>"$tmp/watch.err"
	took=$((SECONDS - start))
}

{ lockup 44; lockup 71; lockup 104; } >"${consoles[0]}"
out=$(guest_wedged 0)
ktap_check "a lockup of 104s is not yet a wedged guest" $((!$?)) "got: $out"

lockup 130 >>"${consoles[0]}"
out=$(guest_wedged 0)
[[ $? == 0 && $out == 130 ]]
ktap_check "one of 130s is (the longest reported: $out)" $? "got: $out"

# The wait ends within a few polls, long before the deadline.
watch 600
[[ $timed_out == 1 && $wedged == *"stuck in its kernel for 130s"* ]] && ((took < 60))
ktap_check "watch_guests stops at a wedged guest (${took}s of 600)" $? \
	"timed_out=$timed_out wedged=$wedged" "$(cat "$tmp/watch.err")"
grep -q "guest 0: a CPU stuck in its kernel for 130s (soft lockup); it will not recover" "$tmp/watch.err"
ktap_check "and says so" $? "$(cat "$tmp/watch.err")"

rc=0
guest_verdict 0 2>"$tmp/verdict.err"
[[ $rc == 124 ]] && grep -q "guest 0 hung: a CPU stuck in its kernel for 130s (soft lockup) (TIMEOUT)" "$tmp/verdict.err"
ktap_check "the verdict is a hang that says why (rc $rc)" $? "$(cat "$tmp/verdict.err")"

# A lockup under the limit leaves the wait to its deadline.
{ lockup 22; lockup 48; } >"${consoles[0]}"
watch 7
[[ $timed_out == 1 && -z $wedged ]] && ((took >= 7))
ktap_check "a lockup of 48s waits for the deadline (${took}s of 7)" $? \
	"timed_out=$timed_out wedged=$wedged" "$(cat "$tmp/watch.err")"

# VRNIC_WEDGE_LIMIT moves the limit.
wedge_limit=40
out=$(guest_wedged 0)
[[ $? == 0 && $out == 48 ]]
ktap_check "with a limit of 40s, 48s is wedged" $? "got: $out"

# A guest that has not booted (no ready file) in the boot limit ends it.
: >"${consoles[0]}"
wedge_limit=120
boot_limit=3
watch 600
[[ $timed_out == 1 && $wedged == "not booted after 3s" ]] && ((took < 30))
ktap_check "a guest not booted in the boot limit ends the wait (${took}s of 600)" $? \
	"timed_out=$timed_out wedged=$wedged" "$(cat "$tmp/watch.err")"

# One that has booted does not.
: >"$run/ready-0"
watch 8
[[ $timed_out == 1 && -z $wedged ]] && ((took >= 8))
ktap_check "a booted guest waits for the deadline (${took}s of 8)" $? \
	"timed_out=$timed_out wedged=$wedged" "$(cat "$tmp/watch.err")"
boot_limit=300

# Once the guest is gone, the wait ends with no verdict of its own.
kill -KILL "$stand_in" 2>/dev/null
wait "$stand_in" 2>/dev/null
: >"${consoles[0]}"
watch 600
[[ -z $timed_out && -z $wedged ]] && ((took < 10))
ktap_check "a guest that is gone ends the wait (${took}s)" $? "timed_out=$timed_out wedged=$wedged"
ktap_finish
