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
out=$("$repo/tests/tools/check-layers" 2>&1)
ktap_check "the tree as it is: clean" $? "$out"

# shellcheck source=tests/tools/plant.sh
source "$repo/tests/tools/plant.sh"
plant_check=("$repo/tests/tools/check-layers")

plant "the engine including the device" \
	"engine/qp.cc:1: includes device/device.h: layer device is above engine" \
	sed -i '1i #include "device/device.h"' userspace/vrnicd/engine/qp.cc
plant "a folder in no layer" "userspace/vrnicd/extra/ is in no layer" \
	mkdir userspace/vrnicd/extra
plant "an include of no header" "includes base/nothing.h, which is no header" \
	sed -i '1i #include "base/nothing.h"' userspace/vrnicd/base/log.cc
ktap_finish
