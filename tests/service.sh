#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The packaged vrnicd@ unit as a Debian 12 machine runs it, without
# changing this one: the vrnicd package is installed in a scratch copy of
# the host's root (scripts/scratch-root), which boots systemd in a
# container (systemd-nspawn).  There:
#   - installing the package made the vrnic user and /dev/shm/vrnic (0700);
#   - vrnicd@test starts as the vrnic user, and systemd-analyze security
#     scores it 3 or less;
#   - QEMU run as the vrnic user attaches to the device (ivshmem handshake,
#     guest RAM in /dev/shm/vrnic), while another user cannot reach its
#     socket;
#   - systemctl restart keeps the keeper, and the new vrnicd takes QEMU's
#     connection over from it.
# Needs root (overlay mounts, containers).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source tests/selftests/lib.sh
# shellcheck source=scripts/lib/stacks.sh
source scripts/lib/stacks.sh

((EUID == 0)) || { echo "1..0 # SKIP needs root (overlay mounts, containers)"; exit 4; }
command -v systemd-nspawn >/dev/null ||
	{ echo "1..0 # SKIP systemd-nspawn missing; run 'make setup'"; exit 4; }
ktap_plan 7
bail() { echo "Bail out! $*"; exit 1; }

build=$stacks_build
debdir=$build/packages/deb-bookworm
scratch=$build/packages/scratch-service
machine=vrnic-service-$$
nspawn=
leader=
cleanup() {
	# The container's init goes, and all of the container with it.
	[[ -n $leader ]] && kill -KILL "$leader" 2>/dev/null
	[[ -n $nspawn ]] && { kill "$nspawn" 2>/dev/null; wait "$nspawn" 2>/dev/null; }
	scripts/scratch-root --remove "$scratch"
}
trap cleanup EXIT

# The packages make check built beside the guests (scripts/deb keeps what
# matches the sources).
scripts/deb "$debdir" >"$build/packages/service-deb.log" 2>&1 ||
	{ bail "make deb failed: $(tail -n 15 "$build/packages/service-deb.log")"; }
scripts/scratch-root host "$scratch" >/dev/null || bail "no scratch root"
root=$scratch/root
out=$(scripts/in-root "$root" -- dpkg -i "$debdir"/vrnicd_*.deb 2>&1)
rc=$?
[[ $rc == 0 ]] && grep -q '^vrnic:' "$root/etc/passwd"
ktap_check "the vrnicd package installs, and makes the vrnic system user" $? "exit $rc: $(tail -n 8 <<<"$out")"
# The device, configured as the package's example says.
mkdir -p "$root/etc/vrnic"
sed -e 's|vrnic0|test|g' "$root/usr/share/doc/vrnicd/examples/vrnic0.conf" >"$root/etc/vrnic/test.conf"

# Boot it; inside() runs a command in the container.
systemd-nspawn -D "$root" --boot --register=no --keep-unit -M "$machine" -q \
	>"$build/packages/service-nspawn.log" 2>&1 &
nspawn=$!
# The container's init: the child of systemd-nspawn that is PID 1 in a
# PID namespace of its own.  Not just its first child: that may be
# nspawn's "outer child", which starts init and exits (CI once took it,
# and every command "inside" then failed).
container_init() {
	local p
	for p in $(pgrep -P "$nspawn"); do
		grep -qE '^NSpid:[[:space:]]+[0-9]+[[:space:]]+1$' "/proc/$p/status" 2>/dev/null &&
			{ echo "$p"; return 0; }
	done
	return 1
}
for _ in $(seq 100); do
	leader=$(container_init) && break
	sleep 0.2
done
[[ -n $leader ]] || bail "the container did not start: $(cat "$build/packages/service-nspawn.log")"
inside() { nsenter -t "$leader" -a -- "$@"; }
# systemctl needs the manager's socket, which PID 1 makes some time after
# it starts: asked sooner, it says "Failed to connect to bus".
retry 300 0.2 inside test -S /run/systemd/private ||
	bail "no /run/systemd/private in the container after 60 s (init pid $leader$(kill -0 "$leader" 2>/dev/null || echo ", gone")): $(tail -n 20 "$build/packages/service-nspawn.log")"
state=$(inside timeout 120 systemctl is-system-running --wait 2>&1)
[[ $state == running || $state == degraded ]] ||
	bail "systemd in the container: $state; $(inside systemctl --failed --no-pager 2>&1 | tail -n 8)"

mode=$(inside stat -c '%a %U' /dev/shm/vrnic 2>&1)
[[ $mode == "700 vrnic" ]]
ktap_check "guest RAM's directory /dev/shm/vrnic is 0700, the vrnic user's (tmpfiles.d)" $? "$mode"

inside runuser -u vrnic -- truncate -s 256M /dev/shm/vrnic/test.ram
inside systemctl start vrnicd@test.service
retry 50 0.2 inside test -S /run/vrnic/test.sock
user=$(inside ps -o user= -C vrnicd 2>&1 | sort -u)
[[ $(inside systemctl is-active vrnicd@test.service) == active && $user == vrnic ]]
ktap_check "vrnicd@test runs, as the vrnic user" $? \
	"user '$user'; $(inside journalctl -u vrnicd@test --no-pager -n 10 2>&1)"

score=$(inside systemd-analyze security vrnicd@test.service 2>&1 | sed -n 's/.*Overall exposure level for vrnicd@test.service: \([0-9.]*\).*/\1/p')
[[ -n $score ]] && awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }'
ktap_check "systemd-analyze security scores vrnicd@test.service ${score:-?} (3 or less)" $? \
	"$(inside systemd-analyze security vrnicd@test.service 2>&1 | grep '✗' | head -n 12)"

# QEMU as the vrnic user: the ivshmem handshake, guest RAM mapped by both.
qemu_for() { # USER: a paused QEMU with the device, in the container
	inside runuser -u "$1" -- qemu-system-x86_64 -machine q35,memory-backend=mem -m 256M \
		-object memory-backend-file,id=mem,size=256M,mem-path=/dev/shm/vrnic/test.ram,share=on \
		-chardev socket,path=/run/vrnic/test.sock,id=vrnic \
		-device ivshmem-doorbell,chardev=vrnic,vectors=4 \
		-display none -nodefaults -S
}
qemu_for vrnic >"$build/packages/service-qemu.log" 2>&1 &
qemu=$!
connected() { inside journalctl -u vrnicd@test --no-pager -o cat | grep -c "$1"; }
retry 100 0.2 bash -c "(( \$(nsenter -t $leader -a -- journalctl -u vrnicd@test --no-pager -o cat | grep -c 'ivshmem: client connected') > 0 ))"
(($(connected "ivshmem: client connected") > 0)) && kill -0 "$qemu" 2>/dev/null
ktap_check "QEMU run as the vrnic user attaches to the device" $? \
	"$(cat "$build/packages/service-qemu.log"; inside journalctl -u vrnicd@test --no-pager -n 10 -o cat)"

out=$(timeout 30 bash -c "$(declare -f inside qemu_for); leader=$leader; qemu_for nobody" 2>&1)
rc=$?
[[ $rc != 0 && $rc != 124 ]] && grep -qi "permission denied" <<<"$out"
ktap_check "QEMU run as another user cannot reach it" $? "exit $rc: $(tail -n 4 <<<"$out")"

keeper=$(inside pgrep -x vrnicd-keeper)
inside systemctl restart vrnicd@test.service
retry 100 0.2 bash -c "nsenter -t $leader -a -- journalctl -u vrnicd@test --no-pager -o cat | grep -q 'took over QEMU'"
[[ -n $keeper && $(inside pgrep -x vrnicd-keeper) == "$keeper" ]] &&
	(($(connected "took over QEMU's connection from the keeper") > 0)) && kill -0 "$qemu" 2>/dev/null
ktap_check "systemctl restart keeps the keeper (pid ${keeper:-none}); the new vrnicd takes the device over" $? \
	"$(inside journalctl -u vrnicd@test --no-pager -n 12 -o cat)"

kill "$qemu" 2>/dev/null
inside pkill -f qemu-system-x86_64
inside systemctl stop vrnicd@test.service
ktap_finish
