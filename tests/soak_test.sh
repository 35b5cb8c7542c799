#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of scripts/soak's tally, with a stand-in for
# scripts/vm-tests that boots nothing: over three runs of the pair boot, a
# test that fails once counts 1, a skip counts apart, a test that prints no
# result counts as failed, and a run whose boot failed with every test ok
# counts on the verdict line; soak exits 1.  Without --boots it runs the
# five two-guest boots and counts all their tests; --tags is refused.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"
# shellcheck source=tests/selftests/catalog.sh
source "$repo/tests/selftests/catalog.sh"

ktap_plan 8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mapfile -t pair < <(catalog_select pair "")
# Run 1: all ok, but the boot failed (a kernel warning); run 2: the first
# test fails on one guest, the second is skipped; run 3: the last test
# prints nothing.
cat >"$tmp/vm-tests" <<STAND_IN
#!/bin/bash
k=\$(cat "$tmp/k" 2>/dev/null || echo 0); k=\$((k + 1)); echo "\$k" >"$tmp/k"
i=0
for t in ${pair[*]}; do
	i=\$((i + 1))
	if ((k == 2 && i == 1)); then
		echo "[vm0] not ok \$i selftests: vrnic: \$t # exit=1"; echo "[vm1] ok \$i selftests: vrnic: \$t (3s)"
	elif ((k == 2 && i == 2)); then
		echo "[vm0] ok \$i selftests: vrnic: \$t # SKIP"
	elif ((k == 3 && i == ${#pair[@]})); then
		:
	else
		echo "[vm0] ok \$i selftests: vrnic: \$t (3s)"; echo "[vm1] ok \$i selftests: vrnic: \$t (3s)"
	fi
done
((k != 2)) && ((k != 3)) && exit 1
exit 0
STAND_IN
chmod +x "$tmp/vm-tests"
out=$(VRNIC_VM_TESTS=$tmp/vm-tests VRNIC_BUILD=$tmp "$repo/scripts/soak" 3 --boots pair 2>&1)
rc=$?
row() { grep -E "^$1 " <<<"$out" | awk '{ print $2, $3, $4 }'; }
[[ $rc == 1 ]]
ktap_check "soak fails when something failed" $? "exit $rc" "$out"
[[ $(row "${pair[0]}") == "3 1 0" ]]
ktap_check "a test that failed on one guest once: 1 of 3" $? "$(row "${pair[0]}")"
[[ $(row "${pair[1]}") == "3 0 1" ]]
ktap_check "a skip counts apart" $? "$(row "${pair[1]}")"
[[ $(row "${pair[-1]}") == "3 1 0" ]]
ktap_check "a test with no result counts as failed" $? "$(row "${pair[-1]}")"
grep -Eq '^\(vm-run verdict, all tests ok\) +3 +1 ' <<<"$out"
ktap_check "a failed boot with every test ok counts on the verdict line" $? "$out"
[[ $(find "$tmp/soak" -name 'run-*.log' | wc -l) == 3 ]]
ktap_check "each run's log is kept" $? "$(ls "$tmp/soak")"

# Without --boots: every boot with two guests, each test counted.  The
# stand-in passes every test of the boots it is given.
cat >"$tmp/vm-tests-ok" <<STAND_IN
#!/bin/bash
source "$repo/tests/selftests/catalog.sh"
while ((\$#)); do [[ \$1 == --boots ]] && boots=\$2; shift; done
echo "\$boots" >"$tmp/boots-given"
i=0
for b in \${boots//,/ }; do
	for t in \$(catalog_select "\$b" ""); do
		i=\$((i + 1)); echo "[vm0] ok \$i selftests: vrnic: \$t (1s)"
	done
done
STAND_IN
chmod +x "$tmp/vm-tests-ok"
out=$(VRNIC_VM_TESTS=$tmp/vm-tests-ok VRNIC_BUILD=$tmp "$repo/scripts/soak" 1 2>&1)
rc=$?
[[ $rc == 0 && $(<"$tmp/boots-given") == pair,pair-loss,pair-tap,pair-rxe,pair-udp &&
	$(row vrnic_pair_loss.sh) == "1 0 0" && $(row vrnic_pair_pcap.sh) == "1 0 0" &&
	$(row vrnic_pair_ping.sh) == "1 0 0" ]]
ktap_check "without --boots: the five two-guest boots, every test counted, all ok" $? \
	"exit $rc, boots $(cat "$tmp/boots-given")" "$out"
VRNIC_VM_TESTS=$tmp/vm-tests-ok VRNIC_BUILD=$tmp "$repo/scripts/soak" 1 --tags storage >/dev/null 2>&1
[[ $? == 2 ]]
ktap_check "a selection narrower than whole boots is refused" $?
ktap_finish
