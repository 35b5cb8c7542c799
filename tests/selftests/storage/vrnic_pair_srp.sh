#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SRP between the two guests (see srp_lib.sh; the
# rounds are the skeleton of storage_lib.sh): guest 0 is the ib_srpt
# target, guest 1 the ib_srp initiator; against an rxe peer, then the
# other way round as well.  The initiator tells the target its port ID
# (for the ACL) and the target tells it its service GUID, through the run
# directory.  fio's verify must stay clean, the initiator may log no SRP
# error, and neither kernel may warn.
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
# shellcheck disable=SC2034 # the P_*_results and P_rounds storage_lib.sh reads
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/srp_lib.sh
source "$(dirname "$0")/srp_lib.sh"
require_pair
srp_require_targetcli
# shellcheck source=tests/selftests/storage/storage_lib.sh
source "$(dirname "$0")/storage_lib.sh"

# The initiator tells the target its port ID, for the ACL, and the target
# tells it its service GUID, through the run directory.
ids=$VRNIC_RUN_DIR/pair
srp_hello() { srp_initiator_id >"$ids/srp.initiator"; }
srp_serve_results=$srp_target_results
srp_serve() {
	srp_target_setup "$1" "$(cat "$ids/srp.initiator")"
	echo "$srp_target_guid" >"$ids/srp.target"
}
srp_unserve() { srp_target_teardown; }
srp_use_results=$srp_initiator_results
srp_use() { srp_initiator_run "$1" "$(cat "$ids/srp.target")" "$2"; }
storage_pair srp
