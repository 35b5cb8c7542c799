# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Open MPI's results, for vrnic_mpi.sh (one guest) and vrnic_pair_mpi.sh.

# The parts of mpi_check, as it names them in its "ok ..." lines.
mpi_parts=("ping-pong" "bandwidth" "MPI_Allreduce" "MPI_Alltoall" "MPI_Put/MPI_Get")

# mpi_report NAME OUTPUT STATUS: one result for the whole mpirun, then one
# per part of mpi_check.
mpi_report() {
	local name=$1 out=$2 rc=$3 p line ok
	ktap_check "$name: $(grep -m1 -E 'checks (passed|FAILED)' <<<"$out")" \
		"$rc" "exit $rc" "$(tail -n 15 <<<"$out")"
	for p in "${mpi_parts[@]}"; do
		line=$(grep -m1 -F " $p" <<<"$out" | grep -E '^(ok|FAIL) ')
		ok=1
		[[ $line == ok* ]] && ok=0
		ktap_check "$(sed 's/^ok //' <<<"${line:-$p: no result}")" "$ok"
	done
}
