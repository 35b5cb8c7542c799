#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# rdma-core-suite.sh TARBALL [MIN_PASSED [VRNIC_RUN_OPTION...]]: a third
# party's own tests on a vrnic, as that project's CI job would run them:
# rdma-core's test suite (tests/, on pyverbs: device, PD, MR, CQ, QP, SRQ,
# atomics, rdma_cm, traffic of each QP type) from its upstream TARBALL
# (scripts/fetch-source), built here, outside the guest, in ./rdma-core,
# then run by vrnic-run (with the options given) in a guest against its
# vrnic: run_tests.py --dev $VRNIC_IBDEV --gid $VRNIC_GID_INDEX.  The build
# is rdma-core's own (its libibverbs, librdmacm and pyverbs), configured as
# Debian's, so its libibverbs loads the installed libvrnic as it would any
# provider: the tarball must be the installed rdma-core's release, which
# libvrnic was built for.  Passes when the suite does (what the device does
# not offer, a test skips) with at least MIN_PASSED tests (200) passed, not
# skipped.  tests/packages.sh runs it as a user with no privileges in its
# copy of Debian 13; it needs vrnic-run and rdma-core's build dependencies.
set -uo pipefail
tarball=${1:?usage: rdma-core-suite.sh TARBALL [MIN_PASSED [VRNIC_RUN_OPTION...]]}
min=${2:-200}
shift $(($# < 2 ? $# : 2))
src=$PWD/rdma-core
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

rm -rf "$src"
mkdir -p "$src"
tar -xf "$tarball" -C "$src" --strip-components=1 || exit 1
# As Debian builds it: libibverbs looks for providers where Debian's are,
# and reads /etc/libibverbs.d.
start=$SECONDS
if ! cmake -S "$src" -B "$src/build" -G Ninja -DPYTHON_EXECUTABLE=/usr/bin/python3 \
	-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR="lib/$multiarch" \
	-DCMAKE_INSTALL_SYSCONFDIR=/etc -DNO_MAN_PAGES=1 >build.log 2>&1 ||
	! ninja -C "$src/build" >>build.log 2>&1; then
	tail -n 30 build.log
	echo "rdma-core-suite: the build of ${tarball##*/} failed (build.log)"
	exit 1
fi
echo "rdma-core-suite: built ${tarball##*/} in $((SECONDS - start))s"

# shellcheck disable=SC2016 # expanded in the guest
vrnic-run --timeout 2400 "$@" -- sh -c \
	'exec rdma-core/build/bin/run_tests.py --dev "$VRNIC_IBDEV" --gid "$VRNIC_GID_INDEX" -v' \
	>suite.log 2>&1
rc=$?
# unittest's verdict: "Ran N tests in Ts", then "OK (skipped=S)" or
# "FAILED (failures=F, errors=E, skipped=S)".
ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' suite.log | tail -n 1)
verdict=$(grep -E '^(OK|FAILED)( \(.*\))?$' suite.log | tail -n 1)
skipped=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' <<<"$verdict")
xfail=$(sed -n 's/.*expected failures=\([0-9]*\).*/\1/p' <<<"$verdict")
passed=$((${ran:-0} - ${skipped:-0} - ${xfail:-0}))
grep -E '^(FAIL|ERROR): ' suite.log | sort | uniq | head -n 40
grep -E '^vm-run: ' suite.log | tail -n 5
echo "rdma-core-suite: vrnic-run exit $rc; ran ${ran:-none}; $verdict; passed $passed"
[[ $rc == 0 && $verdict == OK* ]] || exit 1
((passed >= min)) || { echo "rdma-core-suite: only $passed passed; want $min"; exit 1; }
