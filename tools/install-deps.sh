#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Installs the Debian packages infertrace needs to build, test and run the demo.
# Idempotent and quiet: does nothing when everything is already present.
# usage: install-deps.sh [test|bench-sched]; `test` installs only the peers
# the integration tests drive (`make test` and `make integration` ask for
# them), `bench-sched` the peers of make bench-sched.
set -euo pipefail
. "$(dirname "$0")/apt-ensure.sh"
if [ "${1:-}" = bench-sched ]; then
	# bcc's libbpf-tools: offcputime and runqlat beside ours (make bench-sched)
	apt_ensure "run 'make bench-sched' as root (apt-get install)" libbpf-tools
	exit 0
fi
if [ "${1:-}" = test ]; then
	# tmux: `top` in a real terminal; prometheus (with promtool): --metrics.
	# Debian's prometheus package enables its own service on a host with
	# systemd (port 9090); the tests run their own server on another port.
	# golang-go: `go tool pprof` reads profile.pb.gz back; systemd: systemd-analyze
	# verifies the example unit.
	# cppcheck, clang-tidy: make lint; libclang-rt-14-dev (libFuzzer for
	# clang 14, Debian 12's): make fuzz; chromium-headless-shell: test_browser
	# (flamegraph.svg and report.html run in a real browser). libsqlite3-dev:
	# a C fixture that prepares every row (the sqlite preset's cost check).
	# python3-torch: a real PyTorch loop with py: phases (test_python_cycles).
	apt_ensure "run 'make test' as root (apt-get install)" tmux prometheus golang-go systemd \
		cppcheck clang-tidy libclang-rt-14-dev chromium-headless-shell libsqlite3-dev python3-torch
	# speedscope (npm, pinned in tests/peers/package-lock.json, installed
	# there only): test_timeline and test_trace open the outputs in it. No
	# registry, no failure: those tests then skip, saying why.
	peers="$(dirname "$0")/../tests/peers"
	if [ ! -f "$peers/node_modules/speedscope/dist/release/index.html" ] &&
	   ! npm ci --prefix "$peers" --no-audit --no-fund --loglevel=error; then
		echo "install-deps: npm could not install speedscope into tests/peers; test_timeline will skip" >&2
	fi
	exit 0
fi
PKGS=(make gcc libc6-dev clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev
      zlib1g-dev libjansson-dev libncurses-dev libmicrohttpd-dev libcmocka-dev systemtap-sdt-dev g++ python3 python3-jsonschema libc6-dbg lld
      linux-perf procps util-linux)
# node and npm may come from another vendor's package (nodesource bundles npm)
command -v npm >/dev/null 2>&1 || PKGS+=(nodejs npm)
apt_ensure "run 'make deps' as root (apt-get install)" "${PKGS[@]}"
