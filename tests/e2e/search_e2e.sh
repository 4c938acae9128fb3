#!/usr/bin/env bash
# End to end: a capacity search (docs/experiments.md "Capacity search") on
# the local Kubernetes (scripts/cluster), kubeload-operator on the host
# (with the cluster's Prometheus when it has one), against nginx-slow of
# cluster/manifests/nginx-variants.yaml, whose rate limit queues requests
# past 100/s. examples/capacity-search.yaml (start 25/s, factor 2,
# precision 10%, p99 < 100ms) finds the highest passing rate in [70, 100]
# /s with the first failing one within 10% of it, the reason CapacityFound
# naming why the failing step failed; its steps ran one at a time, each row
# has its rate and figures and (with Prometheus) the target's CPU. The
# operator again with --max-rate 60: the search
# never asks above 60/s and ends CeilingReached, limitBy --max-rate. Its
# steps go with it when it is deleted.
# Last line: `search-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-search-e2e
IMAGE=localhost/kubeload/kubeload:dev
operator_pid=""
was_up=0

E2E_NAME=search-e2e
. "$(dirname "$0")/lib.sh"
finish() { host_operator_e2e_finish; }

host_operator_e2e_setup
kubectl -n "$NS" apply -f "$root/cluster/manifests/nginx-variants.yaml" >/dev/null
check "nginx-slow rolled out" kubectl -n "$NS" rollout status deploy/nginx-slow --timeout=120s
prometheus="$("$cluster" prometheus-url 2>/dev/null || true)"
prometheus_flags=()
[ -n "$prometheus" ] && prometheus_flags=(--prometheus-url "$prometheus" --prometheus-scrape-interval 5s)
say "Prometheus: ${prometheus:-none}"
check "operator ready" start_host_operator 18597 "${prometheus_flags[@]}"
[ -z "$prometheus" ] ||
  check "Prometheus has nginx-slow's CPU samples" wait_for_target_samples "$prometheus" "$NS" nginx-slow

steps_of() { # search: its steps' names, sorted
  kubectl -n "$NS" get lt -l "kubeload.dev/search=$1" \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' 2>/dev/null | sort | xargs
}
within() { # python expression over float arguments a, b
  python3 -c "import sys; a, b = float(sys.argv[1] or 'nan'), float(sys.argv[2] or 'nan'); sys.exit(0 if ($1) else 1)" "$2" "${3:-0}"
}

# 1. The example: the knee of nginx-slow near 100/s.
kubectl -n "$NS" apply -f "$root/examples/capacity-search.yaml" >/dev/null
started=$(date +%s)
check "capacity: the search ends ($(jp nginx-capacity '{.status.reason}: {.status.message}'))" \
  wait_final nginx-capacity 600
say "capacity: took $(( $(date +%s) - started ))s for $(jp nginx-capacity '{.status.search.steps[*].value}') /s"
check "capacity: Succeeded, verdict Pass, reason CapacityFound ($(jp nginx-capacity '{.status.phase} {.status.verdict} {.status.reason}'))" \
  test "$(jp nginx-capacity '{.status.phase}/{.status.verdict}/{.status.reason}')" = Succeeded/Pass/CapacityFound
passing=$(jp nginx-capacity '{.status.search.highestPassing}')
failing=$(jp nginx-capacity '{.status.search.firstFailing}')
check "capacity: the highest passing rate is in [70, 100] /s ($passing)" within "70 <= a <= 100" "$passing"
check "capacity: the first failing rate is within 10% of it ($failing - $passing)" \
  within "a < b <= a * 1.10 + 1e-9" "$passing" "$failing"
check "capacity: the message names both and why ($(jp nginx-capacity '{.status.message}'))" \
  python3 -c "import sys; m = sys.argv[1]; sys.exit(0 if m.startswith('highest passing rate') and 'p99 < 100ms (observed' in m else 1)" \
  "$(jp nginx-capacity '{.status.message}')"
rows=$(kubectl -n "$NS" get lt nginx-capacity -o json | python3 -c "$(cat <<'PY'
import json, sys
steps = json.load(sys.stdin)["status"]["search"]["steps"]
bad = [s for s in steps if not s.get("value") or "rps" not in s.get("metrics", {}) or s.get("verdict") not in ("Pass", "Fail")
       or (s["verdict"] == "Fail") != bool(s.get("failed"))]
print(len(steps), len(bad))
for s in steps:
    print(f"  step {s['step']}: {s['value']}/s {s.get('verdict')} p99 {s.get('metrics', {}).get('p99')} ms, cpu {s.get('cpuCores')}", file=sys.stderr)
PY
)" 2>/tmp/search-e2e-steps.txt)
cat /tmp/search-e2e-steps.txt
check "capacity: every step row has its rate, figures and verdict, the failing ones their failed thresholds ($rows: steps, bad rows)" \
  test "${rows#* }" = 0
check "capacity: one step LoadTest per row, owned by the search ($(steps_of nginx-capacity | wc -w))" \
  test "$(steps_of nginx-capacity | wc -w)" = "${rows% *}"
overlaps=$(kubectl -n "$NS" get lt -l kubeload.dev/search=nginx-capacity -o json | python3 -c '
import json, sys
runs = sorted((i["status"]["startTime"], i["status"]["completionTime"]) for i in json.load(sys.stdin)["items"])
print(sum(1 for a, b in zip(runs, runs[1:]) if b[0] < a[1]))')
check "capacity: one step at a time (overlapping steps: $overlaps)" test "$overlaps" = 0
asked=$(kubectl -n "$NS" get lt -l kubeload.dev/search=nginx-capacity -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
print(" ".join(format(i["spec"]["load"]["rate"], "g") for i in sorted(items, key=lambda i: int(i["metadata"]["labels"]["kubeload.dev/step"]))))')
check "capacity: each step asked its row's rate ($asked)" \
  test "$asked" = "$(jp nginx-capacity '{.status.search.steps[*].value}')"
if [ -n "$prometheus" ]; then
  # Each row's CPU is its step's own measurement, waited for before the
  # search ended: a row without one names the step's TargetMetrics reason
  # (cAdvisor's samples come every 2-11 s here, so a 10 s step may hold one).
  cpu=$(kubectl -n "$NS" get lt -l kubeload.dev/search=nginx-capacity -o json |
    python3 -c "$(cat <<'PY'
import json, subprocess, sys
steps = {i["metadata"]["name"]: i["status"] for i in json.load(sys.stdin)["items"]}
search = json.loads(subprocess.run(["kubectl", "-n", sys.argv[1], "get", "lt", "nginx-capacity", "-o", "json"],
                                   capture_output=True, text=True).stdout)["status"]["search"]["steps"]
wrong, measured, why = [], 0, []
for row in search:
    status = steps[row["loadTest"]]
    own = status.get("target", {}).get("cpuCores", {}).get("mean")
    condition = [c for c in status.get("conditions", []) if c["type"] == "TargetMetrics"]
    if row.get("cpuCores") != own or (condition and condition[0]["status"] == "Unknown"):
        wrong.append(str(row["step"]))
    if own is not None:
        measured += 1
    elif condition:
        why.append(f"{row['step']}:{condition[0]['reason']}")
print(f"{measured}/{len(search)} wrong={','.join(wrong) or 'none'} without={' '.join(why) or 'none'}")
PY
)" "$NS")
  check "capacity: each row has its step's own target CPU, all measurements in, most steps measured ($cpu)" \
    python3 -c "import sys; m, n = map(int, sys.argv[1].split()[0].split('/')); sys.exit(0 if 'wrong=none' in sys.argv[1] and 2 * m > n else 1)" "$cpu"
fi

# The plugin's report of the search: the answer and a sweep row per step.
"$root/build/bin/kubectl-kubeload" -n "$NS" report nginx-capacity >/tmp/search-e2e-report.txt 2>&1
cat /tmp/search-e2e-report.txt
check "capacity: kubectl kubeload report gives the answer and a row per step" python3 -c "$(cat <<'PY'
import re, sys
text = open("/tmp/search-e2e-report.txt").read()
rows = re.findall(r"^ +\d+ +[\d.]+/s +(Pass|Fail) ", text, re.M)
sys.exit(0 if "Capacity search: highest passing rate" in text and len(rows) == int(sys.argv[1]) else 1)
PY
)" "${rows% *}"
"$root/build/bin/kubectl-kubeload" -n "$NS" report nginx-capacity -o junit >/tmp/search-e2e-report.xml 2>&1
check "capacity: its JUnit report is well-formed and green (the failing steps are how it found the answer)" \
  python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse('/tmp/search-e2e-report.xml').getroot(); sys.exit(0 if r.get('failures') == '0' and r.get('errors') == '0' else 1)"

# 2. The operator's ceiling: never a step above --max-rate, CeilingReached.
stop_host_operator
check "operator ready with --max-rate 60" start_host_operator 18597 --max-rate 60 "${prometheus_flags[@]}"
sed 's/name: nginx-capacity$/name: nginx-ceiling/' "$root/examples/capacity-search.yaml" |
  kubectl -n "$NS" apply -f - >/dev/null
check "ceiling: the search ends ($(jp nginx-ceiling '{.status.reason}: {.status.message}'))" \
  wait_final nginx-ceiling 300
check "ceiling: Succeeded, verdict Pass, reason CeilingReached ($(jp nginx-ceiling '{.status.phase} {.status.verdict} {.status.reason}'))" \
  test "$(jp nginx-ceiling '{.status.phase}/{.status.verdict}/{.status.reason}')" = Succeeded/Pass/CeilingReached
check "ceiling: limit 60 by --max-rate ($(jp nginx-ceiling '{.status.search.limit} {.status.search.limitBy}'))" \
  test "$(jp nginx-ceiling '{.status.search.limit}/{.status.search.limitBy}')" = 60/--max-rate
check "ceiling: the steps were 25, 50, 60 /s ($(jp nginx-ceiling '{.status.search.steps[*].value}'))" \
  test "$(jp nginx-ceiling '{.status.search.steps[*].value}')" = "25 50 60"

# 3. Its steps go with the deleted search.
kubectl -n "$NS" delete lt nginx-ceiling --wait=true >/dev/null
gone=1
for _ in $(seq 1 60); do [ -z "$(steps_of nginx-ceiling)" ] && { gone=0; break; }; sleep 1; done
check "delete: the steps went with the deleted search" test "$gone" = 0

finish
