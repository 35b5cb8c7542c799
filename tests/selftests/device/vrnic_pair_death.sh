#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Peer death: guest 0 streams RDMA WRITEs to guest 1, then has the host
# SIGKILL guest 1's vrnicd.  The WRITE in flight must fail with
# RETRY_EXC_ERR within the QP's retry budget: (retry_cnt + 1) local ACK
# timeouts of 4.096 us * 2^timeout.  On guest 1 the application must get
# IBV_EVENT_DEVICE_FATAL.  Nothing may hang.  Guest 1's device is dead
# afterwards, so this test runs last.
# boots: pair-tap
# tags: lifecycle
# order: 99
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair
[[ $VRNIC_ROLE == vrnic && $(peer_kind) == vrnic ]] ||
	{ echo "1..0 # SKIP needs two vrnic guests"; exit 4; }

timeout_exp=14
retry=7
# 4.096 us * 2^14 = 67 ms per try, 8 tries.
budget_ms=$(((4096 << timeout_exp) / 1000000 * (retry + 1)))
ktap_plan 2

xfer="$VRNIC_BUILD/tests/selftests/vrnic_xfer -d $VRNIC_IBDEV -g $VRNIC_GID_INDEX -p 19400 -w -b 64G -s 4K -m 4K -t $timeout_exp -r $retry"
if [[ $VRNIC_VM == 0 ]]; then
	# The client: kill the peer's device once the WRITEs are flowing
	# (our port has sent 2000 packets more), not after a fixed time: on a
	# loaded host the connection can take longer than any guess.
	(
		base=$(hw_counter tx_packets)
		for ((i = 0; i < 900; i++)); do
			(($(hw_counter tx_packets) > base + 2000)) && break
			nap 0.1
		done
		host_request kill-vrnicd 1 >"$VRNIC_RUN_DIR/death-kill.log"
	) &
	killer=$!
	pair_run death 1 120 "$xfer" "$xfer \$VRNIC_PEER_IP"
	rc=$?
	wait "$killer"
	line=$(grep "^write .* failed after" "$pair_out")
	ms=$(sed -n 's/.* failed after \([0-9]*\) ms.*/\1/p' <<<"$line")
	[[ $rc == 3 && $line == *"transport retry counter exceeded"* ]]
	ktap_check "the WRITE in flight ended in RETRY_EXC_ERR: $line" $? \
		"exit $rc; $(cat "$VRNIC_RUN_DIR/death-kill.log" 2>/dev/null); $(tail -n 5 "$pair_out")"
	# Allow for the host scheduler: twice the budget and half a second.
	[[ -n $ms ]] && ((ms <= 2 * budget_ms + 500))
	ktap_check "within the retry budget (${ms:-?} ms; budget $budget_ms ms)" $?
else
	# Our vrnicd is the one killed: the application must hear of it.
	pair_run death 1 120 "$xfer" "$xfer \$VRNIC_PEER_IP"
	rc=$?
	line=$(grep "^device fatal" "$pair_out")
	[[ $rc == 4 && -n $line ]]
	ktap_check "the dead device's application got $line" $? "exit $rc; $(tail -n 5 "$pair_out")"
	ktap_skip "retry budget" "guest 0 measures it"
fi
ktap_finish
