#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The wire capture (scripts/vm-run --vms 2 --pcap, vrnicd --pcap): the
# frames of one known transfer, cut out of guest 0's capture, must decode
# in tshark as RoCE (the infiniband dissector) with nothing malformed, and
# the count of every BTH opcode must be what the transfer sends: one
# vrnic_xfer round of 1 MiB in 64 KiB messages with an MTU of 1024.
# boots: pair-tap
# tags: wire
# order: 10
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

cap=$VRNIC_RUN_DIR/wire-0.pcap
if [[ ! -f $cap ]]; then
	echo "1..0 # SKIP no capture: run with scripts/vm-run --pcap"
	exit 4
fi
command -v tshark >/dev/null || { echo "1..0 # SKIP tshark is not installed (make setup)"; exit 4; }
ktap_plan 4

# vrnicd flushes the capture every 100 ms, in whole records.
settle() { nap 0.5; stat -c %s "$cap"; }
pair_sync pcap.quiet || true
start=$(settle)
retx0=$(hw_counter retransmits)
xfer="$VRNIC_BUILD/tests/selftests/vrnic_xfer -d $VRNIC_IBDEV -g $VRNIC_GID_INDEX -p 19300 -b 3M -s 1M -m 64K -t 18"
pair_run pcap-xfer 1 300 "$xfer" "$xfer \$VRNIC_PEER_IP"
rc=$?
ktap_check "vrnic_xfer, one round ($pair_role): $(grep '^verified' "$pair_out")" $rc \
	"$(tail -n 5 "$pair_out")"
if [[ $VRNIC_VM != 0 ]]; then
	# The capture is guest 0's to check.
	for t in "tshark decodes the frames as RoCE" "nothing malformed" "opcode counts"; do
		ktap_skip "$t" "guest 0 reads the capture"
	done
	ktap_finish
	exit
fi
end=$(settle)
retx=$(($(hw_counter retransmits) - retx0))

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ head -c 24 "$cap"; tail -c +$((start + 1)) "$cap" | head -c $((end - start)); } >"$tmp/x.pcap"
tshark -r "$tmp/x.pcap" -Y infiniband -T fields -e infiniband.bth.opcode >"$tmp/ops" 2>"$tmp/err"
n=$(wc -l <"$tmp/ops")
((n > 0))
ktap_check "tshark decodes $n frames as RoCE (infiniband)" $? "$(head -n 5 "$tmp/err")"

bad=$(tshark -r "$tmp/x.pcap" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
((bad == 0))
ktap_check "no malformed frames" $? "$(tshark -r "$tmp/x.pcap" -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | head -n 5)"

# Per 1 MiB round: 16 WRITEs, 16 READs and 16 SENDs of 64 packets each,
# 15 fetch-adds and a compare-swap; ACKs once per 32 packets of WRITE and
# SEND (coalesced), an atomic ACK per atomic.
declare -A want=(
	[0]=16 [1]=992 [2]=16
	[6]=16 [7]=992 [8]=16
	[12]=16 [13]=16 [14]=992 [15]=16
	[17]=64 [18]=16 [19]=1 [20]=15
)
got=$(sort -n "$tmp/ops" | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
expect=$(for k in "${!want[@]}"; do echo "$k ${want[$k]}"; done | sort -n | awk '{ printf "%s:%s ", $1, $2 }')
[[ $got == "$expect" ]]
ktap_check "opcode counts match the transfer: $got" $? "expected $expect (retransmits: $retx)"
ktap_finish
