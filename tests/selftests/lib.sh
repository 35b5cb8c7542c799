# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# KTAP helpers for vrnic's shell selftests (kselftest conventions): source
# this, call ktap_plan, then one result per test case, then ktap_finish.

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

# nap SECONDS: sleep without starting a process.  The polling loops here
# wake every 0.1 s, and under TCG the fork and exec of sleep(1) costs the
# guest about 90 ms of CPU: an external sleep would take half of the
# guest's one CPU away from the work it waits for.  read times out on a
# pipe of this shell's own, which no one writes to.
nap_fd=
nap() {
	[[ -n $nap_fd ]] || exec {nap_fd}<> <(:)
	read -rt "$1" -u "$nap_fd" || :
}

# The guest environment that scripts/vm-run provides.
require_vm() {
	if [[ -z ${VRNIC_IBDEV:-} || -z ${VRNIC_NETDEV:-} ]]; then
		echo "TAP version 13"
		echo "1..0 # SKIP not inside a vrnic test VM (run through scripts/vm-run)"
		exit 4
	fi
}

# Kernel messages logged since a mark: mark with dmesg_mark, read with
# dmesg_since.
dmesg_mark() { dmesg | wc -l; }
dmesg_since() { dmesg | tail -n +$(($1 + 1)); }

# Kernel trouble in a dmesg excerpt.
kernel_trouble() {
	grep -E 'WARNING: |BUG: |Oops|general protection|kernel BUG|UBSAN|KASAN|still has objects|leak|refcount_t|list_(add|del) corruption|cut here'
}

# wait_listening PORT: wait up to 10 s until something on this guest
# listens on PORT (TCP, or UDP for fi_pingpong's dgram endpoint).  It
# reads /proc/net itself: ss(8) every 0.1 s would take the CPU that the
# server needs to start.
wait_listening() {
	local i f hex addr state
	printf -v hex '%04X' "$1"
	for ((i = 0; i < 200; i++)); do
		for f in /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6; do
			while read -r _ addr _ state _; do
				[[ ${addr##*:} == "$hex" ]] || continue
				[[ $f == *tcp* && $state != 0A ]] && continue
				return 0
			done <"$f"
		done
		nap 0.05
	done
	return 1
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

# Retry a command until it succeeds: retry TRIES DELAY CMD...
retry() {
	local tries=$1 delay=$2 i
	shift 2
	for ((i = 0; i < tries; i++)); do
		"$@" && return 0
		nap "$delay"
	done
	return 1
}

# Ask the host something only it can see (see scripts/vm-run):
# host_request REQUEST... prints the answer; fails on no answer or an error.
host_request() {
	local name dir=$VRNIC_RUN_DIR/host i
	name=req-$VRNIC_VM-$$-$RANDOM
	echo "$*" >"$dir/$name.tmp" && mv "$dir/$name.tmp" "$dir/$name.req" || return 1
	for ((i = 0; i < 1200; i++)); do
		if [[ -f $dir/$name.resp ]]; then
			local out
			out=$(<"$dir/$name.resp")
			rm -f "$dir/$name.resp"
			echo "$out"
			[[ $out != error:* ]]
			return
		fi
		nap 0.1
	done
	echo "error: the host did not answer"
	return 1
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

# Two-guest tests (scripts/vm-run --vms 2): both guests run the same test
# script and meet at barriers in the shared run directory.

# Skip unless there is a peer guest.
require_pair() {
	require_vm
	if [[ -z ${VRNIC_PEER_IP:-} ]]; then
		echo "TAP version 13"
		echo "1..0 # SKIP needs two guests (scripts/vm-run --vms 2)"
		exit 4
	fi
}

# The kind of RDMA device the peer guest has: vrnic or rxe.
peer_kind() { echo "${VRNIC_PEER_KIND:-vrnic}"; }

# The guest kernel's series ("6.12" for 6.12.95+deb12-amd64): what the
# known problems of rxe (user guide) are keyed by.
kernel_series() { uname -r | cut -d. -f1-2; }

# pair_sync NAME [SECONDS]: wait until both guests have reached NAME.
# A name used again in the same boot is a new barrier (its use count, kept
# guest-local, is part of it).
pair_sync() {
	local dir=$VRNIC_RUN_DIR/pair i limit=$((${2:-120} * 20)) n
	pair_use "$1"
	n=$pair_n
	: >"$dir/$1.$n.$VRNIC_VM"
	for ((i = 0; i < limit; i++)); do
		[[ -e $dir/$1.$n.${pair_peer:-$((1 - VRNIC_VM))} ]] && return 0
		nap 0.05
	done
	echo "# the peer guest never reached $1"
	return 1
}

# pair_use NAME: count one more use of the meeting point NAME in this guest
# (pair_n), so that a name met again is a new meeting.  Builtins only:
# the harness runs this for every case, and under TCG a process costs
# the guest some 60 ms.
pair_n=0
pair_use() {
	local uses=/tmp/vrnic-pair-uses
	[[ -d $uses && -d $VRNIC_RUN_DIR/pair ]] || mkdir -p "$uses" "$VRNIC_RUN_DIR/pair"
	pair_n=0
	[[ -r $uses/$1 ]] && read -r pair_n <"$uses/$1"
	pair_n=$((pair_n + 1))
	echo "$pair_n" >"$uses/$1"
}

# With three guests (vm-run --vms 3), pair_sync and pair_run meet the guest
# pair_peer names; with two, the other one.
pair_peer=

# all_sync NAME [SECONDS]: wait until every guest has reached NAME.
all_sync() {
	local dir=$VRNIC_RUN_DIR/pair i g limit=$((${2:-120} * 10)) n missing
	pair_use "all-$1"
	n=$pair_n
	: >"$dir/all-$1.$n.$VRNIC_VM"
	for ((i = 0; i < limit; i++)); do
		missing=
		for ((g = 0; g < ${VRNIC_GUESTS:-2}; g++)); do
			[[ -e $dir/all-$1.$n.$g ]] || missing=1
		done
		[[ -z $missing ]] && return 0
		nap 0.1
	done
	echo "# not every guest reached $1"
	return 1
}

# pair_listeners [tcp]: set pair_ntcp to the number of listening TCP
# sockets and pair_nrdma to that of listening rdma_cm IDs (with "tcp", it
# keeps the last pair_nrdma).  It polls while a server starts, in the
# server's guest, so TCP's come from /proc/net without a process; only
# rdma(8) costs one, and the caller runs that less often.
pair_ntcp=0
pair_nrdma=0
pair_listeners() {
	local f state line n=0
	for f in /proc/net/tcp /proc/net/tcp6; do
		while read -r _ _ _ state _; do
			[[ $state == 0A ]] && n=$((n + 1))
		done <"$f"
	done
	pair_ntcp=$n
	[[ ${1:-} == tcp ]] && return
	n=0
	while read -r line; do
		[[ $line == *LISTEN* ]] && n=$((n + 1))
	done < <(rdma res show cm_id 2>/dev/null)
	pair_nrdma=$n
}

# pair_run NAME SERVER_VM SECONDS SERVER_CMD CLIENT_CMD
# Run one client/server case across the guests: guest SERVER_VM runs
# SERVER_CMD, the other CLIENT_CMD (bash strings, so they can use the
# environment, e.g. $VRNIC_PEER_IP).  The client starts once the server
# listens (a TCP socket or an rdma_cm ID).  If the client was refused all
# the same, both sides start again: a server may listen more than once
# (perftest -R connects twice, and its client can be rejected while the
# server is between the two), so rerunning the client alone could pair it
# with the wrong listener.  The client tells the server its verdict
# (again or over) after each attempt.  Sets pair_role (server or client),
# pair_rc and pair_out (a file with the output).  A server that never
# listens (mckey joins a group) is ready once its output matches the
# regular expression in pair_ready, if that is set.
pair_out=
pair_run() {
	local name=$1 server=$2 secs=$3 scmd=$4 ccmd=$5 try tag verdict
	local dir=$VRNIC_RUN_DIR/pair tries=20
	local refused="Couldn't connect|Unable to open file descriptor|Connection refused|REJECTED|Failed status 8|unable to connect|Unexpected CM event"
	[[ -n $pair_out ]] || pair_out=$(mktemp)
	pair_rc=1
	if [[ $VRNIC_VM == "$server" ]]; then
		pair_role=server
	else
		pair_role=client
	fi
	if ! pair_sync "$name.start"; then
		echo "peer never started $name" >"$pair_out"
		return 1
	fi
	tag=$dir/$name.$pair_n
	for ((try = 0; try < tries; try++)); do
		if [[ $pair_role == server ]]; then
			local tcp0 rdma0 pid i
			pair_listeners
			tcp0=$pair_ntcp
			rdma0=$pair_nrdma
			timeout -k 5 "$secs" bash -c "$scmd" >"$pair_out" 2>&1 &
			pid=$!
			# Ready once it listens: on a TCP port (the verbs examples
			# and perftest exchange over TCP), checked every 0.05 s,
			# or an rdma_cm ID, every 0.25 s.
			for ((i = 0; i < 600; i++)); do
				if ((i % 5 == 4)); then pair_listeners; else pair_listeners tcp; fi
				((pair_ntcp > tcp0 || pair_nrdma > rdma0)) && break
				[[ -n ${pair_ready:-} ]] && grep -Eq "$pair_ready" "$pair_out" && break
				kill -0 "$pid" 2>/dev/null || break
				nap 0.05
			done
			pair_sync "$name.ready" "$secs" >/dev/null
			# Until the client's verdict, or our server ends.
			verdict=
			for ((i = 0; i < secs * 20; i++)); do
				[[ -e $tag.again.$try ]] && verdict=again && break
				[[ -e $tag.over.$try ]] && verdict=over && break
				kill -0 "$pid" 2>/dev/null || break
				nap 0.05
			done
			if [[ $verdict == again ]]; then
				kill "$pid" 2>/dev/null
				wait "$pid"
				continue
			fi
			wait "$pid"
			pair_rc=$?
			# A server that ended by itself: the client may still ask
			# for another attempt.
			for ((i = 0; i < secs * 20; i++)); do
				[[ -e $tag.again.$try || -e $tag.over.$try ]] && break
				nap 0.05
			done
			[[ -e $tag.again.$try ]] && continue
			break
		else
			pair_sync "$name.ready" "$secs" >/dev/null
			timeout -k 5 "$secs" bash -c "$ccmd" >"$pair_out" 2>&1
			pair_rc=$?
			if ((pair_rc != 0 && try + 1 < tries)) && grep -Eq "$refused" "$pair_out"; then
				: >"$tag.again.$try"
				echo "# $name: refused ($(grep -Eom1 "$refused" "$pair_out")); both sides start again"
				nap 0.5
				continue
			fi
			: >"$tag.over.$try"
			break
		fi
	done
	pair_sync "$name.done" "$secs" >>"$pair_out" || true
	return "$pair_rc"
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
