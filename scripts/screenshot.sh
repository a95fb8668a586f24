#!/usr/bin/env bash
# Screenshot of a psum HTML (or SVG) page with Debian's headless Chromium.
# Usage: scripts/screenshot.sh FILE.html OUT.png [WIDTHxHEIGHT]
# Install once: apt-get install -y chromium fonts-dejavu-core
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 FILE.html OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
in=$1
out=$2
size=${3:-1400x900}
if [ ! -f "$in" ]; then
  echo "$0: no such file: $in" >&2
  exit 1
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "$0: chromium not found; install it with: apt-get install -y chromium fonts-dejavu-core" >&2
  exit 1
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
url="file://$(realpath "$in")"
out_abs="$(realpath -m "$out")"

"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$profile" \
  --screenshot="$out_abs" --window-size="${size/x/,}" "$url" >/dev/null 2>&1

if [ ! -s "$out_abs" ]; then
  echo "$0: chromium wrote no screenshot to $out" >&2
  exit 1
fi
echo "$out"
