#!/usr/bin/env bash
# scripts/cluster's process bookkeeping (start_proc, pid_alive, stop_pid) without
# a cluster: no root, no network. The start-up race it guards against: right
# after `setsid nohup CMD &` the child may not have exec'd CMD yet, so anything
# that identifies it by /proc/PID/cmdline sees this script's own arguments and
# calls a starting component "exited". Here the child is held exactly in that
# window: its log is a FIFO, and the shell's redirection blocks (before the
# exec) until the test opens the FIFO's other end.
# Last line: "cluster-process: N passed, M failed".
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
E2E_NAME=cluster-process
. "$root/tests/e2e/lib.sh"

state="$(mktemp -d)"
holders=()
cleanup() {
  local p
  for p in "${holders[@]}"; do kill "$p" 2>/dev/null; done
  [ -f "$state/pids/held.pid" ] && kill "$(cut -d' ' -f1 "$state/pids/held.pid")" 2>/dev/null
  rm -rf "$state"
}
trap cleanup EXIT

export KUBELOAD_CLUSTER_DIR="$state" KUBELOAD_CLUSTER_LIB=1
# shellcheck source=../../scripts/cluster
. "$root/scripts/cluster"
set +e   # scripts/cluster sets -e; a failed check must not end the test
refuted() { ! "$@"; }

mkdir -p "$PIDS" "$LOGS"
mkfifo "$LOGS/held.log"
start_proc held sleep 300
pid="$(cut -d' ' -f1 "$PIDS/held.pid")"
cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
say "child $pid before exec: cmdline \"$cmdline\""
check "the child is still before its exec (it is not sleep yet)" bash -c '[[ "$0" != sleep* ]]' "$cmdline"
check "pid_alive: a component between fork and exec is alive" pid_alive held
check "start_proc again while it starts does not start a second one" \
  bash -c 'KUBELOAD_CLUSTER_LIB=1 . "$0" && start_proc held sleep 1 && [ "$(cat "$PIDS/held.pid")" = "$1" ]' \
  "$root/scripts/cluster" "$(cat "$PIDS/held.pid")"
cat "$LOGS/held.log" >/dev/null &
holders+=($!)
for _ in $(seq 50); do [[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" == sleep* ]] && break; sleep 0.1; done
check "after its exec the same process is alive (now: $(tr '\0' ' ' <"/proc/$pid/cmdline"))" pid_alive held
check "the pid file records the same process (pid and start time)" \
  test "$(cat "$PIDS/held.pid")" = "$pid $(start_time_of "$pid")"

# Another process under our PID: a pid file naming a live process whose start
# time differs is not ours (PID reuse after a reboot or a wrap-around).
echo "$$ 1" >"$PIDS/impostor.pid"
check "pid_alive: a live PID with another start time is not the component" refuted pid_alive impostor
stop_pid impostor 1
check "stop_pid leaves a process that is not ours alone" kill -0 $$

start_proc quick true
for _ in $(seq 50); do pid_alive quick || break; sleep 0.1; done
check "pid_alive: a component that exited is not alive" refuted pid_alive quick

stop_pid held 5
check "stop_pid stops the component" bash -c '! kill -0 "$0" 2>/dev/null' "$pid"
check "stop_pid removes its pid file" test ! -e "$PIDS/held.pid"

# Tearing down a stale cluster: a sandbox's network namespace file mounted
# twice (one umount leaves it busy), and one whose mount is hidden under a
# later mount of its directory (as `ip netns` leaves /run/netns), which no
# umount reaches. The first must go; the second must not stop `down` (it did,
# under set -e, and failed `scripts/cluster up` in CI). In a mount namespace of
# its own, so nothing outlives the test; needs root, as the cluster does.
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
  netns_case() { # what: "stacked" or "hidden"
    unshare -m --propagation private bash -c '
      set -e
      KUBELOAD_CLUSTER_LIB=1 . "$0"; set +e
      mkdir -p "$1/netns"; f="$1/netns/cni-test-$2"; : >"$f"
      mount --bind /proc/self/ns/net "$f"
      if [ "$2" = stacked ]; then mount --bind /proc/self/ns/net "$f"; else mount --bind "$1/netns" "$1/netns"; fi
      remove_netns_file "$f" || exit 10
      if [ "$2" = stacked ]; then [ ! -e "$f" ] || exit 11; fi
      exit 0' "$root/scripts/cluster" "$state" "$1"
  }
  check "a network namespace file mounted twice is unmounted and removed" netns_case stacked
  check "a network namespace file whose mount is hidden is left with a warning, and teardown goes on" netns_case hidden
  # The state directory (a tmpfs) as `down` finds it: unmountable, or locked
  # (inherited by a sandbox's user namespace, where umount fails), with a
  # mount inside it that is locked too.
  state_dir_case() { # what: "plain" or "locked"
    unshare -m --propagation private bash -c '
      dir="$1/cluster"; mkdir -p "$dir"; mount -t tmpfs t "$dir"
      mkdir -p "$dir/node-1/pods" "$dir/pids"; : >"$dir/pids/etcd.pid"; : >"$dir/ns"
      mount --bind /proc/self/ns/net "$dir/ns"
      run=(bash -c); [ "$2" = locked ] && run=(unshare -Urm --propagation private bash -c)
      "${run[@]}" "KUBELOAD_CLUSTER_DIR=\"$dir\" KUBELOAD_CLUSTER_LIB=1 . \"$0\"; set +e; remove_state_dir" "$0" || exit 10
      if [ "$2" = plain ]; then [ ! -e "$dir" ] || exit 11
      else [ -z "$(find "$dir" -mindepth 1 -maxdepth 1 ! -name ns)" ] || exit 12; fi' \
      "$root/scripts/cluster" "$state" "$1"
  }
  check "down unmounts and removes the state directory" state_dir_case plain
  check "down empties a state directory it cannot unmount (locked) and goes on" state_dir_case locked
else
  say "not root (or no unshare): the network namespace teardown checks need root, as scripts/cluster does"
fi
report
