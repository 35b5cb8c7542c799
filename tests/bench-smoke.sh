#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make bench, with few iterations: every row of the table must have a
# figure for both devices and a ratio, every sweep its 23 sizes, the plot
# must be drawn and the physical limits printed.  That includes the
# two-guest boots (vrnic to vrnic, rxe to rxe): their rows are perftest's,
# fio over NVMe-oF, UCX and qperf.
# --one-guest leaves those out (some three minutes less).  The figures
# themselves are not judged: performance comes from a real 'make bench',
# never from a test.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tests/selftests/lib.sh
build=${VRNIC_BUILD:-$PWD/build}

rows=(
	"ib_write_bw-64KiB bw_MBps" "ib_send_lat-2B typical_usec" "ib_send_lat-2B p99_usec"
	"ib_write_lat-2B typical_usec" "ib_write_lat-2B p99_usec" "ib_read_lat-2B typical_usec"
	"ib_read_lat-2B p99_usec" "ibv_rc_pingpong-2B usec_per_iter" "ibv_rc_pingpong-e-2B usec_per_iter"
)
sweeps=(ib_write_bw-a ib_write_lat-a)
opts=(--quick --one-guest)
if [[ ${1:-} != --one-guest ]]; then
	rows+=("2-guest:ib_write_bw-64KiB bw_MBps"
		"2-guest:ib_send_lat-2B typical_usec" "2-guest:ib_send_lat-2B p99_usec"
		"2-guest:nvmeof-randread-4k iops" "2-guest:nvmeof-read-128k MBps"
		"2-guest:ucx-tag_lat-8B typical_usec" "2-guest:ucx-tag_bw-64KiB MBps"
		"2-guest:qperf-rc_lat latency_usec")
	sweeps+=(2-guest:ib_write_bw-a 2-guest:ib_write_lat-a)
	opts=(--quick)
fi
num='^[0-9]+([.][0-9]+)?$'
ktap_plan $((${#rows[@]} + 2 + ${#sweeps[@]} + 2))
out=$(scripts/bench "${opts[@]}" 2>&1)
rc=$?
[[ $rc == 0 ]]
ktap_check "scripts/bench ${opts[*]} exits 0" $? "$(tail -n 8 <<<"$out")"
# The table says which stack its figures came from.
head=$(head -n 1 "$build/bench/results.txt" 2>/dev/null)
[[ $head =~ QEMU\ [0-9]+\.[0-9.]+\ (TCG|KVM),\ guest\ Linux\ $(KVER='' scripts/kver),\ rdma-core\ [0-9]+\.[0-9]+ ]]
ktap_check "the table names its stack: ${head#*cores, }" $? "$head"
for r in "${rows[@]}"; do
	read -r test metric <<<"$r"
	line=$(awk -v t="$test" -v m="$metric" '$1 == t && $2 == m' "$build/bench/results.txt")
	read -r _ _ v x ratio _ <<<"$line"
	[[ $v =~ $num && $x =~ $num && ${ratio%x} =~ $num ]] &&
		awk -v a="$v" -v b="$x" 'BEGIN { exit !(a > 0 && b > 0) }'
	ktap_check "row $test $metric: ${line:-missing}" $?
done
# The sweeps: perftest -a's sizes, 2 B to 8 MiB, for vrnic and for rxe.
for s in "${sweeps[@]}"; do
	nv=$(awk -v t="$s" '$2 == t && $3 !~ /^rxe/ && $5 ~ /^[0-9]+([.][0-9]+)?$/' "$build/bench/sweeps.txt" 2>/dev/null | wc -l)
	nr=$(awk -v t="$s" '$2 == t && $3 ~ /^rxe/ && $5 ~ /^[0-9]+([.][0-9]+)?$/' "$build/bench/sweeps.txt" 2>/dev/null | wc -l)
	ok=1
	((nv == 23 && nr == 23)) && ok=0
	ktap_check "sweep $s: $nv sizes for vrnic, $nr for rxe (want 23 each, 2 B to 8 MiB)" "$ok"
done
ok=1
[[ -s $build/bench/bench.svg && -s $build/bench/bench.png ]] &&
	grep -q "<svg" "$build/bench/bench.svg" && file "$build/bench/bench.png" | grep -q "PNG image" && ok=0
ktap_check "the plot: build/bench/bench.svg and bench.png" "$ok"
# The physical limits: host memcpy and the engine alone, and the guest's
# bandwidth as a share of them.
limits=$(cat "$build/bench/limits.txt" 2>/dev/null)
grep -Eq '^host memcpy 64 KiB +[0-9]+\.[0-9] +[0-9]+$' <<<"$limits" &&
	grep -Eq '^ib_write_bw-64KiB, vrnic: [0-9.]+ MB/s, [0-9.]+% of the engine alone \(loopback\), [0-9.]+% of host memcpy$' <<<"$limits"
ktap_check "the physical limits and the guest's share of them" $? "$limits"
ktap_finish
