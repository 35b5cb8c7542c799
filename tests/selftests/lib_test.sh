#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The selftests' shared judgements, on the host: rping_teardown_race
# tells rping's exit race of rdma-core before 59 from a run that failed,
# on output as rping writes it (stdout buffered, stderr not);
# transport_counters_since reports what a case added to the counters.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/selftests/lib.sh
source tests/selftests/lib.sh >/dev/null 2>&1
fail=0
check() { # NAME WANT STATUS
	if [[ $2 == "$3" ]]; then echo "ok: $1"; else echo "FAIL: $1 (status $3, want $2)"; fail=1; fi
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

pings() { # FROM TO
	local i
	for ((i = $1; i <= $2; i++)); do echo "ping data: rdma-ping-$i: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_\`abc"; done
}

# The client of a CI run: the stderr line in the middle of a ping line
# (a 4 KiB stdout buffer flushed there), then the rest of the pings.
{
	pings 0 60
	printf 'ping data: rdma-ping-61: ABCDEFGH'
	echo "rdma_get_cm_event: Bad file descriptor"
	echo "IJKLMNOP"
	echo "client DISCONNECT EVENT..."
	pings 62 99
} >"$out"
rping_teardown_race 255 "$out"
check "client: the race, its line in the middle of a ping line" 0 $?

{
	echo "server DISCONNECT EVENT..."
	echo "rdma_get_cm_event: Bad file descriptor"
} >"$out"
rping_teardown_race 255 "$out"
check "server: the race after its disconnect" 0 $?

{
	pings 0 3
	echo "wait for RDMA_WRITE_ADV state 10"
	echo "rping client failed: -1"
	echo "rdma_get_cm_event: Bad file descriptor"
} >"$out"
rping_teardown_race 255 "$out"
check "a run that failed, then the race: not the race" 1 $?

{
	pings 0 99
	echo "cma event RDMA_CM_EVENT_UNREACHABLE, error -110"
} >"$out"
rping_teardown_race 255 "$out"
check "another exit 255: not the race" 1 $?

{
	pings 0 99
	echo "rdma_get_cm_event: Bad file descriptor"
} >"$out"
rping_teardown_race 1 "$out"
check "status 1: not the race" 1 $?
rping_teardown_race 0 "$out"
check "status 0: not the race" 1 $?

# transport_counters_since: what grew, by how much; what did not, left out.
transport_counters() { echo "$fake"; }
fake="duplicates=3 retransmits=5 "
before=$(transport_counters)
fake="duplicates=3 retransmits=9 rnr_naks_received=1 "
got=$(transport_counters_since "$before")
[[ $got == "retransmits=+4 rnr_naks_received=+1 " ]]
check "transport_counters_since: the counters that grew, by how much" 0 $?
fake=none
got=$(transport_counters_since none)
[[ $got == none ]]
check "transport_counters_since: none when none grew" 0 $?

exit "$fail"
