# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA, for vrnic_nfsrdma.sh (one guest) and
# vrnic_pair_nfsrdma.sh (two guests): source after lib.sh.
#
# The server is the kernel's nfsd, NFSv4 only, exporting a tmpfs directory
# and listening for RPC-over-RDMA on 20049 (`rdma 20049` in
# /proc/fs/nfsd/portlist).  The guest's root is the host's, read-only, so
# the server's state directory and /etc/exports are tmpfs and a bind mount,
# and the test starts rpcbind, rpc.mountd and the nfsd threads itself.
# The client mounts with -o rdma,port=20049,vers=4.2, writes 256 MiB of
# random files (checksummed as they are written), mounts again so that
# nothing comes from its page cache, reads them back and compares.  The
# server checks the same sums on its disk.  xprtrdma registers the
# client's pages with FRWR; the server's svcrdma moves the data with RDMA
# READ (the client's writes) and RDMA WRITE (its reads) through rdma_rw.

nfsrdma_port=20049
nfsrdma_export=/tmp/nfsrdma-export
nfsrdma_mnt=/tmp/nfsrdma-mnt
nfsrdma_files=8
nfsrdma_file_mib=32

# ktap results each side reports.
nfsrdma_server_results=1
nfsrdma_client_results=6

# nfsrdma_server_setup ADDR: serve $nfsrdma_export over RDMA on ADDR.
nfsrdma_server_setup() {
	local out rc=0 ports
	out=$({
		mkdir -p "$nfsrdma_export" &&
			echo "$nfsrdma_export *(rw,no_root_squash,insecure,fsid=0,sync,no_subtree_check)" \
				>/tmp/nfsrdma-exports &&
			mount --bind /tmp/nfsrdma-exports /etc/exports &&
			mount -t tmpfs -o mode=755 tmpfs /var/lib/nfs &&
			mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/v4recovery &&
			touch /var/lib/nfs/etab /var/lib/nfs/rmtab /var/lib/nfs/state &&
			modprobe nfsd && modprobe rpcrdma &&
			{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
			# No client has state to reclaim: keep the grace period short.
			echo 10 >/proc/fs/nfsd/nfsv4gracetime &&
			rpcbind -w && exportfs -ra && rpc.mountd -N 3 && rpc.nfsd -N 3 4 &&
			echo "rdma $nfsrdma_port" >/proc/fs/nfsd/portlist
	} 2>&1) || rc=1
	nfsrdma_trace_on 1 "${nfsrdma_server_events[@]}"
	ports=$(sort -u /proc/fs/nfsd/portlist 2>/dev/null | tr '\n' ' ')
	[[ $rc == 0 && $ports == *"rdma $nfsrdma_port"* ]]
	ktap_check "server: nfsd on $1, portlist ${ports% }" $? "$out" "$(dmesg | tail -n 20)"
}

nfsrdma_server_teardown() {
	nfsrdma_trace_on 0 "${nfsrdma_server_events[@]}"
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount /proc/fs/nfsd 2>/dev/null
	umount /var/lib/nfs /etc/exports 2>/dev/null
	modprobe -r nfsd 2>/dev/null
	rm -rf "$nfsrdma_export" /tmp/nfsrdma-exports
}

# nfsrdma_server_check SUMS: the server's copy of the files has the sums
# the client computed (an md5sum -c list of relative names).  MD5 finds
# any corruption here and costs the guest a third of SHA-256's CPU under
# TCG (2.8 s less per pass over 256 MiB).
nfsrdma_server_check() {
	local out
	out=$(cd "$nfsrdma_export" && md5sum -c --quiet "$1" 2>&1)
	ktap_check "server: the $nfsrdma_files files on its disk have the client's sums" $? "$out"
	ktap_diag "server: $(nfsrdma_quiet_spell 20)"
}

nfsrdma_mount() {
	timeout 120 mount -t nfs -o "rdma,port=$nfsrdma_port,vers=4.2" "$1:/" "$nfsrdma_mnt" 2>&1
}

# The client's RPC-over-RDMA connects and disconnects, and rdma_cm's
# events under them, in the trace buffer: a mount that connected twice
# shows why.  Each RPC's Send and its reply's receive completion go there
# too (a few thousand events, which the 4 MiB buffer holds), and so, on
# the server, do svcrdma's receive completions and Sends: an RPC left
# unanswered until the client's timeout shows as a quiet spell, and the
# events around it say which side went quiet.
nfsrdma_trace_events=(rpcrdma/xprtrdma_op_connect rpcrdma/xprtrdma_connect
	rpcrdma/xprtrdma_disconnect ib_cma/cm_event_handler
	rpcrdma/xprtrdma_post_send rpcrdma/xprtrdma_wc_receive)
nfsrdma_server_events=(rpcrdma/svcrdma_wc_recv rpcrdma/svcrdma_post_send)

nfsrdma_trace_conn() { # 1 (clear, on) or 0 (off)
	nfsrdma_trace_on "$1" "${nfsrdma_trace_events[@]}"
}

# nfsrdma_trace_on 1|0 EVENT...: trace_events, in a 4 MiB buffer.
nfsrdma_trace_on() {
	[[ $1 == 1 ]] && kernel_trace_mount && echo 4096 >$kernel_trace/buffer_size_kb
	trace_events "$@"
}

# nfsrdma_quiet_spell [SECONDS]: the longest time between two events in
# the trace buffer; with SECONDS, the events around it too if it lasted
# that long.
nfsrdma_quiet_spell() {
	grep -v '^#' $kernel_trace/trace 2>/dev/null | awk -v show="${1:-0}" '
		{
			t = -1
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) + 0; break }
			if (t < 0) next
			n++; line[n] = $0; ts[n] = t
			if (n > 1 && t - ts[n - 1] > gap) { gap = t - ts[n - 1]; at = n }
		}
		END {
			if (!at) { print "the trace holds fewer than two events"; exit }
			printf "longest quiet spell in the trace: %.1f s (of %d events)\n", gap, n
			if (show > 0 && gap >= show)
				for (i = at - 6; i < at + 4 && i <= n; i++) if (i >= 1) print line[i]
		}'
}

# nfsrdma_client_run ADDR SUMS: mount ADDR's export, write the files,
# remount, read them back; SUMS gets the sums of what was written.
nfsrdma_client_run() {
	local addr=$1 sums=$2 out rc=0 opts i xprt
	modprobe rpcrdma
	nfsrdma_trace_conn 1
	mkdir -p "$nfsrdma_mnt"
	out=$(nfsrdma_mount "$addr") || rc=1
	opts=$(awk -v m="$nfsrdma_mnt" '$2 == m { print $4 }' /proc/mounts)
	[[ $rc == 0 && $opts == *proto=rdma* && $opts == *vers=4.2* && $opts == *port=$nfsrdma_port* ]]
	rc=$?
	ktap_check "mount -t nfs -o rdma,port=$nfsrdma_port,vers=4.2 $addr:/: $(grep -Eo 'vers=[^,]+|proto=[^,]+' <<<"$opts" | paste -sd ' ')" \
		"$rc" "$out" "$(dmesg | tail -n 20)"
	if ! mountpoint -q "$nfsrdma_mnt"; then
		for i in 1 2 3 4 5; do ktap_skip "client step $i" "not mounted"; done
		return
	fi

	# Each file's sum is taken from the stream as it goes to the server.
	local start=$SECONDS
	: >"$sums"
	rc=0
	for ((i = 0; i < nfsrdma_files; i++)); do
		out=$(head -c "${nfsrdma_file_mib}M" /dev/urandom | tee "$nfsrdma_mnt/f$i" | md5sum) || rc=1
		echo "${out%% *}  f$i" >>"$sums"
	done
	sync "$nfsrdma_mnt"/f* || rc=1
	ktap_check "wrote $((nfsrdma_files * nfsrdma_file_mib)) MiB of random files in $((SECONDS - start)) s" $rc \
		"$(dmesg | tail -n 20)"

	out=$(umount "$nfsrdma_mnt" 2>&1 && nfsrdma_mount "$addr")
	ktap_check "umount, mount again (nothing left in the client's cache)" $? "$out"
	start=$SECONDS
	out=$(cd "$nfsrdma_mnt" && md5sum -c "$sums" 2>&1)
	ktap_check "read back $nfsrdma_files files in $((SECONDS - start)) s: every checksum matches" $? "$out"

	# The data went over RPC-over-RDMA, on the one connection the mount
	# made: mountstats' xprt line is "rdma srcport bind_count
	# connect_count ...", and a per-op line counts the READs and their bytes
	out=$(awk -v m="$nfsrdma_mnt" '$1 == "device" { on = ($5 == m) } on' /proc/self/mountstats)
	# ("READ: ops transmissions timeouts bytes_sent bytes_received ...").
	xprt=$(awk '$1 == "xprt:" { print $2, $5 }' <<<"$out")
	local reads bytes
	reads=$(awk '$1 == "READ:" { print $2 }' <<<"$out")
	bytes=$(awk '$1 == "READ:" { print $6 }' <<<"$out")
	[[ $xprt == "rdma 1" && ${bytes:-0} -ge $((nfsrdma_files * nfsrdma_file_mib << 20)) ]]
	ktap_check "the second mount read $((${bytes:-0} >> 20)) MiB in ${reads:-0} READs over one RDMA connection" \
		$? "xprt: $(awk '$1 == "xprt:"' <<<"$out") (rdma srcport bind_count connect_count ...)" \
		"$(nfsrdma_quiet_spell 1)" \
		"$(grep -v '^#' $kernel_trace/trace 2>/dev/null | grep -Ev 'post_send|wc_receive|svcrdma' | tail -n 20)" \
		"$(head -n 12 <<<"$out")"
	out=$(umount "$nfsrdma_mnt" 2>&1)
	ktap_check "umount" $? "$out"
	nfsrdma_trace_conn 0
}

# nfsrdma_no_trouble MARK WHO: no RPC-over-RDMA errors and no kernel
# warnings since MARK.
nfsrdma_no_trouble() {
	local out
	out=$(dmesg_since "$1" | grep -Ei 'rpcrdma|svcrdma|xprtrdma|nfs: server .* not responding' |
		grep -Ei 'error|fail|flush|lost|disconnect|not responding')
	out+=$(dmesg_since "$1" | kernel_trouble)
	[[ -z $out ]]
	ktap_check "$2: no RPC-over-RDMA error, no kernel warnings" $? "$out"
}
