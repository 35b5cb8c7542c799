# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# vm-run's watch over its guests, hang diagnosis and verdicts: source
# this.  watch_guests waits for the guests (serving their requests) and
# guest_verdicts decides the run's exit status.
#
# What they read of vm-run: here, vms, run, sockdir, shm_prefix, timeout,
# rams, consoles, pids_qemu, pids_tail, pids_vrnicd, killed; they set
# timed_out, wedged and rc.  vm-run runs under set -e: every function here
# returns 0, and a command that may fail (a kill of what is gone, a
# diagnosis of a dead guest) has its || true.
# shellcheck disable=SC2154 # those are vm-run's

# Guest I's virtio-net queues, as QEMU and the guest's RAM have them
# (nic-queues.py): which side a stalled NIC waits for.
nic_queues() { # i
	python3 "$here/lib/nic-queues.py" "$sockdir/qmp-$1.sock" "${rams[$1]:-$shm_prefix-$1.ram}" 2>&1 |
		sed "s/^/vm-run:   vm$1 NIC /" || true
}

# A soft lockup that has lasted this long does not end: under TCG, a
# vCPU spinning with interrupts off (QEMU 7.2 running a stale int3 of a
# text patch) leaves the other waiting for it for good, and no test's
# time limit can end a task stuck in the kernel.  The run stops there,
# rather than at the boot's limit, the sum of its tests' (hours).
wedge_limit=${VRNIC_WEDGE_LIMIT:-120}

# guest_wedged I: succeeds, printing how long, when guest I's console
# shows a CPU stuck for wedge_limit seconds or more.
guest_wedged() { # i
	local s
	s=$(grep -aoE 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s' "${consoles[$1]:-/dev/null}" 2>/dev/null |
		sed -E 's/.* ([0-9]+)s$/\1/' | sort -n | tail -n 1) || s=
	[[ -n $s ]] && ((s >= wedge_limit)) && echo "$s"
}

# A guest boots to its command in 10 to 30 s under TCG (the debug kernel
# in a few times that).  One that has not in boot_limit seconds froze on
# the way (seen once in make check: QEMU 7.2, two vCPUs, the console
# silent after SMP bring-up), and the run stops there too.
boot_limit=${VRNIC_BOOT_LIMIT:-300}

# Wait for every guest to power off, or the deadline, serving the guests'
# requests meanwhile.  A guest whose NIC stops sending (the kernel's NETDEV
# WATCHDOG) gets its queues shown; one whose kernel is wedged (above), or
# that has not booted in boot_limit seconds, ends the wait.
watch_guests() {
	local start=$SECONDS polls=0 alive p req i s
	local -a stalled=() ready=()
	timed_out=
	wedged=
	while :; do
		alive=
		for p in "${pids_qemu[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[[ -z $alive ]] && break
		for req in "$run"/host/*.req; do
			[[ -f $req ]] && serve_request "$req"
		done
		# Boot time to the command, from vm-run's own start.
		for ((i = 0; i < vms; i++)); do
			[[ -z ${ready[i]:-} && -e $run/ready-$i ]] || continue
			ready[i]=1
			echo "vm-run: guest $i: booted; its command starts ${SECONDS}s after vm-run did" >&2
		done
		if ((++polls % 25 == 0)); then
			for ((i = 0; i < vms; i++)); do
				[[ -z ${stalled[i]:-} ]] && grep -aq 'NETDEV WATCHDOG' "${consoles[$i]}" 2>/dev/null || continue
				stalled[i]=1
				echo "vm-run: guest $i: its NIC stopped sending (NETDEV WATCHDOG); its virtqueues:" >&2
				nic_queues "$i" >&2
			done
			for ((i = 0; i < vms; i++)); do
				if s=$(guest_wedged "$i"); then
					wedged="a CPU stuck in its kernel for ${s}s (soft lockup)"
				elif [[ -z ${ready[i]:-} ]] && ((SECONDS - start >= boot_limit)); then
					wedged="not booted after ${boot_limit}s"
				else
					continue
				fi
				echo "vm-run: guest $i: $wedged; it will not recover: stopping the run" >&2
				timed_out=1
			done
			if [[ -n $wedged ]]; then break; fi
		fi
		if ((timeout > 0 && SECONDS - start >= timeout)); then
			timed_out=1
			break
		fi
		sleep 0.2
	done
	if [[ -n $timed_out ]]; then
		for p in "${pids_tail[@]}"; do kill "$p" 2>/dev/null || true; done
	else
		finish_tails
	fi
}

# Kernel trouble shows up on the console as a timestamped kernel message.
kernel_trouble='^\[ *[0-9]+\.[0-9]+\] (------------\[ cut here \]|WARNING: |BUG: |Oops|Kernel panic|general protection fault|kernel BUG|UBSAN: |KASAN: |INFO: task .* blocked|rcu: INFO|watchdog: BUG)'

# Guest I hung: where, and what its console, vrnicd and NIC last said.
report_hang() { # i
	local i=$1 last
	last=$(grep -ao 'selftests: [^ ]*: [^ ]*' "${consoles[$i]:-/dev/null}" | tail -n 1) || last=
	echo "vm-run: guest $i hung: ${wedged:-no result after ${timeout}s} (TIMEOUT)${last:+, in ${last##*: }}; the last of its console:" >&2
	tail -n 25 "${consoles[$i]:-/dev/null}" | sed 's/^/vm-run:   /' >&2
	if [[ -f $run/vrnicd-$i.log ]]; then
		tail -n 5 "$run/vrnicd-$i.log" | sed "s/^/vm-run:   vrnicd $i: /" >&2 || true
	fi
	nic_queues "$i" >&2
}

# Guest I's verdict, folded into rc: kernel trouble on its console, a
# hang, no result, or its command's exit status.
guest_verdict() { # i
	local i=$1 s
	if [[ -f ${consoles[$i]:-/nonexistent} ]] && grep -Eaq "$kernel_trouble" "${consoles[$i]}"; then
		echo "vm-run: guest $i: the kernel reported a problem:" >&2
		grep -Ea -A3 "$kernel_trouble" "${consoles[$i]}" | head -n 40 >&2
		rc=1
	fi
	if [[ -n $timed_out ]]; then
		[[ -f $run/status-$i ]] && return 0
		report_hang "$i"
		rc=124
		return 0
	fi
	if [[ ! -f $run/status-$i ]]; then
		echo "vm-run: guest $i stopped without a result (kernel panic or crash?)" >&2
		if ((rc == 0)); then rc=1; fi
		return 0
	fi
	s=$(<"$run/status-$i")
	if [[ $s != 0 ]]; then
		echo "vm-run: guest $i: command exited with status $s" >&2
		if ((rc == 0)); then rc=$s; fi
	fi
	return 0
}

# The run's exit status, in rc: every guest's verdict, and a vrnicd that
# died without being asked to.
guest_verdicts() {
	local i
	rc=0
	for ((i = 0; i < vms; i++)); do
		guest_verdict "$i"
	done
	for ((i = 0; i < vms; i++)); do
		[[ -n ${pids_vrnicd[$i]:-} && -z ${killed[$i]:-} ]] || continue
		if ! kill -0 "${pids_vrnicd[$i]}" 2>/dev/null; then
			echo "vm-run: vrnicd $i died during the run (see $run/vrnicd-$i.log)" >&2
			if ((rc == 0)); then rc=1; fi
		fi
	done
	if [[ $rc != 0 ]]; then echo "vm-run: logs are in $run" >&2; fi
	return 0
}
