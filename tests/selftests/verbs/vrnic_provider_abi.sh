#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libvrnic and the guest's own libibverbs: the provider libibverbs loads is
# the one built against this release (its file carries the private ABI
# number this libibverbs defines, IBVERBS_PRIVATE_34 or _65), and it serves
# the device.  A libvrnic built for another release (another stack's build
# tree: the host's for rdma-core 44, build/in-root/trixie for 56, sid for
# 65) must not serve it: one of another private ABI does not load, and one
# of the same ABI but other layouts (44 against 56) says why it refuses,
# rather than misread libibverbs' structures.  (A newer release's build
# may not load here at all: it needs that release's C library.)
# boots: one
# tags: verbs stack
# order: 15
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 4
lib=$(compgen -G "/usr/lib/*/libibverbs.so.1.*.*" | head -n 1)
release=${lib##*/libibverbs.so.1.}
release=${release#*.}
release=${release%%.*}
pabi=$(objdump -p "$lib" | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u | head -n 1)
pabi=${pabi#IBVERBS_PRIVATE_}
ktap_diag "libibverbs: $lib (rdma-core $release, IBVERBS_PRIVATE_$pabi)"

ours=$(compgen -G "$VRNIC_BUILD/userspace/provider/libvrnic-rdmav*.so")
[[ $ours == */libvrnic-rdmav$pabi.so ]]
ktap_check "the build's provider is for this private ABI: ${ours##*/}" $? "$ours"
devices=$(IBV_SHOW_WARNINGS=1 ibv_devices 2>&1)
[[ $devices =~ [[:space:]]${VRNIC_IBDEV}[[:space:]] && $devices != *libvrnic:* ]]
ktap_check "it serves $VRNIC_IBDEV, and says nothing" $? "$devices"

# The release family of a build tree's provider (CMake wrote its release).
family() { # BUILD
	local m
	read -r m <"$1/userspace/provider/rdma-core-release" 2>/dev/null || return 0
	if [[ $m == 44 || $m == 65 ]]; then echo "$m"; elif ((m >= 45 && m <= 56)); then echo 56; fi
}
mine=$(family "$VRNIC_BUILD")
# Another family's build, one of this private ABI first (the case that
# would load without the check).
other=
for want in "libvrnic-rdmav$pabi.so" "libvrnic-rdmav*.so"; do
	for b in "$VRNIC_REPO_BUILD" "$VRNIC_REPO_BUILD"/in-root/*; do
		[[ -z $other && -d $b && $b != "$VRNIC_BUILD" ]] || continue
		f=$(family "$b")
		[[ -n $f && $f != "$mine" ]] && compgen -G "$b/userspace/provider/$want" >/dev/null && other=$b
	done
done

if [[ -z $other ]]; then
	ktap_skip "a provider built for another rdma-core does not serve the device" \
		"no other stack's build here (make ROOT=trixie builds one)"
	ktap_skip "and says why, or does not load" "as above"
	ktap_finish
	exit
fi
saved=$(mktemp)
cp /etc/libibverbs.d/vrnic.driver "$saved"
trap 'cp "$saved" /etc/libibverbs.d/vrnic.driver; rm -f "$saved"' EXIT
echo "driver $other/userspace/provider/libvrnic" >/etc/libibverbs.d/vrnic.driver
theirs=$(compgen -G "$other/userspace/provider/libvrnic-rdmav*.so")
devices=$(IBV_SHOW_WARNINGS=1 ibv_devices 2>&1)
[[ ! $devices =~ [[:space:]]${VRNIC_IBDEV}[[:space:]] ]]
ktap_check "${theirs#"$VRNIC_REPO_BUILD"/} (rdma-core $(family "$other")) does not serve $VRNIC_IBDEV" $? "$devices"
if [[ $devices == *"couldn't load driver"*"version \`GLIBC_"*"not found"* ]]; then
	# A newer release's build needs its newer C library: it cannot load here.
	ktap_ok "built against a newer C library: libibverbs cannot load it"
elif [[ $theirs == */libvrnic-rdmav$pabi.so ]]; then
	[[ $devices == *"libvrnic: built for the libibverbs of rdma-core"*"but this is rdma-core $release's; not loaded"* ]]
	ktap_check "same private ABI, other layouts: it says why it refuses" $? "$devices"
else
	[[ $devices == *"couldn't load driver"* ]]
	ktap_check "another private ABI: libibverbs cannot load it" $? "$devices"
fi
ktap_finish
