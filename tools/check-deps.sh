#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Prints the Debian packages missing for a build, space-separated, or nothing.
# Called by the Makefile before building; only pkg-config and command -v, so
# it costs a few milliseconds.
# usage: check-deps.sh PKG_CONFIG CC CLANG BPFTOOL [unit]
pc=$1 cc=$2 clang=$3 bpftool=$4 unit=$5
missing=
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v "$cc" >/dev/null 2>&1 || missing="$missing gcc"
command -v "$clang" >/dev/null 2>&1 || missing="$missing clang"
command -v "$bpftool" >/dev/null 2>&1 || missing="$missing bpftool"
mods="libbpf:libbpf-dev libelf:libelf-dev libdw:libdw-dev zlib:zlib1g-dev jansson:libjansson-dev ncursesw:libncurses-dev libmicrohttpd:libmicrohttpd-dev"
[ "$unit" = unit ] && mods="$mods cmocka:libcmocka-dev"
if command -v pkg-config >/dev/null 2>&1; then
	for m in $mods; do
		# $pc may carry variable assignments (the arm64 cross build's)
		eval "$pc --exists ${m%%:*}" 2>/dev/null || missing="$missing ${m#*:}"
	done
else
	for m in $mods; do missing="$missing ${m#*:}"; done
fi
echo $missing
