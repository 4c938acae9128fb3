#!/usr/bin/env bash
# Builds loadgen, kubeload-operator and kubectl-kubeload in build/, then
# localhost/kubeload/kubeload:dev from them, and imports it into the local
# cluster's nodes (cluster/host-built-image.sh). The image's programs are
# listed here only: whoever needs the image runs this script, not a build of
# their own that has to agree with it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec "$root/cluster/host-built-image.sh" "${1:-localhost/kubeload/kubeload:dev}" \
  "$root/cluster/kubeload-image/Containerfile" loadgen kubeload-operator kubectl-kubeload
