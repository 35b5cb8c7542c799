#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A hostile wire (scripts/vm-run --vms 2 --wire-tap).  Guest 1 writes
# 128 MiB to guest 0 with vrnic_xfer, every byte checked; guest 0 also has a
# canary MR that allows remote writes.  While the data flows, a box on the
# cable (tests/tools/wire-tap) forges frames for guest 0's QP: guessed
# R_Keys and the canary's real R_Key from an address that is not the peer,
# PSNs outside the window from the peer itself, truncated, oversized and
# malformed frames.  Nothing may be written (the canary stays intact), the
# transfer must complete and verify, the port must stay up, and the
# refusals must show in the counters.
# boots: pair-tap
# tags: wire
# order: 20
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair
[[ $(peer_kind) == vrnic && $VRNIC_ROLE == vrnic ]] ||
	{ echo "1..0 # SKIP needs two vrnic guests"; exit 4; }
[[ -n ${VRNIC_WIRE_TAP:-} ]] ||
	{ echo "1..0 # SKIP no wire tap on the cable (scripts/vm-run --wire-tap)"; exit 4; }

xfer=$VRNIC_BUILD/tests/selftests/vrnic_xfer
count=${VRNIC_FORGE_COUNT:-100}
port=19600
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
counters=(rx_addr_errors rx_key_errors rx_invalid_requests rx_icrc_errors rx_dropped seq_naks_sent duplicates)
args=(-d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p "$port" -b 128M -s 4M)

if [[ $VRNIC_VM == 1 ]]; then
	ktap_plan 1
	pair_sync hostile-wire.listening || exit 1
	timeout 600 "$xfer" "${args[@]}" "$VRNIC_PEER_IP" >"$tmp/cli" 2>&1
	rc=$?
	[[ $rc == 0 ]] && grep -q "^verified" "$tmp/cli"
	ktap_check "the client's transfer through the hostile wire verified" $? "$(tail -n 4 "$tmp/cli")"
	pair_sync hostile-wire.done
	ktap_finish
	exit
fi

ktap_plan 5
declare -A before
for c in "${counters[@]}"; do before[$c]=$(hw_counter "$c" 2>/dev/null || echo 0); done
mark=$(dmesg_mark)
"$xfer" "${args[@]}" -c "$tmp/canary" >"$tmp/srv" 2>&1 &
srv=$!
retry 300 0.1 bash -c "ss -ltn | grep -q ':$port '"
pair_sync hostile-wire.listening || exit 1
# Forge once the data flows, with the canary's QPN, R_Key and address.
flowing() { (($(hw_counter rx_packets) > $1)); }
retry 600 0.1 flowing $(($(hw_counter rx_packets) + 500))
read -r qpn rkey addr <"$tmp/canary"
for ((try = 0; try < 50; try++)); do
	answer=$(host_request inject-wire "$qpn" "$rkey" "$addr" "$count") && break
	nap 0.2
done
wait "$srv"
src=$?
pair_sync hostile-wire.done

[[ $answer == forged* ]]
ktap_check "the wire tap forged ${count} frames of each kind for QP $qpn: $answer" $?
[[ $src == 0 ]] && grep -q "^verified" "$tmp/srv"
ktap_check "the transfer completed and every byte verified" $? "$(tail -n 4 "$tmp/srv")"
grep -q "^canary intact" "$tmp/srv"
ktap_check "nothing was written without the right key from the right peer (canary intact)" $? \
	"$(tail -n 3 "$tmp/srv")"
deltas=""
for c in "${counters[@]}"; do
	deltas+=" $c +$(($(hw_counter "$c" 2>/dev/null || echo 0) - before[$c]))"
done
(($(hw_counter rx_addr_errors) - before[rx_addr_errors] >= 2 * count))
ktap_check "the refusals were counted:$deltas" $?
trouble=$(dmesg_since "$mark" | kernel_trouble)
[[ -z $trouble && $(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/state") == "4: ACTIVE" ]]
ktap_check "the port stayed ACTIVE and dmesg is clean" $? "$trouble"
ktap_finish
