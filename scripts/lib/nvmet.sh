# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# An NVMe-oF target in a guest of scripts/vm-run, for the NVMe-oF
# selftests (through tests/selftests/storage/nvmeof_lib.sh, which reports on it)
# and make bench's: nvmet with nvmet-rdma, configured through configfs.
# One subsystem, one port (4420): namespace 1 on a RAM-backed null_blk,
# namespace 2 on a file in tmpfs (buffered: tmpfs has no O_DIRECT).
# Needs guest.sh (nap).

nvmet_nqn=vrnic-nvmeof-test
nvmet_port=4420
nvmet_cfg=/sys/kernel/config/nvmet

# nvmet_serve ADDR [NVMET_RDMA_PARAM...]: serve the subsystem on
# ADDR:4420 (use_srq=1: receive through SRQs).  Fails at the first step
# that does, with its message on stderr.
nvmet_serve() {
	local s=$nvmet_cfg/subsystems/$nvmet_nqn p=$nvmet_cfg/ports/1
	modprobe null_blk nr_devices=1 gb=1 memory_backed=1 &&
		modprobe nvmet && modprobe nvmet-rdma "${@:2}" &&
		{ mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config; } &&
		truncate -s 256M /tmp/nvmeof-ns2.img &&
		mkdir "$s" && echo 1 >"$s/attr_allow_any_host" &&
		mkdir "$s/namespaces/1" && echo -n /dev/nullb0 >"$s/namespaces/1/device_path" &&
		echo 1 >"$s/namespaces/1/enable" &&
		mkdir "$s/namespaces/2" && echo -n /tmp/nvmeof-ns2.img >"$s/namespaces/2/device_path" &&
		echo 1 >"$s/namespaces/2/buffered_io" && echo 1 >"$s/namespaces/2/enable" &&
		mkdir "$p" && echo rdma >"$p/addr_trtype" && echo ipv4 >"$p/addr_adrfam" &&
		echo "$1" >"$p/addr_traddr" && echo "$nvmet_port" >"$p/addr_trsvcid" &&
		ln -s "$s" "$p/subsystems/$nvmet_nqn"
}

nvmet_stop() {
	local s=$nvmet_cfg/subsystems/$nvmet_nqn p=$nvmet_cfg/ports/1
	rm -f "$p/subsystems/$nvmet_nqn"
	rmdir "$p" "$s/namespaces/2" "$s/namespaces/1" "$s" 2>/dev/null
	modprobe -r nvmet-rdma nvmet null_blk 2>/dev/null
	rm -f /tmp/nvmeof-ns2.img
}

# The namespace block devices of the subsystem (nvme0n1 ...), once both
# appear.
nvmet_devices() {
	local sub n devs try
	for ((try = 0; try < 100; try++)); do
		for sub in /sys/class/nvme-subsystem/*; do
			[[ $(cat "$sub/subsysnqn" 2>/dev/null) == "$nvmet_nqn" ]] || continue
			devs=()
			for n in "$sub"/nvme*n*; do
				[[ -b /dev/${n##*/} ]] && devs+=("/dev/${n##*/}")
			done
			if ((${#devs[@]} == 2)); then
				printf '%s\n' "${devs[@]}"
				return 0
			fi
		done
		nap 0.2
	done
	return 1
}
