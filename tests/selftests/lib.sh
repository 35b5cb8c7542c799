# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# KTAP helpers for vrnic's shell selftests (kselftest conventions): source
# this, call ktap_plan, then one result per test case, then ktap_finish.
# It brings the guest harness (scripts/lib/guest.sh) along.

# shellcheck source=scripts/lib/guest.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/guest.sh"

ktap_n=0
ktap_pass=0
ktap_fail=0
ktap_skip=0

ktap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

# Print diagnostics: every line prefixed with "# ".
ktap_diag() {
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

ktap_ok() {
	ktap_n=$((ktap_n + 1))
	ktap_pass=$((ktap_pass + 1))
	echo "ok $ktap_n $1"
}

ktap_not_ok() {
	ktap_n=$((ktap_n + 1))
	ktap_fail=$((ktap_fail + 1))
	echo "not ok $ktap_n $1"
	shift
	[[ $# -gt 0 ]] && ktap_diag "$*"
	return 0
}

ktap_skip() {
	ktap_n=$((ktap_n + 1))
	ktap_skip=$((ktap_skip + 1))
	echo "ok $ktap_n $1 # SKIP $2"
}

# ktap_check NAME COND_STATUS [DIAGNOSTIC...]: ok when COND_STATUS is 0.
ktap_check() {
	local name=$1 status=$2
	shift 2
	if [[ $status == 0 ]]; then
		ktap_ok "$name"
	else
		ktap_not_ok "$name" "$@"
	fi
}

ktap_finish() {
	echo "# totals: pass:$ktap_pass fail:$ktap_fail skip:$ktap_skip"
	[[ $ktap_fail == 0 ]]
}

# select_cases ARRAY: keep the entries of the array ARRAY whose name, its
# first word, VRNIC_CASES lists (spaces or commas; scripts/vm-tests
# --cases); all of them when VRNIC_CASES is empty.  For a test whose
# cases are rows of one array (vrnic_pair_cm.sh: rping, ucmatose...).
select_cases() {
	local -n _cases=$1
	local c keep=()
	[[ -n ${VRNIC_CASES:-} ]] || return 0
	for c in "${_cases[@]}"; do
		[[ " ${VRNIC_CASES//,/ } " == *" ${c%%[ |]*} "* ]] && keep+=("$c")
	done
	_cases=(${keep[@]+"${keep[@]}"})
}

# Kernel messages logged since a mark: mark with dmesg_mark, read with
# dmesg_since.
dmesg_mark() { dmesg | wc -l; }
dmesg_since() { dmesg | tail -n +$(($1 + 1)); }

# Kernel trouble in a dmesg excerpt.
kernel_trouble() {
	grep -E 'WARNING: |BUG: |Oops|general protection|kernel BUG|UBSAN|KASAN|still has objects|leak|refcount_t|list_(add|del) corruption|cut here'
}

# perftest_zero_figure RC ROW: a run whose every iteration completed
# (exit status RC 0) but whose figure (the 4th field of its result row) is
# 0.00 has a broken clock, not broken traffic: perftest times with the
# CPU's cycle counter, and under TCG it has measured 0.00 MB/s (one guest,
# ib_send_bw; and rxe client, vrnic server).  The caller runs it again.
perftest_zero_figure() {
	local f
	read -r -a f <<<"$2"
	[[ $1 == 0 && ${#f[@]} -ge 4 ]] && awk -v v="${f[3]}" 'BEGIN { exit !(v + 0 == 0) }'
}

# rping_teardown_race RC FILE: rping (FILE its output) exited 255 after a
# run that went well.  rping before rdma-core 59 (upstream f3ae6534a,
# "rping: terminate CM event thread before exiting"; Debian 12 ships 44,
# Debian 13 56) has its CM thread read the event channel that its main
# thread has just destroyed; the thread exits on "rdma_get_cm_event: Bad
# file descriptor" (on rxe as well).  True when rping said nothing else
# on stderr but its disconnect.  Its stdout is buffered and its stderr
# is not, so a stderr line can land in the middle of a ping line: the
# stderr lines are taken out of the stream before the lines are read.
# The pings themselves are judged apart.
rping_teardown_race() {
	local out ebadf=$'rdma_get_cm_event: Bad file descriptor\n'
	[[ $1 == 255 ]] || return 1
	out=$(cat "$2")$'\n'
	[[ $out == *"$ebadf"* ]] || return 1
	out=${out//"$ebadf"/}
	out=${out//$'client DISCONNECT EVENT...\n'/}
	out=${out//$'server DISCONNECT EVENT...\n'/}
	! grep -Ev '^((server )?ping data: rdma-ping-[0-9]+: [!-~]*)?$' <<<"$out" | grep -q .
}

# A hardware counter of this port: hw_counter NAME
hw_counter() {
	local v
	read -r v <"/sys/class/infiniband/$VRNIC_IBDEV/ports/1/hw_counters/$1" || return
	echo "$v"
}

# transport_counters: the port's transport counters that are not zero,
# as "name=value ..." (vrnic's and rxe's names differ): NAKs sent and
# received, retransmissions, duplicates.
transport_counters() {
	local f v out=
	for f in /sys/class/infiniband/"$VRNIC_IBDEV"/ports/1/hw_counters/*; do
		case ${f##*/} in
		*rnr* | *seq* | *retr* | *dup* | *out_of* | *nak*) ;;
		*) continue ;;
		esac
		read -r v <"$f" 2>/dev/null || continue
		[[ $v == 0 ]] || out+="${f##*/}=$v "
	done
	echo "${out:-none}"
}

# transport_counters_since BEFORE: what transport_counters gained since it
# printed BEFORE, as "name=+delta ..." ("none" when nothing did).
transport_counters_since() {
	local -A was=()
	local kv out=
	for kv in $1; do
		[[ $kv == *=* ]] && was[${kv%%=*}]=${kv#*=}
	done
	for kv in $(transport_counters); do
		[[ $kv == *=* ]] || continue
		((${kv#*=} > ${was[${kv%%=*}]:-0})) &&
			out+="${kv%%=*}=+$((${kv#*=} - ${was[${kv%%=*}]:-0})) "
	done
	echo "${out:-none}"
}

# file_has PREFIX FILE: FILE has a line that starts with PREFIX.  For
# polling a process's output: grep(1) every 0.05 s would cost the guest a
# process each time.
file_has() {
	local line
	[[ -r $2 ]] || return 1
	while IFS= read -r line; do
		[[ $line == "$1"* ]] && return 0
	done <"$2"
	return 1
}

# fio_verify NAME DEV ARGS...: fio writes DEV, then reads it back and checks
# every block (crc32c); one result.
fio_verify() {
	local name=$1 dev=$2 out rc ok
	shift 2
	if [[ ! -b $dev ]]; then
		ktap_not_ok "fio $name: $dev is no block device"
		return
	fi
	out=$(fio --name="$name" --filename="$dev" --ioengine=libaio --direct=1 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--group_reporting "$@" 2>&1)
	rc=$?
	[[ $rc == 0 ]] && grep -q ' err= 0' <<<"$out" && ! grep -q 'verify: bad' <<<"$out"
	ok=$?
	ktap_check "fio $name on ${dev#/dev/}: $(grep -Eo 'WRITE: bw=[^ ]+' <<<"$out" | head -n 1)" \
		"$ok" "fio exit $rc" "$(tail -n 15 <<<"$out")"
}

# no_kernel_warnings MARK WHO: no kernel warning since MARK; one result.
no_kernel_warnings() {
	local out
	out=$(dmesg_since "$1" | kernel_trouble)
	[[ -z $out ]]
	ktap_check "$2: no kernel warnings" $? "$out"
}

# trace_events 1|0 EVENT...: turn kernel trace events (subsystem/name)
# on, after clearing the trace buffer, or off: a test's record of what
# the kernel did, for its diagnosis.  Task names are not recorded
# (options/record-cmd): recording them hooks the scheduler's own
# tracepoints, which patches __schedule's text while the other vCPU runs
# it, and QEMU 7.2's multi-threaded TCG can leave that vCPU looping on a
# stale int3 with interrupts off while the patching one waits for it for
# ever (a soft lockup that never ends, seen on Linux 6.1 in make check).
kernel_trace=/sys/kernel/tracing
kernel_trace_mount() {
	mountpoint -q $kernel_trace || mount -t tracefs none $kernel_trace
}
trace_events() {
	local e on=$1
	shift
	kernel_trace_mount || return 0
	echo 0 >$kernel_trace/options/record-cmd
	[[ $on == 1 ]] && : >$kernel_trace/trace
	for e in "$@"; do
		[[ -e $kernel_trace/events/$e/enable ]] && echo "$on" >"$kernel_trace/events/$e/enable"
	done
	return 0
}

# LIO's targetcli asks the system bus for tcmu-runner's backstores and
# cannot start without one; the guest has none until a test starts it.
system_bus_pid=
system_bus_start() {
	[[ -S /run/dbus/system_bus_socket ]] && return 0
	mkdir -p /run/dbus && dbus-daemon --system --fork && system_bus_pid=$(</run/dbus/pid)
}

# Stop the system bus if system_bus_start started it.
system_bus_stop() {
	[[ -n $system_bus_pid ]] || return 0
	kill "$system_bus_pid"
	rm -f /run/dbus/pid /run/dbus/system_bus_socket
	system_bus_pid=
}

# disk_verify DEV: the block-storage workloads, each fio_verify'd: 4 KiB
# random writes at QD 32 with 2 jobs, 128 KiB sequential, and 1 MiB
# requests (multi-page FRWRs); three results, skipped without a disk.
disk_verify() {
	local n
	if [[ -z $1 ]]; then
		for n in 1 2 3; do ktap_skip "fio $n" "no disk"; done
		return
	fi
	fio_verify randwrite-4k "$1" --rw=randwrite --bs=4k --iodepth=32 --numjobs=2 \
		--size=8M --offset_increment=8M
	fio_verify seq-128k "$1" --rw=write --bs=128k --iodepth=8 --size=16M --offset=64M
	fio_verify seq-1m "$1" --rw=write --bs=1M --iodepth=4 --size=32M --offset=128M
}

# disk_verify_again DEV: after a new login, 4 KiB random reads and writes;
# one result.
disk_verify_again() {
	if [[ -z $1 ]]; then
		ktap_skip "fio again" "no disk"
		return
	fi
	fio_verify again-randrw-4k "$1" --rw=randrw --bs=4k --iodepth=16 --size=8M
}
