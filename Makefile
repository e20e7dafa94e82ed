# infertrace — build, test, demo, bench.
#   make            build build/infertrace
#   make test       install dependencies, build, run unit + integration tests
#   make demo       install dependencies, build, trace the bundled llama.cpp demo
#   make demo-python  the same experiment as a Python loop (ctypes, sqlite3, py: phases)
#   make bench      overhead benchmarks (ratios measured side by side)
#   make bench-sched  the scheduler path on a pipe ping-pong, beside offcputime and runqlat
#   make bench-node   a node loop's cycle time traced/untraced, beside perf
#   make bench-llama  the llama.cpp demo's cycle time traced/untraced, beside perf
#   make bench-short  the wall time record adds to a short command, beside perf
#   make bench-torch  the tracer's CPU on a PyTorch loop (first run, cached) and the loop's slowdown
#   make man        build/infertrace.1 and build/infertrace.bash-completion
#   make docs       docs/commands.md, the command reference, from the same table
#   make docs-check docs/commands.md up to date, every docs link and anchor
#                   valid (make unit and make test run it)
#   make SANITIZE=1 ASan+UBSan build in build-asan/ (make test runs its unit tests
#                   and SANITIZE_TESTS)
#   make lint       cppcheck and clang-tidy over user/ (checks named below),
#                   the layers and growth only through lib/vec.h
#   make fuzz       libFuzzer harnesses, FUZZ_SECONDS each (make test: 3 s each)
#   make test-flaky the timing-sensitive integration tests RUNS times each
#                   beside a CPU hog (TESTS=... names a subset)
#   make V=1        show the commands
.DELETE_ON_ERROR:
.DEFAULT_GOAL := all

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
OUT := build
ifneq ($(ARCH),$(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/'))
OUT := build/$(ARCH)
endif
# its own directory: objects built with and without sanitizers never mix
ifeq ($(SANITIZE),1)
OUT := $(OUT)-asan
endif
# FUZZ=1: clang with libFuzzer's coverage and ASan+UBSan, in build-fuzz/
ifeq ($(FUZZ),1)
OUT := $(OUT)-fuzz
CC = $(CLANG)
endif

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
ifeq ($(ARCH),arm64)
CC := aarch64-linux-gnu-gcc
PKG_CONFIG := PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config
endif

BPF_ARCH_DEFINE := -D__TARGET_ARCH_$(ARCH)
# usdt.bpf.h includes <linux/errno.h>, which wants the target's <asm/errno.h>
MULTIARCH := $(if $(filter arm64,$(ARCH)),aarch64-linux-gnu,x86_64-linux-gnu)
VMLINUX_H := bpf/vmlinux/$(ARCH)/vmlinux.h

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
LIBS_PC := libbpf libelf libdw zlib jansson ncursesw libmicrohttpd
CFLAGS ?= -O2 -g
# user/ is split by role (docs/architecture.md); every role's directory is on
# the include path so that headers are named by file, not by where they live
USER_DIRS := $(sort $(dir $(wildcard user/*/*.c user/*/*.h)))
CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(OUT) $(addprefix -iquote ,$(USER_DIRS:/=)) \
	-DINFERTRACE_VERSION='"$(VERSION)"' $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
LDLIBS += $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null) -lstdc++ -ldl -lpthread -lm
ifeq ($(SANITIZE),1)
# no recovery: a finding ends the program with a failing status, which tests see
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(FUZZ),1)
# clang, unlike gcc, warns on { NULL } sentinels
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	-Wno-missing-field-initializers
LDFLAGS += -fsanitize=address,undefined
endif

# A build without its dependencies names the missing packages instead of
# failing on a missing header. Goals that install them first are not checked.
NOCHECK_GOALS := deps clean test demo demo-python bench bench-sched test-arm64 vmlinux-arm64 vmlinux
ifeq ($(filter $(NOCHECK_GOALS),$(MAKECMDGOALS)),)
MISSING_DEPS := $(shell tools/check-deps.sh '$(PKG_CONFIG)' '$(CC)' '$(CLANG)' '$(BPFTOOL)' \
	$(if $(filter unit arm64-tests $(OUT)/tests/%,$(MAKECMDGOALS)),unit))
ifneq ($(MISSING_DEPS),)
$(error missing build dependencies: $(MISSING_DEPS); run 'make deps' (as root) to install them)
endif
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS))
# everything but main.c, linked into the unit tests too
LIB_OBJS := $(filter-out $(OUT)/user/core/main.o,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))

.PHONY: all deps test unit integration demo demo-python bench bench-sched bench-short bench-node bench-llama bench-longrun bench-spool bench-soak clean test-arm64 arm64-tests vmlinux-arm64 man docs docs-check \
	lint sanitize-test fuzz fuzz-smoke fuzz-bins test-flaky
all: $(OUT)/infertrace $(OUT)/libinfertrace-cupti.so

# The BPF objects, one per concern, are linked into one object so that all
# programs share the maps declared in bpf/maps.bpf.h, then one skeleton.
$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(wildcard bpf/*.bpf.h) $(wildcard include/*.h) | $(OUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 $(BPF_ARCH_DEFINE) -Iinclude -Ibpf -Ibpf/vmlinux/$(ARCH) -idirafter /usr/include/$(MULTIARCH) \
		-Wall -Werror -c $< -o $@

$(OUT)/infertrace.bpf.o: $(BPF_OBJS)
	$(call msg,LINK-BPF,$@)
	$(Q)$(BPFTOOL) gen object $@ $(BPF_OBJS)

$(OUT)/infertrace.skel.h: $(OUT)/infertrace.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name infertrace_bpf > $@

$(OUT)/user/%.o: user/%.c $(OUT)/infertrace.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/infertrace: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The CUPTI injection library, loaded by the CUDA driver inside the target
# (docs/side-data.md): plain C against CUPTI's ABI (inject/cupti_abi.h), no
# CUDA toolkit, only libdl and libpthread, nothing exported but
# InitializeInjection. Never built with sanitizers: it runs in the target.
INJECT_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iinclude -fPIC -fvisibility=hidden
$(OUT)/libinfertrace-cupti.so: inject/cupti_inject.c $(wildcard inject/*.h) include/gpu_channel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(INJECT_CFLAGS) -shared -Wl,-z,defs $< -ldl -lpthread -o $@

$(OUT)/tests/test_%: tests/unit/test_%.c $(LIB_OBJS) | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -lcmocka -o $@

$(OUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_OBJS) | $(OUT)/fuzz
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer -MMD -MP $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

$(OUT)/bpf $(OUT)/tests $(OUT)/fuzz:
	$(Q)mkdir -p $@

-include $(USER_OBJS:.o=.d) $(UNIT_BINS:=.d) $(FUZZ_BINS:=.d)

deps:
	$(Q)tools/install-deps.sh

# The man page and the bash completion, both generated from the option table.
man: $(OUT)/infertrace.1 $(OUT)/infertrace.bash-completion

$(OUT)/infertrace.1: $(OUT)/infertrace
	$(call msg,MAN,$@)
	$(Q)$< --man > $@

$(OUT)/infertrace.bash-completion: $(OUT)/infertrace
	$(call msg,GEN,$@)
	$(Q)$< --completion bash > $@

# docs/commands.md is the man page in Markdown (tools/man2md.py), committed so
# that it reads on the web; tools/check-docs.py fails when it is stale.
docs: $(OUT)/infertrace
	$(call msg,GEN,docs/commands.md)
	$(Q)$< --man | tools/man2md.py > $(OUT)/commands.md
	$(Q)mv $(OUT)/commands.md docs/commands.md

docs-check: $(OUT)/infertrace
	$(Q)tools/check-docs.py $(OUT)

# Regenerate the committed vmlinux.h from the running kernel's BTF (docs/building.md).
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_H)

# ARM64_TESTS=0 leaves out the arm64 unit tests (cross-built, run under qemu-user)
ARM64_TESTS ?= 1
# the tests' peers (tmux for `top`, Prometheus and promtool for --metrics)
test: deps
	$(Q)tools/install-deps.sh test
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS)
ifeq ($(ARM64_TESTS),1)
	$(Q)tools/build-arm64-tests.sh
endif
	$(Q)$(MAKE) --no-print-directory sanitize-test
	$(Q)$(MAKE) --no-print-directory lint
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	@# last: its closing line "N passed, N failed, N skipped" is the run's
	$(Q)tools/run-tests.sh $(OUT)

# The unit tests and these integration tests again, built with ASan+UBSan
# (about 2 minutes more; the whole integration suite takes 7 under ASan).
SANITIZE_TESTS ?= test_foundation test_report test_cli test_gpu_activity
sanitize-test:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 all $(patsubst $(OUT)/%,$(OUT)-asan/%,$(UNIT_BINS))
	$(Q)ASAN_OPTIONS=detect_leaks=1 tools/run-tests.sh $(OUT)-asan unit
	$(Q)tools/run-tests.sh $(OUT)-asan integration $(SANITIZE_TESTS)

# Static analysis. cppcheck: its warning and portability classes. clang-tidy:
# the static analyzer and bugprone, less the checks that only flag this code's
# idioms: Annex K "_s" functions, `!strcmp(...)`, sizeof(*p) for arrays of
# pointers, if/else chains with equal bodies, adjacent same-typed parameters,
# identifiers starting with '_' (libbpf's __u64), narrowing conversions, and a
# va_list the analyzer of clang 14 wrongly calls uninitialized.
CPPCHECK_CHECKS := warning,portability
TIDY_CHECKS := clang-analyzer-*,bugprone-*,$\
	-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling,$\
	-clang-analyzer-valist.Uninitialized,-bugprone-suspicious-string-compare,$\
	-bugprone-sizeof-expression,-bugprone-branch-clone,-bugprone-easily-swappable-parameters,$\
	-bugprone-reserved-identifier,-bugprone-narrowing-conversions,-bugprone-assignment-in-if-condition
lint: $(OUT)/infertrace
	$(Q)tools/lint.sh $(OUT) '$(CPPCHECK_CHECKS)' '$(TIDY_CHECKS)' $(filter-out -Werror,$(CFLAGS))

# libFuzzer over the readers of untrusted input (tests/fuzz/fuzz_*.c), each
# for FUZZ_SECONDS from its corpus in tests/fuzz/corpus/NAME; what it finds
# goes to build-fuzz/fuzz/findings/ (keep it in the corpus once fixed).
# fuzz-smoke: 3 s each, and every corpus file replayed, as make test runs it.
FUZZ_SECONDS ?= 60
fuzz-bins: $(FUZZ_BINS)
fuzz:
	$(Q)$(MAKE) --no-print-directory FUZZ=1 fuzz-bins
	$(Q)tools/fuzz.sh $(OUT)-fuzz $(FUZZ_SECONDS)
fuzz-smoke:
	$(Q)$(MAKE) --no-print-directory FUZZ=1 fuzz-bins
	$(Q)tools/fuzz.sh $(OUT)-fuzz 3

unit: all $(UNIT_BINS)
	$(Q)tools/run-tests.sh $(OUT) unit

integration: all
	$(Q)tools/install-deps.sh test
	$(Q)tools/run-tests.sh $(OUT) integration

# The timing-sensitive integration tests (TIMING_SENSITIVE in
# tools/run_tests.py), each RUNS times beside a busy loop pinned to one CPU,
# with a pass count per test. TESTS names a subset: full ids, modules or
# method names (make test-flaky RUNS=3 TESTS="test_edges test_unwind").
# make test does not run it.
RUNS ?= 10
TESTS ?=
test-flaky: all
	$(Q)RUNS=$(RUNS) tools/run-tests.sh $(OUT) flaky $(TESTS)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh $(OUT)

demo-python: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo-python.sh $(OUT)

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench.sh $(OUT)

# the scheduler path on a pipe ping-pong, beside libbpf-tools' offcputime and runqlat
bench-sched: deps
	$(Q)tools/install-deps.sh bench-sched
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench-sched.sh $(OUT)

# the wall time record adds to a short command, beside perf record -g
bench-short: all
	$(Q)tools/bench-short.sh $(OUT)

# a node loop's own cycle time traced/untraced beside perf's
bench-node: all
	$(Q)tools/bench-node.sh $(OUT)

.PHONY: bench-torch
bench-torch: all
	$(Q)tools/bench-torch.sh $(OUT)

# the llama.cpp demo's own median cycle traced/untraced beside perf --call-graph dwarf
bench-llama: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench-llama.sh $(OUT)

# issue 14's long-run figures: cycle time with --metrics/--checkpoint, RSS curve with --rotate
bench-longrun: all
	$(Q)tools/bench-longrun.sh overhead $(OUT)
	$(Q)tools/bench-longrun.sh rss $(OUT)
# the spool without --rotate: RSS over DURATION s (1800) of 1 ms cycles
bench-spool: all
	$(Q)tools/bench-longrun.sh spool $(OUT)
# soak: a target that dlopens, dlcloses and relaunches for DURATION s (600)
bench-soak: all
	$(Q)tools/bench-soak.sh $(OUT)

# arm64 (Jetson): `make ARCH=arm64` cross-builds; `make test-arm64` installs the
# cross toolchain, builds the unit tests for arm64 and runs them under qemu-user.
test-arm64:
	$(Q)tools/install-cross-deps.sh
	$(Q)$(MAKE) --no-print-directory arm64-tests
	$(Q)tools/run-tests-arm64.sh build/arm64

arm64-tests:
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 all $(patsubst tests/unit/%.c,build/arm64/tests/%,$(UNIT_SRCS))

# Regenerate bpf/vmlinux/arm64/vmlinux.h from Debian's arm64 kernel image.
vmlinux-arm64:
	$(Q)tools/gen-vmlinux-arm64.sh

clean:
	rm -rf build build-asan build-fuzz
