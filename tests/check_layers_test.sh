#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test (ctest) of tests/tools/check-layers: clean on the tree as it is;
# on a copy of userspace/ with one include planted that points up a layer
# (the engine including the device), with a folder no layer names, and with
# an include of a header that does not exist, it fails and says so.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/selftests/lib.sh
source "$repo/tests/selftests/lib.sh"

ktap_plan 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$repo/tests/tools/check-layers" 2>&1)
ktap_check "the tree as it is: clean" $? "$out"

# plant NAME EXPECT CMD...: a fresh copy of userspace/ and uapi/, CMD run
# in it; check-layers must fail there and say EXPECT.
plant() {
	local name=$1 expect=$2 copy=$tmp/copy rc
	shift 2
	rm -rf "$copy"
	mkdir -p "$copy"
	cp -r "$repo/userspace" "$repo/uapi" "$copy/"
	(cd "$copy" && "$@")
	out=$("$repo/tests/tools/check-layers" --root "$copy" 2>&1)
	rc=$?
	[[ $rc == 1 ]] && grep -qF -- "$expect" <<<"$out"
	ktap_check "$name: found ($expect)" $? "exit $rc" "$out"
}

plant "the engine including the device" \
	"engine/qp.cc:1: includes device/device.h: layer device is above engine" \
	sed -i '1i #include "device/device.h"' userspace/vrnicd/engine/qp.cc
plant "a folder in no layer" "userspace/vrnicd/extra/ is in no layer" \
	mkdir userspace/vrnicd/extra
plant "an include of no header" "includes base/nothing.h, which is no header" \
	sed -i '1i #include "base/nothing.h"' userspace/vrnicd/base/log.cc
ktap_finish
