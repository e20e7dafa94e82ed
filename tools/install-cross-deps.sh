#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs what `make ARCH=arm64` and `make ARCH=arm64 test-arm64` need on a
# Debian x86-64 host: the aarch64 cross compiler, the arm64 builds of the
# libraries infertrace links (multiarch), and qemu-user to run the arm64 unit
# tests. Idempotent: does nothing when everything is already present.
set -euo pipefail
PKGS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++-12-dev-arm64-cross libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64
      zlib1g-dev:arm64 libjansson-dev:arm64 libncurses-dev:arm64 libmicrohttpd-dev:arm64 libcmocka-dev:arm64 libzstd-dev:arm64 liblzma-dev:arm64
      libbz2-dev:arm64 qemu-user-static)
. "$(dirname "$0")/apt-ensure.sh"
# the arm64 libraries come from Debian's arm64 archive (multiarch)
APT_PREPARE='dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64'
apt_ensure "run 'tools/install-cross-deps.sh' as root" "${PKGS[@]}"
