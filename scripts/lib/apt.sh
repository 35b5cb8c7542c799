# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=bash
#
# vrnic's own apt for one Debian suite: source this (after
# scripts/lib/stacks.sh).  It reads the host's keyring and nothing else of
# the host's apt, and changes nothing there.
# shellcheck disable=SC2154 # stacks_build is stacks.sh's
# shellcheck disable=SC2034 # apt_opts is for the script that sources this

mirror=${VRNIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# apt_for SUITE [TYPE]: apt-get/apt-cache options (apt_opts) for vrnic's own
# apt of SUITE, build/apt/SUITE: its sources file, lists and cache, the
# suite pinned there.  TYPE is deb (binary packages, the default) or
# deb-src (source packages, in build/apt/SUITE-src).
apt_for() {
	local type=${2:-deb} d=$stacks_build/apt/$1
	[[ $type == deb ]] || d+=-src
	mkdir -p "$d/etc/sources.list.d" "$d/etc/preferences.d" "$d/state/lists/partial" \
		"$d/cache/archives/partial"
	cat >"$d/etc/sources.list.d/vrnic.sources" <<EOF
Types: $type
URIs: $mirror
Suites: $1
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	# Only this suite is here, and nothing may come from anywhere else.
	cat >"$d/etc/preferences.d/vrnic" <<EOF
Package: *
Pin: release n=$1
Pin-Priority: 990
EOF
	apt_opts=(-o "Dir::State=$d/state" -o "Dir::Cache=$d/cache"
		-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$d/etc/sources.list.d"
		-o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$d/etc/preferences.d"
		-o "Dir::State::status=$d/state/status" -o "APT::Sandbox::User=root"
		-o "Acquire::Check-Valid-Until=false"
		-o "Debug::NoLocking=1")
	: >>"$d/state/status"
}
