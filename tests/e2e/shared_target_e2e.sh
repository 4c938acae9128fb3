#!/usr/bin/env bash
# End to end: shared targets are visible (issue 29, docs/reference.md
# "Shared targets") on the local Kubernetes (scripts/cluster),
# kubeload-operator on the host. Two LoadTests run at once against one nginx
# through two different Services selecting the same pod: each records the
# pod's address in status.target.addresses, and each names the other in
# status.target.sharedWith with TargetShared=True (the first to end names
# the other while it still runs; the other names it when it ends), a note
# that changes neither verdict nor Ready; the run's LoadTestResult record
# carries it too. A third run alone afterwards, through the Service's
# cluster DNS name, has TargetShared=False TargetNotShared.
# Last line: `shared-target-e2e: N passed, M failed`; SKIP (exit 0) where
# the machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-shared-target-e2e
IMAGE=localhost/kubeload/kubeload:dev
operator_pid=""
was_up=0

E2E_NAME=shared-target-e2e
. "$(dirname "$0")/lib.sh"
finish() { host_operator_e2e_finish; }

host_operator_e2e_setup
check "operator ready" start_host_operator 18595

# A second Service in front of the same nginx pod: another name, the same target.
kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: nginx-alt}
spec:
  selector: {app: nginx}
  ports: [{name: http, port: 80, targetPort: 80}]
YAML
check "a second Service selects the nginx pod" \
  bash -c "for _ in \$(seq 1 100); do [ -n \"\$(kubectl -n '$NS' get endpointslices -l kubernetes.io/service-name=nginx-alt -o jsonpath='{.items[*].endpoints[*].addresses[*]}' 2>/dev/null)\" ] && exit 0; sleep 0.2; done; exit 1"
pod_ip=$(kubectl -n "$NS" get pods -l app=nginx -o jsonpath='{.items[0].status.podIP}' 2>/dev/null)

apply_loadtest() { # name target-yaml duration
  kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: $1, namespace: $NS}
spec:
  target: $2
  load: {connections: 2, duration: $3}
  thresholds: ["errorRate < 50%"]
YAML
}
jp() { kubectl -n "$NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
wait_phase() { # name phase timeout-seconds
  for _ in $(seq 1 "$(($3 * 5))"); do [ "$(jp "$1" '{.status.phase}')" = "$2" ] && return 0; sleep 0.2; done
  return 1
}
condition() { # loadtest type field
  jp "$1" "{.status.conditions[?(@.type==\"$2\")].$3}"
}
wait_condition() { # loadtest type status timeout-seconds
  for _ in $(seq 1 "$(($4 * 5))"); do [ "$(condition "$1" "$2" status)" = "$3" ] && return 0; sleep 0.2; done
  return 1
}
shared_with() { jp "$1" '{range .status.target.sharedWith[*]}{.namespace}/{.name}{" "}{end}' | xargs; }

# 1. Two runs at once, through two Services in front of the same pod; a
# ends first, while b still runs.
apply_loadtest shared-a "{service: {name: nginx, port: 80}}" 20s
apply_loadtest shared-b "{service: {name: nginx-alt, port: 80}}" 30s
check "both run at once" bash -c "
  for _ in \$(seq 1 600); do
    [ \"\$(kubectl -n '$NS' get lt shared-a -o jsonpath='{.status.phase}')\" = Running ] &&
      [ \"\$(kubectl -n '$NS' get lt shared-b -o jsonpath='{.status.phase}')\" = Running ] && exit 0
    sleep 0.2
  done; exit 1"
check "a records the pod's address ($(jp shared-a '{.status.target.addresses}'))" \
  contains "$(jp shared-a '{.status.target.addresses}')" "\"$pod_ip\""
check "b records the pod's address through its own Service ($(jp shared-b '{.status.target.addresses}'))" \
  contains "$(jp shared-b '{.status.target.addresses}')" "\"$pod_ip\""
check "a ends ($(jp shared-a '{.status.reason}: {.status.message}'))" wait_phase shared-a Succeeded 120
check "a decides TargetShared" wait_condition shared-a TargetShared True 30
check "a names b, still running ($(shared_with shared-a))" test "$(shared_with shared-a)" = "$NS/shared-b"
check "a's TargetShared message names b ($(condition shared-a TargetShared message))" \
  contains "$(condition shared-a TargetShared message)" "$NS/shared-b"
check "b ends ($(jp shared-b '{.status.reason}: {.status.message}'))" wait_phase shared-b Succeeded 120
check "b decides TargetShared" wait_condition shared-b TargetShared True 30
check "b names a ($(shared_with shared-b))" test "$(shared_with shared-b)" = "$NS/shared-a"
for run in shared-a shared-b; do
  check "$run: the verdict is its own (Pass)" test "$(jp "$run" '{.status.verdict}')" = Pass
  check "$run: Ready=True all the same" test "$(condition "$run" Ready status)" = True
  check "$run: TargetShared reason TargetShared" test "$(condition "$run" TargetShared reason)" = TargetShared
done
record=$(jp shared-a '{.status.resultRecord}')
check "a's record ($record) carries sharedWith" bash -c "
  for _ in \$(seq 1 50); do
    [ \"\$(kubectl -n '$NS' get ltr '$record' -o jsonpath='{.run.target.sharedWith[*].name}' 2>/dev/null)\" = shared-b ] && exit 0
    sleep 0.2
  done; exit 1"
if [ -x "$root/build/bin/kubectl-kubeload" ]; then
  report=$(PATH="$root/build/bin:$PATH" kubectl kubeload report shared-a -n "$NS" -o markdown 2>&1)
  check "the markdown report marks a as shared" contains "$report" "Target shared with $NS/shared-b"
fi

# 2. A third run alone afterwards, through the Service's cluster DNS name.
apply_loadtest alone "{url: \"http://nginx.$NS.svc.cluster.local/\"}" 5s
check "alone ends ($(jp alone '{.status.reason}: {.status.message}'))" wait_phase alone Succeeded 120
check "alone records the pod's address through the DNS name" \
  contains "$(jp alone '{.status.target.addresses}')" "\"$pod_ip\""
check "alone decides TargetShared" wait_condition alone TargetShared False 30
check "alone: TargetNotShared ($(condition alone TargetShared message))" \
  test "$(condition alone TargetShared reason)" = TargetNotShared
check "alone: no sharedWith" test -z "$(shared_with alone)"
check "a still names only b (decided once)" test "$(shared_with shared-a)" = "$NS/shared-b"

finish
