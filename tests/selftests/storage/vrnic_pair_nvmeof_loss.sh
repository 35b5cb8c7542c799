#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics on a lossy wire (scripts/check runs it with drop,
# reorder, duplication and corruption on both vrnicd ports): guest 0 is the
# target, guest 1 the host (see nvmeof_lib.sh).  RC recovers every loss,
# so fio's crc32c verify stays clean and no work completion fails.  An
# I/O can still wait past nvme-rdma's 30 s timeout behind a run of
# retransmissions; the controller then recovers and reconnects, fio's
# requests are requeued, and the verify must stay clean all the same (the
# recoveries are reported).  The workload is small (128 random 4 KiB
# writes at QD 32, then 16 sequential 64 KiB ones) because each tail loss
# costs the ACK timeout that rdma_cm gives RoCE QPs (2^19 x 4.096 us,
# 2.1 s: the "long keepalive RTT (2148 ms)" lines in dmesg), and its
# requests are at most 64 KiB: the target RDMA READs a write's data, and a
# READ that loses a response starts again from there (go-back-N), so a
# 1 MiB READ on this wire takes so long that keep-alives starve.  For the
# same reason the host asks for a 30 s keep-alive timeout: the admin
# queue's first commands can take longer than the default 5 s behind a few
# tail losses, and the target then drops the new controller before the
# I/O queue connects ("Connect Invalid Data Parameter").
# boots: pair-loss
# tags: wire storage slow
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nvmeof_lib.sh
source "$(dirname "$0")/nvmeof_lib.sh"
require_pair

mark=$(dmesg_mark)
if [[ $VRNIC_VM == 0 ]]; then
	ktap_plan $((nvmeof_target_results + 2))
	nvmeof_target_setup "$VRNIC_IP"
	pair_sync nvmeof.ready 120
	pair_sync nvmeof.done 840
	ktap_check "target: the host finished (see its results)" $?
	nvmet_stop
	no_kernel_warnings "$mark" "target"
	ktap_finish
	exit
fi

ktap_plan 6
pair_sync nvmeof.ready 120
modprobe nvme-rdma
nvmeof_connect "$VRNIC_PEER_IP" "nvme connect -t rdma --keep-alive-tmo=30" --keep-alive-tmo=30
if [[ -n $nvmeof_devs ]]; then
	fio_verify randwrite-4k "$(head -n 1 <<<"$nvmeof_devs")" --rw=randwrite --bs=4k --iodepth=32 \
		--size=512K
	fio_verify seq-64k "$(tail -n 1 <<<"$nvmeof_devs")" --rw=write --bs=64k --iodepth=4 --size=1M
else
	ktap_skip "fio randwrite-4k" "no namespaces"
	ktap_skip "fio seq-64k" "no namespaces"
fi
nvmeof_disconnect "nvme disconnect"
out=$(dmesg_since "$mark" | grep -E 'failed with status|Bogus remote')
recoveries=$(dmesg_since "$mark" | grep -c 'starting error recovery')
[[ -z $out ]]
ktap_check "host: no work completion failed ($recoveries error recoveries after I/O timeouts)" $? \
	"$out" "$(dmesg_since "$mark" | grep nvme | tail -n 20)" \
	"$(cd "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/hw_counters" && grep -H . -- * | tr '\n' ' ')"
pair_sync nvmeof.done 120
modprobe -r nvme-rdma 2>/dev/null
no_kernel_warnings "$mark" "host"
ktap_finish
