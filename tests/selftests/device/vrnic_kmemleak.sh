#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A kmemleak scan after the other tests (on a kernel with kmemleak: the
# debug kernel of 'make debug-kernel', scripts/vm-run --kernel debug).
# Fails on any unreferenced object allocated by vrnic or by the RDMA core
# on its behalf; other reports are listed, not judged.
# boots: one
# tags: lifecycle
# order: 99
source "$(dirname "$0")/../lib.sh"
require_vm

kml=/sys/kernel/debug/kmemleak
if [[ ! -e $kml ]]; then
	echo "TAP version 13"
	echo "1..0 # SKIP this kernel has no kmemleak (scripts/vm-run --kernel debug has)"
	exit 4
fi
ktap_plan 1

# Two scans: an object is reported once it stayed unreferenced through both.
echo scan >"$kml"
sleep 5
echo scan >"$kml"
report=$(cat "$kml")
total=$(grep -c "^unreferenced object" <<<"$report")
# One block per object: its header line and its backtrace.
ours=$(awk '/^unreferenced object/ { if (blk ~ /vrnic|ib_uverbs|ib_core|rdma_|uverbs|ib_umem/) print blk; blk = "" }
	{ blk = blk $0 "\n" }
	END { if (blk ~ /vrnic|ib_uverbs|ib_core|rdma_|uverbs|ib_umem/) print blk }' <<<"$report")
[[ -z $ours ]]
ktap_check "no leak from vrnic or the RDMA core ($total unreferenced objects in all)" $? \
	"$(head -n 60 <<<"$ours")"
[[ $total -gt 0 ]] && ktap_diag "other reports: $(grep -A6 "^unreferenced object" <<<"$report" | head -n 40)"
ktap_finish
