#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make install into a staging directory (DESTDIR) puts every part where
# Debian and libibverbs look for it: the module, the provider and its
# driver file, vrnicd and vrnicctl, the direct-verbs header, and the DKMS
# source tree.  Runs on the host; installs nothing on it.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tests/selftests/lib.sh

kver=${KVER:-$(scripts/kver)} || exit 1
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
files=("lib/modules/$kver/updates/vrnic/drivers/vrnic/vrnic.ko"
	"usr/lib/$multiarch/libibverbs/$(basename "$(compgen -G "${VRNIC_BUILD:-build}/userspace/provider/libvrnic-rdmav*.so")")"
	etc/libibverbs.d/vrnic.driver usr/local/bin/vrnicd usr/local/bin/vrnicctl
	usr/local/include/infiniband/vrnicdv.h
	usr/src/vrnic-0.1.0/dkms.conf usr/src/vrnic-0.1.0/drivers/vrnic/vrnic_main.c)
ktap_plan $((1 + ${#files[@]}))
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
out=$(make -s install KVER="$kver" DESTDIR="$dest/root" 2>&1)
ktap_check "make install DESTDIR=... for $kver" $? "$out"
for f in "${files[@]}"; do
	[[ -f $dest/root/$f ]]
	ktap_check "installed /$f" $?
done
ktap_finish
