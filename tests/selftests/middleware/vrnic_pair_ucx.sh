#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UCX between the two guests: ucx_perftest's server in guest 0, client in
# guest 1, over rc_verbs with ud_verbs for wireup and over ud_verbs alone,
# UCX's defaults except UCX_NET_DEVICES and UCX_TLS.  tag_lat, tag_bw,
# ucp_put_bw, ucp_get, ucp_add and ucp_am_bw must each run to the end on
# both sides.
#
# Against rxe: rxe reports sl 0 in a UD receive with a RoCEv2 GRH, where
# mlx5 (and vrnic) report 2 for IPv4; UCX 1.13 then reads the GRH as IPv6,
# finds a wrong destination GID and drops every datagram (rxe to rxe as
# well).  So the rxe guest alone runs with UCX_UD_ETH_DGID_CHECK=n, the
# setting that makes UCX accept them; the vrnic guest keeps the defaults.
# boots: pair pair-rxe
# tags: middleware slow
# order: 70
# timeout: 600
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set) by pair_run
source "$(dirname "$0")/../lib.sh"
require_pair
require_ucx_verbs

tests=(tag_lat tag_bw ucp_put_bw ucp_get ucp_add ucp_am_bw)
tls_sets=("rc_verbs,ud_verbs" ud_verbs)
ktap_plan $((${#tests[@]} * ${#tls_sets[@]} + 1))
mark=$(dmesg_mark)
export UCX_NET_DEVICES=$VRNIC_IBDEV:1
note=
if [[ $VRNIC_ROLE == rxe ]]; then
	export UCX_UD_ETH_DGID_CHECK=n
	note=" (rxe side: UCX_UD_ETH_DGID_CHECK=n)"
fi
ucx_perftest=$(ucx_perftest_cmd)
port=13500
for tls in "${tls_sets[@]}"; do
	for t in "${tests[@]}"; do
		port=$((port + 1))
		pair_run "ucx-$port" 0 150 "UCX_TLS=$tls $ucx_perftest -p $port" \
			"UCX_TLS=$tls $ucx_perftest \$VRNIC_PEER_IP -p $port -t $t -n 2000 -w 100"
		rc=$?
		out=$(<"$pair_out")
		if [[ $pair_role == client ]]; then
			final=$(grep -m1 '^Final:' <<<"$out" | tr -s ' ')
			[[ $rc == 0 && -n $final ]]
		else
			final="server"
			[[ $rc == 0 ]]
		fi
		ktap_check "UCX_TLS=$tls ucx_perftest -t $t$note: ${final:-no result}" $? \
			"exit $rc" "$(tail -n 8 <<<"$out")"
	done
done
no_kernel_warnings "$mark" "ucx"
ktap_finish
