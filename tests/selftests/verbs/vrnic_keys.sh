#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Quotas on memory keys (issue 24, defect 2).  MRs, FRWR MRs and windows
# share the device's key table, and a window pins no memory: without a
# limit one unprivileged process took every key, and nobody else could
# register, kernel ULPs' FRWR pools included.  Now a user context holds
# context_keys at most, user contexts together all but kernel_keys (module
# parameters), and the rdma cgroup's hca_object limits them too.  The
# takers run as nobody (vrnic_keys.c).
# boots: one
# tags: verbs stack
# order: 45
# timeout: 600
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nvmeof_lib.sh
source "$(dirname "$0")/../storage/nvmeof_lib.sh"
require_vm

keys=$VRNIC_BUILD/tests/selftests/vrnic_keys
params=/sys/module/vrnic/parameters
tmp=$(mktemp -d)
holders=()
cg=
cleanup() {
	((${#holders[@]})) && kill "${holders[@]}" 2>/dev/null
	wait 2>/dev/null
	# Limits back to max first: that frees the cgroup's pool for the
	# device.  Linux 6.1 keeps a pool that still has a limit after its
	# cgroup is gone, and corrupts a list when the device unregisters
	# (kernel BUG at lib/list_debug.c:59 in rdmacg_unregister_device).
	if [[ -d $cg ]]; then
		echo "$VRNIC_IBDEV hca_handle=max hca_object=max" >"$cg/rdma.max" 2>/dev/null
		rmdir "$cg" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# RDMA is for every user, as rdma-core's udev rules make it.  as_nobody
# ARGS... runs vrnic_keys DEVICE ARGS as nobody, in place of the (sub)shell
# that calls it: call it in $(...) or with &.
chmod 0666 /dev/infiniband/uverbs*
as_nobody() {
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$keys" "$VRNIC_IBDEV" "$@"
}
# took OUTPUT: the N of "took N".
took() { sed -n 's/^took //p' <<<"$1"; }

ktap_plan 8
if [[ -r $params/context_keys && -r $params/kernel_keys ]]; then
	ctx=$(<"$params/context_keys")
	kern=$(<"$params/kernel_keys")
else
	ktap_diag "vrnic.ko has no context_keys or kernel_keys: taking 1024 and 512"
	ctx=1024 kern=512
fi
max_mr=$(ibv_devinfo -v -d "$VRNIC_IBDEV" | awk '$1 == "max_mr:" { print $2 }')
users=$((max_mr - kern))
ktap_diag "max_mr $max_mr, context_keys $ctx, kernel_keys $kern"

out=$(as_nobody mw 2>&1)
[[ $(took "$out") == "$ctx" && $out == *"refused: ENOSPC"* ]]
ktap_check "one context takes $ctx windows (context_keys), then ENOSPC" $? "$out"

# hold KIND [MAX]: a taker that keeps its keys, in the background; its
# output goes to $tmp/hold.N, and it is ready when it says "holding".
hold() {
	local f=$tmp/hold.${#holders[@]} i
	as_nobody "$@" --hold >"$f" 2>&1 &
	holders+=($!)
	for ((i = 0; i < 600; i++)); do
		grep -q holding "$f" && break
		kill -0 "${holders[-1]}" 2>/dev/null || break
		nap 0.1
	done
	held=$(took "$(<"$f")")
}

hold mw
out=$(as_nobody mr 1 2>&1)$'\n'$(as_nobody mw 1 2>&1)
[[ $held == "$ctx" && $(grep -c "^took 1$" <<<"$out") == 2 ]]
ktap_check "while one context holds $held windows, another registers an MR and takes a window" $? \
	"$out"

# More takers until they have all that users may.
total=$held
while ((${#holders[@]} < 16)) && [[ $held == "$ctx" ]]; do
	hold mr
	total=$((total + held))
done
out=$(as_nobody mw 1 2>&1)
[[ $total == "$users" && $(took "$out") == 0 && $out == *"refused: ENOSPC"* ]]
ktap_check "${#holders[@]} contexts take $total keys, max_mr - kernel_keys, and then no context gets one" \
	$? "$out" "$(tail -n 2 "$tmp"/hold.*)"

# The kernel's reserve: NVMe-oF in this guest (nvmeof_lib.sh's target),
# whose host registers every request's pages with its pool of FRWR MRs.
nvmeof_target_setup "$VRNIC_IP"
rc=1
out=$({
	modprobe nvme-rdma &&
		timeout 120 nvme connect -t rdma -a "$VRNIC_IP" -s $nvmet_port -n $nvmet_nqn &&
		dev=$(nvmet_devices | head -n 1) &&
		timeout 120 dd if="$dev" of=/dev/null bs=1M count=8 iflag=direct
} 2>&1) && rc=0
nvme disconnect -n $nvmet_nqn >/dev/null 2>&1
modprobe -r nvme-rdma 2>/dev/null
nvmet_stop
ktap_check "meanwhile nvme-rdma (FRWR) connects through vrnic and reads 8 MiB: kernel_keys are the kernel's" \
	$rc "$out" "$(dmesg | tail -n 12)"

# Their exit gives every key back.
kill "${holders[@]}" 2>/dev/null
wait "${holders[@]}" 2>/dev/null
holders=()
out=$(as_nobody mw 2>&1)
[[ $(took "$out") == "$ctx" ]]
ktap_check "once they exit, a context takes $ctx again" $? "$out"

# The limit is the administrator's to change.
if [[ -w $params/context_keys ]]; then
	echo 16 >"$params/context_keys"
	out=$(as_nobody mr 2>&1)
	echo "$ctx" >"$params/context_keys"
	[[ $(took "$out") == 16 && $out == *ENOSPC* ]]
	ktap_check "with context_keys 16, a context registers 16 MRs" $? "$out"
else
	ktap_not_ok "with context_keys 16, a context registers 16 MRs" "no $params/context_keys"
fi

# The rdma cgroup: hca_object counts the PD and every key.
rc=1
out=$({
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	grep -qw rdma /sys/fs/cgroup/cgroup.controllers &&
		echo +rdma >/sys/fs/cgroup/cgroup.subtree_control
} 2>&1)
if grep -qw rdma /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	cg=/sys/fs/cgroup/vrnic-keys
	mkdir -p "$cg"
	echo "$VRNIC_IBDEV hca_object=8" >"$cg/rdma.max"
	out=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$keys" "$VRNIC_IBDEV" mw 2>&1)
	n=$(took "$out")
	[[ -n $n ]] && ((n > 0 && n < 8)) && [[ $out == *"refused: EAGAIN"* ]] && rc=0
fi
ktap_check "in an rdma cgroup with hca_object=8, a context gets fewer than 8 windows, then EAGAIN" \
	$rc "$out"
ktap_finish
