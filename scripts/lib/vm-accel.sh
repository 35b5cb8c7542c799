# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# vm-run's accelerator: source this.  vm_accel picks KVM or TCG for the
# guests.  KVM is taken only when a guest kernel actually boots under it:
# on some hosts /dev/kvm opens and a Linux guest still hangs right after
# decompression, and on those a run under KVM would only time out.
#
# What it reads of vm-run: build, kernel, qemu_prefix.
# shellcheck disable=SC2154,SC2034 # vm-run reads and sets those

# How long the probe guest may take to boot under KVM.  A guest that boots
# there reaches its root mount in a second or two.
kvm_probe_secs=${VRNIC_KVM_PROBE_SECS:-20}

# kvm_probe: whether the guest kernel boots under KVM here; if not,
# kvm_probe_why says how it failed.  The probe boots it with no initramfs
# and no disk: a kernel that runs panics at its root mount, at the end of
# its start-up, and QEMU (-no-reboot) exits.  The answer is kept for this
# host boot, kernel and QEMU in build/vm/kvm-probe, so that a make check
# probes once.
kvm_probe_why=
kvm_probe() {
	local cache=$build/vm/kvm-probe key qemu_id dir rc line
	qemu_id=$("${qemu_prefix[@]}" qemu-system-x86_64 --version 2>/dev/null | head -n 1)
	key="$(</proc/sys/kernel/random/boot_id) $kernel $(stat -c %Y "$kernel") ${qemu_id// /_}"
	line=$(grep -F "$key	" "$cache" 2>/dev/null | tail -n 1)
	if [[ -z $line ]]; then
		dir=$(mktemp -d)
		# shellcheck disable=SC2054 # commas are QEMU's
		timeout -k 5 "$kvm_probe_secs" "${qemu_prefix[@]}" qemu-system-x86_64 -accel kvm \
			-cpu host -m 512M -smp 1 -kernel "$kernel" -append "console=ttyS0 panic=-1" \
			-display none -no-reboot -nodefaults -monitor none -serial "file:$dir/console" \
			>"$dir/qemu" 2>&1 &
		wait $! 2>/dev/null
		rc=$?
		if grep -q "Kernel panic" "$dir/console"; then
			line="$key	yes	"
		elif ((rc == 124 || rc == 137)); then
			line="$key	no	/dev/kvm opens, but the probe guest did not boot under KVM in $kvm_probe_secs s"
		else
			line="$key	no	QEMU failed under KVM (exit $rc): $(grep -m1 . "$dir/qemu")"
		fi
		rm -rf "$dir"
		mkdir -p "${cache%/*}"
		echo "$line" >>"$cache"
	fi
	kvm_probe_why=${line##*	}
	[[ $line == "$key	yes	"* ]]
}

# vm_accel WANT: set accel (kvm or tcg) and accel_why for WANT: tcg, kvm
# (fails when KVM does not boot a guest here) or auto (KVM when it does,
# else TCG).
vm_accel() {
	accel=tcg
	case $1 in
	tcg)
		accel_why="asked for"
		return 0
		;;
	kvm | auto) ;;
	*)
		accel_why="--accel must be auto, kvm or tcg"
		return 1
		;;
	esac
	if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		accel_why="no /dev/kvm this user can open"
	elif kvm_probe; then
		accel=kvm
		accel_why="a guest booted under KVM"
		return 0
	else
		accel_why=$kvm_probe_why
	fi
	[[ $1 == auto ]]
}
