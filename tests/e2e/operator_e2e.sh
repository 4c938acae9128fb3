#!/usr/bin/env bash
# End to end: the kubeload operator on the local Kubernetes (scripts/cluster).
# Builds the image (cluster/kubeload-image), applies the CRD, runs nginx behind
# a Service, runs kubeload-operator on the host against the cluster, applies
# LoadTests and checks their status against nginx's own access log: the
# requests nginx served equal the requests in status plus the warm-up, over
# HTTP/1.1, h2c and HTTP/2 over TLS. Also:
# a bad manifest is refused by the API server naming the field, an invalid
# spec fails before any pod exists, a header from a Secret goes only with the
# Secret owner's consent (SecretNotConsented without it, no Job), a missed gate is verdict Fail (not phase
# Failed), a target with no endpoints shows up as connect errors, the
# operator killed mid-run picks the run up again, so does a run during which
# the API server restarts (and the watches resume), workers that finish a
# minute apart with the operator down in between end with every request (the
# first one's result kept while its pod is gone), a deleted worker fails the
# run, a deleted LoadTest takes its pods along, the README's `kubectl wait`
# gate recipes return as documented (and the `kubectl create` one, run twice,
# reads the second run's verdict against a slower target) (the states captured on the way are read
# by kstatus, Flux and Argo CD code: tests/gitops), and of two replicas with
# --leader-elect only the Lease holder acts; the other takes over when the
# leader dies or steps down, or is frozen at the run's end (its status write
# due), and the old leader, resumed, steps down without touching the status.
# Last line: `operator-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-operator-e2e
IMAGE=localhost/kubeload/kubeload:dev
operator_pid=""
replica_pids=()
token_key_file=""
was_up=0

E2E_NAME=operator-e2e
. "$(dirname "$0")/lib.sh"
finish() {
  stop_operator
  [ -z "${watch_pid:-}" ] || kill "$watch_pid" 2>/dev/null
  local pid
  # (CONT first: a replica the frozen-leader check stopped takes no TERM.)
  for pid in "${replica_pids[@]}"; do kill -CONT "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1
  [ -n "$token_key_file" ] && rm -f "$token_key_file"
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
for binary in loadgen kubeload-operator; do
  [ -x "$root/build/bin/$binary" ] || { say "FAIL build/bin/$binary is not built"; exit 1; }
done

cluster_up "$cluster"
check "the unreachable route guards the cluster ranges before any load" "$cluster" check-route
trap finish INT TERM

check "image $IMAGE built and imported into the nodes" \
  bash -c "'$root/cluster/kubeload-image/build.sh' '$IMAGE' >/tmp/operator-e2e-image.log 2>&1"
check "CRD applied and established" "$root/scripts/install-crd"

kubectl create namespace "$NS" >/dev/null 2>&1
kubectl -n "$NS" apply -f "$root/cluster/manifests/nginx-target.yaml" >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: nobody, namespace: $NS}
spec: {selector: {app: nobody}, ports: [{port: 80, targetPort: 80}]}
YAML
check "nginx rolled out behind its Service" kubectl -n "$NS" rollout status deploy/nginx --timeout=120s

nginx_requests() { kubectl -n "$NS" logs deploy/nginx 2>/dev/null | grep -c '"GET '; }
# The requests in a finished LoadTest's status against what nginx logged
# since `before` (taken just before the LoadTest was applied).
check_nginx_agrees() { # label loadtest before
  local requests after
  requests=$(jp "$2" '{.status.result.requests}')
  sleep 1
  after=$(nginx_requests)
  check "$1: nginx served $((after - $3)), status says $requests" test "$((after - $3))" -eq "${requests:-0}"
}

# One key for every operator process of this test, so the one started after a
# kill derives the same worker tokens and can still drive the running workers.
token_key_file=$(mktemp /tmp/operator-e2e-token-key.XXXXXX)
head -c 32 /dev/urandom | base64 >"$token_key_file"
start_operator() {
  "$root/build/bin/kubeload-operator" --namespace "$NS" --loadgen-image "$IMAGE" \
    --worker-token-key-file "$token_key_file" --max-duration 2h \
    --metrics-addr 127.0.0.1:18481 --health-addr 127.0.0.1:18482 >>/tmp/operator-e2e-operator.log 2>&1 &
  operator_pid=$!
  for _ in $(seq 1 50); do
    curl -fs http://127.0.0.1:18482/readyz >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}
stop_operator() {
  [ -n "$operator_pid" ] || return 0
  kill "$operator_pid" 2>/dev/null
  wait "$operator_pid" 2>/dev/null
  operator_pid=""
}
: >/tmp/operator-e2e-operator.log
if start_operator && curl -fs http://127.0.0.1:18482/healthz >/dev/null; then
  ok "operator started; /healthz and /readyz answer"
else
  bad "operator started: $(tail -5 /tmp/operator-e2e-operator.log)"
fi

apply_loadtest() { # name spec-yaml (indented two spaces)
  kubectl apply -f - <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: $1, namespace: $NS, labels: {kubeload.dev/test: e2e}}
spec:
$2
YAML
}
jp() { kubectl -n "$NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
wait_completed() { kubectl -n "$NS" wait --for=condition=Completed "lt/$1" --timeout="${2:-180s}" >/dev/null 2>&1; }
wait_phase() { # name phase timeout-seconds
  for _ in $(seq 1 "$(( $3 * 5 ))"); do [ "$(jp "$1" '{.status.phase}')" = "$2" ] && return 0; sleep 0.2; done
  return 1
}

# 1. The API server refuses a bad manifest, naming the field.
out=$(apply_loadtest bad "  target: {url: 'http://x/', service: {name: nginx}}
  load: {connections: 2, requests: 10}
  workers: 0" 2>&1)
check "a bad manifest is refused by kubectl apply naming spec.workers" contains "$out" "spec.workers"
check "a bad manifest is refused by kubectl apply: url and service ($(head -c 300 <<<"$out"))" \
  contains "$out" "exactly one of"

# 2. Closed model, 3 workers, warm-up: exact counts against nginx.
before=$(nginx_requests)
apply_loadtest closed "  target: {service: {name: nginx, port: 80}}
  load: {connections: 6, requests: 1000, warmupRequests: 100}
  workers: 3
  thresholds: ['errorRate < 1%', 'requests == 1000']
  cleanup: {policy: Always}" >/dev/null
check "closed model: Completed" wait_completed closed
check "closed model: Passed condition" kubectl -n "$NS" wait --for=condition=Passed lt/closed --timeout=10s
check "closed model: phase Succeeded, verdict Pass" test "$(jp closed '{.status.phase}/{.status.verdict}')" = "Succeeded/Pass"
check "closed model: 1000 requests in status" test "$(jp closed '{.status.result.requests}')" = 1000
check "closed model: 3 of 3 workers succeeded, start skew recorded ($(jp closed '{.status.workers}'))" \
  test "$(jp closed '{.status.workers.desired}/{.status.workers.succeeded}')" = 3/3 -a -n "$(jp closed '{.status.workers.startSkewMs}')"
sleep 1
after=$(nginx_requests)
check "closed model: nginx served $((after - before)) = 1000 + 100 warm-up" test "$((after - before))" -eq 1100
check "closed model: cleanup Always removed the worker Job" \
  bash -c "for i in \$(seq 1 50); do kubectl -n '$NS' get job closed-workers >/dev/null 2>&1 || exit 0; sleep 0.2; done; exit 1"

# 2b. HTTP/2: h2c (nginx's port 8080) and http2 over TLS (port 443, ALPN h2),
# several streams per connection, warm-up: the requests nginx logged as
# HTTP/2.0 equal the status's plus the warm-up, and nginx logged nothing else.
nginx_h2_requests() { kubectl -n "$NS" logs deploy/nginx 2>/dev/null | grep -c '"GET [^"]* HTTP/2.0"'; }
check_h2_run() { # name protocol expected-requests warm-up spec-yaml
  local before h2_before after h2_after
  before=$(nginx_requests); h2_before=$(nginx_h2_requests)
  apply_loadtest "$1" "$5" >/dev/null
  check "$2: Completed" wait_completed "$1"
  check "$2: phase Succeeded, verdict Pass, $3 requests, 0 failures ($(jp "$1" '{.status.message}'))" \
    test "$(jp "$1" '{.status.phase}/{.status.verdict}/{.status.result.requests}/{.status.result.failures}')" = "Succeeded/Pass/$3/0"
  sleep 1
  after=$(nginx_requests); h2_after=$(nginx_h2_requests)
  check "$2: nginx served $((h2_after - h2_before)) over HTTP/2.0 = $3 + $4 warm-up" \
    test "$((h2_after - h2_before))" -eq "$(($3 + $4))"
  check "$2: nginx served nothing else ($((after - before)) in all)" test "$((after - before))" -eq "$(($3 + $4))"
}
check_h2_run h2c h2c 1000 100 "  target: {service: {name: nginx, port: 8080}, protocol: h2c}
  load: {connections: 4, maxStreams: 8, requests: 1000, warmupRequests: 100}
  workers: 2
  thresholds: ['errorRate < 1%', 'requests == 1000']"
check_h2_run http2 "http2 over TLS" 500 50 "  target:
    service: {name: nginx, port: 443, scheme: https}
    protocol: http2
    tls: {insecureSkipVerify: true}
  load: {connections: 2, maxStreams: 10, requests: 500, warmupRequests: 50}
  thresholds: ['errorRate < 1%', 'requests == 500']"

# 3. Open model with stages, status rows per stage, nginx agrees.
before=$(nginx_requests)
apply_loadtest open "  target: {service: {name: nginx, port: 80}}
  load:
    stages: [{duration: 2s, rate: 100}, {duration: 2s, rate: 200}]
  workers: 2" >/dev/null
check "open model with stages: Completed" wait_completed open
check_nginx_agrees "open model" open "$before"
requests=$(jp open '{.status.result.requests}')
check "open model: two stage rows" test "$(jp open '{.status.stages[*].index}')" = "0 1"
check "open model: about 600 requests at 100 then 200/s ($requests)" test "${requests:-0}" -ge 500 -a "${requests:-0}" -le 650

# 3b. A header from a Secret reaches the workers, never the Job or the CR,
# when the Secret's owner consents (docs/security.md).
kubectl -n "$NS" create secret generic api-token --from-literal=header='Bearer s3cr3t-e2e' \
  >/dev/null 2>&1
kubectl -n "$NS" label secret api-token kubeload.dev/consent=headers --overwrite >/dev/null 2>&1
# nginx here speaks plain http: the author opts in to sending a Secret over it.
apply_loadtest secret "  target: {service: {name: nginx, port: 80}, allowInsecureSecretHeaders: true}
  requests:
  - name: authed
    path: /
    headersFrom: [{name: Authorization, secretKeyRef: {name: api-token, key: header}}]
  load: {connections: 2, requests: 100}
  cleanup: {policy: Never}" >/dev/null
check "secret header: Completed" wait_completed secret
check "secret header: all 100 requests succeeded" \
  test "$(jp secret '{.status.result.requests}/{.status.result.failures}')" = "100/0"
check "default worker resources on a LoadTest without any ($(kubectl -n "$NS" get job/secret-workers -o jsonpath='{.spec.template.spec.containers[0].resources}' 2>&1))" \
  test "$(kubectl -n "$NS" get job/secret-workers -o jsonpath='{.spec.template.spec.containers[0].resources.requests.cpu}/{.spec.template.spec.containers[0].resources.limits.memory}')" = "250m/512Mi"
objects=$(kubectl -n "$NS" get job/secret-workers lt/secret -o yaml 2>&1)
check "secret header: the Job takes it by reference (KUBELOAD_HEADER_0 from api-token)" \
  contains "$objects" "KUBELOAD_HEADER_0"
check "secret header: the value is in neither the Job nor the LoadTest" \
  bash -c "! grep -q s3cr3t-e2e <<<\"\$1\"" _ "$objects"
# A Secret whose owner has not consented: Failed SecretNotConsented naming
# it and the label to add, before any Job.
kubectl -n "$NS" create secret generic not-lent --from-literal=header='Bearer n0t-l3nt' \
  >/dev/null 2>&1
apply_loadtest unconsented "  target: {service: {name: nginx, port: 80}, allowInsecureSecretHeaders: true}
  requests:
  - name: authed
    headersFrom: [{name: Authorization, secretKeyRef: {name: not-lent, key: header}}]
  load: {connections: 2, requests: 10}" >/dev/null
check "no consent: phase Failed" wait_phase unconsented Failed 30
check "no consent: reason SecretNotConsented, the message names the Secret, the field and the label ($(jp unconsented '{.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt unconsented -o jsonpath='{.status.reason} {.status.message}' | grep -q 'SecretNotConsented Secret \"not-lent\" (spec.requests\[0\].headersFrom\[0\].secretKeyRef.name).*kubeload.dev/consent=headers'"
check "no consent: no worker Job" bash -c "! kubectl -n '$NS' get job unconsented-workers >/dev/null 2>&1"

# 4. A missed gate is a verdict, not a failure of the run.
apply_loadtest gate "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 200}
  thresholds: ['p50 < 0.001ms']" >/dev/null
check "missed gate: Completed" wait_completed gate
check "missed gate: phase Succeeded, verdict Fail" test "$(jp gate '{.status.phase}/{.status.verdict}')" = "Succeeded/Fail"
check "missed gate: Passed condition False" kubectl -n "$NS" wait --for=condition=Passed=False lt/gate --timeout=10s

# 5. Valid for the API server, invalid for kubeload: Failed before any pod.
apply_loadtest invalid "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  thresholds: ['nope.p99 < 10ms']" >/dev/null
check "invalid spec: phase Failed, reason InvalidSpec" wait_phase invalid Failed 30
check "invalid spec: the message names the field ($(jp invalid '{.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt invalid -o jsonpath='{.status.reason} {.status.message}' | grep -q 'InvalidSpec.*thresholds'"
check "invalid spec: no worker Job" bash -c "! kubectl -n '$NS' get job invalid-workers >/dev/null 2>&1"

# 5b. Above the operator's ceiling (--max-duration 2h), or onto control-plane
# nodes: Failed with PolicyViolation naming the value, before anything is created.
apply_loadtest toolong "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, duration: 3h}" >/dev/null
check "ceiling: phase Failed" wait_phase toolong Failed 30
check "ceiling: reason PolicyViolation, the message names the value and the flag ($(jp toolong '{.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt toolong -o jsonpath='{.status.reason} {.status.message}' | grep -q 'PolicyViolation.*3h.*ceiling of 2h (--max-duration)'"
check "ceiling: no worker Job" bash -c "! kubectl -n '$NS' get job toolong-workers >/dev/null 2>&1"
apply_loadtest controlplane "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  workerTemplate:
    tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]" >/dev/null
check "control plane: phase Failed" wait_phase controlplane Failed 30
check "control plane: reason PolicyViolation ($(jp controlplane '{.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt controlplane -o jsonpath='{.status.reason} {.status.message}' | grep -q 'PolicyViolation.*control-plane'"

# 6. A Service without endpoints: the run completes, with connect errors.
apply_loadtest nobody "  target: {service: {name: nobody, port: 80}}
  load: {connections: 2, requests: 20, timeout: 2s}
  thresholds: ['errorRate < 1%']" >/dev/null
check "unreachable target: Completed" wait_completed nobody
check "unreachable target: every request failed ($(jp nobody '{.status.result.errors}'))" \
  test "$(jp nobody '{.status.result.failures}')" = 20
check "unreachable target: verdict Fail" test "$(jp nobody '{.status.verdict}')" = Fail

# 7. The operator killed mid-run: the run is picked up and counts stay exact.
before=$(nginx_requests)
apply_loadtest restart "  target: {service: {name: nginx, port: 80}}
  load: {rate: 300, duration: 6s}
  workers: 2" >/dev/null
check "restart: Running" wait_phase restart Running 120
stop_operator
sleep 2
start_operator || true
check "restart: Completed after the operator came back" wait_completed restart
check_nginx_agrees restart restart "$before"

# 7b. The API server restarts mid-run: the run completes with exact counts
# and the watches resume (a LoadTest applied afterwards is seen and run).
before=$(nginx_requests)
apply_loadtest apirestart "  target: {service: {name: nginx, port: 80}}
  load: {rate: 300, duration: 8s}
  workers: 2" >/dev/null
check "API server restart: Running" wait_phase apirestart Running 120
check "API server restarted mid-run (scripts/cluster restart kube-apiserver)" \
  bash -c "KUBELOAD_RESTART_PAUSE=3 '$cluster' restart kube-apiserver >/tmp/operator-e2e-apiserver.log 2>&1"
check "API server restart: Completed" wait_completed apirestart
check_nginx_agrees "API server restart" apirestart "$before"
check "API server restart: the operator is still the same process" kill -0 "$operator_pid"
apply_loadtest afterapi "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 100}" >/dev/null
check "API server restart: a LoadTest applied afterwards runs (watches resumed)" wait_completed afterapi 120s

# 7c. Workers that finish far apart, with the operator down in between:
# worker 1 is frozen from this host (SIGSTOP) while worker 0 finishes, has
# its final result kept (the results ConfigMap) and exits; the operator is
# stopped; worker 1, resumed a minute later, finishes while no operator
# runs (its overdue requests go out late, within their 2m timeout); the
# operator, started again, ends the run Succeeded on every request nginx
# served, worker 0's share from the kept merge alone.
worker_process() { # pod: the host PID of its loadgen, found by the HOSTNAME its container has
  local host environ pid
  # An Indexed Job names its pods' hosts <job>-<index>; other pods' host is the pod's name.
  host=$(kubectl -n "$NS" get pod "$1" -o jsonpath='{.spec.hostname}' 2>/dev/null)
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}; pid=${pid%/environ}
    tr '\0' '\n' <"$environ" 2>/dev/null | grep -qx "HOSTNAME=${host:-$1}" || continue
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'loadgen worker' && { echo "$pid"; return 0; }
  done
  return 1
}
worker_pod_succeeded() { # loadtest index seconds
  for _ in $(seq 1 "$(( $3 * 5 ))"); do
    [ "$(loadtest_pod "$NS" "$1" "$2" '{.items[0].status.phase}')" = Succeeded ] && return 0
    sleep 0.2
  done
  return 1
}
before=$(nginx_requests)
apply_loadtest apart "  target: {service: {name: nginx, port: 80}}
  load: {rate: 40, requests: 400, timeout: 2m}
  workers: 2
  timeouts: {run: 10m}" >/dev/null
check "apart: Running" wait_phase apart Running 120
sleep 3
late_pod=$(loadtest_pod "$NS" apart 1 '{.items[0].metadata.name}')
late_pid=$(worker_process "$late_pod")
check "apart: worker 1 ($late_pod, host pid ${late_pid:-none}) frozen mid-run" kill -STOP "${late_pid:-none}"
check "apart: worker 0 finished, its result kept, its pod exited" worker_pod_succeeded apart 0 60
stop_operator
sleep 60
check "apart: worker 1 resumed a minute later, no operator running" kill -CONT "${late_pid:-none}"
sleep 5
check "apart: the operator started again" start_operator
check "apart: Completed" wait_completed apart 120s
check "apart: Succeeded, both workers' results ($(jp apart '{.status.phase} {.status.message}'))" \
  test "$(jp apart '{.status.phase}')" = Succeeded
check "apart: 400 requests" test "$(jp apart '{.status.result.requests}')" = 400
check_nginx_agrees apart apart "$before"

# 8. A worker deleted mid-run fails the run with the reason.
apply_loadtest crash "  target: {service: {name: nginx, port: 80}}
  load: {rate: 200, duration: 20s}
  workers: 2" >/dev/null
wait_phase crash Running 120
kubectl -n "$NS" delete pod -l kubeload.dev/loadtest=crash --wait=false >/dev/null 2>&1
check "deleted worker: phase Failed" wait_phase crash Failed 60
check "deleted worker: reason WorkerFailed ($(jp crash '{.status.message}'))" test "$(jp crash '{.status.reason}')" = WorkerFailed

# 9. A LoadTest deleted mid-run takes its pods along.
apply_loadtest gone "  target: {service: {name: nginx, port: 80}}
  load: {rate: 200, duration: 30s}" >/dev/null
wait_phase gone Running 120
kubectl -n "$NS" delete lt gone --wait=false >/dev/null
check "deleted LoadTest: its worker pods are gone" \
  bash -c "for i in \$(seq 1 150); do [ -z \"\$(kubectl -n '$NS' get pods -l kubeload.dev/loadtest=gone -o name 2>/dev/null)\" ] && exit 0; sleep 0.2; done; exit 1"

# 12. Gates. The README's kubectl recipes: `kubectl wait --for=condition=
# Finished` returns for a passing run, a missed gate and a failed run alike;
# Ready only for the pass. Every state of a run, captured as the API server
# returns it, is then read by kstatus, Flux's CEL evaluator and our Argo CD
# health check (tests/gitops).
captured=$(mktemp -d /tmp/operator-e2e-gitops.XXXXXX)
capture() { kubectl -n "$NS" get lt "$1" -o json >"$captured/$2.json" 2>/dev/null; }
kubectl -n "$NS" get lt --watch -o json >"$captured/watch.stream" 2>/dev/null &
watch_pid=$!
stop_operator
apply_loadtest gitops-pass "  target: {service: {name: nginx, port: 80}}
  load: {rate: 100, duration: 4s}
  workers: 2
  thresholds: ['errorRate < 1%']" >/dev/null
sleep 1
capture gitops-pass unseen
check "gates: before the operator sees it, status.observedGeneration reads 0 (the CRD default)" \
  test "$(jp gitops-pass '{.status.observedGeneration}')" = 0
start_operator || bad "gates: operator restarted"
check "gates: a passing run: kubectl wait --for=condition=Finished returns" \
  kubectl -n "$NS" wait --for=condition=Finished lt/gitops-pass --timeout=180s
capture gitops-pass passed
check "gates: a passing run: kubectl wait --for=condition=Ready returns" \
  kubectl -n "$NS" wait --for=condition=Ready lt/gitops-pass --timeout=0s
check "gates: a passing run: Reconciling False, Stalled False ($(jp gitops-pass '{.status.conditions[*].type}'))" \
  test "$(jp gitops-pass '{.status.conditions[?(@.type=="Reconciling")].status}/{.status.conditions[?(@.type=="Stalled")].status}')" = False/False

apply_loadtest gitops-gate "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 200}
  thresholds: ['p50 < 0.001ms']" >/dev/null
check "gates: a missed gate: kubectl wait --for=condition=Finished returns" \
  kubectl -n "$NS" wait --for=condition=Finished lt/gitops-gate --timeout=180s
capture gitops-gate failed-gate
check "gates: a missed gate: kubectl wait --for=condition=Ready does not" \
  bash -c "! kubectl -n '$NS' wait --for=condition=Ready lt/gitops-gate --timeout=2s >/dev/null 2>&1"
check "gates: a missed gate: Stalled True, reason ThresholdsFailed" \
  test "$(jp gitops-gate '{.status.conditions[?(@.type=="Stalled")].status}/{.status.conditions[?(@.type=="Stalled")].reason}')" = True/ThresholdsFailed

apply_loadtest gitops-invalid "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  thresholds: ['nope.p99 < 10ms']" >/dev/null
check "gates: a failed run (invalid spec): kubectl wait --for=condition=Finished returns" \
  kubectl -n "$NS" wait --for=condition=Finished lt/gitops-invalid --timeout=60s
capture gitops-invalid invalid-spec
check "gates: a failed run (invalid spec): kubectl wait --for=condition=Ready does not" \
  bash -c "! kubectl -n '$NS' wait --for=condition=Ready lt/gitops-invalid --timeout=2s >/dev/null 2>&1"
check "gates: a failed run (worker deleted): kubectl wait --for=condition=Finished returns" \
  kubectl -n "$NS" wait --for=condition=Finished lt/crash --timeout=60s
capture crash failed-run
check "gates: a failed run (worker deleted): Stalled True, reason WorkerFailed" \
  test "$(jp crash '{.status.conditions[?(@.type=="Stalled")].status}/{.status.conditions[?(@.type=="Stalled")].reason}')" = True/WorkerFailed

# An edited spec the operator has not observed yet reads in progress
# everywhere, kubectl wait included. (Where the spec is immutable, the edit
# is refused instead, which is as good.)
stop_operator
edit=$(kubectl -n "$NS" patch lt gitops-pass --type merge -p '{"spec":{"thresholds":["errorRate < 2%"]}}' 2>&1)
if contains "$edit" "immutable"; then
  ok "gates: an edit of a finished LoadTest's spec is refused as immutable"
else
  capture gitops-pass stale-passed
  check "gates: an unobserved edit: generation $(jp gitops-pass '{.metadata.generation}') > observedGeneration $(jp gitops-pass '{.status.observedGeneration}')" \
    test "$(jp gitops-pass '{.metadata.generation}')" -gt "$(jp gitops-pass '{.status.observedGeneration}')"
  check "gates: an unobserved edit: kubectl wait --for=condition=Ready does not return" \
    bash -c "! kubectl -n '$NS' wait --for=condition=Ready lt/gitops-pass --timeout=2s >/dev/null 2>&1"
fi
start_operator || bad "gates: operator restarted after the edit"
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
watch_pid=""
# From the watch, the first version of gitops-pass in each phase before the end.
check "gates: the watch saw gitops-pass Pending, Starting and Running" python3 - "$captured" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
text = (out / "watch.stream").read_text()
decoder, at, seen = json.JSONDecoder(), 0, {}
while True:
    while at < len(text) and text[at].isspace():
        at += 1
    if at >= len(text):
        break
    obj, at = decoder.raw_decode(text, at)
    phase = obj.get("status", {}).get("phase")
    if obj["metadata"]["name"] == "gitops-pass" and phase in ("Pending", "Starting", "Running"):
        seen.setdefault(phase.lower(), obj)
for state, obj in seen.items():
    (out / f"{state}.json").write_text(json.dumps(obj, indent=2))
sys.exit(0 if len(seen) == 3 else 1)
PY
rm -f "$captured/watch.stream"
if command -v go >/dev/null 2>&1; then
  check "gates: every captured state ($(ls "$captured" | sed 's/.json//' | tr '\n' ' ')) reads right in kstatus, Flux CEL and Argo CD Lua" \
    bash -c "cd '$root/tests/gitops' && KUBELOAD_CAPTURED_LOADTESTS='$captured' go test -count=1 -run TestCapturedObjects -v ./... >/tmp/operator-e2e-gitops.log 2>&1 || { tail -40 /tmp/operator-e2e-gitops.log; exit 1; }"
else
  bad "gates: go is not installed, so the captured objects were not read by the tools' own code"
fi

# 13. The README's gate recipe, as written, run twice: `kubectl create` of
# examples/ci/loadtest.yaml (generateName) makes a new run each time, and
# the second run's wait reads the second verdict. The manifest's target,
# Service checkout:8080, is nginx for the first run and, for the second, an
# nginx that holds every request to 200/s (limit_req, queued, not refused):
# a slower target, so the second run misses its rps floor and its baseline.
# Only the durations are cut, to keep the tier short.
kubectl -n "$NS" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: slow-nginx}
data:
  default: |
    limit_req_zone $server_port zone=slow:1m rate=200r/s;
    server {
      listen 80 default_server;
      root /var/www/html;
      location / { limit_req zone=slow burst=100000; try_files $uri $uri/ =404; }
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: slow-nginx}
spec:
  selector: {matchLabels: {app: slow-nginx}}
  template:
    metadata: {labels: {app: slow-nginx}}
    spec:
      containers:
      - name: nginx
        image: localhost/kubeload/nginx:1
        imagePullPolicy: IfNotPresent
        volumeMounts: [{name: conf, mountPath: /etc/nginx/sites-enabled}]
      volumes: [{name: conf, configMap: {name: slow-nginx}}]
---
apiVersion: v1
kind: Service
metadata: {name: checkout}
spec:
  selector: {app: nginx}
  ports: [{port: 8080, targetPort: 80}]
YAML
check "recipe: the slow nginx rolled out" kubectl -n "$NS" rollout status deploy/slow-nginx --timeout=120s
recipe_manifest=$(mktemp /tmp/operator-e2e-recipe.XXXXXX.yaml)
sed -e 's/^\(    duration:\) .*/\1 5s/' -e 's/^\(    warmup:\) .*/\1 2s/' \
  "$root/examples/ci/loadtest.yaml" >"$recipe_manifest"
recipe() { # the README's three lines; prints the run's name, then "finished" and "ready"
  local run
  run=$(kubectl -n "$NS" create -f "$recipe_manifest" -o name) || return 1
  echo "$run"
  kubectl -n "$NS" wait --for=condition=Finished "$run" --timeout=20m >/dev/null && echo finished
  kubectl -n "$NS" wait --for=condition=Ready "$run" --timeout=0s >/dev/null 2>&1 && echo ready
  return 0
}
first=$(recipe)
first_run=$(head -1 <<<"$first")
check "recipe, first run ($first_run): finished and ready" test "$(tail -n +2 <<<"$first" | xargs)" = "finished ready"
check "recipe, first run: verdict Pass" test "$(kubectl -n "$NS" get "$first_run" -o jsonpath='{.status.verdict}')" = Pass
kubectl -n "$NS" patch service checkout -p '{"spec":{"selector":{"app":"slow-nginx"}}}' >/dev/null
second=$(recipe)
second_run=$(head -1 <<<"$second")
check "recipe, second run: a new object ($second_run, not $first_run)" \
  bash -c "[ -n '$second_run' ] && [ '$second_run' != '$first_run' ]"
check "recipe, second run against the slower target: finished, not ready" \
  test "$(tail -n +2 <<<"$second" | xargs)" = "finished"
check "recipe, second run: verdict Fail ($(kubectl -n "$NS" get "$second_run" -o jsonpath='{.status.message}'))" \
  test "$(kubectl -n "$NS" get "$second_run" -o jsonpath='{.status.verdict}')" = Fail
check "recipe, first run still reads Pass: each run keeps its own verdict" \
  test "$(kubectl -n "$NS" get "$first_run" -o jsonpath='{.status.verdict}')" = Pass
rm -f "$recipe_manifest"

# 10. Operator metrics.
metrics=$(curl -fs http://127.0.0.1:18481/metrics)
for metric in kubeload_loadtest_phase kubeload_loadtest_verdict kubeload_loadtest_result_requests_per_second \
  kubeload_loadtest_result_latency_seconds kubeload_operator_reconcile_total kubeload_operator_queue_depth; do
  check "operator metrics: $metric" contains "$metrics" "$metric"
done

# 11. Two replicas with --leader-elect: one leads; killed, the other takes
# the run over; stopped cleanly, it hands the Lease on at once.
stop_operator
start_replica() { # metrics-port health-port; appends the pid to replica_pids
  "$root/build/bin/kubeload-operator" --namespace "$NS" --loadgen-image "$IMAGE" --leader-elect \
    --worker-token-key-file "$token_key_file" \
    --metrics-addr "127.0.0.1:$1" --health-addr "127.0.0.1:$2" >>"/tmp/operator-e2e-replica-$1.log" 2>&1 &
  replica_pids+=("$!")
}
replica_ready() { # health-port: its caches synced (at most 10 s)
  for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$1/readyz" >/dev/null && return 0; sleep 0.2; done
  return 1
}
holder() { kubectl -n "$NS" get lease kubeload-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
wait_holder() { # pid-or-empty seconds: until the Lease names that process ("" = anyone)
  local h
  for _ in $(seq 1 "$(( $2 * 5 ))"); do
    h=$(holder)
    if [ -n "$h" ] && { [ -z "$1" ] || [ "${h##*_}" = "$1" ]; }; then return 0; fi
    sleep 0.2
  done
  return 1
}
rm -f /tmp/operator-e2e-replica-*.log
start_replica 18483 18484
start_replica 18485 18486
check "leader election: one of two replicas holds the Lease" wait_holder "" 30
leader=$(holder); leader=${leader##*_}
if [ "$leader" = "${replica_pids[0]}" ]; then follower=${replica_pids[1]}; else follower=${replica_pids[0]}; fi
check "leader election: the holder is one of the two replicas ($leader)" \
  bash -c "[ '$leader' = '${replica_pids[0]}' ] || [ '$leader' = '${replica_pids[1]}' ]"
before=$(nginx_requests)
apply_loadtest ha "  target: {service: {name: nginx, port: 80}}
  load: {rate: 300, duration: 8s}
  workers: 2" >/dev/null
check "leader election: Running under the leader" wait_phase ha Running 120
check "leader election: only one replica became leader" \
  test "$(cat /tmp/operator-e2e-replica-*.log | grep -c '"became leader"')" = 1
{ kill -KILL "$leader"; wait "$leader"; } 2>/dev/null
check "leader election: the follower takes the Lease after the leader died" wait_holder "$follower" 40
check "leader election: the follower completes the run" wait_completed ha
check_nginx_agrees "leader election" ha "$before"
check "leader election: one transition recorded" \
  test "$(kubectl -n "$NS" get lease kubeload-operator -o jsonpath='{.spec.leaseTransitions}')" -ge 1
start_replica 18487 18488 # the follower, now leading, still holds its ports
successor=${replica_pids[2]}
check "leader election: a third replica starts (its caches synced)" replica_ready 18488
sleep 3
h=$(holder)
check "leader election: a new replica waits while the Lease is held" test "${h##*_}" = "$follower"
kill -TERM "$follower"
wait "$follower" 2>/dev/null
h=$(holder)
check "leader election: a clean stop releases the Lease (holder now \"$h\")" test "${h##*_}" != "$follower"
check "leader election: the waiting replica takes over" wait_holder "$successor" 20
apply_loadtest ha2 "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 100}" >/dev/null
check "leader election: the new leader runs a new LoadTest" wait_completed ha2 120s

# 12. The leader frozen (SIGSTOP) at the run's planned end, where its final
# status write is due: another replica takes the Lease and ends the run with
# exact counts; the old leader, resumed, steps down and leaves that status as
# it is (its writes carry the resourceVersion they were computed from).
start_replica 18489 18490
standby=${replica_pids[3]}
check "frozen leader: a standby replica starts (its caches synced)" replica_ready 18490
before=$(nginx_requests)
apply_loadtest frozen "  target: {service: {name: nginx, port: 80}}
  load: {rate: 200, duration: 6s}
  workers: 2" >/dev/null
check "frozen leader: Running under $successor" wait_phase frozen Running 120
start_at=""
for _ in $(seq 1 50); do
  start_at=$(kubectl -n "$NS" get job frozen-workers -o jsonpath='{.metadata.annotations.kubeload\.dev/start-at}' 2>/dev/null)
  [ -n "$start_at" ] && break
  sleep 0.2
done
wait_ms=$(( ${start_at:-0} + 6000 - 100 - $(date +%s%3N) ))
[ "$wait_ms" -gt 0 ] && sleep "$(printf '%d.%03d' $((wait_ms / 1000)) $((wait_ms % 1000)))"
kill -STOP "$successor"
say "  froze the leader $successor $(( $(date +%s%3N) - ${start_at:-0} )) ms after the start barrier (the run lasts 6000 ms)"
check "frozen leader: the standby takes the Lease" wait_holder "$standby" 40
check "frozen leader: the standby completes the run" wait_completed frozen
final() { jp frozen '{.status.phase}/{.status.verdict}/{.status.result.requests}/{.status.completionTime}'; }
ended=$(final)
check_nginx_agrees "frozen leader" frozen "$before"
kill -CONT "$successor"
sleep 5
check "frozen leader: resumed, it steps down (\"lost leadership\" in its log)" \
  grep -q '"lost leadership"' /tmp/operator-e2e-replica-18487.log
check "frozen leader: the final status is the standby's, unchanged after the old leader resumed ($ended)" \
  test "$(final)" = "$ended"
check "frozen leader: the standby still holds the Lease" wait_holder "$standby" 1

kubectl -n "$NS" get lt 2>/dev/null
finish
