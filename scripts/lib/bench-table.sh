# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# make bench's tables (scripts/bench), apart so that a host test can feed
# them made-up figures (tests/bench_table_test.sh).

# bench_table: the table of the "RESULT test metric device value" lines on
# stdin, a row per test and metric in the order first seen: vrnic's
# figure, rxe's, and how vrnic compares.  A row measured more than once
# (each latency row: three runs) shows the median of its runs; a run
# without a number (perftest's "inf") is left out.
bench_table() {
	awk '
		function median(list,   v, n, i, j, t) {
			n = split(list, v, " ")
			if (n == 0) return ""
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		NF >= 4 {
			key = $1 " " $2
			if (!(key in seen)) { seen[key] = 1; order[n++] = key }
			if ($4 !~ /^[0-9]+([.][0-9]+)?$/) next
			if ($3 ~ /^rxe/) rxe[key] = rxe[key] " " $4; else vrnic[key] = vrnic[key] " " $4
		}
		END {
			printf "%-32s %-13s %12s %12s %14s\n", "test", "metric", "vrnic", "rxe", "vrnic vs rxe"
			for (i = 0; i < n; i++) {
				k = order[i]; split(k, p, " ")
				v = median(vrnic[k]); r = median(rxe[k]); ratio = "n/a"
				if (v > 0 && r > 0) {
					# Higher is better for bandwidth, lower for latency.
					x = p[2] ~ /usec/ ? r / v : v / r
					ratio = sprintf("%.2fx %s", x, x >= 1 ? "better" : "worse")
				}
				printf "%-32s %-13s %12s %12s %14s\n", p[1], p[2], v == "" ? "-" : v, r == "" ? "-" : r, ratio
			}
		}'
}

# bench_limits ENGINE_JSON TABLE: the physical limits of this host, from
# make bench-engine's figures (its JSON): host memcpy and the engine alone,
# one core, no VM; then each guest bandwidth of TABLE (bench_table's) as a
# share of them.  MB/s are perftest's, 2^20 bytes.
bench_limits() {
	local json=$1 table=$2
	jq -r '.benchmarks[] | select(.error_occurred | not) |
		"\(.name | gsub(" "; "_"))\t\(.bytes_per_second // 0)\t\(.items_per_second // 0)"' "$json" |
		awk -F'\t' -v table="$table" '
			{ mbps[$1] = $2 / 1048576; wrs[$1] = $3 }
			END {
				print "physical limits (make bench-engine: this host, one core, no VM)"
				printf "%-44s %12s %14s\n", "limit", "MB/s", "WR/s"
				limit("host_memcpy_64_KiB", "host memcpy 64 KiB")
				limit("loopback_write_64_KiB,_MTU_4096", "engine: loopback write 64 KiB, MTU 4096")
				limit("cable_write_64_KiB,_MTU_4096", "engine: cable write 64 KiB, MTU 4096")
				limit("loopback_write_64_B,_MTU_4096", "engine: loopback write 64 B, MTU 4096")
				while ((getline line < table) > 0) {
					split(line, f, " ")
					if (f[2] != "bw_MBps" || f[3] !~ /^[0-9]+([.][0-9]+)?$/) continue
					engine = f[1] ~ /^2-guest:/ ? "cable_write_64_KiB,_MTU_4096" : "loopback_write_64_KiB,_MTU_4096"
					if (!(mbps[engine] > 0 && mbps["host_memcpy_64_KiB"] > 0)) continue
					printf "%s, vrnic: %s MB/s, %.1f%% of the engine alone (%s), %.2f%% of host memcpy\n",
						f[1], f[3], 100 * f[3] / mbps[engine], engine ~ /^cable/ ? "cable" : "loopback",
						100 * f[3] / mbps["host_memcpy_64_KiB"]
				}
			}
			function limit(k, label) {
				if (k in mbps)
					printf "%-44s %12.1f %14.0f\n", label, mbps[k], wrs[k]
				else
					printf "%-44s %12s %14s\n", label, "-", "-"
			}'
}
