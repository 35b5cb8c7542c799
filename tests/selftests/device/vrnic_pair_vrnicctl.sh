#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Fault injection changed at run time with vrnicctl: guest 0's vrnicd
# drops 5% of the frames it receives while vrnic_xfer moves data between
# the guests.  Every byte still arrives (retransmission), vrnicctl status
# counts the drops, the peer retransmitted, and `vrnicctl fault` alone
# turns it off again.
# boots: pair pair-rxe
# tags: device
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

if [[ $VRNIC_VM == 0 ]]; then
	ktap_plan 4 # fault on, transfer, drops counted, fault off
else
	ktap_plan 2 # transfer, retransmissions
fi
ctl() { host_request vrnicctl 0 "$@"; }
json_field() { jq -r "$1" <<<"$2"; }
# What the client (guest 1) counts when it sends again: vrnic's
# retransmits, or rxe's retries after a timeout or a sequence NAK.
resent() {
	if [[ $VRNIC_IBDEV == rxe* ]]; then
		echo $(($(hw_counter completer_retry_err) + $(hw_counter rcvd_seq_err)))
	else
		hw_counter retransmits
	fi
}

if [[ $VRNIC_VM == 0 ]]; then
	before=$(ctl status --json)
	out=$(ctl fault drop=0.05 seed=7 --json)
	ok=1
	[[ $(json_field '.faults.drop' "$out") == 0.05 && $(json_field '.faults.seed' "$out") == 7 ]] && ok=0
	ktap_check "vrnicctl fault drop=0.05 seed=7 on vm0's vrnicd" "$ok" "$out"
else
	resent0=$(resent)
fi
pair_sync fault.on

xfer=$VRNIC_BUILD/tests/selftests/vrnic_xfer
args="$xfer -d $VRNIC_IBDEV -g $VRNIC_GID_INDEX -p 19301 -b 4M"
pair_run "xfer-fault" 0 300 "$args" "$args \$VRNIC_PEER_IP"
rc=$?
line=$(grep "^verified" "$pair_out")
ok=1
[[ $rc == 0 && -n $line ]] && ok=0
ktap_check "vrnic_xfer -b 4M with 5% of vm0's ingress dropped ($pair_role): $line" "$ok" \
	"$(tail -n 8 "$pair_out")"

if [[ $VRNIC_VM == 0 ]]; then
	after=$(ctl status --json)
	dropped=$(($(json_field '.wire.faults.dropped' "$after") - $(json_field '.wire.faults.dropped' "$before")))
	ok=1
	((dropped > 0)) && ok=0
	ktap_check "vrnicctl status: $dropped frames dropped on the way in" "$ok" \
		"$(json_field '.wire' "$after")"
	out=$(ctl fault --json)
	ok=1
	[[ $(json_field '[.faults.drop, .faults.reorder, .faults.dup, .faults.corrupt] | add' "$out") == 0 ]] &&
		ok=0
	ktap_check "vrnicctl fault: off again" "$ok" "$out"
else
	n=$(($(resent) - resent0))
	ok=1
	((n > 0)) && ok=0
	ktap_check "the client sent again $n times ($VRNIC_IBDEV)" "$ok"
fi
pair_sync fault.off
ktap_finish
