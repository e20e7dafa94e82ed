# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the install scripts. apt_ensure HINT PKG...: installs, quietly,
# the Debian packages among PKG that are not installed; nothing when all are.
# Not root with packages missing: says which and HINT (what to run), fails.
# APT_PREPARE, when set, is run as root before `apt-get update`.
apt_ensure() {
	local hint=$1 p
	local -a missing=()
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "infertrace: missing packages: ${missing[*]}; $hint" >&2
		return 1
	fi
	echo "  DEPS     installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if [ -n "${APT_PREPARE:-}" ]; then
		eval "$APT_PREPARE"
	fi
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
