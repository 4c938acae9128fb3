#!/usr/bin/env bash
# scripts/setup's unpacking of Debian's kernel for the kernel-tls tier, in a
# cache of its own (KUBELOAD_CACHE): a kernel without its module index (what a
# setup whose depmod was missing left behind, on a machine where kmod came
# only later with scripts/setup-cluster) must never count as unpacked, or the
# kernel-tls tier fails on every run after. Downloads the kernel package from
# Debian's mirror (about 10 s each time, twice). Last line: "setup-kernel: N
# passed, M failed".
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
E2E_NAME=setup-kernel
. "$root/tests/e2e/lib.sh"

cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
log="$cache/setup.log"
setup() { KUBELOAD_CACHE="$cache" "$root/scripts/setup" >"$log" 2>&1; }
kernels() { compgen -G "$cache/kernel/*/boot/vmlinuz-*"; }
no_kernel() { ! kernels >/dev/null; }
indexes() { compgen -G "$cache/kernel/*/lib/modules/*/modules.dep" >/dev/null; }

# depmod failing (here: /bin/false mounted over it, in a mount namespace of the
# test's own) must leave no kernel in the cache, and say so.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
  KUBELOAD_CACHE="$cache" unshare -m --propagation private bash -c \
    'mount --bind /bin/false /sbin/depmod && "$0"' "$root/scripts/setup" >"$log" 2>&1
  check "depmod failing: setup still ends well (only the kernel-tls tier needs the kernel)" test $? -eq 0
  check "depmod failing: setup says the kernel could not be indexed" grep -q "could not download and index" "$log"
  check "depmod failing: no kernel is left in the cache to be taken as unpacked" no_kernel
else
  say "not root (or no unshare): the failing-depmod check needs a mount namespace of its own"
fi

setup
check "setup unpacks the kernel with its module index" indexes
check "setup unpacked exactly one kernel" test "$(kernels | wc -l)" -eq 1

rm -f "$cache"/kernel/*/lib/modules/*/modules.dep
setup
check "a cached kernel without its module index is unpacked again" grep -q "unpacking Debian's kernel package" "$log"
check "then it has its module index" indexes

setup
check "with the kernel and its index cached, setup leaves them be" bash -c '! grep -q "unpacking" "$0"' "$log"
report
