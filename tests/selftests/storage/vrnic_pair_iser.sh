#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSER between the two guests (see iser_lib.sh; the
# rounds are the skeleton of storage_lib.sh): guest 0 is the LIO
# target, guest 1 the open-iscsi initiator; against an rxe peer, then the
# other way round as well.  fio's verify must stay clean, the initiator
# may log no iSER or iSCSI error (but the one after a completed logout,
# which iscsid drops), and neither kernel may warn (but the kernel's own
# iscsi_ctrl flush warning at logout; see iser_lib.sh).
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
# shellcheck disable=SC2034 # the P_*_results and P_rounds storage_lib.sh reads
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/iser_lib.sh
source "$(dirname "$0")/iser_lib.sh"
require_pair
# shellcheck source=tests/selftests/storage/storage_lib.sh
source "$(dirname "$0")/storage_lib.sh"

iser_serve_results=$iser_target_results
iser_serve() { iser_target_setup "$1"; }
iser_unserve() { iser_target_teardown; }
iser_use_results=$iser_initiator_results
iser_use() { iser_initiator_run "$1" "$2"; }
# rxe 6.1 runs a finished REG_MR again when it retransmits (see
# iser_lib.sh): say what made either side resend.
iser_counters() { ktap_diag "$VRNIC_IBDEV's transport counters so far: $(transport_counters)"; }
iser_served() { iser_counters; }
iser_used() { iser_counters; }
iser_trouble() { iser_no_kernel_warnings "$@"; }
storage_pair iser
