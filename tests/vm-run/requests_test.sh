#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of vm-run's host-request server (scripts/lib/vm-requests.sh)
# without a guest: a sleeping process stands in for vrnicd 0, a stub for
# vrnicctl.  Every request a guest can make gets its answer, and a request
# that names no started vrnicd, a bad duration or an unknown verb gets an
# error, not a signal sent to some other process.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"
# shellcheck source=scripts/lib/vm-requests.sh
source "$repo/scripts/lib/vm-requests.sh"

ktap_plan 13
tmp=$(mktemp -d)
sleep 300 &
stand_in=$!
trap 'kill -KILL "$stand_in" 2>/dev/null; rm -rf "$tmp"' EXIT
# What vm-run has that the server reads and changes.
sockdir=$tmp
run=$tmp
wire_tap=
pids_vrnicd=([0]="$stand_in")
pids_other=()
killed=()
restarts=()
printf '#!/bin/sh\necho "vrnicctl $*"\n' >"$tmp/vrnicctl"
chmod +x "$tmp/vrnicctl"
vrnicctl_cmd=("$tmp/vrnicctl")
mkdir -p "$run/host"

# check NAME PATTERN REQUEST: serve_request answers REQUEST (in this
# shell, as vm-run calls it) with a line that matches the extended regex.
check() {
	local name=$1 pattern=$2 got
	shift 2
	echo "$*" >"$run/host/t.req"
	serve_request "$run/host/t.req"
	got=$(<"$run/host/t.resp")
	rm -f "$run/host/t.resp"
	[[ ! -e $run/host/t.req && $got =~ $pattern ]]
	ktap_check "$name" $? "got: $got"
}

check "rss of a running vrnicd" '^anon [0-9]+ file [0-9]+ shmem [0-9]+$' rss 0
check "cpu over a second" '^percent [0-9.]+ ticks [0-9]+ hz [0-9]+ seconds 1$' cpu 0 1
check "vrnicctl passes its arguments" '^vrnicctl -s .*/ivshmem-0.ctl status --json$' vrnicctl 0 status --json
check "a guest with no vrnicd is refused" '^error: bad request: rss 1$' rss 1
check "a guest that is not a number is refused" '^error: bad request: kill-vrnicd 0;x$' 'kill-vrnicd 0;x'
check "stop-vrnicd past 120 s is refused" '^error: bad request: stop-vrnicd 0 121$' stop-vrnicd 0 121
check "cpu past 60 s is refused" '^error: bad request: cpu 0 61$' cpu 0 61
check "an unknown request is refused" '^error: unknown request: reboot 0$' reboot 0
check "inject-wire without --wire-tap is refused" '^error: bad request \(needs --wire-tap\)' inject-wire 1 2 3 4
kill -0 "$stand_in"
ktap_check "no refused request touched the process" $?
check "stop-vrnicd for 1 s" '^stopped vrnicd 0 for 1s$' stop-vrnicd 0 1
check "kill-vrnicd" '^killed vrnicd 0$' kill-vrnicd 0
! kill -0 "$stand_in" 2>/dev/null && [[ ${killed[0]:-} == 1 ]]
ktap_check "kill-vrnicd killed it, and vm-run knows not to fail for it" $?
ktap_finish
