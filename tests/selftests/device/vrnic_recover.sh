#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Device death and recovery.  The host stops vrnicd's heartbeat (SIGSTOP),
# stalls its admin queue (SIGUSR1) and kills it outright (SIGKILL) in the
# middle of traffic (a killed vrnicd's death is reported to the driver by
# its keeper).  Each time every application must hear
# IBV_EVENT_DEVICE_FATAL within 10 s, a thread asleep in ibv_get_cq_event()
# must wake, and nothing may hang.  Then the device must come back without
# a reboot: by itself once vrnicd answers a reset again (a new vrnicd takes
# the device over from its keeper), or through rmmod and insmod; every
# time a verified transfer runs after.  A device the admin unbinds while
# its reprobe is queued stays unbound, and unloading the module then is
# safe.  dmesg stays free of warnings.
# boots: one
# tags: lifecycle
# order: 90
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 18

xfer=$VRNIC_BUILD/tests/selftests/vrnic_xfer
uctx=$VRNIC_BUILD/tests/selftests/vrnic_uctx
tmp=$(mktemp -d)
holders=()
trap 'kill "${holders[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
mark_all=$(dmesg_mark)
port=19300

device_up() {
	[[ $(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/state" 2>/dev/null) == "4: ACTIVE" ]]
}

listening() { ss -ltn | grep -q ":$1 "; }
traffic_above() { (($(hw_counter tx_packets) > $1)); }

# start_xfer NAME BYTES: a loopback vrnic_xfer, server and client.
start_xfer() {
	port=$((port + 1))
	"$xfer" -d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p "$port" -b "$2" >"$tmp/$1.srv" 2>&1 &
	xfer_srv=$!
	retry 100 0.1 listening "$port"
	"$xfer" -d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p "$port" -b "$2" "$VRNIC_IP" \
		>"$tmp/$1.cli" 2>&1 &
	xfer_cli=$!
}

# verified_transfer NAME: 8 MiB through the device, every byte checked.
verified_transfer() {
	start_xfer "$1" 8M
	timeout 300 tail --pid="$xfer_cli" -f /dev/null
	wait "$xfer_cli"
	local crc=$?
	wait "$xfer_srv"
	local src=$?
	[[ $crc == 0 && $src == 0 ]] && grep -q "^verified" "$tmp/$1.cli"
}

# start_holder NAME: a process with live verbs objects and a sleeping CQ
# waiter (vrnic_uctx --hold).
start_holder() {
	"$uctx" "$VRNIC_IBDEV" --hold >"$tmp/$1" 2>&1 &
	holders+=($!)
	retry 100 0.1 grep -q ready "$tmp/$1"
}

# heard_fatal NAME T0: the holder heard DEVICE_FATAL and its CQ waiter
# woke, within 10 s of T0 (guest seconds); sets fatal_s.
heard_fatal() {
	local i
	for ((i = 0; i < 150; i++)); do
		grep -q "event IBV_EVENT_DEVICE_FATAL" "$tmp/$1" && grep -q "cq wait returned" "$tmp/$1" &&
			grep -q closed "$tmp/$1" && break
		nap 0.1
	done
	fatal_s=$((SECONDS - $2))
	grep -q closed "$tmp/$1" && ((fatal_s <= 10))
}

# came_back T0: probed again since $mark and ACTIVE; sets back_s.
reprobed() { dmesg_since "$mark" | grep -q "$VRNIC_IBDEV: vrnic .* completion vectors" && device_up; }
came_back() {
	retry 600 0.1 reprobed
	local rc=$?
	back_s=$((SECONDS - $1))
	return $rc
}

# 1. The heartbeat stops for 12 s.
start_holder hb
mark=$(dmesg_mark)
t0=$SECONDS
host_request stop-vrnicd 0 12 >/dev/null
heard_fatal hb "$t0"
ktap_check "heartbeat stopped: DEVICE_FATAL after ${fatal_s}s, the blocked CQ wait returned" $? \
	"$(cat "$tmp/hb"; dmesg_since "$mark" | tail -n 5)"
came_back "$t0"
rc=$?
dmesg_since "$mark" | grep -q "heartbeat stopped" && dmesg_since "$mark" | grep -q "device reset; probing it again"
ktap_check "vrnicd resumed: the driver reset the device and probed it again (ACTIVE after ${back_s}s)" \
	$((rc | $?)) "$(dmesg_since "$mark" | tail -n 8)"
verified_transfer hb
ktap_check "a verified transfer after the heartbeat came back" $? "$(tail -n 3 "$tmp/hb.cli" "$tmp/hb.srv")"

# 2. The admin queue stalls: the next command times out.
start_holder cmd
mark=$(dmesg_mark)
host_request stall-vrnicd 0 >/dev/null
t0=$SECONDS
# Hardware counters are read with QUERY_STATS: this command waits in vain.
timeout 30 rdma statistic show link "$VRNIC_IBDEV/1" >/dev/null 2>&1
rc=$?
cmd_s=$((SECONDS - t0))
[[ $rc != 124 ]] && ((cmd_s <= 12))
ktap_check "a command to a stalled device returns (after ${cmd_s}s, exit $rc)" $?
heard_fatal cmd "$t0"
ktap_check "command timeout: DEVICE_FATAL after ${fatal_s}s, the blocked CQ wait returned" $? \
	"$(cat "$tmp/cmd"; dmesg_since "$mark" | tail -n 5)"
came_back "$t0"
rc=$?
dmesg_since "$mark" | grep -q "admin command .* timed out" &&
	dmesg_since "$mark" | grep -q "device reset; probing it again"
ktap_check "the reset ended the stall and the device came back (ACTIVE after ${back_s}s)" \
	$((rc | $?)) "$(dmesg_since "$mark" | tail -n 8)"
verified_transfer cmd
ktap_check "a verified transfer after the command timeout" $? "$(tail -n 3 "$tmp/cmd.cli" "$tmp/cmd.srv")"

# 3. vrnicd is killed in the middle of a transfer; a new one takes over.
kill_mid_transfer() { # NAME
	start_holder "$1"
	start_xfer "$1-x" 64G
	# Kill once the data is flowing, not after a guessed time.
	retry 300 0.1 traffic_above $(($(hw_counter tx_packets) + 500))
	mark=$(dmesg_mark)
	t0=$SECONDS
	host_request kill-vrnicd 0 >/dev/null
	heard_fatal "$1" "$t0"
	local held=$?
	local i
	for ((i = 0; i < 150; i++)); do
		kill -0 "$xfer_cli" 2>/dev/null || kill -0 "$xfer_srv" 2>/dev/null || break
		nap 0.1
	done
	apps_s=$((SECONDS - t0))
	wait "$xfer_cli"
	local crc=$?
	wait "$xfer_srv"
	local src=$?
	# Both ends of the transfer stop on DEVICE_FATAL (exit 4), or the
	# server on its client's going (exit 1).  The driver heard of the
	# death from the device (its keeper), not from a missing heartbeat.
	[[ $held == 0 && $crc == 4 && ($src == 4 || $src == 1) ]] && ((apps_s <= 10)) &&
		dmesg_since "$mark" | grep -q "device is dead: the device process died"
}
kill_mid_transfer kill1
ktap_check "killed mid-transfer: every application out within ${apps_s}s (holder ${fatal_s}s)" $? \
	"$(cat "$tmp/kill1"; tail -n 2 "$tmp/kill1-x.cli" "$tmp/kill1-x.srv")" \
	"$(dmesg_since "$mark" | grep 'device is dead' | tail -n 2)"
timeout 20 ibv_devinfo -d "$VRNIC_IBDEV" >/dev/null 2>&1
rc=$?
[[ $rc != 124 ]]
ktap_check "verbs on the dead device return (ibv_devinfo exit $rc)" $?
t0=$SECONDS
host_request restart-vrnicd 0 >/dev/null
came_back "$t0"
ktap_check "a new vrnicd took the device over: reset, probed again, ACTIVE after ${back_s}s" $? \
	"$(dmesg_since "$mark" | tail -n 8)"
verified_transfer kill1
ktap_check "a verified transfer on the new vrnicd" $? "$(tail -n 3 "$tmp/kill1.cli" "$tmp/kill1.srv")"

# 4. Killed again, and this time the driver is unloaded while it is dead.
kill_mid_transfer kill2
ktap_check "killed again: every application out within ${apps_s}s (holder ${fatal_s}s)" $? \
	"$(cat "$tmp/kill2"; tail -n 2 "$tmp/kill2-x.cli" "$tmp/kill2-x.srv")" \
	"$(dmesg_since "$mark" | grep 'device is dead' | tail -n 2)"
timeout 60 rmmod vrnic
rc=$?
dmesg_since "$mark" | grep -q "never confirmed a reset: keeping"
ktap_check "rmmod of the dead device works, and keeps the memory it may still use (exit $rc)" \
	$((rc | $?)) "$(dmesg_since "$mark" | tail -n 6)"
host_request restart-vrnicd 0 >/dev/null
t0=$SECONDS
insmod "$VRNIC_MODULE"
came_back "$t0"
rc=$?
verified_transfer kill2
ktap_check "after insmod the device is back (ACTIVE after ${back_s}s) and a transfer verifies" \
	$((rc | $?)) "$(tail -n 3 "$tmp/kill2.cli" "$tmp/kill2.srv")"

# 5. The admin unbinds the device while its recovery's reprobe waits in
# the queue (reprobe_delay_ms holds it there): it stays unbound, and binds
# again when the admin says so.
bdf=$(basename "$(readlink -f "/sys/class/infiniband/$VRNIC_IBDEV/device")")
echo 5000 >/sys/module/vrnic/parameters/reprobe_delay_ms
mark=$(dmesg_mark)
reset_seen() { dmesg_since "$mark" | grep -q "device reset; probing it again"; }
host_request stop-vrnicd 0 12 >/dev/null
retry 600 0.1 reset_seen
rc=$?
echo "$bdf" >/sys/bus/pci/drivers/vrnic/unbind
nap 8
[[ $rc == 0 && ! -e /sys/bus/pci/devices/$bdf/driver ]] &&
	dmesg_since "$mark" | grep -q "unbound while it recovered: left unbound"
ktap_check "unbound while its reprobe was queued: the device stays unbound" $? \
	"$(ls -l "/sys/bus/pci/devices/$bdf/driver" 2>&1; dmesg_since "$mark" | tail -n 8)"
echo 0 >/sys/module/vrnic/parameters/reprobe_delay_ms
mark=$(dmesg_mark)
t0=$SECONDS
echo "$bdf" >/sys/bus/pci/drivers/vrnic/bind
came_back "$t0"
rc=$?
verified_transfer unbind
ktap_check "bound again by the admin, the device is back (ACTIVE after ${back_s}s) and a transfer verifies" \
	$((rc | $?)) "$(tail -n 3 "$tmp/unbind.cli" "$tmp/unbind.srv")"

# 6. The module is unloaded while a reprobe waits: the reprobe never runs,
# and a fresh load finds the device.
echo 5000 >/sys/module/vrnic/parameters/reprobe_delay_ms
mark=$(dmesg_mark)
host_request stop-vrnicd 0 12 >/dev/null
retry 600 0.1 reset_seen
rc=$?
timeout 60 rmmod vrnic
rc=$((rc | $?))
nap 6
t0=$SECONDS
insmod "$VRNIC_MODULE"
came_back "$t0"
rc=$((rc | $?))
verified_transfer unload
ktap_check "unloaded while a reprobe waited: nothing ran after, and insmod brings the device back (ACTIVE after ${back_s}s)" \
	$((rc | $?)) "$(dmesg_since "$mark" | tail -n 8; tail -n 3 "$tmp/unload.cli")"

trouble=$(dmesg_since "$mark_all" | kernel_trouble)
[[ -z $trouble ]]
ktap_check "no warning, oops or leak report in dmesg" $? "$trouble"
ktap_finish
