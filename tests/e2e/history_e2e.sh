#!/usr/bin/env bash
# End to end: results that outlive their LoadTest (docs/gates.md, "Baselines
# under GitOps") on the local Kubernetes (scripts/cluster), kubeload-operator
# on the host. Each finished run leaves one LoadTestResult record, which
# stays when its LoadTest goes. The Flux recipe's re-run (the passing run
# deleted, the same test applied again under a load that makes it far
# slower) fails its lastPassed gate against the deleted run's record; a
# baseline.required run with no history fails NoBaseline; retention keeps
# exactly spec.history.keep records plus the one a baseline names; the TTL
# deletes a run but never one Flux applied; an operator killed around a
# run's end writes its record exactly once.
# Last line: `history-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-history-e2e
IMAGE=localhost/kubeload/kubeload:dev
operator_pid=""
was_up=0

E2E_NAME=history-e2e
. "$(dirname "$0")/lib.sh"
finish() { host_operator_e2e_finish; }

host_operator_e2e_setup
check "operator ready" start_host_operator 18591

apply_loadtest() { # name test-label spec-yaml (indented two spaces) [extra metadata]
  kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: $1, namespace: $NS, labels: {kubeload.dev/test: $2}${4:-}}
spec:
  target: {service: {name: nginx, port: 80}}
$3
YAML
}
jp() { kubectl -n "$NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
wait_phase() { # name phase timeout-seconds
  for _ in $(seq 1 "$(( $3 * 5 ))"); do [ "$(jp "$1" '{.status.phase}')" = "$2" ] && return 0; sleep 0.2; done
  return 1
}
records() { # selector: the names of the records it selects, sorted
  kubectl -n "$NS" get ltr -l "$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' 2>/dev/null | sort | xargs
}
condition() { # loadtest type field
  jp "$1" "{.status.conditions[?(@.type==\"$2\")].$3}"
}
event_reasons() { kubectl -n "$NS" get events --field-selector "involvedObject.name=$1" -o jsonpath='{.items[*].reason}' 2>/dev/null; }

# 1. The Flux recipe's re-run: a passing run, deleted (force: true deletes
# it before applying the next); the same test applied again, far slower.
gate='  baseline: {lastPassed: true, maxRegression: {p99: 10%}}'
apply_loadtest regress regress "  load: {connections: 1, requests: 2000}
$gate"
check "re-run: the first run passes ($(jp regress '{.status.reason}: {.status.message}'))" wait_phase regress Succeeded 120
first_uid=$(jp regress '{.metadata.uid}')
first_record=$(jp regress '{.status.resultRecord}')
check "re-run: its status names its record ($first_record)" test "$first_record" = "regress-${first_uid:0:8}"
check "re-run: the record is listed by its test (-l kubeload.dev/test=regress)" \
  test "$(records kubeload.dev/test=regress)" = "$first_record"
check "re-run: the record carries the verdict as a label" \
  test "$(records kubeload.dev/test=regress,kubeload.dev/verdict=Pass)" = "$first_record"
check "re-run: the first run's NoBaseline says it had nothing to compare with" \
  test "$(condition regress Baseline reason)" = NoBaseline
kubectl -n "$NS" delete lt regress --wait=true >/dev/null
check "re-run: the record outlives its LoadTest" test "$(records kubeload.dev/test=regress)" = "$first_record"
apply_loadtest regress regress "  load: {connections: 128, requests: 40000}
$gate"
check "re-run: the slower run ends ($(jp regress '{.status.reason}: {.status.message}'))" wait_phase regress Succeeded 180
check "re-run: its gate fails against the deleted run's record ($(jp regress '{.status.baseline.deltas.p99}'))" \
  test "$(jp regress '{.status.verdict}')" = Fail
check "re-run: Baseline=False Regressed ($(condition regress Baseline message))" \
  test "$(condition regress Baseline status)/$(condition regress Baseline reason)" = False/Regressed
check "re-run: compared with the first run's record" \
  test "$(jp regress '{.status.baseline.resultName}')" = "$first_record"
check "re-run: both runs' records are the test's history" \
  test "$(records kubeload.dev/test=regress | wc -w)" = 2

# 2. A gate that demands a comparison, with no history: a failed gate.
apply_loadtest fresh fresh "  load: {connections: 1, requests: 100}
  baseline: {lastPassed: true, required: true, maxRegression: {p99: 10%}}"
# 3. The TTL: a run goes (its record stays), one Flux applied does not.
apply_loadtest ttl ttl "  load: {connections: 1, requests: 100}
  ttlSecondsAfterFinished: 0"
apply_loadtest ttl-flux ttl-flux "  load: {connections: 1, requests: 100}
  ttlSecondsAfterFinished: 0" ", annotations: {}, labels: {kubeload.dev/test: ttl-flux, kustomize.toolkit.fluxcd.io/name: perf}"
check "required: the run ends Succeeded" wait_phase fresh Succeeded 120
check "required: verdict Fail ($(jp fresh '{.status.message}'))" test "$(jp fresh '{.status.verdict}')" = Fail
check "required: Baseline=False NoBaseline" \
  test "$(condition fresh Baseline status)/$(condition fresh Baseline reason)" = False/NoBaseline
check "ttl: a recorded run goes at its TTL" \
  bash -c "for _ in \$(seq 1 300); do kubectl -n '$NS' get lt ttl >/dev/null 2>&1 || exit 0; sleep 0.2; done; exit 1"
check "ttl: its record stays" test "$(records kubeload.dev/test=ttl | wc -w)" = 1
check "ttl: the run Flux applied ends" wait_phase ttl-flux Succeeded 120
sleep 3
check "ttl: the run Flux applied is not deleted (Flux would apply it again)" \
  kubectl -n "$NS" get lt ttl-flux
check "ttl: an Event says why ($(event_reasons ttl-flux))" contains "$(event_reasons ttl-flux)" TTLNotApplied

# 4. Retention: keep 2 of the test, plus the record a baseline names.
keep='  load: {connections: 1, requests: 50}
  history: {keep: 2}'
apply_loadtest keep-1 keep "$keep"
check "retention: keep-1 ends" wait_phase keep-1 Succeeded 120
pinned=$(jp keep-1 '{.status.resultRecord}')
apply_loadtest pin pin "  load: {connections: 1, requests: 50}
  baseline: {resultName: $pinned, maxRegression: {p99: 1000%}}"
check "retention: a run whose baseline names keep-1's record ends" wait_phase pin Succeeded 120
check "retention: it compared with that record" test "$(jp pin '{.status.baseline.resultName}')" = "$pinned"
for run in keep-2 keep-3 keep-4; do
  apply_loadtest "$run" keep "$keep"
  check "retention: $run ends" wait_phase "$run" Succeeded 120
done
expected=$(printf '%s\n' "$pinned" "$(jp keep-3 '{.status.resultRecord}')" "$(jp keep-4 '{.status.resultRecord}')" | sort | xargs)
retained() {
  for _ in $(seq 1 50); do [ "$(records kubeload.dev/test=keep)" = "$expected" ] && return 0; sleep 0.2; done
  return 1
}
check "retention: the newest 2 and the pinned one remain ($(records kubeload.dev/test=keep))" retained

# 5. The operator killed while a run ends, started again: one record.
apply_loadtest restart restart "  load: {connections: 1, duration: 8s}"
check "restart: the run is Running" wait_phase restart Running 120
stop_host_operator
sleep 12  # the load ends meanwhile; nobody collects it
check "restart: the operator starts again" start_host_operator 18591
check "restart: the run ends Succeeded" wait_phase restart Succeeded 60
uid=$(jp restart '{.metadata.uid}')
check "restart: exactly one record of the run" \
  test "$(records "kubeload.dev/loadtest-uid=$uid" | wc -w)" = 1
stop_host_operator
check "restart: the operator starts once more" start_host_operator 18591
sleep 3
check "restart: still exactly one record, the one its status names" \
  test "$(records "kubeload.dev/loadtest-uid=$uid")" = "$(jp restart '{.status.resultRecord}')"

finish
