#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# vrnic.ko unloads and loads cleanly, ten times in a row, and an open user
# context with live verbs objects does not block unloading: its owner gets
# IBV_EVENT_DEVICE_FATAL and can still destroy them and close it.  Leaves
# the device loaded and ACTIVE.
source "$(dirname "$0")/lib.sh"
require_vm

ktap_plan 8

uctx=$VRNIC_BUILD/tests/selftests/vrnic_uctx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

device_up() {
	[[ -e /sys/class/infiniband/$VRNIC_IBDEV ]] &&
		[[ $(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/state" 2>/dev/null) == "4: ACTIVE" ]]
}

ensure_loaded() {
	[[ -e /sys/module/vrnic ]] || insmod "$VRNIC_MODULE"
	retry 100 0.2 device_up
}

mark=$(dmesg_mark)
cycles=0
err=
for i in $(seq 10); do
	if ! timeout 60 rmmod vrnic; then
		err="rmmod $i failed"
		break
	fi
	if [[ -e /sys/class/infiniband/$VRNIC_IBDEV ]]; then
		err="$VRNIC_IBDEV still there after rmmod $i"
		break
	fi
	if ! insmod "$VRNIC_MODULE"; then
		err="insmod $i failed"
		break
	fi
	if ! retry 100 0.2 device_up; then
		err="$VRNIC_IBDEV not ACTIVE after insmod $i"
		break
	fi
	cycles=$i
done
((cycles == 10))
ktap_check "10 rmmod/insmod cycles" $? "$err"
trouble=$(dmesg_since "$mark" | kernel_trouble)
[[ -z $trouble ]]
ktap_check "no warning, oops or leak report in dmesg" $? "$trouble"
n=$(dmesg_since "$mark" | grep -c "vrnic0: vrnic .*completion vectors")
((n == 10))
ktap_check "the device came up after every insmod" $? "probe messages: $n"

ensure_loaded
mark=$(dmesg_mark)
"$uctx" "$VRNIC_IBDEV" --hold >"$tmp/hold" 2>&1 &
holder=$!
retry 100 0.1 grep -q ready "$tmp/hold"
ktap_check "a process holds a user context with a PD, MR, CQ, SRQ and QP open" $? "$(cat "$tmp/hold")"

timeout 60 rmmod vrnic
ktap_check "rmmod with the context open does not block" $?
retry 100 0.1 grep -q "event IBV_EVENT_DEVICE_FATAL" "$tmp/hold"
ktap_check "the context's owner gets IBV_EVENT_DEVICE_FATAL" $? "$(cat "$tmp/hold")"
wait "$holder"
status=$?
[[ $status == 0 ]] && grep -q "destroyed: qp 0 srq 0 cq 0 mr 0 pd 0" "$tmp/hold" && grep -q closed "$tmp/hold"
ktap_check "the owner destroys its objects and closes the dead context cleanly" $? "exit $status: $(cat "$tmp/hold")"

ensure_loaded
ok=$?
trouble=$(dmesg_since "$mark" | kernel_trouble)
[[ $ok == 0 && -z $trouble ]]
ktap_check "the device is back and dmesg is clean" $? "$trouble"

ktap_finish
