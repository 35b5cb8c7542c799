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

# iser_iscsid_start: open-iscsi's database on tmpfs, a name of this guest's
# own, and iscsid.  The guest runs no udev, so nothing loads sd_mod when the
# LUN appears.
iser_iscsid_start() {
	mkdir -p /tmp/iser-etc /run/lock/iscsi &&
		grep -v '^iscsid.startup' /etc/iscsi/iscsid.conf >/tmp/iser-etc/iscsid.conf &&
		mount -t tmpfs -o mode=755 tmpfs /etc/iscsi &&
		cp /tmp/iser-etc/iscsid.conf /etc/iscsi/ &&
		echo "InitiatorName=iqn.2026-12.org.vrnic:initiator-vm$VRNIC_VM" \
			>/etc/iscsi/initiatorname.iscsi &&
		modprobe sd_mod && modprobe ib_iser && iscsid
}

iser_iscsid_stop() {
	iscsiadm -m node -o delete >/dev/null 2>&1
	iscsiadm -k 0 >/dev/null 2>&1
	umount /etc/iscsi 2>/dev/null
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
		sleep 0.2
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
		"$(dmesg | tail -n 20)"
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
	out=$(iscsiadm -m discovery -t st -p "$addr:$iser_port" -I iser 2>&1)
	grep -q "$addr:$iser_port,1 $iser_iqn" <<<"$out"
	ktap_check "iscsiadm -m discovery -I iser -p $addr: $iser_iqn" $? "$out" "$(dmesg | tail -n 20)"

	iser_login "$addr" "login over iSER"
	disk_verify "$iser_dev"
	iser_logout "$addr" "logout"

	iser_login "$addr" "login again"
	disk_verify_again "$iser_dev"
	iser_logout "$addr" "logout again"
	iser_iscsid_stop
	# Errors the initiator would retry through: none may happen.
	out=$(dmesg_since "$mark" | grep -Ei 'iser|isert|iscsi|connection[0-9:]+' |
		grep -Ei 'error|fail|flush|timed out|reset')
	[[ -z $out ]]
	ktap_check "initiator: no iSER or iSCSI error" $? "$out"
}
