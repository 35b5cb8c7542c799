#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A Debian 12 machine with the backports kernel installed beside its own:
# in a scratch copy of this machine (scripts/scratch-root: an overlay,
# thrown away after), Debian's linux-image and linux-headers 6.12 from
# bookworm-backports are installed with dpkg, as a user's apt would.  There
# a plain make builds for 6.1 and make demo boots 6.1 and shows the device:
# the newer kernel, with its image and headers, changes nothing (it broke
# every build and VM step while scripts/kver picked the newest).  Needs root.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tests/selftests/lib.sh
# shellcheck source=scripts/lib/stacks.sh
source scripts/lib/stacks.sh

((EUID == 0)) || { echo "1..0 # SKIP needs root (overlay mounts, chroot)"; exit 4; }
[[ $(stacks_codename) == bookworm ]] || { echo "1..0 # SKIP not a Debian 12 machine"; exit 4; }
k61=$(KVER='' scripts/kver) || exit 1
k612=$(scripts/kver 6.12) || exit 1
debs=$stacks_build/kernels/.debs/$k612
ktap_plan 5

dir=$stacks_build/backports-kernel
trap 'scripts/scratch-root --remove "$dir"' EXIT
scripts/scratch-root host "$dir" || exit 1
root=$dir/root
in_copy() { scripts/in-root "$root" -- "$@"; }

mapfile -t pkgs < <(compgen -G "$debs/linux-*.deb" | grep -v -- '-base-')
# (Its initramfs is not made: no guest boots it.)
out=$(in_copy env INITRD=No dpkg -i "${pkgs[@]}" 2>&1)
rc=$?
[[ $rc == 0 && -f $root/boot/vmlinuz-$k612 && -d $root/usr/src/linux-headers-$k612 ]]
ktap_check "dpkg -i of Debian's $k612 image and headers (bookworm-backports)" $? "$(tail -n 15 <<<"$out")"

out=$(in_copy scripts/kver 2>&1)
[[ $out == "$k61" ]]
ktap_check "with $k612 installed, the kernel vrnic builds for is still $k61" $? "$out"

out=$(in_copy scripts/kmake --dir "$dir/mod" -- W=1 KCFLAGS=-Werror modules 2>&1)
rc=$?
[[ $rc == 0 ]] && modinfo -F vermagic "$dir/mod/drivers/vrnic/vrnic.ko" | grep -q "^$k61 "
ktap_check "a plain build of vrnic.ko there is for $k61" $? "$(tail -n 10 <<<"$out")"

# make demo as a user types it: setup finds everything, make finds the
# build done, and the guest boots the default kernel.
out=$(in_copy make demo 2>&1)
rc=$?
ktap_check "make demo there" $rc "$(tail -n 15 <<<"$out")"
run=$(ls -td "$stacks_build"/vm/runs/run.* | head -n 1)
grep -q "Linux version $k61 " "$run/dmesg-0" && grep -q "link vrnic0/1 state ACTIVE" <<<"$out"
ktap_check "its guest runs $k61 and shows vrnic0 ACTIVE" $? \
	"$(head -n 1 "$run/dmesg-0"; grep -E 'vm-run:|ready:|link vrnic0' <<<"$out" | head)"
ktap_finish
