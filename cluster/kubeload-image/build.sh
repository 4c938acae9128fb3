#!/usr/bin/env bash
# Builds localhost/kubeload/kubeload:dev from build/bin and imports it into the
# local cluster's nodes (scripts/cluster build-image).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tag="${1:-localhost/kubeload/kubeload:dev}"
for binary in loadgen kubeload-operator kubectl-kubeload; do
  [ -x "$root/build/bin/$binary" ] || { echo "cluster/kubeload-image/build.sh: build/bin/$binary is not built" >&2; exit 1; }
done
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$root/cluster/kubeload-image/Containerfile" "$context/"
for binary in loadgen kubeload-operator kubectl-kubeload; do
  strip -o "$context/$binary" "$root/build/bin/$binary"
done
"$root/scripts/cluster" build-image "$tag" "$context/Containerfile" "$context"
