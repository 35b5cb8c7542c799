# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SCSI RDMA Protocol, for vrnic_srp.sh (one guest) and vrnic_pair_srp.sh
# (two guests): source after lib.sh.
#
# The target is ib_srpt under LIO, configured through targetcli: a
# 256 MiB ramdisk LUN on the port named by its GID (ib.<GID index 0>), an
# ACL for the initiator's port ID, and an rdma_cm listener on 5555 (RoCE
# has no IB CM: without it nobody can log in).  The initiator is ib_srp:
# add_target with dest=IP:port, fio with crc32c verify (4 KiB random at
# QD 32 with 2 jobs, 128 KiB sequential, 1 MiB requests that need
# multi-page FRWRs), the remote port deleted, added again, verified again.
# ib_srp polls its send CQ directly (IB_POLL_DIRECT).

srp_port=5555

# ktap results each side reports.
srp_target_results=1
srp_initiator_results=10

# srp_require_targetcli: skip where targetcli cannot see this guest's
# RDMA port.  rtslib-fb 2.2 (Debian sid) looks for ports with
# Path("/sys/class/infiniband").glob("**/ports/*/gids/0"), and since
# Python 3.13 "**" follows no symlink, which every entry of that class
# directory is: targetcli then has no /srpt at all ("No such path").
# Both guests of a pair decide alike: each has an RDMA port.
srp_require_targetcli() {
	local n
	n=$(python3 -c 'from rtslib.fabric import SRPTFabricModule as m
print(len(list(m.wwns.fget(None))))' 2>/dev/null) || return 0
	((n > 0)) && return 0
	echo "TAP version 13"
	echo "1..0 # SKIP this targetcli (rtslib-fb $(python3 -c 'import importlib.metadata as m; print(m.version("rtslib-fb"))' 2>/dev/null))" \
		"finds no IB port in /sys/class/infiniband, so it has no srpt target to configure"
	exit 4
}

# The port ID an SRP initiator logs in with over rdma_cm: its
# initiator_ext (0 here) and the interface ID of its GID index 0.
srp_initiator_id() {
	local gid
	gid=$(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/gids/0") || return 1
	gid=${gid//:/}
	echo "0000000000000000${gid:16}"
}

# srp_target_setup ADDR INITIATOR_ID: serve the LUN to INITIATOR_ID
# (srp_initiator_id on the initiator); the target's ID (ib_srpt's
# service GUID, for id_ext and ioc_guid) goes to srp_target_guid.
srp_target_setup() {
	local out rc=0 gid wwn cfg=/sys/kernel/config/target/srpt
	gid=$(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/gids/0")
	wwn=ib.${gid//:/}
	system_bus_start || rc=1
	out=$(modprobe ib_srpt 2>&1 && targetcli 2>&1 <<-EOF
		set global auto_save_on_exit=false
		/backstores/ramdisk create name=srp0 size=256M
		/srpt create $wwn
		/srpt/$wwn/luns create /backstores/ramdisk/srp0
		/srpt/$wwn/acls create ib.$2
	EOF
	) || rc=1
	echo "$srp_port" >"$cfg/discovery_auth/rdma_cm_port" || rc=1
	srp_target_guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid 2>/dev/null)
	[[ $rc == 0 && -n $srp_target_guid && -d $cfg/0x${gid//:/}/tpgt_1/acls/0x$2 &&
		$(cat "$cfg/0x${gid//:/}/tpgt_1/enable" 2>/dev/null) == 1 ]]
	ktap_check "target: ib_srpt $wwn, ramdisk LUN, ACL for 0x$2, rdma_cm port $srp_port" $? \
		"$out" "$(find "$cfg" -maxdepth 4 2>&1 | head -n 20)" "$(dmesg | tail -n 20)"
}

srp_target_teardown() {
	echo 0 >/sys/kernel/config/target/srpt/discovery_auth/rdma_cm_port 2>/dev/null
	targetcli clearconfig confirm=True >/dev/null 2>&1
	rmdir /sys/kernel/config/target/srpt 2>/dev/null
	modprobe -r ib_srpt target_core_mod 2>/dev/null
	system_bus_stop
}

# The SCSI disk behind the SRP remote port, once the scan has found it.
srp_disk() {
	local try rport host dev
	for ((try = 0; try < 100; try++)); do
		for rport in /sys/class/srp_remote_ports/port-*; do
			[[ -e $rport ]] || continue
			host=${rport##*/port-}
			host=${host%%:*}
			for dev in /sys/class/scsi_host/host"$host"/device/target*/*/block/*; do
				[[ -b /dev/${dev##*/} ]] && echo "/dev/${dev##*/}" && return 0
			done
		done
		nap 0.2
	done
	return 1
}

# srp_add_target ADDR GUID WHAT: log in; the disk goes to srp_dev.
srp_add_target() {
	local out rc=0 h=/sys/class/infiniband_srp/srp-$VRNIC_IBDEV-1 try
	# ib_srp drops a deleted target from its list only once the target's
	# channels are freed, after its SCSI host is gone: until then adding
	# it again is EEXIST ("Already connected").
	for ((try = 0; try < 50; try++)); do
		out=$(echo "id_ext=$2,ioc_guid=$2,dest=$1:$srp_port" 2>&1 >"$h/add_target") && break
		[[ $out == *"File exists"* ]] || break
		nap 0.2
	done
	[[ -z $out ]] || rc=1
	srp_dev=$(srp_disk) || rc=1
	ktap_check "$3: add_target dest=$1:$srp_port: ${srp_dev:-no disk}" $rc "$out" \
		"$(dmesg | tail -n 20)"
}

# Delete the remote port and wait until its SCSI host is gone.
srp_delete() {
	local rport rc=1 try hosts=()
	for rport in /sys/class/srp_remote_ports/port-*; do
		[[ -e $rport/delete ]] || continue
		hosts+=("${rport##*/port-}")
		echo 1 >"$rport/delete" && rc=0
	done
	hosts=("${hosts[@]%%:*}")
	for ((try = 0; try < 100; try++)); do
		compgen -G '/sys/class/srp_remote_ports/port-*' >/dev/null ||
			[[ -e /sys/class/scsi_host/host${hosts[0]} ]] || break
		nap 0.2
	done
	[[ $rc == 0 && ! -e /sys/class/scsi_host/host${hosts[0]} ]] &&
		! compgen -G '/sys/class/srp_remote_ports/port-*' >/dev/null
	ktap_check "$1: remote port deleted, SCSI host${hosts[0]} gone" $?
}

# srp_initiator_run ADDR GUID MARK: everything the initiator does against
# the target at ADDR with service GUID GUID; MARK is the dmesg mark from
# before.
srp_initiator_run() {
	local addr=$1 guid=$2 mark=$3 out n
	modprobe sd_mod
	modprobe ib_srp
	srp_add_target "$addr" "$guid" "login"
	out=$(rdma resource show cq dev "$VRNIC_IBDEV" 2>&1)
	n=$(grep -E 'poll-ctx DIRECT' <<<"$out" | grep -c 'ib_srp')
	[[ $n -gt 0 ]]
	ktap_check "ib_srp polls $n CQ(s) directly (IB_POLL_DIRECT)" $? "$out"
	disk_verify "$srp_dev"
	srp_delete "logout"
	srp_add_target "$addr" "$guid" "login again"
	disk_verify_again "$srp_dev"
	srp_delete "logout again"
	modprobe -r ib_srp 2>/dev/null
	# ib_srp's own complaints (ib_srpt logs each receive flushed when a
	# channel closes, as on any RDMA device).
	out=$(dmesg_since "$mark" | grep -E 'ib_srp:|srp_' | grep -Ei 'error|fail|reconnect|timed out|reject')
	[[ -z $out ]]
	ktap_check "initiator: no SRP error" $? "$out" \
		"$(rdma statistic show link "$VRNIC_IBDEV/1" 2>&1 | fold -w 150)"
}
