#!/usr/bin/env bash
# Installs the Debian packages infertrace needs to build, test and run the demo.
# Idempotent and quiet: does nothing when everything is already present.
set -euo pipefail
PKGS=(make gcc libc6-dev clang llvm pkg-config bpftool libbpf-dev libelf-dev libdw-dev
      zlib1g-dev libjansson-dev libcmocka-dev systemtap-sdt-dev g++ python3 python3-jsonschema libc6-dbg lld
      linux-perf procps util-linux)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm may come from another vendor's package (nodesource bundles npm)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "infertrace: missing packages: ${missing[*]}; run 'make deps' as root (apt-get install)" >&2
	exit 1
fi
echo "  DEPS     installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
