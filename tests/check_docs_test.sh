#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of tests/tools/check-docs: clean on the tree as it is,
# and failing, with the right complaint, on a copy with one drift planted:
# a function design.rst's walk names that no source defines, an option
# missing from vrnicd.8, a command missing from vrnicctl.8, a product
# folder the README's table does not name, and a vrnicd file the design's
# table does not name.
#
# check_docs_test.sh BUILD (the build with vrnicd and vrnicctl in it)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: check_docs_test.sh BUILD}
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"

ktap_plan 6
out=$("$repo/tests/tools/check-docs" "$build" 2>&1)
ktap_check "the tree as it is: clean" $? "$out"

# shellcheck source=tests/tools/plant.sh
source "$repo/tests/tools/plant.sh"
plant_check=("$repo/tests/tools/check-docs" "$build")

plant "a walk that names a function no source has" "sqe_decode() is not a function" \
	sed -i 's/``Qp::fetch_send_wqe()`` → ``sqe_parse()``/``sqe_decode()``/' Documentation/design.rst
plant "vrnicd.8 without --bar-size" "no --bar-size" \
	sed -i '/^\.BI \\-\\-bar\\-size/d' Documentation/man/vrnicd.8
plant "vrnicctl.8 without the trace command" "no command 'trace'" \
	sed -i '/^\.B trace$/d' Documentation/man/vrnicctl.8
plant "a README table without userspace/vrnicctl/" "does not name userspace/vrnicctl/" \
	sed -i '/^| `userspace\/vrnicctl\/`/d' README.md
plant "a vrnicd file the design's table leaves out" "does not name userspace/vrnicd/newpart.cc" \
	touch userspace/vrnicd/newpart.cc
ktap_finish
