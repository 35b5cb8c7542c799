#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# RoCEv2 over the cable scripts/vm-run --cable made: a UDP tunnel between
# two vrnicds (--wire udp:), or a Linux bridge in a network namespace with
# each vrnicd on a TAP (--wire tap:) and, with three guests, an rxe guest's
# QEMU NIC on the same bridge.  vrnicctl says which link the vrnicds are
# on; then ping, rping with data validation and ib_write_bw run between
# each pair (with three guests: vm0 with vm1, then vm0 with the rxe guest
# vm2), each side serving in turn.
# boots: pair-udp bridge
# tags: wire
# timeout: 900
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

guests=${VRNIC_GUESTS:-2}
# The rounds this guest takes part in: its partner in each.
if [[ $VRNIC_VM == 0 ]]; then
	partners=(1)
	((guests == 3)) && partners=(1 2)
else
	partners=(0)
fi
ktap_plan $((1 + 5 * ${#partners[@]}))

case $VRNIC_CABLE in
udp) want='^udp:127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+$' ;;
bridge) want='^tap:vrtap[01]$' ;;
*) want='^unix$' ;;
esac
# Each vrnic guest asks about its own vrnicd; the rxe guest about vm0's.
ctl_vm=$VRNIC_VM
[[ $VRNIC_ROLE == rxe ]] && ctl_vm=0
link=$(host_request vrnicctl "$ctl_vm" status --json |
	jq -r '.wire.link + " " + (.wire.connected | tostring)')
ok=1
[[ ${link% *} =~ $want && ${link#* } == true ]] && ok=0
ktap_check "cable $VRNIC_CABLE: vm$ctl_vm's vrnicd is on ${link% *}" "$ok" "$link"

# One round: ping, then rping -V and ib_write_bw with each side serving.
round() { # partner
	local p=$1 k server port rc ok row f again attempt args race
	# k: the pair's guest other than vm0, which names the round on both sides.
	k=$((p == 0 ? VRNIC_VM : p))
	# shellcheck disable=SC2034 # pair_sync and pair_run (lib.sh) read it
	pair_peer=$p
	VRNIC_PEER_IP=10.99.0.$((p + 1))
	pair_sync "wire-$k.start" 900 || true
	out=$(ping -c 3 -i 0.3 -W 5 "$VRNIC_PEER_IP" 2>&1)
	ok=1
	[[ $out == *" 0% packet loss"* ]] && ok=0
	ktap_check "ping vm$p ($VRNIC_PEER_IP) across the $VRNIC_CABLE cable" "$ok" "$out"
	port=$((7300 + 10 * k))
	for server in 0 "$k"; do
		port=$((port + 1))
		pair_run "wire-rping-$k-$server" "$server" 120 \
			"rping -s -a \$VRNIC_IP -p $port -C 50 -S 4096 -V" \
			"rping -c -a $VRNIC_PEER_IP -p $port -C 50 -S 4096 -V -v"
		rc=$?
		ok=1 race=
		((rc != 0)) && rping_teardown_race "$rc" "$pair_out" && race=1
		if [[ $rc == 0 || -n $race ]]; then
			[[ $pair_role == server ]] && ok=0
			# The client printed the 50th ping, -V having checked each.
			grep -q "ping data: rdma-ping-49" "$pair_out" && ok=0
		fi
		[[ -n $race ]] && ktap_diag "rping exited 255 in its own teardown race, after the run (rping_teardown_race)"
		ktap_check "rping -V -C 50 -S 4096 with vm$p, server vm$server ($pair_role)" "$ok" \
			"exit $rc: $(tail -n 6 "$pair_out")"

		port=$((port + 1))
		# Every iteration done but 0.00 measured: perftest's clock under
		# TCG (perftest_zero_figure in lib.sh); the client says so and
		# both sides run it once more, 5 ports up.
		again=$VRNIC_RUN_DIR/pair/wire-bw-$k-$server.again
		for attempt in 1 2; do
			args="ib_write_bw -d $VRNIC_IBDEV -x $VRNIC_GID_INDEX -p $((port + 5 * (attempt - 1))) -F -s 65536 -n 300"
			pair_run "wire-bw-$k-$server" "$server" 180 "$args" "$args $VRNIC_PEER_IP"
			rc=$?
			row=$(awk '/#bytes/ { getline; print; exit }' "$pair_out")
			[[ $pair_role == client && $attempt == 1 ]] && perftest_zero_figure "$rc" "$row" && : >"$again"
			pair_sync "wire-bw-$k-$server.verdict" 60
			[[ $attempt == 1 && -e $again ]] || break
			echo "# ib_write_bw with vm$p, server vm$server: every iteration completed but perftest measured 0.00; once more"
		done
		read -r -a f <<<"$row"
		ok=1
		[[ $rc == 0 && ${#f[@]} -ge 4 ]] && awk -v v="${f[3]}" 'BEGIN { exit !(v + 0 > 0) }' && ok=0
		ktap_check "ib_write_bw 64 KiB with vm$p, server vm$server ($pair_role): $row" "$ok" \
			"exit $rc: $(tail -n 8 "$pair_out")"
	done
}

for p in "${partners[@]}"; do
	# With three guests, the one not in this round waits at the end.
	round "$p"
done
((guests == 3)) && all_sync wire.done 900
ktap_finish
