# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSCSI Extensions for RDMA, for vrnic_iser.sh (one guest) and
# vrnic_pair_iser.sh (two guests): source after lib.sh.
#
# The target is LIO configured through targetcli: a 256 MiB ramdisk LUN
# behind an iSCSI target in demo mode, on a portal with iSER enabled
# (ib_isert).  The initiator is open-iscsi with its built-in iser
# interface (ib_iser): discovery, login, fio with crc32c verify (4 KiB
# random at QD 32 with 2 jobs, 128 KiB sequential, 1 MiB requests that
# need multi-page FRWRs), logout, login again, verify again, logout.  The
# guest's root is the host's, read-only: targetcli keeps its preferences
# in /tmp and saves nothing, open-iscsi's database goes on tmpfs, and the
# test starts iscsid itself.
#
# An rxe initiator can fail on its own: Linux 6.1's rxe runs a finished
# local work request again when it retransmits.  req_retry() moves the
# requester back to the send queue's consumer index, and rxe_requester()
# hands whatever work request it finds there to rxe_do_local_ops(),
# finished or not.  iSER posts a REG_MR before each command's SEND, so a
# retransmitted SEND (after an ACK timeout or an RNR NAK) registers a
# valid MR again: "rxe_reg_fast_mr: mr->lkey = ... not free", the QP
# fails, and rxe's MR cleanup warns later.  The pair test prints both
# sides' NAK and retransmission counters after each round.
#
# iscsiadm (open-iscsi 2.1.8, and upstream still) can lose the target's
# SendTargets response when discovering over iser.  It sends the Text
# request through netlink and reads the kernel's acknowledgement; when the
# response is quicker than that (a fast target, a slow initiator guest:
# vrnic serving an rxe guest under load), its netlink code reads the
# RECV_PDU event first ("expecting event 19, got 101, handling...") and
# keeps it aside, but discovery_sendtargets() then poll()s the netlink
# socket for it, which stays empty until the discovery timeout.  Its
# reconnect after that reuses the event it kept and crashes (and leaks the
# second session).  So the initiator's iscsid.conf gives discovery one
# connection and a 10 s timeout, and iser_discover runs iscsiadm again
# after exactly this loss: a timeout whose debug output shows the
# RECV_PDU read during the send.
#
# LIO's iSER target can reject the SendTargets Text request itself
# ("Unable to accept text parameter length: 16 greater than
# MaxXmitDataSegmentLength 0" on the target; "pdu (op 0x4 ...) rejected.
# Reason code 0x4" on the initiator).  It sets a connection's parameters
# (iscsi_post_login_handler) only after it posted the final Login
# Response, and the initiator's Text request can arrive, and be handled
# by isert's completion work, before that.  Seen on Linux 6.12, with vrnic
# and with rxe as the target's device.  iser_discover runs iscsiadm again
# after exactly this rejection, too.

iser_iqn=iqn.2026-12.org.vrnic:iser-test
iser_port=3260
export TARGETCLI_HOME=/tmp/targetcli

# ktap results each side reports.
iser_target_results=1
iser_initiator_results=11

# iser_target_setup ADDR: serve the LUN on ADDR:3260 over iSER.
iser_target_setup() {
	local out rc=0 np=/sys/kernel/config/target/iscsi/$iser_iqn/tpgt_1/np/$1:$iser_port
	system_bus_start || rc=1
	out=$(targetcli 2>&1 <<-EOF
		set global auto_save_on_exit=false
		set global auto_add_default_portal=false
		/backstores/ramdisk create name=iser0 size=256M
		/iscsi create $iser_iqn
		/iscsi/$iser_iqn/tpg1/luns create /backstores/ramdisk/iser0
		/iscsi/$iser_iqn/tpg1/portals create $1 $iser_port
		/iscsi/$iser_iqn/tpg1/portals/$1:$iser_port enable_iser true
		/iscsi/$iser_iqn/tpg1 set attribute authentication=0 generate_node_acls=1 demo_mode_write_protect=0 cache_dynamic_acls=1
	EOF
	) || rc=1
	[[ $rc == 0 && $(cat "$np/iser" 2>/dev/null) == 1 ]]
	ktap_check "target: LIO $iser_iqn, ramdisk LUN, iSER portal $1:$iser_port" $? "$out" \
		"$(dmesg | tail -n 20)"
}

iser_target_teardown() {
	targetcli clearconfig confirm=True >/dev/null 2>&1
	rmdir /sys/kernel/config/target/iscsi 2>/dev/null
	modprobe -r ib_isert iscsi_target_mod target_core_mod 2>/dev/null
	system_bus_stop
}

# iscsid's own log (debug level 4: it names every PDU and kernel event).
iser_iscsid_log=/tmp/iscsid.log

# iser_iscsid_start: open-iscsi's database on tmpfs (in /etc/iscsi, and
# in /var/lib/iscsi where it is there: Debian 13), a name of this guest's
# own, and iscsid, in the foreground of a session of its own (its immediate
# stop signals its whole process group) with its log in iser_iscsid_log.
# The guest runs no udev, so nothing loads sd_mod when the LUN appears.
iser_iscsid_start() {
	mkdir -p /tmp/iser-etc /run/lock/iscsi &&
		grep -v '^iscsid.startup' /etc/iscsi/iscsid.conf >/tmp/iser-etc/iscsid.conf &&
		printf '%s\n' "discovery.sendtargets.reopen_max = 0" \
			"discovery.sendtargets.timeo.active_timeout = 10" >>/tmp/iser-etc/iscsid.conf &&
		mount -t tmpfs -o mode=755 tmpfs /etc/iscsi &&
		{ [[ ! -d /var/lib/iscsi ]] || mount -t tmpfs -o mode=700 tmpfs /var/lib/iscsi; } &&
		cp /tmp/iser-etc/iscsid.conf /etc/iscsi/ &&
		echo "InitiatorName=iqn.2026-12.org.vrnic:initiator-vm$VRNIC_VM" \
			>/etc/iscsi/initiatorname.iscsi &&
		modprobe sd_mod && modprobe ib_iser || return 1
	setsid iscsid -f -d 4 >"$iser_iscsid_log" 2>&1 </dev/null &
	# Exit status 20: iscsiadm cannot reach iscsid (yet).
	retry 100 0.1 iser_iscsid_up
}

iser_iscsid_up() {
	iscsiadm -m session >/dev/null 2>&1
	[[ $? != 20 ]]
}

iser_iscsid_stop() {
	iscsiadm -m node -o delete >/dev/null 2>&1
	iscsiadm -k 0 >/dev/null 2>&1
	umount /etc/iscsi 2>/dev/null
	umount /var/lib/iscsi 2>/dev/null
	modprobe -r ib_iser 2>/dev/null
}

# The session's disk (/dev/sdX), once the SCSI scan has found it.
iser_disk() {
	local try disk
	for ((try = 0; try < 100; try++)); do
		disk=$(iscsiadm -m session -P 3 2>/dev/null | awk '/Attached scsi disk/ { print $4 }')
		if [[ -n $disk && -b /dev/$disk ]]; then
			echo "/dev/$disk"
			return 0
		fi
		nap 0.2
	done
	return 1
}

# iser_login ADDR WHAT: log in over iSER; the disk goes to iser_dev.
iser_login() {
	local out rc=0 transport
	out=$(iscsiadm -m node -T $iser_iqn -p "$1:$iser_port" -I iser --login 2>&1) || rc=1
	iser_dev=$(iser_disk) || rc=1
	transport=$(iscsiadm -m session -P 1 2>/dev/null | awk '/Iface Transport:/ { print $3 }')
	[[ $rc == 0 && $transport == iser ]]
	ktap_check "$2: ${iser_dev:-no disk}, transport ${transport:-none}" $? "$out" \
		"$(dmesg | tail -n 20)" "iscsid: $(grep -v '^iscsid: poll' "$iser_iscsid_log" | tail -n 25)"
}

iser_logout() {
	local out rc
	out=$(iscsiadm -m node -T $iser_iqn -p "$1:$iser_port" -I iser --logout 2>&1)
	rc=$?
	ktap_check "$2: $(grep -Eo 'Logout of \[.*\] successful' <<<"$out" | head -n 1)" "$rc" "$out"
}

# iser_initiator_run ADDR MARK: everything the initiator does against
# ADDR; MARK is the dmesg mark from before.
iser_initiator_run() {
	local addr=$1 mark=$2 out rc=0
	out=$(iser_iscsid_start 2>&1) || rc=1
	ktap_check "initiator: iscsid running, ib_iser loaded" $rc "$out"
	iser_discover "$addr"
	ktap_check "iscsiadm -m discovery -I iser -p $addr: $iser_iqn$iser_lost" $? "$iser_out" \
		"$(dmesg | tail -n 20)" "iscsid: $(grep -v '^iscsid: poll' "$iser_iscsid_log" | tail -n 25)"

	iser_login "$addr" "login over iSER"
	disk_verify "$iser_dev"
	iser_logout "$addr" "logout"

	iser_login "$addr" "login again"
	disk_verify_again "$iser_dev"
	iser_logout "$addr" "logout again"
	iser_iscsid_stop
	# Errors the initiator would retry through: none may happen, but for
	# the one that follows a logout (iser_after_logout).
	out=$(dmesg_since "$mark" | grep -Ei 'iser|isert|iscsi|connection[0-9:]+' |
		grep -Ei 'error|fail|flush|timed out|reset')
	iser_sort_errors "$out"
	[[ -z $iser_left ]]
	ktap_check "initiator: no iSER or iSCSI error$iser_explained" $? "$iser_left" \
		"iscsid: $(grep -E 'Kernel reported|logout response' "$iser_iscsid_log" | tail -n 8)"
}

# iser_discover ADDR: SendTargets discovery over iser, run again (up to
# three runs) after iscsiadm lost the response (see the top); iser_out
# gets the last run's output, iser_lost says how often it was lost.
iser_text_rejects() {
	dmesg | grep -c 'pdu (op 0x4 itt 0x[0-9a-f]*) rejected\. Reason code 0x4'
}

iser_discover() {
	local try err=/tmp/iser-discovery.err lost=0 rejected=0 rc=1 rejects
	for ((try = 1; try <= 3; try++)); do
		rejects=$(iser_text_rejects)
		iser_out=$(iscsiadm -d 2 -m discovery -t st -p "$1:$iser_port" -I iser 2>"$err")
		if grep -qx "$1:$iser_port,1 $iser_iqn" <<<"$iser_out"; then
			rc=0
			break
		fi
		iser_out+=$'\n'$(tail -n 30 "$err")
		if (($(iser_text_rejects) > rejects)); then
			rejected=$((rejected + 1))
		elif grep -q 'Discovery session to .* timed out' "$err" &&
			grep -q 'expecting event [0-9]*, got 101, handling' "$err"; then
			lost=$((lost + 1))
		else
			break
		fi
	done
	iser_lost=
	((lost)) && iser_lost=" (iscsiadm lost the response $lost time(s) and ran again)"
	((rejected)) && iser_lost+=" (the target rejected the Text request $rejected time(s), LIO's login race; ran again)"
	return $rc
}

# A logout ends with the target closing the connection right after its
# Logout Response.  When its disconnect arrives before iscsid has stopped
# the connection, ib_iser reports "connectionN:0: detected conn error
# (1011)", and iscsid, which has its Logout Response already, drops the
# event.  iser_after_logout N: iscsid logged the Logout Response of
# connection N before any error it was told of on that connection.
iser_after_logout() {
	awk -v c="connection$1:0 " -v k="Kernel reported iSCSI connection $1:0 error" '
		index($0, c "Recv: logout response 0") { print "yes"; exit }
		index($0, k) { exit }' "$iser_iscsid_log" | grep -q yes
}

# iser_sort_errors LINES: the error lines that are not the above go to
# iser_left; iser_explained counts the others.
iser_sort_errors() {
	local line n late=0
	iser_left=
	while IFS= read -r line; do
		[[ -n $line ]] || continue
		if [[ $line =~ connection([0-9]+):0:\ detected\ conn\ error\ \(1011\) ]] &&
			n=${BASH_REMATCH[1]} && iser_after_logout "$n"; then
			late=$((late + 1))
			continue
		fi
		iser_left+="$line"$'\n'
	done <<<"$1"
	iser_explained=
	((late)) && iser_explained=" ($late conn error(s) after a completed logout, which iscsid dropped)"
	return 0
}

# iser_no_kernel_warnings MARK WHAT: no_kernel_warnings, but for one
# warning of the kernel's own that logging out can raise on any iSCSI
# transport: scsi_remove_target, on the WQ_MEM_RECLAIM iscsi_ctrl
# workqueue (__iscsi_unbind_session), flushes the target's runtime-PM work
# on pm_wq, and check_flush_dependency warns once.  Only a report whose
# every frame is the SCSI, iSCSI or PM core's is set aside, and said.
iser_no_kernel_warnings() {
	local out rest
	out=$(dmesg_since "$1")
	rest=$(awk '
		/cut here/ { inblk = 1; blk = ""; frames = "" }
		inblk { blk = blk $0 "\n" }
		inblk && /\] +(\? )?[A-Za-z0-9_.]+\+0x/ { frames = frames " " $0 }
		!inblk { print }
		inblk && /end trace/ { inblk = 0
			if (!(blk ~ /iscsi_ctrl_[0-9:]+:__iscsi_unbind_session .* is flushing !WQ_MEM_RECLAIM pm:pm_runtime_work/ &&
				frames !~ /vrnic|ib_|iser|rdma/)) printf "%s", blk }
		END { if (inblk) printf "%s", blk }' <<<"$out")
	[[ $rest != "$out" ]] &&
		ktap_diag "$2: set aside: the kernel's iscsi_ctrl/pm_runtime_work flush warning (scsi_remove_target at logout)"
	out=$(kernel_trouble <<<"$rest")
	[[ -z $out ]]
	ktap_check "$2: no kernel warnings" $? "$out"
}
