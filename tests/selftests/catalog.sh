# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# The VM selftests as data, for scripts/vm-tests (on the host) and
# run_tests (in a guest): source this.  Each test,
# tests/selftests/KIND/vrnic_*.sh (KIND: device, verbs, wire, storage,
# middleware, tools), declares in its header (the comment lines at its top):
#
#   # boots: KIND...     the kinds of boot it runs in (tests/selftests/boots)
#   # tags: TAG...       smoke, verbs, tools, storage, middleware, device,
#                        lifecycle, wire, slow; stack: what make check runs
#                        on the other kernels and roots too
#   # timeout: SECONDS   when it needs longer than run_tests' default
#   # order: N           where it runs in its boot (default 50; then by name)
#
# Only builtins here, but for one sort: a guest under TCG pays milliseconds
# for every process.

catalog_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# catalog_header FILE: FILE's header fields in cat_boots, cat_tags,
# cat_timeout and cat_order.
catalog_header() {
	local line key
	cat_boots='' cat_tags='' cat_timeout='' cat_order=50
	while IFS= read -r line; do
		[[ $line == "#"* ]] || break
		[[ $line =~ ^#\ (boots|tags|timeout|order):\ (.*)$ ]] || continue
		key=${BASH_REMATCH[1]}
		printf -v "cat_$key" '%s' "${BASH_REMATCH[2]}"
	done <"$1"
}

# catalog_boots: the kinds of boot, in order, from tests/selftests/boots:
# boot_names, boot_opts (vm-run's options, one string) and boot_whats.
catalog_boots() {
	local name opts what
	boot_names=() boot_opts=() boot_whats=()
	while IFS='|' read -r name opts what; do
		[[ -z $name || $name == "#"* ]] && continue
		read -r name <<<"$name"
		read -r opts <<<"$opts"
		read -r what <<<"$what"
		boot_names+=("$name")
		boot_opts+=("$opts")
		boot_whats+=("$what")
	done <"$catalog_dir/boots"
}

# catalog_has LIST WORD: WORD is one of the words of LIST (spaces or commas).
catalog_has() {
	local w
	for w in ${1//,/ }; do
		[[ $w == "$2" ]] && return 0
	done
	return 1
}

# catalog_select BOOT TAGS [TEST...]: the tests that run in a boot of kind
# BOOT, one per line, in order.  TAGS (spaces or commas; empty: any) keeps
# those with one of them; TESTs, if given, keep only those.
catalog_select() {
	local boot=$1 tags=$2 f name t keep
	shift 2
	local -a picked=()
	for f in "$catalog_dir"/*/vrnic_*.sh; do
		name=${f##*/}
		(($#)) && ! catalog_has "$*" "$name" && continue
		catalog_header "$f"
		catalog_has "$cat_boots" "$boot" || continue
		if [[ -n $tags ]]; then
			keep=
			for t in ${tags//,/ }; do
				catalog_has "$cat_tags" "$t" && keep=1
			done
			[[ -n $keep ]] || continue
		fi
		printf -v t '%03d %s' "$cat_order" "$name"
		picked+=("$t")
	done
	((${#picked[@]})) || return 0
	printf '%s\n' "${picked[@]}" | sort | while read -r _ name; do echo "$name"; done
}

# catalog_path NAME: cat_path is the file of the test NAME
# (vrnic_verbs.sh), in the folder of its kind; fails when there is none.
catalog_path() {
	local f
	cat_path=
	for f in "$catalog_dir"/*/"$1"; do
		[[ -f $f ]] && cat_path=$f && return 0
	done
	return 1
}

# catalog_check: every test declares boots that exist and tags that are
# known; prints what is wrong and fails.
catalog_known_tags="smoke verbs tools storage middleware device lifecycle wire slow stack"
catalog_check() {
	local f b t bad=0
	catalog_boots
	for f in "$catalog_dir"/*/vrnic_*.sh; do
		catalog_header "$f"
		[[ -n $cat_boots ]] || { echo "${f##*/}: no \"# boots:\" line"; bad=1; }
		for b in $cat_boots; do
			catalog_has "${boot_names[*]}" "$b" || { echo "${f##*/}: unknown boot $b"; bad=1; }
		done
		for t in $cat_tags; do
			catalog_has "$catalog_known_tags" "$t" || { echo "${f##*/}: unknown tag $t"; bad=1; }
		done
		[[ $cat_order =~ ^[0-9]+$ && (-z $cat_timeout || $cat_timeout =~ ^[0-9]+$) ]] ||
			{ echo "${f##*/}: order and timeout are numbers"; bad=1; }
	done
	return $bad
}
