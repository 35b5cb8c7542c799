#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Tests of scripts/vm-run itself, run on the host (each case boots a VM):
# exit status propagation, a read-only share (--rodir), detection of
# kernel warnings and hangs, Ctrl-C, and that nothing is left behind after
# any of them.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/selftests/lib.sh

ktap_plan 14
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Processes, sockets and RAM files of the runs above that should be gone.
# Only what was not there before this test counts: another vm-run on the
# same machine (a second checkout's make check) is not ours to judge.
snapshot() {
	pgrep -f "qemu-system-x86_64.*vmrun=$PWD/" | sed 's/^/qemu pid /'
	pgrep -f "$VRNIC_BUILD/userspace/vrnicd/vrnicd" | sed 's/^/vrnicd pid /'
	compgen -G "/dev/shm/vrnic-vm.*"
	compgen -G "/tmp/vrnic-vm.*"
	return 0
}
leftovers() {
	snapshot | sort | comm -13 "$tmp/before" -
}
export VRNIC_BUILD=${VRNIC_BUILD:-$PWD/build}
snapshot | sort >"$tmp/before"

# The same boot reads a directory under /tmp, where a guest has its own,
# through --rodir, and may not write there.
mkdir "$tmp/ro"
echo "seen from the host $$" >"$tmp/ro/file"
scripts/vm-run --timeout 300 --rodir "$tmp/ro" -- sh -c "
	echo \"rodir: \$(cat $tmp/ro/file)\"
	touch $tmp/ro/new 2>/dev/null || echo 'rodir: no writing'
	exit 3" >"$tmp/exit.log" 2>&1
rc=$?
[[ $rc == 3 ]]
ktap_check "a guest command's exit status comes back (3)" $? "got $rc: $(tail -n 5 "$tmp/exit.log")"
grep -q "rodir: seen from the host $$" "$tmp/exit.log" && grep -q "rodir: no writing" "$tmp/exit.log" &&
	[[ ! -e $tmp/ro/new ]]
ktap_check "--rodir shares a directory under /tmp, read-only" $? "$(grep rodir: "$tmp/exit.log")"

# The accelerator: --accel auto (the default) says which it took and why;
# --accel kvm boots under KVM exactly when auto took it, and otherwise
# fails at once, with auto's reason.
said=$(sed -n 's/^vm-run: accelerator: //p' "$tmp/exit.log")
[[ $said =~ ^(kvm|tcg)\ \(.+\)$ ]]
ktap_check "vm-run says which accelerator it took: $said" $? "$(head -n 5 "$tmp/exit.log")"
scripts/vm-run --accel kvm --timeout 300 -- true >"$tmp/kvm.log" 2>&1
rc=$?
if [[ $said == kvm* ]]; then
	[[ $rc == 0 ]] && grep -q "^vm-run: accelerator: kvm" "$tmp/kvm.log"
else
	why=${said#tcg (}
	[[ $rc == 2 ]] && grep -qxF "vm-run: --accel kvm: ${why%)}" "$tmp/kvm.log"
fi
ktap_check "--accel kvm agrees with auto's choice (exit $rc)" $? "$(tail -n 3 "$tmp/kvm.log")"
scripts/vm-run --accel hvf --timeout 300 -- true >"$tmp/bad.log" 2>&1
rc=$?
[[ $rc == 2 ]] && grep -q "accel must be auto, kvm or tcg" "$tmp/bad.log"
ktap_check "an unknown accelerator is refused before any boot" $? "got $rc: $(tail -n 3 "$tmp/bad.log")"

scripts/vm-run --timeout 300 -- sh -c 'echo "<4>WARNING: CPU: 0 PID: 1 at vm-run selftest" >/dev/kmsg' \
	>"$tmp/warn.log" 2>&1
rc=$?
[[ $rc != 0 ]] && grep -q "the kernel reported a problem" "$tmp/warn.log"
ktap_check "a kernel warning in the guest fails the run and says so" $? "got $rc: $(tail -n 5 "$tmp/warn.log")"

start=$SECONDS
scripts/vm-run --timeout 25 -- sleep 1000 >"$tmp/hang.log" 2>&1
rc=$?
[[ $rc == 124 ]] && grep -q "hung" "$tmp/hang.log"
ktap_check "a guest that does not finish times out with 124" $? "got $rc: $(tail -n 5 "$tmp/hang.log")"
((SECONDS - start < 85))
ktap_check "the timeout is honoured ($((SECONDS - start))s for --timeout 25)" $?
left=$(leftovers)
[[ -z $left ]]
ktap_check "nothing is left behind after a timeout" $? "$left"

# Background jobs of a script start with SIGINT ignored; restore the
# default, as a terminal's foreground job has it.
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' scripts/vm-run --timeout 300 -- sleep 1000 >"$tmp/int.log" 2>&1 &
pid=$!
retry 120 0.5 grep -q "ready: vrnic0" "$tmp/int.log"
# While it runs: its guest RAM is the user's alone (issue 24, defect 7), a
# 0600 file in a 0700 directory of its own, not a predictable name in
# /dev/shm that another user could create first.
modes=$(leftovers | grep '^/dev/shm/' | while read -r d; do
	find "$d" -maxdepth 1 -name '*.ram' -printf '%m %u %h\n'
	[[ -d $d ]] && stat -c '%a %U %n' "$d"
done)
[[ -n $modes ]] && ! grep -qv '^\(600\|700\) ' <<<"$modes" && ! grep -q ' /dev/shm$' <<<"$modes"
ktap_check "guest RAM is 0600 in a 0700 directory of its own" $? "$modes"
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc == 130 ]]
ktap_check "Ctrl-C stops the run with 130" $? "got $rc: $(tail -n 5 "$tmp/int.log")"
sleep 1
left=$(leftovers)
[[ -z $left ]]
ktap_check "nothing is left behind after Ctrl-C" $? "$left"

out=$(scripts/vm-run --vms 3 -- true 2>&1)
rc=$?
[[ $rc == 2 ]]
ktap_check "bad arguments are refused with 2" $? "got $rc: $out"
mkdir "$tmp/a,b"
out=$(scripts/vm-run --rodir "$tmp/a,b" -- true 2>&1)
rc=$?
[[ $rc == 2 && $out == *"no blanks, commas or colons"* ]]
ktap_check "a directory whose path QEMU cannot take is refused with 2" $? "got $rc: $out"

ktap_finish
