#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The device as iproute2's rdma tool sees it: the link is ACTIVE and
# LINK_UP on the guest NIC, and the device is listed.
# boots: one
# tags: smoke device
# order: 10
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 5

link=$(rdma link show "$VRNIC_IBDEV/1" 2>&1)
ktap_diag "$link"
[[ $link == *"link $VRNIC_IBDEV/1 "* ]]
ktap_check "rdma link lists $VRNIC_IBDEV/1" $? "$link"
[[ $link == *" state ACTIVE "* ]]
ktap_check "link state is ACTIVE" $?
[[ $link == *" physical_state LINK_UP "* ]]
ktap_check "physical state is LINK_UP" $?
[[ $link =~ " netdev $VRNIC_NETDEV"( |$) ]]
ktap_check "link netdev is the guest NIC $VRNIC_NETDEV" $?

dev=$(rdma dev show 2>&1)
ktap_diag "$dev"
grep -Eq "^[0-9]+: $VRNIC_IBDEV: node_type ca " <<<"$dev"
ktap_check "rdma dev lists $VRNIC_IBDEV" $? "$dev"

ktap_finish
