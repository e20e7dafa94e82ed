#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Part of `make test`: installs the arm64 cross toolchain and qemu-user
# (tools/install-cross-deps.sh) and cross-builds the unit tests into
# build/arm64, which tools/run_tests.py then runs under emulation. When the
# cross packages cannot be installed, says why in build/arm64/UNAVAILABLE and
# the test run reports the arm64 tests as skipped with that reason.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$ROOT/build/arm64"
rm -f "$ROOT/build/arm64/UNAVAILABLE"
if ! log=$("$ROOT/tools/install-cross-deps.sh" 2>&1); then
	printf 'arm64 cross toolchain not installable: %s\n' "$(tail -1 <<<"$log")" >"$ROOT/build/arm64/UNAVAILABLE"
	exit 0
fi
[ -n "$log" ] && echo "$log"
make -C "$ROOT" --no-print-directory arm64-tests
