#!/usr/bin/env bash
# Builds fault_server in build/, then localhost/kubeload/shop:dev from it, and
# imports it into the local cluster's nodes (cluster/host-built-image.sh). The
# shop's Deployment and Service are cluster/manifests/shop-target.yaml. Whoever
# needs the image runs this script, not a build of their own that has to agree
# with it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec "$root/cluster/host-built-image.sh" "${1:-localhost/kubeload/shop:dev}" \
  "$root/cluster/shop-image/Containerfile" fault_server
