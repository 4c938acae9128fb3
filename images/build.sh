#!/usr/bin/env bash
# Builds the cluster's container images locally, with no registry:
#   localhost/kubeload/debian:bookworm  debootstrap'd Debian (minbase + nginx-light, curl)
#   localhost/kubeload/pause:1          static pause binary (pod sandbox)
#   localhost/kubeload/nginx:1          nginx on the Debian base
#   (plus any images/<name>/Containerfile, tagged localhost/kubeload/<name>:1)
# Each is saved as a docker-archive under $KUBELOAD_CACHE/images/ (keyed by a hash
# of its recipe) for scripts/cluster to import into the nodes' containerd.
# Usage: images/build.sh [--print-dir]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${KUBELOAD_CACHE:-$HOME/.cache/kubeload}"
out="$cache/images"
if [ "${1:-}" = "--print-dir" ]; then echo "$out"; exit 0; fi
mkdir -p "$out"
# One build at a time (scripts/test starts one early; `scripts/cluster up` runs another).
exec 8>"$cache/.images.lock"
flock 8
log() { echo "images: $*" >&2; }
bah() { buildah --storage-driver vfs --root "$cache/buildah/root" --runroot "$cache/buildah/run" "$@"; }

suite=bookworm
base_pkgs="nginx-light,curl,ca-certificates,procps,iproute2"
mirror="$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
mirror="${KUBELOAD_DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}"

# cache key: names and contents of the recipe files (not their paths: a fresh clone elsewhere hits the cache)
key() { (for f in "$@"; do basename "$f"; done; cat "$@" 2>/dev/null) | sha256sum | cut -c1-12; }

# 1. pause (static binary)
pause_key="$(key "$here/pause/pause.c" "$here/pause/Containerfile")"
pause_tar="$out/pause-$pause_key.tar"
if [ ! -f "$pause_tar" ]; then
  log "building localhost/kubeload/pause:1"
  ctx="$(mktemp -d)"; trap 'rm -rf "$ctx"' EXIT
  cp "$here/pause/Containerfile" "$ctx/"
  cc -Os -static -o "$ctx/pause" "$here/pause/pause.c"
  strip "$ctx/pause"
  bah bud -q --isolation chroot -t localhost/kubeload/pause:1 -f "$ctx/Containerfile" "$ctx" >/dev/null
  rm -f "$out"/pause-*.tar
  bah push -q localhost/kubeload/pause:1 "docker-archive:$pause_tar:localhost/kubeload/pause:1"
fi

# 2. Debian base from debootstrap
base_key="$(echo "$suite $base_pkgs" | sha256sum | cut -c1-12)"
base_tar="$out/debian-$suite-$base_key.tar"
if [ ! -f "$base_tar" ]; then
  rootfs="$cache/rootfs-$suite-$base_key"
  if [ ! -f "$rootfs/.done" ]; then
    log "debootstrap $suite from $mirror (a few minutes)"
    rm -rf "$rootfs"
    debootstrap --variant=minbase --include="$base_pkgs" "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 \
      || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    touch "$rootfs/.done"
  fi
  log "committing localhost/kubeload/debian:$suite"
  c="$(bah from scratch)"
  mnt="$(bah mount "$c")"
  tar -C "$rootfs" --exclude=./.done -cf - . | tar -C "$mnt" -xf -
  bah umount "$c" >/dev/null
  bah config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  bah commit -q --rm "$c" "localhost/kubeload/debian:$suite" >/dev/null
  rm -f "$out"/debian-"$suite"-*.tar
  bah push -q "localhost/kubeload/debian:$suite" "docker-archive:$base_tar:localhost/kubeload/debian:$suite"
fi

# 3. every other images/<name>/Containerfile (nginx, ...), on the base
for dir in "$here"/*/; do
  name="$(basename "$dir")"
  case "$name" in pause|base) continue ;; esac
  [ -f "$dir/Containerfile" ] || continue
  mapfile -t files < <(find "$dir" -type f | sort)
  k="$(key "$base_tar" "${files[@]}")"
  tarf="$out/$name-$k.tar"
  [ -f "$tarf" ] && continue
  # the base must be in buildah's storage (it may be a fresh storage with a cached tar)
  if ! bah inspect "localhost/kubeload/debian:$suite" >/dev/null 2>&1; then
    bah pull -q "docker-archive:$base_tar" >/dev/null
  fi
  log "building localhost/kubeload/$name:1"
  bah bud -q --isolation chroot --pull-never -t "localhost/kubeload/$name:1" -f "$dir/Containerfile" "$dir" >/dev/null
  rm -f "$out/$name"-*.tar
  bah push -q "localhost/kubeload/$name:1" "docker-archive:$tarf:localhost/kubeload/$name:1"
done
ls "$out"/*.tar
