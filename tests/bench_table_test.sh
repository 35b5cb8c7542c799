#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make bench's tables (scripts/lib/bench-table.sh) from made-up figures:
# a latency row's median of three runs, a run without a number left out,
# the ratio's direction, and the physical limits with each guest
# bandwidth's share of them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=scripts/lib/bench-table.sh
source scripts/lib/bench-table.sh
fail=0
check() { # NAME STATUS
	if [[ $2 == 0 ]]; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi
}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

bench_table >"$dir/table" <<'R'
ib_write_bw-64KiB bw_MBps vrnic0 400.5
ib_write_bw-64KiB bw_MBps rxe0 200.25
ib_send_lat-2B typical_usec vrnic0 30
ib_send_lat-2B typical_usec vrnic0 90
ib_send_lat-2B typical_usec vrnic0 20
ib_send_lat-2B typical_usec rxe0 40
ib_send_lat-2B typical_usec rxe0 inf
ib_send_lat-2B typical_usec rxe0 44
2-guest:ib_write_bw-64KiB bw_MBps vrnic 100
2-guest:ib_write_bw-64KiB bw_MBps rxe 50
2-guest:qperf-rc_lat latency_usec vrnic inf
R
row() { awk -v t="$1" -v m="$2" '$1 == t && $2 == m' "$dir/table"; }
read -r _ _ v r ratio word <<<"$(row ib_send_lat-2B typical_usec)"
[[ $v == 30 && $r == 42 && $ratio == 1.40x && $word == better ]]
check "a latency row shows the median of its runs (30 of 20, 30, 90; 42 of 40, 44 and an inf): $v $r $ratio $word" $?
read -r _ _ v r ratio word <<<"$(row ib_write_bw-64KiB bw_MBps)"
[[ $v == 400.5 && $r == 200.25 && $ratio == 2.00x && $word == better ]]
check "higher bandwidth is better: $v $r $ratio $word" $?
read -r _ _ v r ratio <<<"$(row 2-guest:qperf-rc_lat latency_usec)"
[[ $v == - && $r == - && $ratio == n/a ]]
check "a row without numbers says so: $v $r $ratio" $?
[[ $(head -n 1 "$dir/table") == test* && $(wc -l <"$dir/table") == 5 ]]
check "a header and a row per test and metric, in the order first seen" $?

cat >"$dir/engine.json" <<'J'
{ "benchmarks": [
  { "name": "host memcpy 64 KiB", "bytes_per_second": 10485760000, "items_per_second": 160000 },
  { "name": "loopback write 64 KiB, MTU 4096", "bytes_per_second": 4194304000, "items_per_second": 64000 },
  { "name": "cable write 64 KiB, MTU 4096", "bytes_per_second": 2097152000, "items_per_second": 32000 },
  { "name": "loopback write 64 B, MTU 4096", "bytes_per_second": 128000000, "items_per_second": 2000000 }
] }
J
bench_limits "$dir/engine.json" "$dir/table" >"$dir/limits"
grep -Eq '^host memcpy 64 KiB +10000\.0 +160000$' "$dir/limits" &&
	grep -Eq '^engine: loopback write 64 B, MTU 4096 +122\.1 +2000000$' "$dir/limits"
check "the limits in MB/s (2^20 bytes) and WR/s" $?
grep -qx 'ib_write_bw-64KiB, vrnic: 400.5 MB/s, 10.0% of the engine alone (loopback), 4.00% of host memcpy' "$dir/limits" &&
	grep -qx '2-guest:ib_write_bw-64KiB, vrnic: 100 MB/s, 5.0% of the engine alone (cable), 1.00% of host memcpy' "$dir/limits"
check "each guest bandwidth as a share of the engine alone (loopback, or cable for two guests) and of memcpy" $?
if ((fail)); then cat "$dir/table" "$dir/limits"; fi
exit "$fail"
