#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics between the two guests, all in the kernel: guest 0 is
# the target (nvmet and nvmet-rdma through configfs, one namespace on a
# RAM-backed null_blk and one on a file in tmpfs, buffered since tmpfs has
# no O_DIRECT), guest 1 the host (nvme-rdma via
# nvme-cli).  The host discovers and connects, fio writes and verifies
# (crc32c) 4 KiB random at QD 32 with 2 jobs, 128 KiB sequential and 1 MiB
# requests (each needs a multi-page FRWR), disconnects, connects again and
# verifies again.  nvme-rdma registers every request's pages with REG_MR,
# invalidates them with LOCAL_INV or has the target do it with
# SEND_WITH_INV; nvmet reads and writes them with RDMA READ and WRITE.
# Neither guest's kernel may log a warning.
# timeout: 900
source "$(dirname "$0")/lib.sh"
require_pair

nqn=vrnic-nvmeof-test
port=4420
cfg=/sys/kernel/config/nvmet
mark=$(dmesg_mark)

# The target's side: configure, serve until the host is done, tear down.
target() {
	local s=$cfg/subsystems/$nqn p=$cfg/ports/1 out ok=0
	ktap_plan 3
	out=$({
		modprobe null_blk nr_devices=1 gb=1 memory_backed=1 &&
			modprobe nvmet && modprobe nvmet-rdma &&
			{ mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config; } &&
			truncate -s 256M /tmp/nvmeof-ns2.img &&
			mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
			mkdir "$s/namespaces/1" && echo -n /dev/nullb0 >"$s/namespaces/1/device_path" &&
			echo 1 >"$s/namespaces/1/enable" &&
			mkdir "$s/namespaces/2" && echo -n /tmp/nvmeof-ns2.img >"$s/namespaces/2/device_path" &&
			echo 1 >"$s/namespaces/2/buffered_io" && echo 1 >"$s/namespaces/2/enable" &&
			mkdir "$p" && echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
			echo "$VRNIC_IP" >"$p/addr_traddr" && echo $port >"$p/addr_trsvcid" &&
			ln -s "$s" "$p/subsystems/$nqn"
	} 2>&1) && ok=1
	[[ $ok == 1 ]]
	ktap_check "target: nvmet-rdma port $VRNIC_IP:$port, namespaces null_blk and file" $? \
		"$out" "$(dmesg_since "$mark" | tail -n 20)"
	pair_sync nvmeof.ready 60
	pair_sync nvmeof.done 840
	ktap_check "target: the host finished (see its results)" $?
	rm -f "$p/subsystems/$nqn"
	rmdir "$p" "$s/namespaces/2" "$s/namespaces/1" "$s" 2>/dev/null
	modprobe -r nvmet-rdma nvmet null_blk 2>/dev/null
	out=$(dmesg_since "$mark" | kernel_trouble)
	[[ -z $out ]]
	ktap_check "target: no kernel warnings" $? "$out"
	ktap_finish
}

# fio_verify NAME DEV ARGS...: write, then read back and check every block.
fio_verify() {
	local name=$1 dev=$2 out
	shift 2
	if [[ ! -b $dev ]]; then
		ktap_not_ok "fio $name: $dev is no block device"
		return
	fi
	out=$(fio --name="$name" --filename="$dev" --ioengine=libaio --direct=1 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --group_reporting "$@" 2>&1)
	local rc=$?
	[[ $rc == 0 ]] && grep -q ' err= 0' <<<"$out" && ! grep -q 'verify: bad' <<<"$out"
	ktap_check "fio $name on ${dev#/dev/}: $(grep -Eo 'WRITE: bw=[^ ]+' <<<"$out" | head -n 1)" \
		$? "fio exit $rc" "$(tail -n 15 <<<"$out")"
}

# The namespace block devices of subsystem $nqn (nvme0n1 ...), once both
# appear.
nvmeof_devices() {
	local sub n devs
	for ((try = 0; try < 100; try++)); do
		for sub in /sys/class/nvme-subsystem/*; do
			[[ $(cat "$sub/subsysnqn" 2>/dev/null) == "$nqn" ]] || continue
			devs=()
			for n in "$sub"/nvme*n*; do
				[[ -b /dev/${n##*/} ]] && devs+=("/dev/${n##*/}")
			done
			if ((${#devs[@]} == 2)); then
				printf '%s\n' "${devs[@]}"
				return 0
			fi
		done
		sleep 0.2
	done
	return 1
}

host() {
	local out devs
	ktap_plan 12
	modprobe nvme-rdma
	pair_sync nvmeof.ready 60
	out=$(nvme discover -t rdma -a "$VRNIC_PEER_IP" -s $port 2>&1)
	grep -q "subnqn: *$nqn" <<<"$out"
	ktap_check "nvme discover -t rdma: $nqn" $? "$out" "$(dmesg_since "$mark" | tail -n 20)"

	out=$(nvme connect -t rdma -a "$VRNIC_PEER_IP" -s $port -n $nqn 2>&1)
	devs=$(nvmeof_devices)
	[[ -n $devs ]]
	ktap_check "nvme connect -t rdma: ${devs//$'\n'/ }" $? "$out" "$(dmesg_since "$mark" | tail -n 20)"
	local ns1 ns2
	ns1=$(head -n 1 <<<"$devs")
	ns2=$(tail -n 1 <<<"$devs")
	if [[ -n $devs ]]; then
		fio_verify randwrite-4k "$ns1" --rw=randwrite --bs=4k --iodepth=32 --numjobs=2 \
			--size=16M --offset_increment=16M
		fio_verify seq-128k "$ns2" --rw=write --bs=128k --iodepth=8 --size=32M
		fio_verify seq-1m "$ns1" --rw=write --bs=1M --iodepth=4 --size=32M --offset=64M
		fio_verify seq-1m "$ns2" --rw=write --bs=1M --iodepth=4 --size=32M --offset=64M
	else
		for n in 1 2 3 4; do ktap_skip "fio $n" "no namespaces"; done
	fi
	out=$(nvme disconnect -n $nqn 2>&1)
	grep -q "disconnected 1 controller" <<<"$out"
	ktap_check "nvme disconnect: $out" $?

	out=$(nvme connect -t rdma -a "$VRNIC_PEER_IP" -s $port -n $nqn 2>&1)
	devs=$(nvmeof_devices)
	[[ -n $devs ]]
	ktap_check "nvme connect again: ${devs//$'\n'/ }" $? "$out" "$(dmesg_since "$mark" | tail -n 20)"
	if [[ -n $devs ]]; then
		fio_verify again-randrw-4k "$(head -n 1 <<<"$devs")" --rw=randrw --bs=4k --iodepth=16 \
			--size=8M
	else
		ktap_skip "fio again" "no namespaces"
	fi
	out=$(nvme disconnect -n $nqn 2>&1)
	grep -q "disconnected 1 controller" <<<"$out"
	ktap_check "nvme disconnect again: $out" $?
	pair_sync nvmeof.done 60
	# fio's retries would hide a transport failure: none may happen.
	out=$(dmesg_since "$mark" | grep -E 'error recovery|failed with status|Bogus remote')
	[[ -z $out ]]
	ktap_check "host: no work completion failed, no error recovery" $? "$out"
	modprobe -r nvme-rdma 2>/dev/null
	out=$(dmesg_since "$mark" | kernel_trouble)
	[[ -z $out ]]
	ktap_check "host: no kernel warnings" $? "$out"
	ktap_finish
}

if [[ $VRNIC_VM == 0 ]]; then
	target
else
	host
fi
