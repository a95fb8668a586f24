#!/usr/bin/env bash
# Renders the bank timeline of a program to PNG (the README's picture).
# Usage: scripts/timeline-png.sh [FILE.psum] [OUT.png]
# Defaults: examples/gen_attention_bwd.psum, docs/timeline.png.
# Needs rsvg-convert: apt-get install -y librsvg2-bin fonts-dejavu-core
set -euo pipefail
cd "$(dirname "$0")/.."
in=${1:-examples/gen_attention_bwd.psum}
out=${2:-docs/timeline.png}
if ! command -v rsvg-convert >/dev/null; then
  echo "$0: rsvg-convert not found; install it with: apt-get install -y librsvg2-bin fonts-dejavu-core" >&2
  exit 1
fi
svg=$(mktemp --suffix=.svg)
trap 'rm -f "$svg"' EXIT
cargo run --release --quiet -- viz "$in" -o "$svg"
rsvg-convert -o "$out" "$svg"
echo "$out"
