# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# vm-run's host-request server: source this.
#
# Requests guests make of the host, for what only the host can see: a
# guest writes $VRNIC_RUN_DIR/host/NAME.req and waits for NAME.resp.
#   cpu VM SECONDS   vrnicd VM's CPU use over SECONDS, from /proc/PID/stat:
#                    "percent P ticks T hz H seconds S"
#   kill-vrnicd VM   SIGKILL vrnicd VM (the device dies: a peer-death test);
#                    the run does not fail for it
#   stop-vrnicd VM SECONDS
#                    SIGSTOP vrnicd VM, and SIGCONT it SECONDS later (its
#                    heartbeat stops: the driver's watchdog and recovery)
#   stall-vrnicd VM  SIGUSR1 vrnicd VM: its admin queue stalls until a reset
#                    (the driver's command timeout and recovery)
#   restart-vrnicd VM
#                    SIGKILL vrnicd VM if it still runs and start a new one,
#                    which takes the guest's device over from the keeper
#   inject-wire QPN RKEY ADDR COUNT
#                    with --wire-tap: forge COUNT frames of each hostile
#                    kind for QP QPN of guest 0 (tests/tools/wire-tap)
#   rss VM           vrnicd VM's memory from /proc/PID/status, in KiB:
#                    "anon A file F shmem S" (anon is vrnicd's own heap)
#   vrnicctl VM ARGS...
#                    vrnicctl ARGS against vrnicd VM's control socket; the
#                    answer is its output (a trace: give it --count or
#                    --seconds, as the host serves nothing else meanwhile)
#
# What they read of vm-run: repo, sockdir, run, wire_tap,
# vrnicctl_cmd, pids_vrnicd, macs, rams; what they change: killed,
# restarts, pids_other, pids_vrnicd (start_vrnicd).
# shellcheck disable=SC2154 # those are vm-run's

cpu_ticks() { # pid: utime + stime
	local stat
	stat=$(<"/proc/$1/stat") || return 1
	stat=${stat##*) }
	# shellcheck disable=SC2086
	set -- $stat
	echo $((${12} + ${13}))
}

# A whole number of seconds, at most max: the request's duration.
request_secs() { # word max
	[[ $1 =~ ^[0-9]+$ ]] && (($1 <= $2))
}

# Each request sets out, the answer; VM is a guest whose vrnicd was
# started (serve_request checked it).
req_kill_vrnicd() { # vm
	killed[$1]=1
	# Reap it here, so that bash does not report the kill.
	{ kill -KILL "${pids_vrnicd[$1]}" && wait "${pids_vrnicd[$1]}"; } 2>/dev/null || true
	out="killed vrnicd $1"
}

req_stop_vrnicd() { # vm seconds
	local secs=${2:-x}
	request_secs "$secs" 120 || { out="error: bad request: stop-vrnicd $*"; return; }
	kill -STOP "${pids_vrnicd[$1]}"
	(sleep "$secs" && kill -CONT "${pids_vrnicd[$1]}" 2>/dev/null) &
	pids_other+=($!)
	out="stopped vrnicd $1 for ${secs}s"
}

req_stall_vrnicd() { # vm
	kill -USR1 "${pids_vrnicd[$1]}"
	out="stalled the admin queue of vrnicd $1"
}

req_restart_vrnicd() { # vm
	local vm=$1
	{ kill -KILL "${pids_vrnicd[$vm]}" && wait "${pids_vrnicd[$vm]}"; } 2>/dev/null || true
	restarts[vm]=$((${restarts[$vm]:-0} + 1))
	if start_vrnicd "$vm" "${macs[$vm]}" "${rams[$vm]}" \
		"$run/vrnicd-$vm.restart${restarts[$vm]}.log" 2>&1; then
		unset "killed[$vm]"
		out="restarted vrnicd $vm"
	else
		out="error: the new vrnicd $vm did not start"
	fi
}

req_vrnicctl() { # vm args...
	out=$(timeout 40 "${vrnicctl_cmd[@]}" -s "$sockdir/ivshmem-$1.ctl" "${@:2}" 2>&1) ||
		out="error: $out"
}

req_rss() { # vm
	out=$(awk '/^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 } /^RssShmem:/ { s = $2 }
		END { if (a == "") exit 1; printf "anon %d file %d shmem %d", a, f, s }' \
		"/proc/${pids_vrnicd[$1]}/status" 2>/dev/null) || out="error: vrnicd $1 is gone"
}

req_cpu() { # vm seconds
	local secs=${2:-x} pid=${pids_vrnicd[$1]} t0 t1 hz
	request_secs "$secs" 60 || { out="error: bad request: cpu $*"; return; }
	hz=$(getconf CLK_TCK)
	t0=$(cpu_ticks "$pid") && sleep "$secs" && t1=$(cpu_ticks "$pid") &&
		out=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v s="$secs" \
			'BEGIN { printf "percent %.2f ticks %d hz %d seconds %d", 100 * t / hz / s, t, hz, s }') ||
		out="error: vrnicd $1 is gone"
}

req_inject_wire() { # qpn rkey addr count
	if [[ -z $wire_tap || $# != 4 ]]; then
		out="error: bad request (needs --wire-tap): inject-wire $*"
		return
	fi
	out=$(python3 "$repo/tests/tools/wire-tap" --control "$sockdir/tap.ctl" \
		--request "inject $*" 2>&1) || out="error: $out"
}

# Answer the request in file REQ (NAME.req) in NAME.resp.
serve_request() { # request file
	local req=$1 resp=${1%.req}.resp words vm
	out=
	read -r -a words <"$req" || words=()
	rm -f "$req"
	case "${words[0]:-}" in
	kill-vrnicd | stop-vrnicd | stall-vrnicd | restart-vrnicd | vrnicctl | rss | cpu)
		vm=${words[1]:-x}
		if [[ $vm =~ ^[0-9]+$ && -n ${pids_vrnicd[$vm]:-} ]]; then
			"req_${words[0]//-/_}" "$vm" "${words[@]:2}"
		else
			out="error: bad request: ${words[*]}"
		fi
		;;
	inject-wire) req_inject_wire "${words[@]:1}" ;;
	*) out="error: unknown request: ${words[*]}" ;;
	esac
	echo "$out" >"$resp.tmp" && mv "$resp.tmp" "$resp"
}
