# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# vm-run's QEMU command lines: source this.  qemu_machine starts the
# array qemu for guest I, qemu_network and qemu_decoys add to it, and
# launch_qemu runs it.
#
# What they read of vm-run: here, repo, workdir, rodirs, run, sockdir, shm_prefix, memory,
# smp, tcg_threads, accel, kernel, initrd, qemu_prefix, cable, rxe_only, udp_base, interactive;
# what they add to: pids_qemu, pids_tail, pids_other, consoles.
# shellcheck disable=SC2154 # those are vm-run's

# The machine: CPUs, RAM in a file vrnicd maps, Debian's kernel, the
# host's root (read-only) and the shared directory (the repository, or
# --workdir) over 9p, the run directory too when it is not inside that
# one, each --rodir read-only, and a virtio-net NIC.
qemu_machine() { # i mac ram
	local cpu runshare=0 shares d n=0 ro=
	# shellcheck disable=SC2054 # commas are QEMU's, not array separators
	cpu=(-accel "tcg,thread=$tcg_threads" -cpu max)
	[[ $accel == kvm ]] && cpu=(-accel kvm -cpu host)
	# shellcheck disable=SC2054
	shares=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=hostroot"
		-virtfs "local,path=$workdir,mount_tag=repo,security_model=none,multidevs=remap,id=repo")
	if [[ $run != "$workdir"/* ]]; then
		runshare=1
		shares+=(-virtfs "local,path=$run,mount_tag=run,security_model=none,multidevs=remap,id=run")
	fi
	for d in ${rodirs[@]+"${rodirs[@]}"}; do
		# shellcheck disable=SC2054
		shares+=(-virtfs "local,path=$d,mount_tag=ro$n,security_model=none,readonly=on,multidevs=remap,id=ro$n")
		ro+=${ro:+:}$d
		n=$((n + 1))
	done
	# shellcheck disable=SC2054 # commas are QEMU's, not array separators
	qemu=("${qemu_prefix[@]}" qemu-system-x86_64 "${cpu[@]}" -smp "$smp,maxcpus=2" -m "$memory"
		-machine q35,memory-backend=mem
		-object "memory-backend-file,id=mem,size=$memory,mem-path=$3,share=on"
		-kernel "$kernel" -initrd "$initrd"
		-append "console=ttyS0 loglevel=5 panic=-1 oops=panic rdinit=/init net.ifnames=0 pci=resource_alignment=12@pci:1af4:1110 tsc=reliable vmwork=$workdir vmrun=$run vmrunshare=$runshare${ro:+ vmrodirs=$ro} vminit=$here/vm-guest-init vmidx=$1"
		-nographic -no-reboot -nodefaults -monitor none -qmp "unix:$sockdir/qmp-$1.sock,server=on,wait=off"
		-fw_cfg name=etc/sercon-port,string=0 "${shares[@]}"
		-device "virtio-net-pci,netdev=nic,mac=$2,romfile=")
}


# The vrnic device, and where the NIC's frames go: through vrnicd's port,
# or (an rxe guest) straight onto the cable.
qemu_network() { # i role
	# shellcheck disable=SC2054
	if [[ $2 != vrnic && $cable == bridge ]]; then
		qemu+=(-netdev "tap,id=nic,ifname=vrtap$1,script=no,downscript=no")
	elif [[ $2 == vrnic ]]; then
		qemu+=(-chardev "socket,path=$sockdir/ivshmem-$1.sock,id=vrnic"
			-device ivshmem-doorbell,chardev=vrnic,vectors=4
			-netdev "stream,id=nic,addr.type=unix,addr.path=$sockdir/nic-$1.sock,server=on")
	elif [[ $cable == udp ]]; then
		# Datagrams to and from guest 0's vrnicd (--wire udp: there), on a
		# socket made for QEMU with room for a burst (udp-nic-exec.py).
		qemu=(python3 "$here/lib/udp-nic-exec.py" "$((udp_base + $1))" "$((udp_base + 1 - $1))" "${qemu[@]}"
			-netdev "dgram,id=nic,local.type=fd,local.str=@NICFD@")
	elif [[ -n $rxe_only && $1 == 0 ]]; then
		# No vrnicd anywhere: guest 0's NIC is the end the cable plugs into.
		qemu+=(-netdev "stream,id=nic,addr.type=unix,addr.path=$sockdir/wire.sock,server=on")
	else
		# The NIC is cabled to guest 0's vrnicd port (or NIC) directly.
		qemu+=(-netdev "stream,id=nic,addr.type=unix,addr.path=$sockdir/wire.sock,server=off")
	fi
}

# Decoys: a plain ivshmem device, one served by some other ivshmem server,
# and one whose BAR2 still says vrnic but nothing serves it.
qemu_decoys() { # i
	local i=$1
	truncate -s 1M "$shm_prefix-$i.plain"
	python3 "$repo/tests/tools/ivshmem-foreign-server" "$sockdir/foreign-$i.sock" &
	pids_other+=($!)
	python3 "$repo/tests/tools/ivshmem-foreign-server" --stale-signature "$sockdir/stale-$i.sock" &
	pids_other+=($!)
	wait_for "$sockdir/foreign-$i.sock" 10 "the foreign ivshmem server" || return 1
	wait_for "$sockdir/stale-$i.sock" 10 "the stale ivshmem server" || return 1
	# shellcheck disable=SC2054
	qemu+=(-object "memory-backend-file,id=plain,size=1M,mem-path=$shm_prefix-$i.plain,share=on"
		-device ivshmem-plain,memdev=plain
		-chardev "socket,path=$sockdir/foreign-$i.sock,id=foreign"
		-device ivshmem-doorbell,chardev=foreign,vectors=2
		-chardev "socket,path=$sockdir/stale-$i.sock,id=stale"
		-device ivshmem-doorbell,chardev=stale,vectors=2)
}

# Guest i's QEMU, its serial console on our terminal, or in its log and,
# prefixed with [vmI], on our output.  QEMU writes that log itself and
# tail copies it to our output: when a pipe to a slow reader of our output
# is full, the emulated UART stops draining, the guest kernel spins for
# each console character and every process writing to the console blocks.
# A file never fills.
launch_qemu() { # i
	local i=$1 console=$run/console-$1.log
	consoles+=("$console")
	if [[ -n $interactive ]]; then
		# An explicit stdin: background jobs would get /dev/null.
		"${qemu[@]}" -serial stdio <&3 2> >(grep -v "etc/sercon-port" >&2) &
		pids_qemu+=($!)
		return
	fi
	# SeaBIOS stays off the console (etc/sercon-port=0); QEMU warns about
	# that fw_cfg name, which is noise.
	: >"$console"
	"${qemu[@]}" -serial "file:$console" </dev/null >/dev/null \
		2> >(grep --line-buffered -v "etc/sercon-port" | sed -u "s/^/[vm$i] /" >&2) &
	pids_qemu+=($!)
	tail -n +1 -s 0.2 -F --pid=$! "$console" 2>/dev/null > >(sed -u "s/^/[vm$i] /") &
	pids_tail+=($!)
}

# After the guests: the rest of their consoles, then our verdicts.  tail
# sees its QEMU gone within 0.2 s and prints what is left first.
finish_tails() {
	local p
	for p in "${pids_tail[@]}"; do
		timeout 5 tail --pid="$p" -f /dev/null 2>/dev/null || kill "$p" 2>/dev/null || true
	done
}
