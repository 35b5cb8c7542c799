# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# The stacks of scripts/stacks, and where their parts live: source this.
#
# A kernel is the host's own (its image in /boot, its modules and headers
# in /lib/modules/RELEASE), or one that scripts/fetch-kernel unpacked from
# Debian's packages under build/kernels/RELEASE, never installed: the host's
# choice of kernel does not change because of vrnic.  build/kernels/SERIES
# (6.12) links to the release it fetched.  A guest root is a Debian tree
# that scripts/mkroot made under build/roots/NAME.

stacks_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
stacks_build=${VRNIC_BUILD:-$stacks_repo/build}
# Where the host's /boot, /lib/modules and /etc/os-release are (a test
# gives a made-up host).
host_root=${VRNIC_HOST_ROOT:-}

# stacks_rows KIND: the rows of KIND in scripts/stacks, their fields after
# the first joined by "|", spaces around them trimmed.
stacks_rows() {
	local line f i IFS
	local -a fields
	while IFS= read -r line; do
		[[ -z $line || $line == "#"* ]] && continue
		IFS='|' read -r -a fields <<<"$line"
		for i in "${!fields[@]}"; do
			IFS=' ' read -r f <<<"${fields[i]}"
			fields[i]=$f
		done
		[[ ${fields[0]} == "$1" ]] || continue
		IFS='|'
		echo "${fields[*]:1}"
		unset IFS
	done <"$stacks_repo/scripts/stacks"
}

# stacks_get KIND KEY N: field N (1: the key) of the row of KIND whose key is
# KEY; fails when there is none.
stacks_get() {
	local row
	local -a f
	while IFS= read -r row; do
		IFS='|' read -r -a f <<<"$row"
		[[ ${f[0]} == "$2" ]] || continue
		echo "${f[$(($3 - 1))]:-}"
		return 0
	done < <(stacks_rows "$1")
	return 1
}

# stacks_codename: the host's Debian release (bookworm), or nothing.
stacks_codename() {
	local line
	while IFS= read -r line; do
		[[ $line == VERSION_CODENAME=* ]] && { echo "${line#*=}"; return; }
	done <"$host_root/etc/os-release" 2>/dev/null
}

kernel_fetched_dir() { echo "$stacks_build/kernels/$1"; }

# version_lt A B: whether version A sorts before B (sort -V).
version_lt() { [[ $1 != "$2" && $(printf '%s\n' "$1" "$2" | sort -V | head -n 1) == "$1" ]]; }

# kernel_host_release SERIES: the newest kernel of SERIES (or any, when
# SERIES is empty) installed on the host with an image and headers.
kernel_host_release() {
	local img v best=
	for img in "$host_root"/boot/vmlinuz-*; do
		[[ -e $img ]] || continue
		v=${img#"$host_root"/boot/vmlinuz-}
		[[ -d $host_root/lib/modules/$v/build ]] || continue
		[[ -z $1 || $(kernel_series "$v") == "$1" ]] || continue
		if [[ -z $best ]] || version_lt "$best" "$v"; then
			best=$v
		fi
	done
	[[ -n $best ]] && echo "$best"
}

# kernel_release KVER: the release that KVER names.  KVER is a release
# (6.12.95+deb12-amd64: the host's, or a fetched one) or a series (6.12:
# the one scripts/fetch-kernel unpacked for it, else the host's newest).
kernel_release() {
	local link
	if [[ -d $host_root/lib/modules/$1/build || -d $stacks_build/kernels/$1/usr/src/linux-headers-$1 ]]; then
		echo "$1"
	elif link=$(readlink "$stacks_build/kernels/$1" 2>/dev/null); then
		echo "$link"
	elif [[ $1 =~ ^[0-9]+\.[0-9]+$ ]]; then
		kernel_host_release "$1"
	else
		return 1
	fi
}

# kernel_is_fetched RELEASE: it lives under build/kernels, not on the host.
kernel_is_fetched() {
	[[ ! -d /lib/modules/$1/kernel && -d $stacks_build/kernels/$1/usr/src/linux-headers-$1 ]]
}

# kernel_headers RELEASE: the directory to build modules against.
kernel_headers() {
	if kernel_is_fetched "$1"; then
		echo "$stacks_build/kernels/$1/usr/src/linux-headers-$1"
	else
		echo "/lib/modules/$1/build"
	fi
}

# kernel_modules RELEASE: its modules directory (modules.dep and all).
kernel_modules() {
	if kernel_is_fetched "$1"; then
		echo "$stacks_build/kernels/$1/lib/modules/$1"
	else
		echo "/lib/modules/$1"
	fi
}

# kernel_image RELEASE: its bzImage.
kernel_image() {
	local d=$stacks_build/kernels/$1 f
	if kernel_is_fetched "$1"; then
		for f in "$d/boot/vmlinuz-$1" "$d/lib/modules/$1/vmlinuz"; do
			[[ -f $f ]] && { echo "$f"; return 0; }
		done
		return 1
	fi
	echo "/boot/vmlinuz-$1"
}

# kernel_series RELEASE: 6.12 for 6.12.95+deb12-amd64.
kernel_series() {
	local v=${1%%-*}
	v=${v%%+*}
	echo "${v%.*}"
}

# kernel_build_root RELEASE: the guest root its modules build in (its
# kbuild's programs need that root's C library), or nothing: the host.
kernel_build_root() {
	local where
	where=$(stacks_get kernel "$(kernel_series "$1")" 3) || where=host
	[[ $where == root:* ]] && echo "${where#root:}"
	return 0
}

# kernel_module_dir RELEASE: where vrnic.ko for RELEASE is built.  The
# default kernel's is the source tree's own drivers/vrnic (as DKMS and a
# plain Kbuild run have it); every other kernel's is a copy of the sources
# under build/module/RELEASE, so that builds for several kernels can live
# side by side.
kernel_module_dir() {
	local def
	# The default kernel: not the one KVER in the environment names.
	def=$(KVER='' "$stacks_repo/scripts/kver" 2>/dev/null) || def=
	if [[ $1 == "$def" ]]; then
		echo "$stacks_repo"
	else
		echo "$stacks_build/module/$1"
	fi
}

root_dir() { echo "$stacks_build/roots/$1"; }
