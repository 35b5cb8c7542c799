#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of tests/tools/check-selftests: clean on the tree as it
# is; on a copy with a selftest in no boot, one in a boot that does not
# exist, a program built that nothing runs, a file nothing uses, a test
# outside the kinds' folders and one name in two folders, it fails and
# says so.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"

ktap_plan 7
out=$("$repo/tests/tools/check-selftests" 2>&1)
ktap_check "the tree as it is: clean" $? "$out"

# shellcheck source=tests/tools/plant.sh
source "$repo/tests/tools/plant.sh"
plant_check=("$repo/tests/tools/check-selftests")

plant "a selftest with no boots line" "vrnic_orphan.sh: no \"# boots:\" line" \
	sh -c 'printf "#!/bin/bash\n# tags: smoke\n" >tests/selftests/device/vrnic_orphan.sh'
plant "a selftest in a boot that does not exist" "vrnic_orphan.sh runs in no selection (boots: quad)" \
	sh -c 'printf "#!/bin/bash\n# boots: quad\n# tags: smoke\n" >tests/selftests/device/vrnic_orphan.sh'
plant "a program nothing runs" "program vrnic_orphan is built (CMakeLists.txt) but no selftest runs it" \
	sh -c 'echo "int main(void) { return 0; }" >tests/selftests/device/vrnic_orphan.c &&
		echo "add_executable(vrnic_orphan device/vrnic_orphan.c)" >>tests/selftests/CMakeLists.txt'
plant "a file nothing uses" "storage/orphan_lib.sh: no selftest, program or script uses it" \
	touch tests/selftests/storage/orphan_lib.sh
plant "a test out of the kinds' folders" "vrnic_stray.sh is in no folder of a kind" \
	sh -c 'printf "#!/bin/bash\n# boots: one\n# tags: smoke\n" >tests/selftests/vrnic_stray.sh'
plant "a test name in two folders" "vrnic_verbs.sh is in 2 folders" \
	cp tests/selftests/verbs/vrnic_verbs.sh tests/selftests/device/
ktap_finish
