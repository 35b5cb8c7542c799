#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Object numbers under churn: three processes at once each create and
# destroy a PD, MR, CQ, SRQ and QP, 200 times (vrnic_uctx --churn).  The
# device hands a freed CQ, QP or SRQ number out again at once; before
# vrnic.ko kept a DESTROY and the removal of its table entry together, a
# CREATE could get that number while the entry was still there, and
# failed with EBUSY (UCX's ibv_create_cq, server and client in one guest).
# boots: one
# tags: verbs
source "$(dirname "$0")/../lib.sh"
require_vm

procs=3 rounds=${VRNIC_CHURN_ROUNDS:-200}
ktap_plan $((procs + 2))
mark=$(dmesg_mark)
before=$(hw_counter objects_cq) tmp=$(mktemp -d)
for ((p = 0; p < procs; p++)); do
	"$VRNIC_BUILD/tests/selftests/vrnic_uctx" "$VRNIC_IBDEV" --churn "$rounds" >"$tmp/$p" 2>&1 &
done
wait
for ((p = 0; p < procs; p++)); do
	grep -qx "churned $rounds" "$tmp/$p"
	rc=$?
	ktap_check "process $p: $(head -n 1 "$tmp/$p")" "$rc" "$(cat "$tmp/$p")"
done
after=$(hw_counter objects_cq)
[[ $after == "$before" ]]
ktap_check "the device's CQs are back where they were ($before, now $after)" $?
rm -rf "$tmp"
no_kernel_warnings "$mark" "churn"
ktap_finish
