#!/usr/bin/env bash
# Builds fault_server in build/ (configuring it when it is new, as on a fresh
# clone), then localhost/kubeload/shop:dev from it, and imports it into the
# local cluster's nodes (scripts/cluster build-image). The shop's Deployment
# and Service are cluster/manifests/shop-target.yaml. Whoever needs the image
# runs this script, not a build of their own that has to agree with it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tag="${1:-localhost/kubeload/shop:dev}"
binaries=(fault_server)
build="$root/build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja >/dev/null
fi
cmake --build "$build" --target "${binaries[@]}"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$root/cluster/shop-image/Containerfile" "$context/"
for binary in "${binaries[@]}"; do
  strip -o "$context/$binary" "$build/bin/$binary"
done
"$root/scripts/cluster" build-image "$tag" "$context/Containerfile" "$context"
