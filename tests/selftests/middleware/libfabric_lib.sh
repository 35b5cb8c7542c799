# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libfabric's fi_pingpong over the verbs provider, for vrnic_libfabric.sh
# (one guest) and vrnic_pair_libfabric.sh.  Every case checks each message
# (-c) at every size up to 1 MiB.  Over ofi_rxm the verbs CQ must hold
# (128 + 128) x FI_UNIVERSE_SIZE (1024) = 262144 entries; a device with
# fewer (rxe: 32767) fails fi_enable with EINVAL.

# NAME|OPTIONS; DEV stands for the device's name.
fi_cases=(
	"verbs, msg endpoint|-p verbs -e msg -d DEV"
	"verbs;ofi_rxm, rdm endpoint|-p 'verbs;ofi_rxm' -e rdm -d DEV"
	"verbs;ofi_rxm, rdm endpoint, tagged|-p 'verbs;ofi_rxm' -e rdm -m tagged -d DEV"
	"verbs, dgram endpoint (UD)|-p verbs -e dgram -d DEV-dgram"
)
fi_port=47600
# The verbs provider's dgram endpoints address from the GID at
# FI_VERBS_GID_IDX, 0 unless told: on vrnic, as on ConnectX, the RoCEv1
# link-local GID, which an rxe peer (RoCEv2 only) cannot hear.  Every guest
# uses its RoCEv2 GID of the NIC's IPv4 address instead, as a user must.
export FI_VERBS_GID_IDX=$VRNIC_GID_INDEX

# fi_options CASE DEV: the options of a case, for a bash command line.
fi_options() {
	local opts=${1#*|}
	echo "${opts//DEV/$2} -c -I 50"
}

# fi_pingpong_ok OUTPUT: the run printed its 1 MiB row (or, on a dgram
# endpoint, its largest), and no error.
fi_last_row() {
	grep -E '^[0-9]+[kmg]? +[0-9]+ +=[0-9]+ ' <<<"$1" | tail -n 1 | tr -s ' '
}

# A failure names its cause on the result line itself (the exit status and
# the first line that speaks of an error), for logs that keep only that;
# its diagnostics are every line of both sides but the result rows (a
# client that exits 1 after its last row has printed only a backtrace).
fi_check() {
	local name=$1 out=$2 rc=$3 where=${4:-} row why
	row=$(fi_last_row "$out")
	why=$(grep -m1 -iE 'error|fail' <<<"$out" | cut -c1-160)
	if [[ $rc == 0 && -n $row && -z $why ]]; then
		ktap_ok "fi_pingpong -c $name$where: $row"
	else
		ktap_not_ok "fi_pingpong -c $name$where: ${row:-no result}; exit $rc${why:+; $why}" \
			"$(grep -vE '^[0-9]+[kmg]? +[0-9]+ +=[0-9]+ ' <<<"$out" | head -n 30)"
	fi
}
