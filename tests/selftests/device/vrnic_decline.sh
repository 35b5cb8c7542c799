#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# vrnic.ko claims only ivshmem functions that a live vrnicd serves.  With
# scripts/vm-run --decoys the guest also has a plain ivshmem device, one
# served by a foreign ivshmem server, and one whose BAR2 carries a stale
# vrnic signature with no vrnicd behind it.  The driver must decline all
# three with a clear message, bind the real one, and keep the guest healthy.
# boots: one
# tags: device
source "$(dirname "$0")/../lib.sh"
require_vm

if [[ -z ${VRNIC_DECOYS:-} ]]; then
	echo "TAP version 13"
	echo "1..0 # SKIP no decoy ivshmem devices in this VM (scripts/vm-run --decoys)"
	exit 4
fi

ktap_plan 7

mapfile -t fns < <(lspci -D -n -d 1af4:1110 | awk '{ print $1 }')
ktap_diag "ivshmem functions: ${fns[*]}"
((${#fns[@]} == 4))
ktap_check "four ivshmem functions present" $? "$(lspci -D -n -d 1af4:1110)"

bound=()
for f in "${fns[@]}"; do
	[[ -e /sys/bus/pci/drivers/vrnic/$f ]] && bound+=("$f")
done
((${#bound[@]} == 1))
ktap_check "vrnic.ko is bound to exactly one of them" $? "bound: ${bound[*]}"

log=$(dmesg)
n=$(grep -c "not a vrnic device" <<<"$log")
((n == 2))
ktap_check "the two devices without a signature were declined as 'not a vrnic device'" $? \
	"$(grep -E 'vrnic|ivshmem' <<<"$log" | tail -n 20)"
grep -q "device did not complete reset.*is vrnicd running" <<<"$log"
ktap_check "the device with no vrnicd behind it was declined: 'is vrnicd running?'" $? \
	"$(grep -E 'vrnic' <<<"$log" | tail -n 20)"

# Asking again gets the same answer, and nothing breaks.
mark=$(dmesg_mark)
rebind_ok=0
for f in "${fns[@]}"; do
	[[ $f == "${bound[0]}" ]] && continue
	if echo "$f" >/sys/bus/pci/drivers/vrnic/bind 2>/dev/null; then
		rebind_ok=1
		ktap_diag "binding $f succeeded"
	fi
done
((rebind_ok == 0))
ktap_check "binding a decoy by hand fails" $?
trouble=$(dmesg_since "$mark" | kernel_trouble)
[[ -z $trouble ]]
ktap_check "no kernel warnings from declining" $? "$trouble"

# The real device still works.
[[ $(ibv_devinfo -d "$VRNIC_IBDEV" | awk '$1 == "state:" { print $2 }') == PORT_ACTIVE ]]
ktap_check "$VRNIC_IBDEV is still PORT_ACTIVE" $?

ktap_finish
