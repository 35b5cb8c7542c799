#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The Debian packages on each stack, without changing this machine: make
# deb's vrnic-dkms, libvrnic1 and vrnicd, built for Debian 12 here and for
# Debian 13 in the trixie root (each checked with its release's lintian),
# are installed with dpkg in scratch copies of the host's root and of the
# trixie root (scripts/scratch-root: overlays, thrown away after), beside
# Debian's own kernel packages.  DKMS builds vrnic.ko as it would on a
# user's machine: for Debian 12's 6.1 when vrnic-dkms is installed, for 6.12
# (bookworm-backports) when that kernel is installed after it, and in
# Debian 13 for 7.3 (trixie-backports), installed before it.  Then a guest
# of each copy runs selftests on what the packages installed (scripts/vm-run
# --installed): DKMS's vrnic.ko, the packaged libvrnic, the packaged
# vrnicd.  Last, vrnic-vm's vrnic-run (installed by scripts/ci-setup, as
# action.yml installs it), as a user of the copy with no privileges: a
# command in one guest, rping against an rxe guest, and, in the copy of
# Debian 13, rdma-core's own test suite built from its source.
# The kernels' initramfs is not made (INITRD=No): the test guests boot one
# of their own.  Needs root.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tests/selftests/lib.sh
# shellcheck source=scripts/lib/stacks.sh
source scripts/lib/stacks.sh
build=$stacks_build
version=0.1.0

((EUID == 0)) || { echo "1..0 # SKIP needs root (overlay mounts, chroot)"; exit 4; }
# Debian 12's packages go on the host's copy with its 6.1 and the 6.12 of
# build/kernels; Debian 13's on the trixie root's copy with 7.3.
k61=$(KVER='' scripts/kver) || exit 1
k612=$(scripts/kver 6.12) || exit 1
k73=$(scripts/kver 7.3) || exit 1
ktap_plan 17

# The packages are in build/packages/deb-RELEASE, which make check has
# built already beside the guests (scripts/deb keeps what matches the
# sources); the rest is scratch.
tmp=$build/packages
scratches=()
cleanup() {
	local d
	for d in ${scratches[@]+"${scratches[@]}"}; do
		scripts/scratch-root --remove "$d"
	done
}
trap cleanup EXIT
for d in "$tmp"/scratch-*; do
	[[ -d $d ]] && scripts/scratch-root --remove "$d"
done
rm -f "$tmp"/*.log
mkdir -p "$tmp"

# debs WHERE OUTDIR: make deb's packages, here or in a guest root.
debs() {
	local cmd=(scripts/deb "$2")
	[[ $1 == host ]] || cmd=(scripts/in-root "$1" -- "${cmd[@]}")
	"${cmd[@]}" >"$2.log" 2>&1
}
debs host "$tmp/deb-bookworm"
ktap_check "Debian 12 packages build, lintian clean" $? "$(tail -n 15 "$tmp/deb-bookworm.log")"
debs trixie "$tmp/deb-trixie"
ktap_check "Debian 13 packages build in the trixie root, its lintian clean" $? \
	"$(tail -n 15 "$tmp/deb-trixie.log")"

# dpkg_in ROOT LOG DEB...: dpkg -i in the scratch copy of ROOT (made on
# first use: host, or a guest root), its output in LOG.
dpkg_in() {
	local d=$tmp/scratch-$1 log=$2
	shift 2
	if [[ ! -d $d ]]; then
		scripts/scratch-root "${d##*scratch-}" "$d" || return 1
		scratches+=("$d")
	fi
	scripts/in-root "$d/root" -- env INITRD=No dpkg -i "$@" >"$log" 2>&1
}
kernel_debs() { compgen -G "$stacks_build/kernels/.debs/$1/linux-*.deb"; }
ours() { echo "$1"/vrnic-dkms_*.deb "$1"/libvrnic1_*.deb "$1"/vrnicd_*.deb; }

# dkms_built ROOT RELEASE: DKMS installed vrnic.ko for RELEASE in the
# scratch copy of ROOT, for that kernel (its vermagic).
dkms_built() {
	local d=$tmp/scratch-$1/root rel=$2 mod
	scripts/in-root "$d" -- dkms status "vrnic/$version" -k "$rel"
	mod=$(compgen -G "$d/lib/modules/$rel/updates/dkms/vrnic.ko*" | head -n 1)
	[[ -n $mod ]] || { echo "no vrnic.ko in /lib/modules/$rel/updates/dkms"; return 1; }
	modinfo -F vermagic "$mod" | grep -q "^$rel " || { echo "$mod: $(modinfo -F vermagic "$mod")"; return 1; }
}

# Debian 12: the packages, then the backports kernel.
# shellcheck disable=SC2046 # the packages' paths are words
dpkg_in host "$tmp/host-ours.log" $(ours "$tmp/deb-bookworm")
ktap_check "dpkg -i of the three packages in a copy of this Debian 12" $? "$(tail -n 15 "$tmp/host-ours.log")"
out=$(dkms_built host "$k61" 2>&1)
ktap_check "DKMS built vrnic.ko for $k61 when vrnic-dkms was installed" $? "$out"
mapfile -t kdebs < <(kernel_debs "$k612")
dpkg_in host "$tmp/host-kernel.log" "${kdebs[@]}" && out=$(dkms_built host "$k612" 2>&1)
ktap_check "DKMS built vrnic.ko for $k612 when that kernel was installed after it" $? \
	"$(tail -n 8 "$tmp/host-kernel.log"; echo "$out")"

# Debian 13: the 7.3 kernel, then the packages.
mapfile -t kdebs < <(kernel_debs "$k73")
# shellcheck disable=SC2046
dpkg_in trixie "$tmp/trixie.log" "${kdebs[@]}" && dpkg_in trixie "$tmp/trixie-ours.log" $(ours "$tmp/deb-trixie")
ktap_check "dpkg -i of Linux $k73, then of the three packages, in a copy of the trixie root" $? \
	"$(tail -n 15 "$tmp/trixie.log" "$tmp/trixie-ours.log" 2>/dev/null)"
out=$(dkms_built trixie "$k73" 2>&1)
ktap_check "DKMS built vrnic.ko for $k73 in Debian 13" $? "$out"

# What libvrnic1 put where libibverbs looks, for its release.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for r in host trixie; do
	lib=$(compgen -G "$tmp/scratch-$r/root/usr/lib/$multiarch/libibverbs/libvrnic-rdmav*.so")
	[[ -n $lib ]] && grep -qx "driver vrnic" "$tmp/scratch-$r/root/etc/libibverbs.d/vrnic.driver"
	ktap_check "libvrnic1 in $r: ${lib##*/} and /etc/libibverbs.d/vrnic.driver" $? "$lib"
done
dep=$(dpkg-deb -f "$tmp"/deb-trixie/libvrnic1_*.deb Depends)
[[ $dep == *"libibverbs1 (>= 45~)"*"libibverbs1 (<< 57~)"* ]]
ktap_check "Debian 13's libvrnic1 wants the libibverbs of rdma-core 45 to 56" $? "$dep"

# Selftests on what the packages installed: the device through the
# tools, libvrnic against this libibverbs, the verbs data path.
installed_run() { # ROOT KERNEL
	scripts/vm-tests --root "$tmp/scratch-$1/root" --kernel "$2" --installed \
		vrnic_devinfo.sh vrnic_provider_abi.sh vrnic_verbs.sh
}
out=$(installed_run host "$k61" 2>&1)
ktap_check "vm-run --installed on Debian 12, Linux $k61: devinfo, provider ABI, verbs" $? \
	"$(grep -E '(not )?ok [0-9]|vm-run:' <<<"$out" | tail -n 12)"
out=$(installed_run trixie "$k73" 2>&1)
ktap_check "vm-run --installed on Debian 13, Linux $k73: devinfo, provider ABI, verbs" $? \
	"$(grep -E '(not )?ok [0-9]|vm-run:' <<<"$out" | tail -n 12)"

# vrnic-run (vrnic-vm), as a user with no privileges and no groups, in the
# copies: the packages' vrnic.ko, libvrnic and vrnicd, the user's home
# shared with the guest, the command run as that user.  scripts/ci-setup
# installs vrnic-vm: it is what action.yml runs in a CI job's container.
ci_setup() { # ROOT DEBS
	scripts/in-root "$tmp/scratch-$1/root" -- scripts/ci-setup --no-update --debs "$2" \
		>"$tmp/$1-vm.log" 2>&1
}
as_user() { # ROOT COMMAND...: in the copy of ROOT, as vrnic-ci, in its home
	local r=$tmp/scratch-$1/root
	shift
	scripts/in-root "$r" -- sh -c 'id vrnic-ci >/dev/null 2>&1 || useradd -m vrnic-ci' &&
		scripts/in-root "$r" -- setpriv --reuid=vrnic-ci --regid=vrnic-ci --clear-groups \
			--reset-env sh -c 'cd && exec "$@"' sh "$@"
}
ci_setup host "$tmp/deb-bookworm"
ktap_check "scripts/ci-setup (action.yml's) installs vrnic-vm in the copy of this Debian 12" $? \
	"$(tail -n 15 "$tmp/host-vm.log")"
# shellcheck disable=SC2016 # expanded in the guest
pingpong='ibv_rc_pingpong -g $VRNIC_GID_INDEX -n 200 & sleep 2
ibv_rc_pingpong -g $VRNIC_GID_INDEX -n 200 127.0.0.1 && wait $! && id -u >ran-as && touch here'
out=$(as_user host vrnic-run --timeout 600 -- sh -c "$pingpong" 2>&1)
rc=$?
home=$tmp/scratch-host/root/home/vrnic-ci
booted=$(grep -Eo '^vm-run: guest 0: booted; its command starts [0-9]+s' <<<"$out")
[[ $rc == 0 && -f $home/here && $(cat "$home/ran-as" 2>/dev/null) == "$(stat -c %u "$home")" &&
	-n $booted ]]
ktap_check "vrnic-run as an unprivileged user: ibv_rc_pingpong in a guest, run as that user in its home${booted:+ (${booted#*: })}" $? \
	"exit $rc" "$(tail -n 12 <<<"$out")"
# shellcheck disable=SC2016
rping='if [ "$VRNIC_VM" = 0 ]; then rping -s -a "$VRNIC_IP" -C 20 -V
else sleep 5; rping -c -a "$VRNIC_PEER_IP" -C 20 -V; fi'
out=$(as_user host vrnic-run --vms 2 --peer rxe --timeout 900 -- sh -c "$rping" 2>&1)
ktap_check "vrnic-run --vms 2 --peer rxe as that user: rping between vrnic and rxe" $? \
	"$(tail -n 12 <<<"$out")"

# A third party's own tests, as that project's CI job would run them:
# rdma-core's test suite, from Debian 13's source package (its upstream
# tarball, the release of the copy's rdma-core), built by that user
# outside the guest and run by vrnic-run in the copy of Debian 13.
ci_setup trixie "$tmp/deb-trixie"
ktap_check "scripts/ci-setup installs vrnic-vm in the copy of Debian 13" $? \
	"$(tail -n 15 "$tmp/trixie-vm.log")"
# make check's idle lane builds it beside the guests: this waits for that
# build, or finds it done (or builds it, when run alone).
suite=$build/outside/rdma-core
{
	tarball=$(scripts/fetch-source trixie rdma-core) &&
		scripts/in-root trixie -- tests/rdma-core-suite.sh build "$tarball" "$suite"
} >"$tmp/rdma-core-build.log" 2>&1
out=$(as_user trixie "$PWD/tests/rdma-core-suite.sh" run "$suite" 90 --kernel "$k73" 2>&1)
rc=$?
what=$(cat "$suite/.tarball" 2>/dev/null)
ktap_check "rdma-core's own test suite ($what), run by that user through vrnic-run" $rc \
	"$(tail -n 5 "$tmp/rdma-core-build.log")" "$(tail -n 45 <<<"$out")"
ktap_finish
