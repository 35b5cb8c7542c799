#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UD multicast between the two guests: mckey joins an IPv4 group through
# rdma_cm (the QP is attached with ibv_attach_mcast), one side sends 20
# datagrams to the group (QPN 0xFFFFFF) and the other must receive all
# of them.  Each guest takes a turn as the receiver.
# boots: pair pair-rxe
# tags: verbs
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set), pair_ready (read) by pair_run
source "$(dirname "$0")/../lib.sh"
require_pair

count=20
ktap_plan 2
# The receiver is ready once it has joined (mckey prints it; line
# buffered so that it shows while mckey runs).  The sender waits 3 s
# after its own join before sending.
pair_ready="mckey: joined dgid"
# The sender's own count of packets it put on the wire: a device that
# completes a send it never transmitted (rxe does, on 6.12, when its AH
# vanishes) is caught on its own side.  A vrnic sender that does is a
# failure; an rxe one is rxe's bug, and both guests skip that round.
case $VRNIC_IBDEV in
rxe*) sent=sent_pkts ;;
*) sent=tx_packets ;;
esac
for receiver in 0 1; do
	group=239.1.2.$((10 + receiver))
	tx0=$(hw_counter $sent)
	pair_run "mcast-$receiver" "$receiver" 90 \
		"stdbuf -oL mckey -m $group -b \$VRNIC_IP -C $count" \
		"mckey -m $group -b \$VRNIC_IP -s -C $count"
	rc=$?
	# The sender tells the receiver what its device put on the wire.
	shared=$VRNIC_RUN_DIR/pair/mcast-$receiver.tx
	[[ $pair_role == server ]] || echo "$(($(hw_counter $sent) - tx0)) $VRNIC_IBDEV" >"$shared"
	pair_sync "mcast-$receiver.tx" 60
	read -r tx sender <"$shared" || tx=
	# An rxe sender that completed sends it never transmitted (rxe on
	# 6.12, see the user guide's known problems of the peers) is rxe's
	# failure, not the receiver's: both sides skip and say so.
	rxe_lost=
	[[ $sender == rxe* && -n $tx ]] && ((tx < count)) &&
		rxe_lost="the rxe sender put $tx of $count datagrams on the wire (rxe drops its AH; user guide)"
	if [[ $pair_role == server ]]; then
		if [[ $rc != 0 && -n $rxe_lost ]]; then
			ktap_skip "mckey -C $count to $group: vm$receiver received every datagram" "$rxe_lost"
			continue
		fi
		[[ $rc == 0 ]] && grep -q "data transfers complete" "$pair_out" &&
			grep -q "joined dgid: ::ffff:$group" "$pair_out"
		ktap_check "mckey -C $count to $group: vm$receiver received every datagram" $? \
			"exit $rc: $(tail -n 6 "$pair_out")"
	elif [[ $rc == 0 && -n $rxe_lost ]]; then
		ktap_skip "mckey -s -C $count to $group: vm$VRNIC_VM sent, and $VRNIC_IBDEV put them on the wire" \
			"$rxe_lost"
	else
		[[ $rc == 0 ]] && grep -q "test complete" "$pair_out" && ((tx >= count))
		ktap_check "mckey -s -C $count to $group: vm$VRNIC_VM sent, and $VRNIC_IBDEV put them on the wire" \
			$? "exit $rc, $sent went up by $tx: $(tail -n 6 "$pair_out")" "$(dmesg | tail -n 5)"
	fi
done
pair_ready=
ktap_finish
