# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash disable=SC2154 # repo and plant_check: the sourcing test
#
# For the ctests of the lint checkers (check_docs_test.sh,
# check_layers_test.sh, check_selftests_test.sh): source after tests/selftests/lib.sh, with repo
# set, and set plant_check to the checker's command line (its --root goes
# after the program).
plant_tmp=$(mktemp -d)
trap 'rm -rf "$plant_tmp"' EXIT

# plant NAME EXPECT CMD...: a fresh copy of the tracked sources, documents
# and scripts, CMD run in it; the checker must fail there and say EXPECT.
plant() {
	local name=$1 expect=$2 copy=$plant_tmp/copy rc out
	shift 2
	rm -rf "$copy"
	mkdir -p "$copy"
	(cd "$repo" && git ls-files -z Documentation README.md drivers uapi userspace tests/unit \
		tests/fuzz/*.cc tests/fuzz/*.h tests/selftests debian LICENSES scripts | xargs -0 cp --parents -t "$copy")
	(cd "$copy" && "$@")
	out=$("${plant_check[0]}" --root "$copy" "${plant_check[@]:1}" 2>&1)
	rc=$?
	[[ $rc == 1 ]] && grep -qF -- "$expect" <<<"$out"
	ktap_check "$name: found ($expect)" $? "exit $rc" "$out"
}
