#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The verbs data path, looped back through the RoCEv2 GID (see
# vrnic_verbs.c).  VRNIC_TEST_SEED replays a run's random data.
# boots: one
# tags: smoke verbs stack
# order: 20
source "$(dirname "$0")/../lib.sh"
require_vm
exec "$VRNIC_BUILD/tests/selftests/vrnic_verbs" "$VRNIC_IBDEV" "$VRNIC_GID_INDEX" \
	${VRNIC_TEST_SEED:+"$VRNIC_TEST_SEED"}
