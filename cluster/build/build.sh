#!/usr/bin/env bash
# Builds the local cluster's upstream binaries from the Go module proxy and
# caches them outside the repo, keyed by version:
#   $KUBELOAD_CACHE/k8s-v$K8S_VERSION/bin/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy}
#   $KUBELOAD_CACHE/etcd-v$ETCD_VERSION/bin/etcd
# Only the first run pays (a cold build is long on 2 cores); later runs return at once.
#   $KUBELOAD_CACHE/coredns-v$COREDNS_VERSION/bin/coredns  (cluster DNS, only the plugins used)
#   $KUBELOAD_CACHE/helm-v$HELM_VERSION/bin/helm  (the Helm CLI for the chart's tests; not run by the cluster)
# Usage: cluster/build/build.sh [etcd|k8s|coredns|helm|all|download]   (default all)
#   download: only fetch the Go modules of every part that is not built yet (network,
#   no compiling), e.g. in the background while something else uses the CPU.
# `all` fetches the modules of every part in parallel, in the background, while
# the first part compiles: a build then waits for the network at most once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../versions.env
. "$here/../versions.env"
cache="${KUBELOAD_CACHE:-$HOME/.cache/kubeload}"
what="${1:-all}"

log() { echo "cluster-build: $*" >&2; }

# What each part builds (its wrapper module's main packages).
etcd_pkgs=(go.etcd.io/etcd/server/v3)
k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
k8s_pkgs=("${k8s_cmds[@]/#/k8s.io/kubernetes/cmd/}")
coredns_pkgs=(.)
helm_pkgs=(helm.sh/helm/v3/cmd/helm)

# go build -v prints each package as it is compiled; turn that into a progress line
# every 100 packages, with elapsed time.
progress() {
  local name="$1" start n=0 line
  start=$(date +%s)
  while IFS= read -r line; do
    case "$line" in
      *" "*|*:*|"#"*) echo "$line" >&2 ;;   # errors and warnings pass through
      *) n=$((n + 1))
         if [ $((n % 100)) -eq 0 ]; then log "$name: $n packages compiled ($(( $(date +%s) - start ))s)"; fi ;;
    esac
  done
}

gobuild() { # name srcdir outdir ldflags pkgs...
  local name="$1" src="$2" out="$3" ldflags="$4"; shift 4
  local work="$cache/build-$name"
  rm -rf "$work" "$out.tmp"; mkdir -p "$work" "$out.tmp"
  cp "$src/go.mod" "$work/"
  [ -f "$src/go.sum" ] && cp "$src/go.sum" "$work/"
  cp "$src"/*.go "$work/" 2>/dev/null || true
  log "$name: building $* (cold build: many minutes on 2 cores; cached afterwards)"
  local start; start=$(date +%s)
  ( cd "$work" && CGO_ENABLED="${CGO_ENABLED:-1}" GOFLAGS=-buildvcs=false \
      go build -mod=mod -v -trimpath -ldflags "-s -w $ldflags" -o "$out.tmp/" "$@" 2>&1 ) \
    | progress "$name" || true
  local p b
  for p in "$@"; do
    b="$(basename "$p")"
    case "$b" in v[0-9]*) b="$(basename "$(dirname "$p")")" ;; esac   # .../server/v3 -> server
    [ -x "$out.tmp/$b" ] || { log "$name: build failed (no $b)"; return 1; }
  done
  rm -rf "$out"; mv "$out.tmp" "$out"
  log "$name: done in $(( $(date +%s) - start ))s -> $out"
}

# Fetches the modules a part's packages need into the Go module cache, and
# nothing else (`go list -deps` loads them without compiling). Safe next to a
# build of the same modules: the cache locks each module.
download() { # name srcdir pkgs...
  local name="$1" src="$2" work; shift 2
  work="$(mktemp -d "$cache/download-$name.XXXXXX")"
  cp "$src/go.mod" "$work/"
  [ -f "$src/go.sum" ] && cp "$src/go.sum" "$work/"
  cp "$src"/*.go "$work/" 2>/dev/null || true
  local start; start=$(date +%s)
  if (cd "$work" && GOFLAGS=-buildvcs=false go list -mod=mod -deps "$@" >/dev/null 2>&1); then
    log "$name: modules downloaded ($(( $(date +%s) - start ))s)"
  else
    log "$name: downloading modules failed; the build will try again"
  fi
  rm -rf "$work"
}

k8s_built() {
  local c
  for c in "${k8s_cmds[@]}"; do [ -x "$cache/k8s-v$K8S_VERSION/bin/$c" ] || return 1; done
}

# Downloads, in parallel, the modules of every part not built yet.
download_missing() {
  local pids=()
  [ -x "$cache/etcd-v$ETCD_VERSION/bin/etcd" ] || { download etcd "$here/etcd" "${etcd_pkgs[@]}" & pids+=($!); }
  k8s_built || { download k8s "$here/k8s" "${k8s_pkgs[@]}" & pids+=($!); }
  [ -x "$cache/coredns-v$COREDNS_VERSION/bin/coredns" ] || { download coredns "$here/coredns" "${coredns_pkgs[@]}" & pids+=($!); }
  [ -x "$cache/helm-v$HELM_VERSION/bin/helm" ] || { download helm "$here/helm" "${helm_pkgs[@]}" & pids+=($!); }
  [ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
}

build_etcd() {
  local out="$cache/etcd-v$ETCD_VERSION/bin"
  if [ -x "$out/etcd" ]; then return 0; fi
  # etcd's main package is the root of go.etcd.io/etcd/server/v3; go names the binary "server"
  gobuild etcd "$here/etcd" "$out" "" "${etcd_pkgs[@]}"
  mv "$out/server" "$out/etcd"
}

build_k8s() {
  local out="$cache/k8s-v$K8S_VERSION/bin"
  k8s_built && return 0
  local minor="${K8S_VERSION#*.}"; minor="${minor%%.*}"
  local ld="-X k8s.io/component-base/version.gitVersion=v$K8S_VERSION"
  ld+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  ld+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ld+=" -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"
  ld+=" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  gobuild k8s "$here/k8s" "$out" "$ld" "${k8s_pkgs[@]}"
}

build_coredns() {
  local out="$cache/coredns-v$COREDNS_VERSION/bin"
  if [ -x "$out/coredns" ]; then return 0; fi
  # the wrapper's own main package (main.go); go names the binary after the module: coredns
  gobuild coredns "$here/coredns" "$out" "" "${coredns_pkgs[@]}"
  [ -x "$out/coredns" ] || { log "coredns: build failed (no coredns)"; return 1; }
}

build_helm() {
  local out="$cache/helm-v$HELM_VERSION/bin"
  if [ -x "$out/helm" ]; then return 0; fi
  # The same -X flags as Helm's own Makefile: the version, and the Kubernetes
  # version `helm template` and `helm lint` assume without a cluster, which is
  # that of the client-go the release was built with.
  local gomod minor ld
  # (outside any module: nothing is written next to the wrapper's go.mod)
  gomod="$(cd "$cache" && go mod download -json "helm.sh/helm/v3@v$HELM_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  minor="$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$gomod")"
  [ -n "$minor" ] || { log "helm: cannot read k8s.io/client-go's version from $gomod"; return 1; }
  ld="-X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  ld+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  ld+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
  ld+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
  # Like Helm's release binaries: no cgo.
  CGO_ENABLED=0 gobuild helm "$here/helm" "$out" "$ld" "${helm_pkgs[@]}"
}

mkdir -p "$cache"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then log "another build is running; waiting for it"; flock 9; fi

case "$what" in
  etcd) build_etcd ;;
  k8s) build_k8s ;;
  coredns) build_coredns ;;
  helm) build_helm ;;
  download) download_missing ;;
  all)
    all_start=$(date +%s)
    download_missing &
    downloads=$!
    build_etcd; build_k8s; build_coredns; build_helm
    wait "$downloads" || true
    [ $(( $(date +%s) - all_start )) -lt 2 ] || log "all built in $(( $(date +%s) - all_start ))s" ;;
  *) echo "usage: $0 [etcd|k8s|coredns|helm|all|download]" >&2; exit 2 ;;
esac
