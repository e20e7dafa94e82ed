#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages infertrace needs to build, test and run the demo.
# Idempotent and quiet: does nothing when everything is already present.
set -euo pipefail
PKGS=(make gcc libc6-dev clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev
      zlib1g-dev libjansson-dev libcmocka-dev systemtap-sdt-dev g++ python3 python3-jsonschema libc6-dbg lld
      linux-perf procps util-linux
      cppcheck clang-tidy libclang-rt-14-dev chromium-headless-shell)
# cppcheck and clang-tidy: make lint; libclang-rt-14-dev (libFuzzer, for clang 14,
# Debian 12's): make fuzz; chromium-headless-shell: test_browser
# (flamegraph.svg and report.html run in a real browser)
# node and npm may come from another vendor's package (nodesource bundles npm)
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)
. "$(dirname "$0")/apt-ensure.sh"
apt_ensure "run 'make deps' as root (apt-get install)" "${PKGS[@]}"
