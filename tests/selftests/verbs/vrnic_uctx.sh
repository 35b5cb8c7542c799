#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# User contexts through libvrnic (see vrnic_uctx.c).
# boots: one
# tags: verbs
source "$(dirname "$0")/../lib.sh"
require_vm
exec "$VRNIC_BUILD/tests/selftests/vrnic_uctx" "$VRNIC_IBDEV"
