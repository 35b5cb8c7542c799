#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of the selftest catalog and of run_tests: a selection
# picks what it should, in order; and run_tests fails a test
# that prints fewer or more results than its KTAP plan, or no plan, even
# when it exits 0.  run_tests runs here on the host, in a copy of the
# selftest directory that holds made-up tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$here/lib.sh"
# shellcheck source=tests/selftests/catalog.sh
source "$here/catalog.sh"

ktap_plan 8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# That every selftest declares known boots and tags and runs in a boot is
# tests/tools/check-selftests' (make lint; check_selftests_test.sh).
sel=$(catalog_select one "" | tr '\n' ' ')
[[ $sel == vrnic_devinfo.sh* && $sel == *"vrnic_recover.sh vrnic_reload.sh vrnic_kmemleak.sh " ]]
ktap_check "a boot runs its tests by order, reload and kmemleak last" $? "$sel"

sel=$(catalog_select pair-rxe "storage,stack" | tr '\n' ' ')
[[ $sel == *vrnic_pair_cm.sh* && $sel == *vrnic_pair_nvmeof.sh* &&
	$sel != *vrnic_pair_ping.sh* && $sel != *vrnic_pair_guide.sh* ]]
ktap_check "tags select: storage,stack in pair-rxe" $? "$sel"

# run_tests on made-up tests: a copy of the directory, its own tests.
cp "$here"/{run_tests,catalog.sh,boots} "$tmp/"
mkdir "$tmp/device"
fake() { # NAME EXIT LINES...
	local name=$1 rc=$2
	shift 2
	{
		printf '#!/bin/bash\n# boots: one\n# tags: smoke\n'
		printf 'echo %q\n' "$@"
		echo "exit $rc"
	} >"$tmp/device/$name"
	chmod +x "$tmp/device/$name"
}
fake vrnic_good.sh 0 "TAP version 13" "1..2" "ok 1 a" "ok 2 b # SKIP c"
fake vrnic_short.sh 0 "TAP version 13" "1..3" "ok 1 a" "ok 2 b"
fake vrnic_long.sh 0 "1..1" "ok 1 a" "ok 2 b"
fake vrnic_noplan.sh 0 "ok 1 a"
fake vrnic_skip.sh 4 "1..0 # SKIP not here"
fake vrnic_nested.sh 0 "1..1" "# 1..2" "# ok 1 x" "ok 1 a"

run() { VRNIC_TEST_TIMEOUT=20 "$tmp/run_tests" "$@" 2>&1; }
out=$(run vrnic_good.sh vrnic_skip.sh vrnic_nested.sh)
ktap_check "a test that keeps its plan passes; a skip is a skip; subtests are not counted" $? "$out"
out=$(run vrnic_short.sh)
rc=$?
[[ $rc != 0 && $out == *"not ok 1 selftests: vrnic: vrnic_short.sh # its plan was 1..3 but it printed 2 results"* ]]
ktap_check "fewer results than the plan fail the test, though it exits 0" $? "$out"
out=$(run vrnic_long.sh)
rc=$?
[[ $rc != 0 && $out == *"plan was 1..1 but it printed 2 results"* ]]
ktap_check "more results than the plan fail the test" $? "$out"
out=$(run vrnic_noplan.sh)
rc=$?
[[ $rc != 0 && $out == *"no KTAP plan"* ]]
ktap_check "no plan fails the test" $? "$out"
out=$(VRNIC_BOOT=one run)
rc=$?
[[ $rc != 0 && $out == *"1..6"* && $out == *"# 2 passed, 3 failed, 1 skipped"* ]]
ktap_check "with no names, run_tests runs every test of its boot" $? "$out"
out=$(run vrnic_missing.sh)
rc=$?
[[ $rc != 0 && $out == *"not ok 1 selftests: vrnic: vrnic_missing.sh # no such test"* ]]
ktap_check "a test that does not exist fails" $? "$out"
ktap_finish
