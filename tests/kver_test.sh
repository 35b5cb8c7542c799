#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of scripts/kver on made-up hosts: a plain make builds
# for this Debian release's kernel (6.1 on Debian 12) even when a newer
# one (the backports kernel) is installed beside it; KVER names a series
# or a release; a kernel without headers does not count; on Debian 13 the
# default is 6.12; elsewhere, the newest.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"

ktap_plan 8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# host CODENAME KERNEL[:noheaders]...: a made-up host in $tmp/NAME.
host() {
	local h=$tmp/$1 k
	shift
	mkdir -p "$h/boot" "$h/etc"
	echo "VERSION_CODENAME=$1" >"$h/etc/os-release"
	shift
	for k in "$@"; do
		touch "$h/boot/vmlinuz-${k%:*}"
		[[ $k == *:noheaders ]] || mkdir -p "$h/lib/modules/$k/build"
	done
	echo "$h"
}
kver() { VRNIC_HOST_ROOT=$1 VRNIC_BUILD=$tmp/build KVER='' "$repo/scripts/kver" "${@:2}" 2>&1; }

h=$(host bpo bookworm 6.1.0-57-amd64 6.1.0-30-amd64 6.12.95+deb12-amd64)
out=$(kver "$h")
[[ $out == 6.1.0-57-amd64 ]]
ktap_check "Debian 12 with the backports kernel installed: the default is 6.1 ($out)" $? "$out"
out=$(kver "$h" 6.12)
[[ $out == 6.12.95+deb12-amd64 ]]
ktap_check "KVER=6.12 names the installed 6.12 ($out)" $? "$out"
out=$(kver "$h" 6.1.0-30-amd64)
[[ $out == 6.1.0-30-amd64 ]]
ktap_check "KVER names a release ($out)" $? "$out"
out=$(kver "$h" 7.3)
rc=$?
[[ $rc != 0 && $out == *"no kernel 7.3"* ]]
ktap_check "a series that is not here is an error that says what to do" $? "$out"

h=$(host nohdr bookworm 6.1.0-57-amd64:noheaders 6.12.95+deb12-amd64)
out=$(kver "$h")
rc=$?
[[ $rc != 0 && $out == *"no Linux 6.1 kernel with headers"*"make setup"* ]]
ktap_check "no 6.1 with headers on Debian 12: an error, not the 6.12 beside it" $? "$out"

h=$(host trixie trixie 6.12.117+deb13-amd64 7.3.4+deb13-amd64)
out=$(kver "$h")
[[ $out == 6.12.117+deb13-amd64 ]]
ktap_check "Debian 13: the default is 6.12 ($out)" $? "$out"

h=$(host other noble 6.8.0-40-generic 6.11.0-9-generic)
out=$(kver "$h")
[[ $out == 6.11.0-9-generic ]]
ktap_check "another distribution: the newest kernel with headers ($out)" $? "$out"

mkdir -p "$tmp/build/kernels/7.3.4+deb13-amd64/usr/src/linux-headers-7.3.4+deb13-amd64"
ln -s 7.3.4+deb13-amd64 "$tmp/build/kernels/7.3"
out=$(kver "$(host fetched bookworm 6.1.0-57-amd64)" 7.3)
[[ $out == 7.3.4+deb13-amd64 ]]
ktap_check "KVER=7.3 names the kernel fetch-kernel unpacked ($out)" $? "$out"
ktap_finish
