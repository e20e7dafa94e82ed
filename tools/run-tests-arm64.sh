#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs the arm64 unit tests (BUILD/tests, cross-built by `make ARCH=arm64`)
# under qemu-user, and prints "N passed, N failed, N skipped" like
# tools/run_tests.py. Tests that build helper libraries with $CC get the
# cross compiler. BPF and the integration tests need a real arm64 kernel.
set -u
BUILD=${1:-build/arm64}
QEMU=${QEMU:-qemu-aarch64-static}
export CC=aarch64-linux-gnu-gcc CMOCKA_MESSAGE_OUTPUT=TAP
# the cross toolchain's libstdc++ (a multiarch libstdc++6:arm64 works too)
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
# Not runnable under qemu-user: test_syms reads /proc/PID/maps of processes
# it starts (under qemu those are the emulator's mappings); the sampler-thread
# tests (test_side_sampler, test_side_nvml) spin without finishing under
# qemu 7.2. They run natively in `make test`.
EMU_SKIP=${EMU_SKIP:-"test_syms test_side_sampler test_side_nvml"}
passed=0 failed=0 skipped=0
for t in "$BUILD"/tests/test_*; do
	case $t in *.d) continue ;; esac
	if [[ " $EMU_SKIP " == *" $(basename "$t") "* ]]; then
		case $(basename "$t") in
		test_syms) why="reads /proc/PID/maps of the processes it starts, which under qemu-user are the emulator's" ;;
		*) why="its sampler thread spins without finishing under qemu-user 7.2 (runs natively above)" ;;
		esac
		echo "unit-arm64 $(basename "$t"): skipped under emulation: $why"
		skipped=$((skipped + 1))
		continue
	fi
	out=$(timeout 600 "$QEMU" "$t" 2>&1)
	rc=$?
	p=$(grep -c '^ok ' <<<"$out" | tr -d ' ')
	f=$(grep -c '^not ok ' <<<"$out" | tr -d ' ')
	s=$(grep -c '^ok .*# SKIP' <<<"$out" | tr -d ' ')
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ $rc -ne 0 ]; then
		f=1
		echo "  [$(basename "$t")] crashed (exit $rc):"; tail -5 <<<"$out"
	fi
	grep '^not ok' <<<"$out" | sed "s/^/  [$(basename "$t")] /"
	echo "unit-arm64 $(basename "$t"): $((p + f)) tests, exit $rc"
	passed=$((passed + p - s)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
