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
# qemu-user 7.2 on a 6.18 kernel never returns from a program's first
# pthread_create (every time, the emulator's own bug): a probe finds out,
# and the tests that start a thread then skip, saying why
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
printf '#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; return pthread_create(&t, 0, f, 0) || pthread_join(t, 0); }\n' |
	"$CC" -x c -pthread -o "$probe_dir/threads" - &&
	! timeout 10 "$QEMU" "$probe_dir/threads" &&
	export INFERTRACE_EMU_NO_THREADS="a thread started under $QEMU never ran (a pthread_create probe did not return in 10 s)" &&
	echo "unit-arm64: $INFERTRACE_EMU_NO_THREADS: tests that start threads are skipped"
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
	# cmocka's TAP marks a skipped test "not ok N # SKIP" (or "ok N # SKIP")
	s=$(grep -Ec '^(not )?ok .*# SKIP' <<<"$out" | tr -d ' ')
	p=$(grep '^ok ' <<<"$out" | grep -vc '# SKIP' | tr -d ' ')
	f=$(grep '^not ok ' <<<"$out" | grep -vc '# SKIP' | tr -d ' ')
	# a crash or a time-out after the last test that printed is a failure
	# too (run_tests.py counts it alike)
	if [ "$f" -eq 0 ] && [ $rc -ne 0 ]; then
		f=1
		if [ $rc -eq 124 ]; then
			echo "  [$(basename "$t")] timed out after 600 s, after:"
		else
			echo "  [$(basename "$t")] crashed (exit $rc):"
		fi
		tail -5 <<<"$out"
	fi
	grep -E '^(not ok|ok .*# SKIP)' <<<"$out" | sed "s/^/  [$(basename "$t")] /"
	echo "unit-arm64 $(basename "$t"): $((p + f + s)) tests, exit $rc"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
