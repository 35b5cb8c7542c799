#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# engine_bench_smoke.sh BENCH: make bench-engine's binary runs every row
# (host memcpy; loopback and cable, two path MTUs, five work requests),
# none in error, and each row moved work.  Briefly: the figures are not
# the point here.
set -euo pipefail
bench=$1
rc=0
json=$("$bench" --benchmark_min_time=0.01 --benchmark_format=json) || rc=$?
((rc == 0)) || { echo "FAIL: $bench exited $rc"; exit 1; }
rows=$(jq '.benchmarks | length' <<<"$json")
errors=$(jq -r '.benchmarks[] | select(.error_occurred) | "\(.name): \(.error_message)"' <<<"$json")
idle=$(jq -r '.benchmarks[] | select((.items_per_second // 0) <= 0) | .name' <<<"$json")
fail=0
[[ $rows == 21 ]] || { echo "FAIL: $rows rows, not 21"; fail=1; }
[[ -z $errors ]] || { echo "FAIL: rows in error:"; echo "$errors"; fail=1; }
[[ -z $idle ]] || { echo "FAIL: rows with no work done:"; echo "$idle"; fail=1; }
jq -r '.benchmarks[] | "\(.name): \(.items_per_second // 0 | floor) WR/s"' <<<"$json"
((fail == 0)) && echo "ok: $rows rows"
exit "$fail"
