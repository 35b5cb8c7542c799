# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics on RDMA, for vrnic_nvmeof.sh (one guest) and
# vrnic_pair_nvmeof.sh (two guests): source after lib.sh.
#
# The target is nvmet with nvmet-rdma, configured through configfs: one
# namespace on a RAM-backed null_blk, one on a file in tmpfs (buffered:
# tmpfs has no O_DIRECT).  The host is nvme-rdma through nvme-cli:
# discover, connect, fio with crc32c verify (4 KiB random at QD 32 with 2
# jobs, 128 KiB sequential, 1 MiB requests that need multi-page FRWRs),
# disconnect, connect again, verify again, disconnect.  nvme-rdma registers
# each request's pages with REG_MR and has the target invalidate them with
# SEND_WITH_INV (or does so itself with LOCAL_INV); nvmet moves the data
# with RDMA READ and WRITE.

# The target (nvmet_serve, nvmet_stop), its nvmet_nqn and nvmet_port, and
# the namespaces' devices (nvmet_devices): scripts/lib/nvmet.sh.
# shellcheck source=scripts/lib/nvmet.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/nvmet.sh"

# ktap results each side reports.
nvmeof_target_results=1
nvmeof_host_results=11

# nvmeof_target_setup ADDR [NVMET_RDMA_PARAM...]: serve the subsystem on
# ADDR:4420 (use_srq=1: receive through SRQs); one result.
nvmeof_target_setup() {
	local out rc=0
	out=$(nvmet_serve "$@" 2>&1) || rc=1
	ktap_check "target: nvmet-rdma ${*:2}${2:+ }on $1:$nvmet_port, namespaces null_blk and file" $rc \
		"$out" "$(dmesg | tail -n 20)"
}

# nvmeof_connect ADDR WHAT [NVME-CONNECT-OPTION...]: connect; the
# namespaces go to nvmeof_devs.
nvmeof_connect() {
	local out rc=0 addr=$1 what=$2
	shift 2
	out=$(nvme connect -t rdma -a "$addr" -s $nvmet_port -n $nvmet_nqn "$@" 2>&1)
	nvmeof_devs=$(nvmet_devices) || rc=1
	ktap_check "$what: ${nvmeof_devs//$'\n'/ }" $rc "$out" "$(dmesg | tail -n 20)"
}

nvmeof_disconnect() {
	local out
	out=$(nvme disconnect -n $nvmet_nqn 2>&1)
	grep -q "disconnected 1 controller" <<<"$out"
	ktap_check "$1: $out" $?
}

# Called once the host's first connection is up (the target's queues
# exist then); a test may redefine it.
nvmeof_connected_hook() { :; }

# nvmeof_host_run ADDR MARK: everything the host does against ADDR; MARK
# is the dmesg mark from before.
nvmeof_host_run() {
	local addr=$1 mark=$2 out devs
	modprobe nvme-rdma
	out=$(nvme discover -t rdma -a "$addr" -s $nvmet_port 2>&1)
	grep -q "subnqn: *$nvmet_nqn" <<<"$out"
	ktap_check "nvme discover -t rdma -a $addr: $nvmet_nqn" $? "$out" "$(dmesg | tail -n 20)"

	nvmeof_connect "$addr" "nvme connect -t rdma"
	devs=$nvmeof_devs
	nvmeof_connected_hook
	if [[ -n $devs ]]; then
		local ns1 ns2
		ns1=$(head -n 1 <<<"$devs")
		ns2=$(tail -n 1 <<<"$devs")
		fio_verify randwrite-4k "$ns1" --rw=randwrite --bs=4k --iodepth=32 --numjobs=2 \
			--size=8M --offset_increment=8M
		fio_verify seq-128k "$ns2" --rw=write --bs=128k --iodepth=8 --size=16M
		fio_verify seq-1m "$ns1" --rw=write --bs=1M --iodepth=4 --size=16M --offset=64M
		fio_verify seq-1m "$ns2" --rw=write --bs=1M --iodepth=4 --size=16M --offset=64M
	else
		for n in 1 2 3 4; do ktap_skip "fio $n" "no namespaces"; done
	fi
	nvmeof_disconnect "nvme disconnect"

	nvmeof_connect "$addr" "nvme connect again"
	devs=$nvmeof_devs
	if [[ -n $devs ]]; then
		fio_verify again-randrw-4k "$(head -n 1 <<<"$devs")" --rw=randrw --bs=4k --iodepth=16 \
			--size=8M
	else
		ktap_skip "fio again" "no namespaces"
	fi
	nvmeof_disconnect "nvme disconnect again"
	modprobe -r nvme-rdma 2>/dev/null
	# fio's retries would hide a transport failure: none may happen.
	out=$(dmesg_since "$mark" | grep -E 'error recovery|failed with status|Bogus remote')
	[[ -z $out ]]
	ktap_check "host: no work completion failed, no error recovery" $? "$out"
}

nvmeof_link_pull_results=4

# Linux 6.1's rxe breaks its own GSI QP when a MAD send fails: a send on a
# down link completes with LOC_QP_OP_ERR, the completer moves QP1 to the
# error state and flushes its receive queue, and ib_mad, which then moves
# QP1 back to RTS, never posts receives again.  From then on that rxe
# device hears no CM message: its REQs go out, the target's REPs arrive
# and are dropped, and no connection is ever made again.  A host whose
# error recovery sends a DREQ while its link is down hits it; one that
# sends none does not.  The two trace events below tell the cases apart.
nvmeof_trace_events=(ib_cma/icm_mad_send_err ib_mad/ib_mad_recv_done_handler
	ib_mad/ib_mad_send_done_handler)

nvmeof_trace_mads() { trace_events "$1" "${nvmeof_trace_events[@]}"; }

# Linux 7.3's rxe goes deaf the same way, but the failed send does not
# reach ib_mad as one: rxe counts it (send_err) and the completion is lost.
# What shows it is that after the link is back, the host's REQs go out
# (ib_mad send completions), the target's answers reach rxe0 (its
# rcvd_pkts go up: nothing else is on the wire then), and ib_mad receives
# none of them.  Two rxe guests do the same.  nvmeof_rxe_link_up marks
# the link's return in the trace and notes the counters.
nvmeof_rxe_counter() {
	rdma statistic show link "$VRNIC_IBDEV/1" 2>/dev/null |
		awk -v c="$1" '{for (i = 1; i < NF; i++) if ($i == c) print $(i + 1)}'
}

nvmeof_rxe_link_down() { nvmeof_send_err0=$(nvmeof_rxe_counter send_err); }

nvmeof_rxe_link_up() {
	echo "vrnic: link up" >$kernel_trace/trace_marker
	nvmeof_rcvd_up=$(nvmeof_rxe_counter rcvd_pkts)
}

# nvmeof_rxe_gsi_deaf: say how rxe's GSI QP went deaf (either form above),
# and succeed; status 1 when it did not.
nvmeof_rxe_gsi_deaf() {
	local err t sends recvs rcvd send_err
	if err=$(grep -m 1 'icm_mad_send_err.*status=LOC_QP_OP_ERR' $kernel_trace/trace); then
		t=$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { print $i + 0; exit }}' <<<"$err")
		if awk -v t="$t" '/ib_mad_recv_done_handler/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/ && $i + 0 > t) n++}
			END {exit n > 0}' $kernel_trace/trace; then
			echo "a MAD send failed at ${t}s (${err##*icm_mad_send_err: }) and no MAD was received after it"
			return 0
		fi
	fi
	send_err=$(nvmeof_rxe_counter send_err)
	rcvd=$(nvmeof_rxe_counter rcvd_pkts)
	read -r sends recvs < <(awk '/vrnic: link up/ {up = 1} up && /ib_mad_send_done_handler/ {s++}
		up && /ib_mad_recv_done_handler/ {r++} END {print s + 0, r + 0}' $kernel_trace/trace)
	((${send_err:-0} > ${nvmeof_send_err0:-0} && sends > 0 && recvs == 0 &&
		${rcvd:-0} > ${nvmeof_rcvd_up:-0})) || return 1
	echo "rxe0 failed $((send_err - nvmeof_send_err0)) send(s) on the down link; since it came back, ib_mad sent $sends MAD(s) and received none, while $((rcvd - nvmeof_rcvd_up)) packet(s) reached rxe0"
}

# rxe on Linux 6.12 never comes back from a link flap under nvme-rdma:
# the host's reconnect work waits in nvme_rdma_alloc_queue for an rdma_cm
# event that never comes, "nvme disconnect" waits for that work
# (cancel_delayed_work_sync), and so does deleting rxe0 (nvme-rdma's
# device removal deletes the controller).  It happens with an rxe target
# too (two rxe guests, no vrnic), and nothing short of a reboot frees the
# guest, so an rxe host on these kernels is not link-pulled.
nvmeof_rxe_flap_hang_kernels=(6.12)

# nvmeof_rxe_flap_hangs: say why, and succeed, when this kernel's rxe
# hangs across a link flap (above).
nvmeof_rxe_flap_hangs() {
	local k v
	v=$(kernel_series)
	for k in "${nvmeof_rxe_flap_hang_kernels[@]}"; do
		if [[ $v == "$k" ]]; then
			echo "rxe host on Linux $v: its reconnect after a link flap waits forever (rxe against rxe too)"
			return 0
		fi
	done
	return 1
}

# nvmeof_link_pull ADDR: connect, and while fio writes (and then verifies)
# take the host's link away for 5 s (VRNIC_LINK_PULL_S).  In-flight
# commands fail over to the controller's reconnect: the controller must be
# live again within 50 s of the link's return, fio's verify must stay
# clean, and the controller must be live after it.  An rxe host that hits
# rxe's GSI bug above skips, says so, and gets a new rxe0; an rxe host
# whose kernel hangs across a flap (nvmeof_rxe_flap_hangs) skips it all.
nvmeof_link_pull() {
	local addr=$1 mark out out2 fio_pid rc state port pull=${VRNIC_LINK_PULL_S:-5} try deaf= why
	if [[ $VRNIC_ROLE == rxe ]] && why=$(nvmeof_rxe_flap_hangs); then
		for out in "nvme connect" "fio verify" "controller live" "nvme disconnect"; do
			ktap_skip "link pull: $out" "$why"
		done
		return
	fi
	mark=$(dmesg_mark)
	modprobe nvme-rdma
	nvmeof_connect "$addr" "link pull: nvme connect"
	if [[ -z $nvmeof_devs ]]; then
		ktap_skip "link pull: fio" "no namespaces"
		ktap_skip "link pull: controller live" "no namespaces"
		nvmeof_disconnect "link pull: nvme disconnect"
		return
	fi
	[[ $VRNIC_ROLE == rxe ]] && nvmeof_trace_mads 1
	out=$(mktemp)
	fio --name=linkpull --filename="$(head -n 1 <<<"$nvmeof_devs")" --ioengine=libaio \
		--direct=1 --rw=randwrite --bs=4k --iodepth=16 --size=48M --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --verify_state_save=0 >"$out" 2>&1 &
	fio_pid=$!
	sleep 1
	[[ $VRNIC_ROLE == rxe ]] && nvmeof_rxe_link_down
	ip link set "$VRNIC_NETDEV" down
	sleep 1
	port=$(rdma link show "$VRNIC_IBDEV/1")
	sleep $((pull - 1))
	[[ $VRNIC_ROLE == rxe ]] && nvmeof_rxe_link_up
	ip link set "$VRNIC_NETDEV" up
	# Live again, or (an rxe host) never to be.
	for ((try = 0; try < 250; try++)); do
		state=$(cat /sys/class/nvme/nvme*/state 2>/dev/null)
		[[ $state == live ]] && break
		nap 0.2
	done
	if [[ $state != live && $VRNIC_ROLE == rxe ]] && deaf=$(nvmeof_rxe_gsi_deaf); then
		# The controller can never come back.  nvme disconnect waits
		# for the connect attempt under way (up to rdma_cm's 15 REQ
		# resends); then rxe0 is made anew.
		out2=$(nvme disconnect -n $nvmet_nqn 2>&1)
		wait "$fio_pid"
		rdma link delete "$VRNIC_IBDEV" && rdma link add "$VRNIC_IBDEV" type rxe netdev "$VRNIC_NETDEV"
		ktap_skip "link pull: fio verify" "rxe host: rxe bug on Linux $(uname -r): $deaf"
		ktap_skip "link pull: controller live" "rxe's QP1 flushed its receives; rxe0 made anew"
		grep -q "disconnected 1 controller" <<<"$out2"
		ktap_check "link pull: nvme disconnect: $out2" $? "$(rdma link show 2>&1)"
	else
		[[ $state == live ]] || nvme disconnect -n $nvmet_nqn >/dev/null 2>&1
		wait "$fio_pid"
		rc=$?
		for ((try = 0; try < 150; try++)); do
			state=$(cat /sys/class/nvme/nvme*/state 2>/dev/null)
			[[ $state == live ]] && break
			nap 0.2
		done
		local took reconnects
		took=$(grep -Eo 'run=[0-9]+-?[0-9]*msec' "$out" | head -n 1)
		[[ $rc == 0 && $port == *"state DOWN"* ]] && grep -q ' err= 0' "$out" &&
			! grep -q 'verify: bad' "$out"
		ktap_check "link pull: fio verify clean across $pull s with the port DOWN ($took)" $? \
			"fio exit $rc" "port: $port" "$(tail -n 15 "$out")" "$(dmesg_since "$mark" | tail -n 20)"
		reconnects=$(dmesg_since "$mark" | grep -c 'Successfully reconnected')
		[[ $state == live ]]
		ktap_check "link pull: controller $state, $reconnects reconnect(s)" $? \
			"$(dmesg_since "$mark" | grep nvme | tail -n 20)" \
			"$([[ $VRNIC_ROLE == rxe ]] && grep -E 'icm_mad_send_err' $kernel_trace/trace | head -n 5)"
		nvmeof_disconnect "link pull: nvme disconnect"
	fi
	rm -f "$out"
	[[ $VRNIC_ROLE == rxe ]] && nvmeof_trace_mads 0
	modprobe -r nvme-rdma 2>/dev/null
}
