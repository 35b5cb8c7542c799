#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A third party's own tests on a vrnic, as that project's CI job would run
# them: rdma-core's test suite (tests/, on pyverbs: device, PD, MR, CQ, QP,
# SRQ, atomics, rdma_cm, traffic of each QP type).
#
#   rdma-core-suite.sh build TARBALL DIR
#       Build rdma-core from its upstream TARBALL (scripts/fetch-source) in
#       DIR, outside any guest, configured as Debian builds it: its
#       libibverbs loads the installed providers, libvrnic among them, from
#       where Debian's are.  The TARBALL must be the release of the
#       installed rdma-core, which libvrnic was built for.
#   rdma-core-suite.sh run DIR [MIN_PASSED [VRNIC_RUN_OPTION...]]
#       Run that build's suite with vrnic-run (and the options given) in a
#       guest, against its vrnic: run_tests.py --dev $VRNIC_IBDEV --gid
#       $VRNIC_GID_INDEX.  Passes when the suite does (what the device does
#       not offer, a test skips) with at least MIN_PASSED tests (90) passed,
#       not skipped; a test that failed passes on a second run in the same
#       guest, reported so.  The logs are ./rdma-core-suite.*.
#
# make check builds it in the trixie root, beside the guests, and
# tests/packages.sh runs it as a user with no privileges in its copy of
# Debian 13, whose rdma-core is trixie's.
set -uo pipefail

build() { # TARBALL DIR
	local tarball=$1 dir=$2 multiarch start=$SECONDS lock
	# One build of DIR at a time (make check's idle lane, tests/packages.sh),
	# and none when DIR holds this tarball's build already.
	mkdir -p "$(dirname "$dir")"
	exec {lock}>"$dir.lock"
	flock "$lock"
	if [[ -x $dir/build/bin/run_tests.py && $(cat "$dir/.tarball" 2>/dev/null) == "${tarball##*/}" ]]; then
		echo "rdma-core-suite: $dir has ${tarball##*/} built already"
		return 0
	fi
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
	rm -rf "$dir"
	mkdir -p "$dir/src"
	tar -xf "$tarball" -C "$dir/src" --strip-components=1 || return 1
	if ! cmake -S "$dir/src" -B "$dir/build" -G Ninja -DPYTHON_EXECUTABLE=/usr/bin/python3 \
		-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR="lib/$multiarch" \
		-DCMAKE_INSTALL_SYSCONFDIR=/etc -DNO_MAN_PAGES=1 >"$dir/build.log" 2>&1 ||
		! ninja -C "$dir/build" >>"$dir/build.log" 2>&1; then
		tail -n 30 "$dir/build.log"
		echo "rdma-core-suite: the build of ${tarball##*/} failed ($dir/build.log)"
		return 1
	fi
	echo "${tarball##*/}" >"$dir/.tarball"
	echo "rdma-core-suite: built ${tarball##*/} in $dir in $((SECONDS - start))s"
}

# verdict FILE: unittest's summary of a run in FILE: "RAN PASSED VERDICT",
# the verdict "OK (skipped=S)" or "FAILED (failures=F, errors=E, ...)".
verdict() {
	local ran v skipped xfail failed
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$1" 2>/dev/null | tail -n 1)
	v=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$1" 2>/dev/null | tail -n 1)
	skipped=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' <<<"$v")
	xfail=$(sed -n 's/.*expected failures=\([0-9]*\).*/\1/p' <<<"$v")
	failed=$(grep -oE '(failures|errors|unexpected successes)=[0-9]+' <<<"$v" | awk -F= '{ n += $2 } END { print n + 0 }')
	echo "${ran:-0} $((${ran:-0} - ${skipped:-0} - ${xfail:-0} - failed)) ${v:-none}"
}

run() { # DIR [MIN_PASSED [VRNIC_RUN_OPTION...]]
	local dir=$1 min=${2:-90} rc ran passed v ran2 passed2 v2 log=$PWD/rdma-core-suite
	shift $(($# < 2 ? $# : 2))
	[[ -x $dir/build/bin/run_tests.py ]] || { echo "rdma-core-suite: no build in $dir"; return 1; }
	rm -f "$log".*
	# In the guest: the suite; if a test failed, those tests once more, in
	# the same guest (a test that races the device's asynchronous
	# completions under TCG), each run's output in the shared directory.
	cat >"$log.guest" <<-'GUEST'
		t=$1/build/bin/run_tests.py
		"$t" --dev "$VRNIC_IBDEV" --gid "$VRNIC_GID_INDEX" -v >rdma-core-suite.1 2>&1 && exit 0
		ids=$(sed -n 's/^\(ERROR\|FAIL\): [^ ]* (\([^)]*\))$/\2/p' rdma-core-suite.1 | sort -u)
		[ -n "$ids" ] || exit 1
		exec "$t" --dev "$VRNIC_IBDEV" --gid "$VRNIC_GID_INDEX" -v $ids >rdma-core-suite.2 2>&1
	GUEST
	# (The build shared read-only: it may be where a guest has its own
	# directories, in a clone under /tmp or /root.)
	vrnic-run --timeout 2400 --rodir "$dir" "$@" -- sh "$log.guest" "$dir" >"$log.console" 2>&1
	rc=$?
	read -r ran passed v < <(verdict "$log.1")
	grep -E '^(FAIL|ERROR): ' "$log.1" 2>/dev/null | sort -u | head -n 40
	if ((ran == 0)); then
		echo "rdma-core-suite: no test ran; the suite said:"
		tail -n 15 "$log.1" 2>/dev/null || echo "(nothing: no $log.1)"
	fi
	grep -E '^vm-run: ' "$log.console" | tail -n 5
	echo "rdma-core-suite: ran $ran; $v; passed $passed"
	if [[ $v != OK* && -f $log.2 ]]; then
		read -r ran2 passed2 v2 < <(verdict "$log.2")
		echo "rdma-core-suite: those $ran2 again, in the same guest: $v2"
		[[ $v2 == OK* ]] && passed=$((passed + passed2)) v="OK once rerun"
	fi
	echo "rdma-core-suite: vrnic-run exit $rc"
	[[ $rc == 0 && $v == OK* ]] || return 1
	((passed >= min)) || { echo "rdma-core-suite: only $passed passed; want $min"; return 1; }
}

usage() {
	echo "usage: rdma-core-suite.sh build TARBALL DIR | run DIR [MIN_PASSED [VRNIC_RUN_OPTION...]]" >&2
	exit 2
}
case ${1:-} in
build) (($# == 3)) || usage; build "$2" "$3" ;;
run) (($# >= 2)) || usage; shift; run "$@" ;;
*) usage ;;
esac
