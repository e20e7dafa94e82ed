#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs the unit tests (cmocka binaries in BUILD/tests) and the integration
# tests (tests/integration, Python unittest, root + real BPF), then prints the
# closing line "N passed, N failed, N skipped".
set -u
BUILD=${1:-build}
WHICH=${2:-all}
shift 2 2>/dev/null || shift $#
# further arguments: integration test modules to run instead of all
exec /usr/bin/python3 "$(dirname "$0")/run_tests.py" "$BUILD" "$WHICH" "$@"
