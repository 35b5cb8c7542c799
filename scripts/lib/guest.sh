# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# The guest harness: what a program run in a guest of scripts/vm-run uses
# to find its place (require_vm, require_pair, peer_kind), ask the host
# (host_request), meet the other guests (pair_sync, all_sync) and run a
# client/server case across them (pair_run).  The selftests get it through
# tests/selftests/lib.sh; make bench's guest side (scripts/bench-pair)
# sources it alone.  Builtins where it polls: under TCG a process costs the
# guest tens of milliseconds.

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

# ucx_perftest_cmd: the command that runs ucx_perftest here.  Debian
# 13's UCX is built with MPI, and its ucx_perftest then takes a stdin that
# is no terminal for mpirun's and wants two MPI processes ("This test
# should be run with exactly 2 processes in p2p case"): -P 0 turns that
# mode off.  Debian 12's and sid's have no such mode, nor -P.
ucx_perftest_cmd() {
	if ucx_perftest -h 2>&1 | grep -q -- '-P <0|1>'; then
		echo "ucx_perftest -P 0"
	else
		echo ucx_perftest
	fi
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

# Skip unless this UCX has its verbs transports: rc_verbs and ud_verbs
# live in its "ib" module.  Debian sid's UCX 1.23.0~rc1-1 was built
# without it (its ucx_info -b: uct_MODULES ":rocm:cma:ze"), so UCX offers
# no RDMA device at all there, and Open MPI's UCX PML does not load.
require_ucx_verbs() {
	local mods
	mods=$(ucx_info -b 2>/dev/null | awk '$2 == "uct_MODULES" { gsub(/"/, "", $3); print $3 }')
	[[ $mods == *:ib:* || $mods == *:ib ]] && return 0
	echo "TAP version 13"
	echo "1..0 # SKIP UCX $(ucx_info -v 2>/dev/null | awk '/^# (Library )?[Vv]ersion:? / { print $NF; exit }') has no verbs transports" \
		"(its uct modules: ${mods:-none}): nothing to run over $VRNIC_IBDEV"
	exit 4
}

# gid_index_of GID TYPE: the index of the GID table entry of
# $VRNIC_IBDEV's port 1 holding GID (as sysfs writes it out:
# 0000:...:0001) with that type ("RoCE v2", "IB/RoCE v1"); waits up to
# 10 s for it to appear.
gid_index_of() {
	local port=/sys/class/infiniband/$VRNIC_IBDEV/ports/1 g i try gid type
	for ((try = 0; try < 100; try++)); do
		for g in "$port"/gids/*; do
			i=${g##*/}
			read -r gid <"$g" 2>/dev/null || continue
			[[ $gid == "$1" ]] || continue
			read -r type <"$port/gid_attrs/types/$i" 2>/dev/null || continue
			[[ $type == "$2" ]] && { echo "$i"; return 0; }
		done
		nap 0.1
	done
	return 1
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

# proc_tree PID: PID and its descendants, one a line.
proc_tree() {
	local p
	echo "$1"
	for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		proc_tree "$p"
	done
}

# where_stuck PID: where PID and its descendants wait: each thread's
# state, wait channel and kernel stack, and with gdb each thread's user
# stack.  For a test's report on a process that will not end.
where_stuck() {
	local p t
	for p in $(proc_tree "$1"); do
		[[ -r /proc/$p/comm ]] || continue
		echo "## pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		for t in /proc/"$p"/task/*; do
			echo "### thread ${t##*/} ($(<"$t/comm")): $(grep -m1 '^State' "$t/status" 2>/dev/null), wchan $(<"$t/wchan")"
			cat "$t/stack" 2>/dev/null
		done
		# The shells and timeouts around a program: their user stacks
		# say nothing, and gdb costs seconds under TCG.
		case $(<"/proc/$p/comm") in bash | timeout) continue ;; esac
		command -v gdb >/dev/null || continue
		timeout 60 gdb -q -batch -p "$p" -ex 'thread apply all bt' 2>/dev/null |
			grep -E '^(Thread|#)'
	done
}

# wait_bounded SECONDS PID [PEER...]: PID's exit status (PID a child of
# this shell), waiting at most SECONDS.  Past that: where PID and each
# PEER wait (where_stuck), PID and its descendants killed, and 124.  For
# a test that must say where a step hung, which timeout(1) cannot.
wait_bounded() {
	local limit=$1 pid=$2 i p
	shift 2
	for ((i = 0; i < limit * 10; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return
		fi
		nap 0.1
	done
	echo "# pid $pid still running after ${limit} s; it waits here:"
	where_stuck "$pid"
	for p; do
		kill -0 "$p" 2>/dev/null || continue
		echo "# and beside it:"
		where_stuck "$p"
	done
	# shellcheck disable=SC2046 # one pid a word
	kill -9 $(proc_tree "$pid") 2>/dev/null
	wait "$pid" 2>/dev/null
	return 124
}

# stuck_in_exit FILE: whether where_stuck's report (FILE) has a thread
# that called exit() from a signal handler while it was already in exit():
# glibc's exit lock is then held by the thread itself, which waits for it
# for ever.  exit() is not async-signal-safe; that is the program's bug.
stuck_in_exit() {
	awk '/^Thread /          { inner = 0; sig = 0 }
	     /__run_exit_handlers/ { if (sig) found = 1; inner = 1 }
	     /<signal handler called>/ { if (inner) sig = 1 }
	     END { exit !found }' "$1"
}

# pair_where NAME: for a client that waits too long, where pair_run's
# server waits now (where_stuck's report, from the server's guest), or a
# line saying why not.  The server answers between its other checks, so
# this returns within a few seconds plus gdb's time.
pair_where() {
	local ask=${PAIR_TAG:?pair_where runs in a pair_run client}.where-$1 i
	: >"$ask.ask"
	for ((i = 0; i < 1800; i++)); do
		if [[ -e $ask ]]; then
			cat "$ask"
			return 0
		fi
		nap 0.1
	done
	echo "# the server's guest did not answer in 180 s"
	return 1
}

# pair_answer_where PID TAG: answer each pair_where that asked about
# attempt TAG with where PID's tree waits.
pair_answer_where() {
	local ask
	for ask in "$2".where-*.ask; do
		[[ -e $ask ]] || continue
		if kill -0 "$1" 2>/dev/null; then
			where_stuck "$1"
		else
			echo "# the server has ended"
		fi >"${ask%.ask}.tmp" 2>&1
		# The question goes before the answer comes: an asker that
		# sees its answer finds nothing of its question left.
		rm -f "$ask"
		mv "${ask%.ask}.tmp" "${ask%.ask}"
	done
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
# regular expression in pair_ready, if that is set.  When a server's
# timeout ended it after the client was done, pair_stuck names the file
# that says where it waited (where_stuck).  Both commands see PAIR_TAG,
# the attempt's name, with which a client can ask where the server waits
# (pair_where).
pair_out=
pair_stuck=
pair_run() {
	local name=$1 server=$2 secs=$3 scmd=$4 ccmd=$5 try tag tries=20
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
	tag=$VRNIC_RUN_DIR/pair/$name.$pair_n
	for ((try = 0; try < tries; try++)); do
		if [[ $pair_role == server ]]; then
			pair_serve_once "$name" "$secs" "$scmd" "$tag.$try" || break
		else
			pair_use_once "$name" "$secs" "$ccmd" "$tag.$try" $((try + 1 < tries)) || break
		fi
	done
	pair_sync "$name.done" "$secs" >>"$pair_out" || true
	return "$pair_rc"
}

# pair_serve_once NAME SECONDS SERVER_CMD TAG: one attempt of pair_run's
# server; pair_rc is its status.  Succeeds when the client asks for
# another attempt (it left TAG's "again" file), fails when it is over.
pair_serve_once() {
	local name=$1 secs=$2 tag=$4 pid i tcp0 rdma0
	pair_listeners
	tcp0=$pair_ntcp
	rdma0=$pair_nrdma
	PAIR_TAG=$tag timeout -k 5 "$secs" bash -c "$3" >"$pair_out" 2>&1 &
	pid=$!
	# Ready once it listens: on a TCP port (the verbs examples and
	# perftest exchange over TCP), checked every 0.05 s, or an rdma_cm ID,
	# every 0.25 s.
	for ((i = 0; i < 600; i++)); do
		if ((i % 5 == 4)); then pair_listeners; else pair_listeners tcp; fi
		((pair_ntcp > tcp0 || pair_nrdma > rdma0)) && break
		[[ -n ${pair_ready:-} ]] && grep -Eq "$pair_ready" "$pair_out" && break
		kill -0 "$pid" 2>/dev/null || break
		nap 0.05
	done
	pair_sync "$name.ready" "$secs" >/dev/null
	# Until the client's verdict, or our server ends.
	for ((i = 0; i < secs * 20; i++)); do
		if [[ -e $tag.again ]]; then
			kill "$pid" 2>/dev/null
			wait "$pid"
			return 0
		fi
		[[ -e $tag.over ]] && break
		kill -0 "$pid" 2>/dev/null || break
		((i % 20 == 19)) && pair_answer_where "$pid" "$tag"
		nap 0.05
	done
	# A server still running 10 s after the client's verdict may be
	# stuck: note where it waits, and say so if its timeout ends it.
	if [[ -e $tag.over ]]; then
		for ((i = 0; i < 200; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			nap 0.05
		done
		kill -0 "$pid" 2>/dev/null && where_stuck "$pid" >"$tag.stuck" 2>&1
	fi
	wait "$pid"
	pair_rc=$?
	pair_stuck=
	if ((pair_rc == 124 || pair_rc == 137)) && [[ -s $tag.stuck ]]; then
		# shellcheck disable=SC2034 # the tests read it
		pair_stuck=$tag.stuck
		echo "# $name: the server was still running 10 s after the client ended; it waited here:"
		cat "$tag.stuck"
	fi >>"$pair_out"
	# A server that ended by itself: the client may still ask for another
	# attempt.
	for ((i = 0; i < secs * 20; i++)); do
		[[ -e $tag.again || -e $tag.over ]] && break
		((i % 20 == 19)) && pair_answer_where "$pid" "$tag"
		nap 0.05
	done
	[[ -e $tag.again ]]
}

# pair_use_once NAME SECONDS CLIENT_CMD TAG RETRY: one attempt of
# pair_run's client; pair_rc is its status.  If the server refused it and
# RETRY is 1, it tells the server to start again (TAG's "again" file) and
# succeeds; else it says it is over and fails.
pair_use_once() {
	local name=$1 secs=$2 tag=$4
	local refused="Couldn't connect|Unable to open file descriptor|Connection refused|REJECTED|Failed status 8|unable to connect|Unexpected CM event"
	pair_sync "$name.ready" "$secs" >/dev/null
	PAIR_TAG=$tag timeout -k 5 "$secs" bash -c "$3" >"$pair_out" 2>&1
	pair_rc=$?
	if ((pair_rc != 0 && $5)) && grep -Eq "$refused" "$pair_out"; then
		: >"$tag.again"
		echo "# $name: refused ($(grep -Eom1 "$refused" "$pair_out")); both sides start again"
		nap 0.5
		return 0
	fi
	: >"$tag.over"
	return 1
}
