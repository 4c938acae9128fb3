#!/usr/bin/env bash
# An image of programs built on this machine (same Debian release as the
# image's base): builds them in build/ (configuring it when it is new, as on
# a fresh clone), copies them stripped next to CONTAINERFILE, and builds and
# imports the image into the local cluster's nodes (scripts/cluster
# build-image). Used by cluster/kubeload-image/build.sh and
# cluster/shop-image/build.sh, which say which programs go into which image.
#
#   cluster/host-built-image.sh TAG CONTAINERFILE PROGRAM...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tag="$1"
containerfile="$2"
shift 2
binaries=("$@")
build="$root/build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja >/dev/null
fi
cmake --build "$build" --target "${binaries[@]}"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$containerfile" "$context/"
for binary in "${binaries[@]}"; do
  strip -o "$context/$binary" "$build/bin/$binary"
done
"$root/scripts/cluster" build-image "$tag" "$context/$(basename "$containerfile")" "$context"
