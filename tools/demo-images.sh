#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Renders the pictures of the demo (README, docs/demo.md) with headless Chromium:
#   tools/demo-images.sh [DEMO_OUT] [PREFIX]   (default build/demo-out, demo)
# docs/images/PREFIX-flamegraph.png: the flame graph's lower part (the widest
# frames; a deep graph's towers are cut); docs/images/PREFIX-report.png: the top
# of report.html. Reduced to 64 colours where ImageMagick is installed; at these
# sizes they stay under 200 KB without it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$(cd "${1:-$ROOT/build/demo-out}" && pwd)
PREFIX=${2:-demo}
IMG=$ROOT/docs/images
CHROME=$(command -v chrome-headless-shell || command -v chromium-headless-shell || command -v chromium)
mkdir -p "$IMG"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
shot() { # URL PNG WIDTH HEIGHT
	"$CHROME" --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$TMP/profile" \
		--window-size="$3,$4" --screenshot="$2" "$1" >/dev/null 2>&1
	if convert -version 2>/dev/null | grep -q ImageMagick; then convert "$2" -colors 64 "PNG8:$2"; fi
}
# the SVG at its own width, its bottom 640 px (the graph grows upwards)
cat >"$TMP/fg.html" <<HTML
<!DOCTYPE html><body style="margin:0;overflow:hidden">
<div style="position:relative;height:640px;overflow:hidden">
<img src="file://$OUT/flamegraph.svg" style="position:absolute;bottom:0;left:0;width:1200px"></div></body>
HTML
shot "file://$TMP/fg.html" "$IMG/$PREFIX-flamegraph.png" 1200 640
shot "file://$OUT/report.html" "$IMG/$PREFIX-report.png" 1000 1150
ls -l "$IMG/$PREFIX-flamegraph.png" "$IMG/$PREFIX-report.png"
