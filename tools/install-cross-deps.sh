#!/usr/bin/env bash
# Installs what `make ARCH=arm64` and `make ARCH=arm64 test-arm64` need on a
# Debian x86-64 host: the aarch64 cross compiler, the arm64 builds of the
# libraries infertrace links (multiarch), and qemu-user to run the arm64 unit
# tests. Idempotent: does nothing when everything is already present.
set -euo pipefail
PKGS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++-12-dev-arm64-cross libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64
      zlib1g-dev:arm64 libjansson-dev:arm64 libcmocka-dev:arm64 libzstd-dev:arm64 liblzma-dev:arm64
      libbz2-dev:arm64 qemu-user-static)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "infertrace: missing packages: ${missing[*]}; run 'tools/install-cross-deps.sh' as root" >&2
	exit 1
fi
echo "  DEPS     installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
