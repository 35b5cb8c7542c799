#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A hostile guest user (vrnic_hostile, run as nobody) attacks the device
# through its own mapped rings and doorbell records: malformed and random
# WQEs, a runaway producer, one CQ resized from four threads, a CQ overrun
# (and CQs overrun while being destroyed),
# a UD flood.  Meanwhile a well-behaved process moves 64 MiB at a time
# through the same device and checks every byte.  The device must stay
# READY and serve the good process intact, every bad WQE must complete with
# an error and a vendor error, the refusals must be counted, vrnicd's own
# memory must stay bounded, and dmesg clean.
# Each step is bounded, and one that overruns is reported with where its
# processes wait (wait_bounded), rather than left to the runner's timeout.
# boots: one
# timeout: 420
# tags: device slow
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 7

hostile=$VRNIC_BUILD/tests/selftests/vrnic_hostile
xfer=$VRNIC_BUILD/tests/selftests/vrnic_xfer
seconds=${VRNIC_HOSTILE_SECONDS:-20}
# vrnicd's heap may grow this much under attack, no more.
rss_bound_kib=$((64 * 1024))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
counters=(rx_key_errors rx_addr_errors rx_invalid_requests rx_no_buffer rx_dropped tx_acks_dropped)

# RDMA is for every user, as rdma-core's udev rules make it.
chmod 0666 /dev/infiniband/uverbs*
rss() { host_request rss 0 | awk '{ print $2 }'; }
declare -A before
for c in "${counters[@]}"; do before[$c]=$(hw_counter "$c"); done
rss0=$(rss)
mark=$(dmesg_mark)

(
	ulimit -l $((256 * 1024))
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$hostile" "$VRNIC_IBDEV" "$VRNIC_GID_INDEX" "$seconds"
) >"$tmp/hostile" 2>&1 &
hpid=$!

# The good process: 64 MiB verified transfers, round after round, until the
# attack is over (and at least one).  The attack lasts about $seconds s; a
# round starts no later than a minute after that.
port=19500
rounds=0
good=0
rss_max=$rss0
last_start=$((SECONDS + seconds + 60))
while ((rounds == 0)) || { kill -0 "$hpid" 2>/dev/null && ((SECONDS < last_start)); }; do
	port=$((port + 1))
	# Both ends bounded: a server whose client never came must not hold
	# the loop (and the test) forever.
	timeout 120 "$xfer" -d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p "$port" -b 64M -s 4M \
		>"$tmp/srv" 2>&1 &
	srv=$!
	# The attack loads the guest: give the server up to 60 s to listen.
	retry 600 0.1 bash -c "ss -ltn | grep -q ':$port '"
	"$xfer" -d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p "$port" -b 64M -s 4M \
		"$VRNIC_IP" >"$tmp/cli" 2>&1 &
	# Past 100 s: where the client, its server and the attacker wait.
	wait_bounded 100 $! "$srv" "$hpid" >>"$tmp/cli" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	rounds=$((rounds + 1))
	if [[ $crc == 0 && $src == 0 ]] && grep -q "^verified" "$tmp/cli"; then
		good=$((good + 1))
	else
		cp "$tmp/cli" "$tmp/cli.bad"
		cp "$tmp/srv" "$tmp/srv.bad"
	fi
	r=$(rss)
	[[ -n $r ]] && ((r > rss_max)) && rss_max=$r
done
# The attacker has had its time, and a little more: past that, where it
# waits (its output so far is in $tmp/hostile, line by line).
grace=$((last_start + 30 - SECONDS))
wait_bounded $((grace > 10 ? grace : 10)) "$hpid" >"$tmp/hwhere" 2>&1
hrc=$?
ktap_diag "$(cat "$tmp/hostile")"
grep -q "running as uid 65534 " "$tmp/hostile"
ktap_check "the attacker ran as an unprivileged user (nobody)" $?
[[ $hrc == 0 ]]
ktap_check "every malformed WQE completed with an error status and a vendor error; the runaway producer, the CQ overrun and the resized CQ behaved" \
	$? "exit $hrc" "$(cat "$tmp/hwhere")"
((good == rounds))
ktap_check "the well-behaved process moved $rounds x 64 MiB, every byte verified ($good good)" $? \
	"$(cat "$tmp/cli.bad" "$tmp/srv.bad" 2>/dev/null | tail -n 6)"
[[ $(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/state") == "4: ACTIVE" ]] &&
	! dmesg_since "$mark" | grep -q "device is dead"
ktap_check "the device stayed READY and its port ACTIVE" $? "$(dmesg_since "$mark" | tail -n 5)"
refused=""
for c in "${counters[@]}"; do
	refused+=" $c +$(($(hw_counter "$c") - before[$c]))"
done
(($(hw_counter rx_key_errors) > before[rx_key_errors] && $(hw_counter rx_no_buffer) > before[rx_no_buffer]))
ktap_check "the refusals were counted:$refused" $?
# Figures, or the host did not answer: that fails too.
[[ $rss0 =~ ^[0-9]+$ && $rss_max =~ ^[0-9]+$ ]] && ((rss_max - rss0 <= rss_bound_kib))
ktap_check "vrnicd's heap stayed bounded: ${rss0} KiB before, at most ${rss_max} KiB (bound +${rss_bound_kib} KiB)" $?
trouble=$(dmesg_since "$mark" | kernel_trouble)
[[ -z $trouble ]]
ktap_check "no warning, oops or leak report in dmesg" $? "$trouble"
ktap_finish
