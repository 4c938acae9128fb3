#!/usr/bin/env bash
# End to end: the security rules of docs/security.md on the local Kubernetes
# (scripts/cluster), without the operator running (its own e2e drives runs):
#   - the chart's ValidatingAdmissionPolicy, rendered by Helm and applied:
#     denied targets, every ceiling, worker images and other-namespace
#     Services refused at `kubectl apply` with their messages; headersFrom
#     refused for a user who may not get the Secret and admitted for one who
#     may (`kubectl --as`);
#   - the NetworkPolicy rendered (the local bridge CNI does not enforce it);
#   - a real worker pod: /start without its run's token 401, with another
#     403, with it 202;
#   - the connect-time guard: a worker whose target Service's endpoints point
#     at an address the policy denies (nginx's pod, on this machine) refuses
#     the run with the rule in its termination message, and nginx sees no
#     request from it.
# No test sends a packet off this machine: denied outside addresses are only
# ever written into LoadTests that admission refuses.
# Last line: `security-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
chart="$root/charts/kubeload"
NS=kubeload-security-e2e
IMAGE=localhost/kubeload/kubeload:security-e2e
RELEASE=kubeload-sec
was_up=0

E2E_NAME=security-e2e
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../cluster/versions.env
. "$root/cluster/versions.env"
helm_bin="${KUBELOAD_CACHE:-$HOME/.cache/kubeload}/helm-v$HELM_VERSION/bin/helm"
rendered=""
finish() {
  [ -n "$rendered" ] && kubectl delete -f "$rendered" --ignore-not-found >/dev/null 2>&1
  [ -n "$rendered" ] && rm -f "$rendered"
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
for binary in loadgen kubeload-operator; do
  [ -x "$root/build/bin/$binary" ] || { say "FAIL build/bin/$binary is not built"; exit 1; }
done
if ! "$root/cluster/build/build.sh" helm >/tmp/security-e2e-helm-build.log 2>&1; then
  tail -20 /tmp/security-e2e-helm-build.log
  bad "Helm built (cluster/build/build.sh helm)"
  report
  exit $?
fi

cluster_up "$cluster"
trap finish INT TERM
check "the routing guard holds before anything runs" "$cluster" check-route
check "image $IMAGE built and imported into the nodes" \
  bash -c "'$root/cluster/kubeload-image/build.sh' '$IMAGE' >/tmp/security-e2e-image.log 2>&1"
check "CRD applied and established" "$root/scripts/install-crd"
kubectl delete namespace "$NS" --wait=true --timeout=60s >/dev/null 2>&1
kubectl create namespace "$NS" >/dev/null

# ---- the chart's policy, rendered with small ceilings, applied as the chart would
rendered="$(mktemp /tmp/security-e2e-policy.XXXXXX.yaml)"
helm_home="$(mktemp -d)"
HELM_CONFIG_HOME="$helm_home/config" HELM_CACHE_HOME="$helm_home/cache" HELM_DATA_HOME="$helm_home/data" \
  "$helm_bin" template "$RELEASE" "$chart" -n "$NS" \
  --set image.tag=security-e2e --set "networkPolicy.namespaces={$NS}" --set policy.admission=true \
  --set policy.ceilings.maxWorkers=3,policy.ceilings.maxRate=1000,policy.ceilings.maxConnections=50 \
  --set policy.ceilings.maxDuration=10m --set 'policy.schedulingOverrides={tolerations,affinity}' \
  --show-only templates/admission-policy.yaml --show-only templates/user-roles.yaml \
  --show-only templates/worker-networkpolicy.yaml >"$rendered" 2>/tmp/security-e2e-helm.log
rm -rf "$helm_home"
check "helm renders the admission policy, the roles and the workers' NetworkPolicy" \
  bash -c "grep -q 'kind: ValidatingAdmissionPolicy$' '$rendered' && grep -q 'kind: ValidatingAdmissionPolicyBinding' '$rendered' && grep -q 'loadtest-author' '$rendered' && grep -q 'kind: NetworkPolicy' '$rendered'"
check "the NetworkPolicy admits only the operator's pods to the workers' port 8080 (rendered; the local bridge CNI does not enforce NetworkPolicy)" \
  bash -c "python3 - '$rendered' <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get('kind') == 'NetworkPolicy']
assert len(docs) == 1, docs
spec = docs[0]['spec']
assert docs[0]['metadata']['namespace'] == '$NS'
assert spec['podSelector']['matchLabels']['app.kubernetes.io/name'] == 'kubeload-worker'
assert spec['policyTypes'] == ['Ingress']
(rule,) = spec['ingress']
assert [p['port'] for p in rule['ports']] == [8080]
(peer,) = rule['from']
assert peer['podSelector']['matchLabels']['app.kubernetes.io/component'] == 'operator'
PY"
check "the policy, binding and roles apply" bash -c "kubectl apply -f '$rendered' >/tmp/security-e2e-apply.log 2>&1"
say "note: the NetworkPolicy is applied but NOT enforced here: the local cluster's bridge CNI does not implement NetworkPolicy; the token check below is what guards the workers on it"

loadtest() { # name spec-json-fragment (the spec's inside, JSON)
  printf '{"apiVersion":"kubeload.dev/v1alpha1","kind":"LoadTest","metadata":{"name":"%s","namespace":"%s"},"spec":{%s}}' "$1" "$NS" "$2"
}
apply_as() { # user manifest -> prints kubectl's output
  local who=()
  [ -n "$1" ] && who=(--as "$1")
  kubectl "${who[@]}" apply --dry-run=server -f - 2>&1 <<<"$2"
}
refused_with() { # description user manifest needle
  local out
  out="$(apply_as "$2" "$3")"
  if grep -qi "denied request" <<<"$out" && grep -qF -- "$4" <<<"$out"; then ok "$1"; else bad "$1: $out"; fi
}
admitted() { # description user manifest
  local out
  out="$(apply_as "$2" "$3")"
  if grep -q "created (server dry run)\|configured (server dry run)" <<<"$out"; then ok "$1"; else bad "$1: $out"; fi
}
load='"load":{"connections":2,"duration":"5s"}'
# The policy takes a moment to be enforced after it is created.
for _ in $(seq 1 60); do
  apply_as "" "$(loadtest probe "\"target\":{\"url\":\"http://127.0.0.1:8080/\"},$load")" | grep -q "denied request" && break
  sleep 1
done

# ---- targets at admission (these addresses are only written, never sent to)
for url in http://169.254.169.254/latest/meta-data/ http://127.0.0.1:8080/ "http://[::1]/" "http://[fd00:ec2::254]/" http://0.0.0.0/; do
  refused_with "target $url refused at apply" "" "$(loadtest target "\"target\":{\"url\":\"$url\"},$load")" "is a denied target"
done
refused_with "target host metadata.google.internal refused at apply" "" \
  "$(loadtest target "\"target\":{\"url\":\"http://metadata.google.internal/\"},$load")" "targets.denyHosts"
refused_with "target host Metadata.Google.Internal. (any case, the final dot) refused at apply" "" \
  "$(loadtest target "\"target\":{\"url\":\"http://Metadata.Google.Internal./\"},$load")" "targets.denyHosts"
refused_with "a Service of another namespace refused at apply" "" \
  "$(loadtest target "\"target\":{\"service\":{\"name\":\"web\",\"namespace\":\"kube-system\"}},$load")" "allowOtherNamespaceServices"
admitted "a Service of the LoadTest's own namespace admitted" "" \
  "$(loadtest target "\"target\":{\"service\":{\"name\":\"nginx\",\"namespace\":\"$NS\"}},$load")"
admitted "a pod-range address admitted" "" "$(loadtest target "\"target\":{\"url\":\"http://10.244.1.9/\"},$load")"

# ---- ceilings
t='"target":{"service":{"name":"nginx"}}'
refused_with "workers over the ceiling refused" "" "$(loadtest c "$t,\"workers\":4,\"load\":{\"connections\":4,\"duration\":\"5s\"}")" "ceilings.maxWorkers"
refused_with "rate over the ceiling refused" "" "$(loadtest c "$t,\"load\":{\"rate\":5000,\"duration\":\"5s\"}")" "ceilings.maxRate"
refused_with "connections over the ceiling refused" "" "$(loadtest c "$t,\"load\":{\"connections\":51,\"duration\":\"5s\"}")" "ceilings.maxConnections"
refused_with "maxConnections over the ceiling refused" "" "$(loadtest c "$t,\"load\":{\"rate\":5,\"maxConnections\":51,\"duration\":\"5s\"}")" "ceilings.maxConnections"
refused_with "duration over the ceiling refused" "" "$(loadtest c "$t,\"load\":{\"connections\":2,\"duration\":\"11m\"}")" "ceilings.maxDuration"
refused_with "a stage over the ceiling refused" "" "$(loadtest c "$t,\"load\":{\"stages\":[{\"duration\":\"1h\",\"connections\":2}]}")" "admin ceiling"
refused_with "stages within the ceiling one by one but not together refused" "" "$(loadtest c "$t,\"load\":{\"stages\":[{\"duration\":\"6m\",\"connections\":2},{\"duration\":\"6m\",\"connections\":2}]}")" "planned longer"
refused_with "warm-up + duration over the ceiling refused" "" "$(loadtest c "$t,\"load\":{\"connections\":2,\"warmup\":\"1m\",\"duration\":\"10m\"}")" "planned longer"
refused_with "a run bounded by requests, its default run bound (1h) over the ceiling, refused" "" "$(loadtest c "$t,\"load\":{\"connections\":2,\"requests\":10}")" "planned longer"
admitted "a run bounded by requests with spec.timeouts.run 5m admitted" "" "$(loadtest c "$t,\"load\":{\"connections\":2,\"requests\":10},\"timeouts\":{\"run\":\"5m\"}")"
# ---- scheduling: overrides the admin allows (here tolerations and affinity), never the control plane
refused_with "a nodeSelector, which the admin does not allow, refused" "" "$(loadtest c "$t,$load,\"workerTemplate\":{\"nodeSelector\":{\"pool\":\"load\"}}")" "does not let LoadTests set it"
refused_with "a toleration of the control-plane taint refused" "" "$(loadtest c "$t,$load,\"workerTemplate\":{\"tolerations\":[{\"key\":\"node-role.kubernetes.io/control-plane\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}")" "tolerates the control-plane taint"
refused_with "a toleration of every taint refused" "" "$(loadtest c "$t,$load,\"workerTemplate\":{\"tolerations\":[{\"operator\":\"Exists\"}]}")" "or every taint"
refused_with "node affinity towards control-plane nodes refused" "" "$(loadtest c "$t,$load,\"workerTemplate\":{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"node-role.kubernetes.io/master\",\"operator\":\"Exists\"}]}]}}}}")" "node affinity selects control-plane nodes"
admitted "node affinity away from control-plane nodes and a dedicated-pool toleration admitted" "" "$(loadtest c "$t,$load,\"workerTemplate\":{\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"load\"}],\"affinity\":{\"nodeAffinity\":{\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":1,\"preference\":{\"matchExpressions\":[{\"key\":\"node-role.kubernetes.io/control-plane\",\"operator\":\"DoesNotExist\"}]}}]}}}")"
refused_with "a worker image not on the list refused" "" "$(loadtest c "$t,$load,\"workerTemplate\":{\"image\":\"docker.io/library/busybox\"}")" "allowedImages"
admitted "the default image, within every ceiling, admitted" "" "$(loadtest c "$t,\"workers\":3,\"load\":{\"connections\":50,\"duration\":\"10m\"},\"workerTemplate\":{\"image\":\"$IMAGE\"}")"

# ---- headersFrom: only Secrets the creator may read (real users via --as)
kubectl -n "$NS" create secret generic api-token --from-literal=header="Bearer e2e" >/dev/null
# Its owner's consent, which the operator checks (docs/security.md); admission
# checks the requester's own access.
kubectl -n "$NS" label secret api-token kubeload.dev/consent=headers >/dev/null
kubectl -n "$NS" create rolebinding authors --clusterrole="$RELEASE-$NS-loadtest-author" --user=alice --user=bob >/dev/null
kubectl -n "$NS" create role read-api-token --verb=get --resource=secrets --resource-name=api-token >/dev/null
kubectl -n "$NS" create rolebinding bob-reads-api-token --role=read-api-token --user=bob >/dev/null
check "alice (author) may create LoadTests but not get the Secret" bash -c \
  "[ \"\$(kubectl auth can-i create loadtests.kubeload.dev -n $NS --as alice)\" = yes ] && [ \"\$(kubectl auth can-i get secret/api-token -n $NS --as alice)\" = no ]"
with_secret="$(loadtest secret "$t,$load,\"requests\":[{\"name\":\"a\",\"headersFrom\":[{\"name\":\"Authorization\",\"secretKeyRef\":{\"name\":\"api-token\",\"key\":\"header\"}}]}]")"
refused_with "headersFrom refused for alice, who may not get the Secret" alice "$with_secret" "may not get every"
admitted "headersFrom admitted for bob, who may get it" bob "$with_secret"
admitted "alice's LoadTest without headersFrom admitted" alice "$(loadtest plain "$t,$load")"

# ---- a real worker: the run's token on /start
kubectl -n "$NS" apply -f "$root/cluster/manifests/nginx-target.yaml" >/dev/null
check "nginx rolled out" kubectl -n "$NS" rollout status deploy/nginx --timeout=120s
token="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
kubectl -n "$NS" create secret generic worker-token --from-literal=token="$token" >/dev/null
spec_json="$(loadtest w "\"target\":{\"url\":\"http://nginx.$NS.svc/\"},\"load\":{\"connections\":1,\"requests\":20}")"
nginx_ip="$(kubectl -n "$NS" get pod -l app=nginx -o jsonpath='{.items[0].status.podIP}')"
worker_pod() { # name target-url extra-args(JSON list items, may be empty)
  kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {app.kubernetes.io/name: kubeload-worker}}
spec:
  restartPolicy: Never
  containers:
  - name: loadgen
    image: $IMAGE
    imagePullPolicy: Never
    args: ["worker", "--spec-env", "KUBELOAD_SPEC", "--listen", "0.0.0.0:8080", "--target", "$2", "--linger", "20s" $3]
    terminationMessagePolicy: File
    env:
    - {name: KUBELOAD_SPEC, value: '$spec_json'}
    - name: KUBELOAD_WORKER_TOKEN
      valueFrom: {secretKeyRef: {name: worker-token, key: token}}
    readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 1}
YAML
}
worker_pod worker "http://nginx.$NS.svc/" ""
check "the worker pod turns ready" kubectl -n "$NS" wait --for=condition=Ready pod/worker --timeout=120s
worker_ip="$(kubectl -n "$NS" get pod worker -o jsonpath='{.status.podIP}')"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
check "POST /start without the token: 401" test "$(code -X POST "http://$worker_ip:8080/start")" = 401
check "POST /start with another token: 403" test "$(code -X POST -H "Authorization: Bearer x$token" "http://$worker_ip:8080/start")" = 403
check "GET /result without the token: 401" test "$(code "http://$worker_ip:8080/result")" = 401
check "/metrics stays open for the scraper: 200" test "$(code "http://$worker_ip:8080/metrics")" = 200
check "POST /start with the run's token: 202" test "$(code -X POST -H "Authorization: Bearer $token" "http://$worker_ip:8080/start")" = 202

# ---- the connect-time guard: a Service whose endpoints point at a denied address on this machine
kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: elsewhere}
spec:
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: elsewhere-1
  labels: {kubernetes.io/service-name: elsewhere}
addressType: IPv4
ports: [{port: 80, protocol: TCP}]
endpoints: [{addresses: ["$nginx_ip"]}]
YAML
elsewhere_ip="$(kubectl -n "$NS" get svc elsewhere -o jsonpath='{.spec.clusterIP}')"
nginx_lines() { kubectl -n "$NS" logs deploy/nginx 2>/dev/null | grep -c 'guarded-run' || true; }
before="$(nginx_lines)"
# The worker resolves the Service to its ClusterIP; that and nginx's pod address are denied.
ended() { # pod: waits until it ends (at most 90 s), sets phase and message (its termination message)
  phase=""
  for _ in $(seq 1 90); do
    phase="$(kubectl -n "$NS" get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)"
    case "$phase" in Succeeded|Failed) break ;; esac
    sleep 1
  done
  message="$(kubectl -n "$NS" get pod "$1" -o jsonpath='{.status.containerStatuses[0].state.terminated.message}' 2>/dev/null)"
  say "  $1 worker ($phase): $message"
}
worker_pod guarded "http://elsewhere.$NS.svc/guarded-run" ", \"--guard-targets\", \"--deny-cidr\", \"$elsewhere_ip\", \"--deny-cidr\", \"$nginx_ip/32\""
ended guarded
check "the guarded worker refuses its target at start, the rule in its termination message" \
  bash -c '[ "$0" = Failed ] && [[ "$1" == *"refused: $2 is denied by $2"* ]]' "$phase" "$message" "$elsewhere_ip"
# A denied host name (written in another case, with the final dot): refused before it resolves.
worker_pod hostguarded "http://elsewhere.$NS.svc/guarded-run" ", \"--guard-targets\", \"--deny-host\", \"Elsewhere.$NS.SVC.\""
ended hostguarded
check "a worker refuses a denied host name before resolving it, the rule in its termination message" \
  bash -c '[ "$0" = Failed ] && [[ "$1" == *"refused: host name Elsewhere.$2.SVC. is denied"* ]]' "$phase" "$message" "$NS"
sleep 1
check "nginx saw no request from the guarded workers ($(nginx_lines) after, $before before)" test "$(nginx_lines)" = "$before"

finish
