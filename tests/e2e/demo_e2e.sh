#!/usr/bin/env bash
# The README's main command as a new user runs it: `scripts/demo --quick` in a
# checkout with no build directory. The checkout is this work tree's tracked
# files and its untracked, unignored ones, copied into an empty folder: what
# a fresh clone of this commit holds (in CI, exactly that). A program or an
# install step the demo uses without building or installing it fails here.
# Checks that the demo exits 0, prints `kubectl get lt -o wide` with a row
# per cluster example, that the cluster runs did not overlap in time (each
# run's latency and target CPU are its own), that each has its target's CPU,
# that the local part printed its verdicts and seed 000's 64-bit total, and
# that the scenario example ran on both sides: locally with a row per step
# and the shop's own counts, in the cluster to a finished row.
# Needs the local cluster (scripts/cluster; brought up if it is not).
# Last line: `demo-e2e: N passed, M failed`; SKIP (exit 0) where the machine
# cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NAMESPACE=kubeload-demo  # scripts/demo's
CLUSTER_RUNS=(nginx-open-400rps nginx-concurrency-sweep checkout-mix shop-journey)
was_up=0
checkout=""

E2E_NAME=demo-e2e
. "$(dirname "$0")/lib.sh"
finish() {
  [ -z "$checkout" ] || rm -rf "$checkout"
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
cluster_running "$cluster" && was_up=1
trap finish INT TERM

# Beside this checkout, at the same depth: scripts/test's compiler cache
# (CCACHE_BASEDIR, this checkout's parent) then finds the build's objects.
checkout=$(mktemp -d "$(dirname "$root")/.demo-e2e-checkout.XXXXXX")
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do [ -e "$file" ] || [ -L "$file" ] && printf '%s\0' "$file"; done |
  xargs -0 cp -P --parents -t "$checkout")
check "the checkout has no build directory" test ! -e "$checkout/build"

log=/tmp/demo-e2e.log
start=$SECONDS
(cd "$checkout" && scripts/demo --quick) >"$log" 2>&1
status=$?
say "scripts/demo --quick took $((SECONDS - start)) s (log: $log)"
check "scripts/demo --quick exits 0 from a checkout without build/ (status $status)" test "$status" -eq 0
[ "$status" -eq 0 ] || tail -30 "$log"
eval "$("$cluster" env)"

output=$(cat "$log")
check "the demo prints kubectl get lt -o wide" contains "$output" "== kubectl get lt -o wide"
table=$(sed -n '/== kubectl get lt -o wide/,/^$/p' "$log")
for name in "${CLUSTER_RUNS[@]}"; do
  check "kubectl get lt -o wide has a finished row for $name" \
    bash -c "grep -E '^$name +(Succeeded|Failed) ' <<<'$table' >/dev/null"
done

# Each run's window, [startTime, completionTime], against every other's: a
# run whose window overlaps another's read that one's load as its own.
windows=$(kubectl -n "$NAMESPACE" get lt "${CLUSTER_RUNS[@]}" -o json 2>/dev/null | python3 -c '
import datetime, json, sys
def at(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
runs = [(item["metadata"]["name"], item.get("status", {})) for item in json.load(sys.stdin)["items"]]
for name, status in runs:
    print(name, status.get("startTime", "-"), status.get("completionTime", "-"),
          "cpu" if status.get("target", {}).get("cpuCores") else "no-cpu")
windows = sorted((at(s["startTime"]), at(s["completionTime"]), n) for n, s in runs
                 if s.get("startTime") and s.get("completionTime"))
overlaps = [f"{a[2]}/{b[2]}" for a, b in zip(windows, windows[1:]) if b[0] < a[1]]
print("runs-with-windows", len(windows))
print("overlaps", " ".join(overlaps) or "none")
')
say "run windows: $(tr '\n' ';' <<<"$windows")"
check "every cluster run has a start and a completion time" \
  contains "$windows" "runs-with-windows ${#CLUSTER_RUNS[@]}"
check "no two cluster runs overlap in time (each run's numbers are its own)" \
  contains "$windows" "overlaps none"
# Each run's target: its CPU, or the reason there is none, printed (the
# cluster's cAdvisor may read an idle nginx once in a 12 s quick run: TooFewSamples).
for name in "${CLUSTER_RUNS[@]}"; do
  check "$name: status.target has nginx's CPU, or the demo says why not" \
    bash -c "grep -E '^$name .* cpu$' <<<'$windows' >/dev/null || sed -n '/^== $name: /,/^==/p' '$log' | grep -qE '^  target: [A-Za-z]+: '"
done
check "at least one cluster run has nginx's CPU" bash -c "grep -qE ' cpu$' <<<'$windows'"

check "the local part printed a verdict per example" \
  bash -c "sed -n '/== verdicts/,\$p' '$log' | grep -cE ' (Pass|Fail)$' | grep -qx 5"
# The text report of a scenario run lists its steps under "Steps".
rows_per_step() { # report
  local step
  grep -q '^Steps' <<<"$1" || return 1
  for step in login items cart checkout; do grep -qE "^ +$step " <<<"$1" || return 1; done
}
journey=$(sed -n '/== loadgen run examples\/shop-journey.yaml/,/^== /p' "$log")
check "the local scenario run printed a row per step" rows_per_step "$journey"
shop_logins=$(sed -n 's/^The shop counted requests: login \([0-9]*\),.*/\1/p' "$log" | tail -1)
check "the shop counted the local scenario run's logins (${shop_logins:-none})" \
  test "${shop_logins:-0}" -gt 0
total=$(sed -n 's/^Total transferred: *\([0-9-]*\) bytes.*/\1/p' "$log" | tail -1)
check "seed 000: ab's report layout, total transferred 1000 x 6 MB ($total bytes, not a 32-bit wrap)" \
  test "${total:-0}" -gt 6000000000

finish
