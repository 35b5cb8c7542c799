#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma_cm between the two guests: connection setup runs through the GSI QP
# (QP1) of each port (ib_mad, ib_cm, rdma_cm in the kernel), data through
# the QPs rdma_cm made.  rping with data validation, ucmatose (RC),
# udaddy (UD, via SIDR), rdma_server/rdma_client, and perftest with -R.
# perftest -R connects twice (its exchange QP, then the test QP) and its
# client can be rejected (status 8: no listener) while the server sets up
# the second listener; the client then crashes.  pair_run starts both
# sides again when that happens.
# Against an rxe peer each runs in both directions.
# boots: pair pair-rxe
# tags: tools stack
# order: 20
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers=(0 1)

# name | server command | client command | what the client's output shows
cases=(
	"rping -C 100 -V|rping -s -a \$VRNIC_IP -p 7174 -C 100 -V -v|rping -c -a \$VRNIC_PEER_IP -p 7174 -C 100 -V -v|ping data: rdma-ping-99"
	"ucmatose|ucmatose -b \$VRNIC_IP -C 100|ucmatose -s \$VRNIC_PEER_IP -C 100|test complete"
	"udaddy|udaddy -b \$VRNIC_IP -C 100|udaddy -s \$VRNIC_PEER_IP -C 100|test complete"
	"rdma_server/rdma_client|rdma_server -s \$VRNIC_IP -p 7471|rdma_client -s \$VRNIC_PEER_IP -p 7471|rdma_client: end 0"
	"ib_write_bw -R|ib_write_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19501 -F|ib_write_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19501 -F \$VRNIC_PEER_IP|^ 65536 +300 "
	"ib_read_bw -R|ib_read_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19502 -F|ib_read_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19502 -F \$VRNIC_PEER_IP|^ 65536 +300 "
	"ib_send_bw -R|ib_send_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19503 -F|ib_send_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19503 -F \$VRNIC_PEER_IP|^ 65536 +300 "
	"ib_atomic_bw -R|ib_atomic_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19504 -F|ib_atomic_bw -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19504 -F \$VRNIC_PEER_IP|^ 8 +300 "
	"ib_send_lat -R|ib_send_lat -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19505 -F|ib_send_lat -R -n 300 -d \$VRNIC_IBDEV -x \$VRNIC_GID_INDEX -p 19505 -F \$VRNIC_PEER_IP|^ 2 +300 "
)
select_cases cases
ktap_plan $((${#cases[@]} * ${#servers[@]}))

# For a failure's diagnostics.
port_counters() {
	local d=/sys/class/infiniband/$VRNIC_IBDEV/ports/1/hw_counters
	[[ -d $d ]] && (cd "$d" && grep -H . -- * 2>/dev/null | tr '\n' ' ')
	rdma res show qp 2>/dev/null | tr '\n' ';'
}

for server in "${servers[@]}"; do
	i=0
	for c in "${cases[@]}"; do
		i=$((i + 1))
		IFS='|' read -r name scmd ccmd want <<<"$c"
		pair_run "cm-$server-$i" "$server" 120 "$scmd" "$ccmd"
		rc=$?
		if [[ $name == rping* ]] && rping_teardown_race "$rc" "$pair_out"; then
			ktap_diag "rping exited 255 in its own teardown race, after the run (rping_teardown_race): counted as 0"
			rc=0
		fi
		if [[ $pair_role == server ]]; then
			# Servers that serve one client and exit must succeed;
			# rping -s, ucmatose and udaddy do.
			[[ $rc == 0 ]]
			ktap_check "$name, server vm$server (server)" $? "exit $rc: $(tail -n 6 "$pair_out")" \
				"$(port_counters)"
		else
			ok=1
			[[ $rc == 0 ]] && grep -Eq -- "$want" "$pair_out" && ok=0
			# rping's stdout is buffered and its stderr is not: an
			# error line sits above a hundred lines of ping data.
			ktap_check "$name, server vm$server (client): $(grep -E -m1 -- "$want" "$pair_out")" "$ok" \
				"exit $rc: $(grep -Ev '^(server )?ping data: ' "$pair_out" | tail -n 8)" \
				"last line: $(tail -n 1 "$pair_out")" "$(port_counters)"
		fi
	done
done
ktap_finish
