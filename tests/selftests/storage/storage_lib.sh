# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# The skeleton of the two-guest storage tests (vrnic_pair_nvmeof.sh,
# vrnic_pair_iser.sh, vrnic_pair_nfsrdma.sh, vrnic_pair_srp.sh): source
# after lib.sh.  In each round one guest serves and the other uses the
# storage across the wire: the server comes up, the client connects,
# writes and reads back with verify, disconnects; the server comes down;
# neither kernel may complain.  Against an rxe peer there is a round each
# way.  storage_pair P runs the rounds; the protocol P supplies only what
# differs, as functions and variables named P_...:
#
#   P_serve ADDR PARAM      bring the server up on ADDR: P_serve_results
#   P_unserve PARAM         take it down again (no results)
#   P_use PEER MARK PARAM   the client's run against the server at PEER,
#                           MARK being the dmesg mark from before:
#                           P_use_results
# and, where it needs them:
#   P_trouble MARK WHAT     the one result on the kernel's log since MARK
#                           (default: no_kernel_warnings)
#   P_hello                 the client, before the server comes up (SRP
#                           hands over its port ID)
#   P_serving PARAM         the server while the client runs:
#                           P_serving_results
#   P_served PARAM          the server once the client is done:
#                           P_served_results
#   P_used PARAM            the client after P_use: as many results as
#                           P_used_results PARAM prints
#   P_rounds                the rounds, SERVER_VM:PARAM (default 0:, and
#                           1: against an rxe peer)
# Besides those, the server reports that the client finished, and each
# side what P_trouble says.  The guests meet at P.hello, P.ready and
# P.done.

# storage_fn P NAME: the function P_NAME, if the protocol has it.
storage_fn() { declare -F "$1_$2" >/dev/null; }

# storage_count P NAME [ARG]: the results P_NAME reports (0 without it).
storage_count() {
	local -n _n=$1_$2_results 2>/dev/null
	if storage_fn "$1" "$2"; then
		if declare -F "$1_$2_results" >/dev/null; then
			"$1_$2_results" "${@:3}"
		else
			echo "${_n:-0}"
		fi
	else
		echo 0
	fi
}

# storage_rounds P: the rounds, in storage_round (an array).
storage_rounds() {
	local -n _r=$1_rounds 2>/dev/null
	if declare -p "$1_rounds" >/dev/null 2>&1; then
		storage_round=("${_r[@]}")
	else
		storage_round=(0:)
		[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && storage_round+=(1:)
	fi
}

# storage_plan P: this guest's KTAP plan over the rounds.
storage_plan() {
	local p=$1 r n=0 param
	for r in "${storage_round[@]}"; do
		param=${r#*:}
		if [[ $VRNIC_VM == "${r%%:*}" ]]; then
			n=$((n + $(storage_count "$p" serve) + $(storage_count "$p" serving) + \
				$(storage_count "$p" served) + 2))
		else
			n=$((n + $(storage_count "$p" use) + $(storage_count "$p" used "$param") + 1))
		fi
	done
	ktap_plan "$n"
}

storage_trouble() { # P MARK WHAT
	if storage_fn "$1" trouble; then
		"$1_trouble" "$2" "$3"
	else
		no_kernel_warnings "$2" "$3"
	fi
}

storage_server() { # P SERVER_VM PARAM MARK
	local p=$1 s=$2 param=$3 mark=$4
	pair_sync "$p.hello" 120
	"${p}_serve" "$VRNIC_IP" "$param"
	pair_sync "$p.ready" 120
	storage_fn "$p" serving && "${p}_serving" "$param"
	pair_sync "$p.done" 840
	ktap_check "server vm$s${param:+ $param}: the client finished (see its results)" $?
	storage_fn "$p" served && "${p}_served" "$param"
	"${p}_unserve" "$param"
	storage_trouble "$p" "$mark" "server vm$s"
}

storage_client() { # P SERVER_VM PARAM MARK
	local p=$1 s=$2 param=$3 mark=$4
	storage_fn "$p" hello && "${p}_hello"
	pair_sync "$p.hello" 120
	pair_sync "$p.ready" 120
	"${p}_use" "$VRNIC_PEER_IP" "$mark" "$param"
	storage_fn "$p" used && "${p}_used" "$param"
	pair_sync "$p.done" 840
	storage_trouble "$p" "$mark" "client, server vm$s${param:+ $param}"
}

# storage_pair P: plan, then every round, then finish.
storage_pair() {
	local p=$1 r mark
	storage_rounds "$p"
	storage_plan "$p"
	for r in "${storage_round[@]}"; do
		mark=$(dmesg_mark)
		if [[ $VRNIC_VM == "${r%%:*}" ]]; then
			storage_server "$p" "${r%%:*}" "${r#*:}" "$mark"
		else
			storage_client "$p" "${r%%:*}" "${r#*:}" "$mark"
		fi
	done
	ktap_finish
}
