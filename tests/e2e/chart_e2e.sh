#!/usr/bin/env bash
# End to end: the Helm chart (charts/kubeload) on the local Kubernetes
# (scripts/cluster); the chart without a cluster (lint, values schema, every
# render) is tests/chart/check_chart.sh. Builds the Helm CLI
# (cluster/build/build.sh helm, cached) and the image from the root
# Dockerfile (the one users build: Release, non-root; or takes
# KUBELOAD_E2E_CHART_IMAGE, already in the nodes) and imports it into the
# nodes, then `helm install`s the operator in its own namespace, watching a
# second namespace where nginx runs: the Deployment turns Available with the
# service-account token (in-cluster config, non-root, read-only root), holds
# its Lease, creates the worker token key's Secret and keeps it across a
# restart, runs a LoadTest whose requests in status equal nginx's access
# log, and records an Event. The default admission policy refuses the API
# server by its ClusterIP and by name. `helm test` passes (a LoadTest through
# the operator, Succeeded/Pass) and fails when the LoadTest cannot run. Its
# ServiceAccount may do what the operator does and nothing else (kubectl
# auth can-i), in the namespace-scoped and in the default cluster-wide
# install. The operator's /metrics answer through the API server's service
# proxy. `helm uninstall` removes the Deployment and the RBAC objects and
# keeps the CRD and the LoadTests.
# KUBELOAD_E2E_NS_PREFIX (default "kubeload-") starts its namespaces' names.
# Last line: `chart-e2e: N passed, M failed`; SKIP (exit 0) where the machine
# cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
chart="$root/charts/kubeload"
prefix="${KUBELOAD_E2E_NS_PREFIX-kubeload-}"
NS=${prefix}chart-e2e               # the release (the operator's namespace)
TARGET_NS=${prefix}chart-e2e-target # watched: nginx and the LoadTests
WIDE_NS=${prefix}chart-e2e-wide     # a second, cluster-wide release with no pods: its RBAC
RELEASE=kubeload
WIDE_RELEASE=kubeload-wide
# The root Dockerfile's image, installed here (or one already built).
IMAGE=${KUBELOAD_E2E_CHART_IMAGE:-localhost/kubeload/kubeload:dockerfile}
IMAGE_REPOSITORY=${IMAGE%:*}
IMAGE_TAG=${IMAGE##*:}
was_up=0

E2E_NAME="chart-e2e"
. "$(dirname "$0")/lib.sh"

# shellcheck source=../../cluster/versions.env
. "$root/cluster/versions.env"
helm_bin="${KUBELOAD_CACHE:-$HOME/.cache/kubeload}/helm-v$HELM_VERSION/bin/helm"
helm_home=""
# Helm's own config, cache and data stay out of the home directory.
helm() {
  HELM_CONFIG_HOME="$helm_home/config" HELM_CACHE_HOME="$helm_home/cache" \
    HELM_DATA_HOME="$helm_home/data" "$helm_bin" "$@"
}

remove_releases() {
  helm uninstall "$RELEASE" -n "$NS" --wait --timeout 60s >/dev/null 2>&1
  helm uninstall "$WIDE_RELEASE" -n "$WIDE_NS" --wait --timeout 60s >/dev/null 2>&1
}
finish() {
  # The cluster-wide release's ClusterRole and binding outlive a namespace
  # deletion: uninstall first.
  remove_releases
  kubectl delete namespace "$NS" "$TARGET_NS" "$WIDE_NS" --wait=false >/dev/null 2>&1
  [ -z "$helm_home" ] || rm -rf "$helm_home"
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}
quiet() { "$@" >/dev/null 2>&1; }

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
for binary in loadgen kubeload-operator; do
  [ -x "$root/build/bin/$binary" ] || { say "FAIL build/bin/$binary is not built"; exit 1; }
done

# 1. Helm.
# (build.sh waits for any other cluster build first: only when Helm is missing)
if [ ! -x "$helm_bin" ] && ! "$root/cluster/build/build.sh" helm >/tmp/chart-e2e-helm-build.log 2>&1; then
  tail -20 /tmp/chart-e2e-helm-build.log
  bad "Helm $HELM_VERSION built (cluster/build/build.sh helm)"
  report
  exit $?
fi
helm_home="$(mktemp -d)"
check "Helm is v$HELM_VERSION ($helm_bin)" contains "$(helm version --short 2>&1)" "v$HELM_VERSION"
# The chart without a cluster (lint, schema, every render) is
# tests/chart/check_chart.sh, a tier of its own.

# 2. The cluster, the image, nginx.
cluster_up "$cluster"
trap finish INT TERM
# What a previous run left behind goes first.
remove_releases
kubectl delete namespace "$NS" "$TARGET_NS" "$WIDE_NS" --wait=true --timeout=120s >/dev/null 2>&1

if [ -n "${KUBELOAD_E2E_CHART_IMAGE:-}" ]; then
  say "image $IMAGE: given (KUBELOAD_E2E_CHART_IMAGE), not built"
else
  check "image $IMAGE built from the root Dockerfile and imported into the nodes" \
    bash -c "'$cluster' build-image '$IMAGE' '$root/Dockerfile' '$root' \
      --build-arg BASE=localhost/kubeload/debian:bookworm >/tmp/chart-e2e-image.log 2>&1"
fi
kubectl create namespace "$TARGET_NS" >/dev/null 2>&1
kubectl -n "$TARGET_NS" apply -f "$root/cluster/manifests/nginx-target.yaml" >/dev/null
check "nginx rolled out behind its Service" quiet kubectl -n "$TARGET_NS" rollout status deploy/nginx --timeout=120s
nginx_requests() { kubectl -n "$TARGET_NS" logs deploy/nginx 2>/dev/null | grep -c '"GET '; }

# 3. helm install: the operator in its own namespace, watching TARGET_NS.
crd_before=0
kubectl get crd loadtests.kubeload.dev >/dev/null 2>&1 && crd_before=1
if helm install "$RELEASE" "$chart" -n "$NS" --create-namespace \
  --set image.repository="$IMAGE_REPOSITORY" --set image.tag="$IMAGE_TAG" --set image.pullPolicy=Never --set watchNamespace="$TARGET_NS" --set leaderElection.enabled=true \
  >/tmp/chart-e2e-install.log 2>&1; then
  ok "helm install $RELEASE -n $NS (watchNamespace $TARGET_NS, leader election)"
else
  bad "helm install: $(tail -5 /tmp/chart-e2e-install.log)"
fi
if [ "$crd_before" -eq 1 ]; then
  # Helm leaves a CRD that exists alone; keep it current as the docs say.
  kubectl apply -f "$root/crds/" >/dev/null 2>&1
  what="was already there"
else
  what="installed by helm from crds/"
fi
check "CRD loadtests.kubeload.dev established ($what)" \
  quiet "$root/scripts/install-crd" --wait-only
check "the Deployment turns Available (ready: caches synced)" \
  quiet kubectl -n "$NS" wait --for=condition=Available "deploy/$RELEASE" --timeout=180s
logs() { kubectl -n "$NS" logs "deploy/$RELEASE" 2>/dev/null; }
check "the operator uses the in-cluster config (service-account token, KUBERNETES_SERVICE_HOST)" \
  bash -c "grep '\"starting\"' <<<\"\$1\" | grep -q 'in-cluster'" _ "$(logs)"
pod=$(kubectl -n "$NS" get pods -l "app.kubernetes.io/instance=$RELEASE" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
check "the operator runs as UID 65532, not root" \
  test "$(kubectl -n "$NS" exec "$pod" -- id -u 2>/dev/null)" = 65532
check "the operator's root filesystem is mounted read-only" \
  bash -c "kubectl -n '$NS' exec '$pod' -- cat /proc/mounts 2>/dev/null | grep -q '^[^ ]* / [^ ]* ro[, ]'"
holder_is_pod() {
  for _ in $(seq 1 100); do
    h=$(kubectl -n "$NS" get lease kubeload-operator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
    [ "${h%_*}" = "$pod" ] && return 0
    sleep 0.2
  done
  return 1
}
check "the operator pod holds the Lease $NS/kubeload-operator" holder_is_pod
# The worker token key: made by the operator (the chart renders none), and
# the same after a restart, so runs going on keep their tokens.
key_secret=$RELEASE-worker-token-key
token_key() { kubectl -n "$NS" get secret "$key_secret" -o jsonpath='{.data.key}' 2>/dev/null; }
key=$(token_key)
check "the operator created the Secret $NS/$key_secret with a key of at least 16 bytes" \
  test "$(base64 -d <<<"$key" 2>/dev/null | wc -c)" -ge 16
check "the chart did not make it (no Helm ownership on it)" \
  bash -c "! kubectl -n '$NS' get secret '$key_secret' -o jsonpath='{.metadata.annotations}' | grep -q meta.helm.sh/release-name"
kubectl -n "$NS" rollout restart "deploy/$RELEASE" >/dev/null 2>&1
check "after a restart the operator is Available again" \
  quiet kubectl -n "$NS" rollout status "deploy/$RELEASE" --timeout=180s
check "after a restart the key is the same" test "$(token_key)" = "$key"

# 4. A LoadTest through the in-cluster operator: exact counts against nginx.
before=$(nginx_requests)
kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: smoke, namespace: $TARGET_NS, labels: {kubeload.dev/test: chart-e2e}}
spec:
  target: {service: {name: nginx, port: 80}}
  load: {connections: 4, requests: 1000}
  workers: 2
  thresholds: ['errorRate < 1%', 'requests == 1000']
YAML
jp() { kubectl -n "$TARGET_NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
check "LoadTest: Completed" quiet kubectl -n "$TARGET_NS" wait --for=condition=Completed lt/smoke --timeout=180s
check "LoadTest: phase Succeeded, verdict Pass ($(jp smoke '{.status.phase}/{.status.verdict} {.status.message}'))" \
  test "$(jp smoke '{.status.phase}/{.status.verdict}')" = "Succeeded/Pass"
requests=$(jp smoke '{.status.result.requests}')
sleep 1
after=$(nginx_requests)
check "LoadTest: nginx served $((after - before)), status says $requests" \
  test "$((after - before))" -eq "${requests:-0}" -a "${requests:-0}" -eq 1000
check "LoadTest: 2 of 2 workers succeeded" test "$(jp smoke '{.status.workers.succeeded}')" = 2
check "the operator recorded an Event on the LoadTest" \
  test -n "$(kubectl -n "$TARGET_NS" get events --field-selector involvedObject.kind=LoadTest,involvedObject.name=smoke -o name 2>/dev/null)"
uid=$(kubectl -n "$TARGET_NS" get lt smoke -o jsonpath='{.metadata.uid}')
check "the run's LoadTestResult record, written under the chart's RBAC ($(jp smoke '{.status.resultRecord}'))" \
  test "$(kubectl -n "$TARGET_NS" get ltr -l "kubeload.dev/loadtest-uid=$uid" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null)" = "smoke-${uid:0:8}"
check "the run's own NetworkPolicy: owned by the LoadTest, its pods by uid, only the operator's pods on port 8080" \
  python3 - "$uid" "$NS" "$RELEASE" "$(kubectl -n "$TARGET_NS" get networkpolicy "smoke-workers-${uid:0:8}" -o json 2>&1)" <<'PY'
import json, sys
uid, ns, release, text = sys.argv[1:5]
np = json.loads(text)
assert np["metadata"]["ownerReferences"][0]["uid"] == uid, np["metadata"]
spec = np["spec"]
assert spec["podSelector"] == {"matchLabels": {"kubeload.dev/loadtest-uid": uid}}, spec
(rule,) = spec["ingress"]
assert rule["ports"] == [{"protocol": "TCP", "port": 8080}], rule
(peer,) = rule["from"]
assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": ns}, peer
assert peer["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == release, peer
PY
check "the operator was never refused by the API server (no Forbidden in its log)" \
  bash -c "! grep -qi 'forbidden' <<<\"\$1\"" _ "$(logs)"
# The default install's admission policy, on the real API server: the
# LoadTest above went through it; these are refused (server dry run: nothing
# is stored, no worker is created, the address is never sent to).
refused_by_default() { # description needle spec-json
  local out=""
  for _ in $(seq 1 30); do
    out=$(kubectl apply --dry-run=server -f - 2>&1 <<<"{\"apiVersion\":\"kubeload.dev/v1alpha1\",\"kind\":\"LoadTest\",\"metadata\":{\"name\":\"refused\",\"namespace\":\"$TARGET_NS\"},\"spec\":$3}") &&
      { sleep 1; continue; }
    break
  done
  check "$1" bash -c "grep -q 'denied request' <<<\"\$1\" && grep -qF -- \"\$2\" <<<\"\$1\"" _ "$out" "$2"
}
refused_by_default "default install: a worker image not allowed is refused at kubectl apply" "is not an allowed worker image" \
  '{"target":{"service":{"name":"nginx","port":80}},"load":{"connections":1,"requests":10},"workerTemplate":{"image":"docker.io/library/busybox"}}'
refused_by_default "default install: the cloud metadata address is refused at kubectl apply" "is a denied target" \
  '{"target":{"url":"http://169.254.169.254/"},"load":{"connections":1,"requests":10}}'
# The API server, read live by the policy (its param, the kubernetes Service).
api_ip=$(kubectl -n default get service kubernetes -o jsonpath='{.spec.clusterIP}')
refused_by_default "default install: the API server's ClusterIP $api_ip is refused at kubectl apply" "is a denied target" \
  "{\"target\":{\"url\":\"https://$api_ip/\"},\"load\":{\"connections\":1,\"requests\":10}}"
refused_by_default "default install: the API server by name (kubernetes.default.svc) is refused at kubectl apply" "is the API server" \
  '{"target":{"url":"https://Kubernetes.Default.svc./"},"load":{"connections":1,"requests":10}}'

# helm test: one LoadTest through the operator, passing only on Succeeded/Pass.
if helm test "$RELEASE" -n "$NS" --logs --timeout 5m >/tmp/chart-e2e-helm-test.log 2>&1; then
  ok "helm test $RELEASE passes"
else
  bad "helm test $RELEASE: $(tail -15 /tmp/chart-e2e-helm-test.log)"
fi
helm_test_runs() { kubectl -n "$TARGET_NS" get lt -l kubeload.dev/test=$RELEASE-helm-test \
  --sort-by=.metadata.creationTimestamp -o jsonpath='{range .items[*]}{.status.phase}/{.status.verdict} {end}' 2>/dev/null; }
check "helm test: its LoadTest in $TARGET_NS ended Succeeded/Pass ($(helm_test_runs))" \
  test "$(helm_test_runs)" = "Succeeded/Pass "
check "helm test: its pod stays for the logs, Succeeded" \
  test "$(kubectl -n "$NS" get pod "$RELEASE-helm-test" -o jsonpath='{.status.phase}' 2>/dev/null)" = Succeeded

# 5. Least privilege: what the operator does, and nothing else.
sa="system:serviceaccount:$NS:$RELEASE"
can() { kubectl auth can-i "$@" --as="$sa" 2>/dev/null; }
expect() { # yes|no can-i-args...
  local want="$1"; shift
  check "can-i $* as ${sa#system:serviceaccount:}: $want" test "$(can "$@")" = "$want"
}
expect yes create jobs.batch -n "$TARGET_NS"
expect yes delete jobs.batch -n "$TARGET_NS"
expect yes watch pods -n "$TARGET_NS"
expect yes patch loadtests.kubeload.dev --subresource=status -n "$TARGET_NS"
expect yes create events -n "$TARGET_NS"
expect yes create loadtestresults.kubeload.dev -n "$TARGET_NS"
expect yes delete loadtestresults.kubeload.dev -n "$TARGET_NS"
expect yes update leases.coordination.k8s.io/kubeload-operator -n "$NS"
expect yes create secrets -n "$TARGET_NS"
expect no list secrets -n "$TARGET_NS"
expect yes create networkpolicies.networking.k8s.io -n "$TARGET_NS"
expect no delete networkpolicies.networking.k8s.io -n "$TARGET_NS"
# The metadata of the Secrets a LoadTest names, for their owners' consent
# (the operator asks for PartialObjectMetadata; RBAC calls it get).
expect yes get secrets -n "$TARGET_NS"
expect no watch secrets -n "$TARGET_NS"
# The worker token key: that one Secret in the release namespace.
expect yes get "secrets/$RELEASE-worker-token-key" -n "$NS"
expect no update "secrets/$RELEASE-worker-token-key" -n "$NS"
expect no get secrets/other -n "$NS"
expect no list secrets -n "$NS"
expect no delete "secrets/$RELEASE-worker-token-key" -n "$NS"
expect no create pods -n "$TARGET_NS"
expect no update loadtests.kubeload.dev -n "$TARGET_NS"
# Retention (spec.ttlSecondsAfterFinished) deletes finished LoadTests; each
# run's final results are kept in a ConfigMap it owns (docs/lifecycle.md).
expect yes delete loadtests.kubeload.dev -n "$TARGET_NS"
expect yes create configmaps -n "$TARGET_NS"
expect yes patch configmaps -n "$TARGET_NS"
# status.target: the target Service's selector, then its pods (never changed).
expect yes get services -n "$TARGET_NS"
expect no update services -n "$TARGET_NS"
expect no update leases.coordination.k8s.io/other -n "$NS"
expect no create jobs.batch -n default
expect no list loadtests.kubeload.dev --all-namespaces
# Where the API server is, which no run may load (the operator reads it at
# start): the one Service and the EndpointSlices in default, read only.
expect yes get services/kubernetes -n default
expect no get services/other -n default
expect yes list endpointslices.discovery.k8s.io -n default
expect no watch endpointslices.discovery.k8s.io -n default
expect yes get configmaps/cluster-info -n kube-public
expect no get configmaps/other -n kube-public
# Where a target Service sends its traffic (read before each run's Job), in
# the watched namespace only; and the operator's own metrics Service.
expect yes list endpointslices.discovery.k8s.io -n "$TARGET_NS"
expect no list endpointslices.discovery.k8s.io -n kube-system
expect yes get "services/$RELEASE-metrics" -n "$NS"
expect no get services/other -n "$NS"

# The default install (all namespaces) gets a ClusterRole with the same rules.
if helm install "$WIDE_RELEASE" "$chart" -n "$WIDE_NS" --create-namespace --set replicaCount=0 \
  >/tmp/chart-e2e-install-wide.log 2>&1; then
  ok "helm install $WIDE_RELEASE -n $WIDE_NS (all namespaces, no replicas: its RBAC only)"
else
  bad "helm install $WIDE_RELEASE: $(tail -5 /tmp/chart-e2e-install-wide.log)"
fi
sa="system:serviceaccount:$WIDE_NS:$WIDE_RELEASE"
expect yes list loadtests.kubeload.dev --all-namespaces
expect yes create jobs.batch -n "$TARGET_NS"
expect no list secrets --all-namespaces
expect no create leases.coordination.k8s.io -n "$WIDE_NS"
helm uninstall "$WIDE_RELEASE" -n "$WIDE_NS" --wait --timeout 60s >/dev/null 2>&1
check "helm uninstall $WIDE_RELEASE removes its ClusterRole and binding" \
  bash -c "! kubectl get clusterrole '$WIDE_RELEASE-$WIDE_NS' >/dev/null 2>&1 && ! kubectl get clusterrolebinding '$WIDE_RELEASE-$WIDE_NS' >/dev/null 2>&1"

# 6. The operator's metrics through the API server's service proxy.
metrics=$(kubectl get --raw "/api/v1/namespaces/$NS/services/http:$RELEASE-metrics:metrics/proxy/metrics" 2>&1)
for metric in kubeload_operator_reconcile_total kubeload_loadtest_result_requests; do
  check "metrics via services/$RELEASE-metrics/proxy: $metric" contains "$metrics" "$metric"
done
check "metrics: the LoadTest's 1000 requests" \
  bash -c "grep '^kubeload_loadtest_result_requests{' <<<\"\$1\" | grep 'loadtest=\"smoke\"' | grep -q ' 1000$'" _ "$metrics"

# helm test fails when its LoadTest cannot pass: here the admin's ceiling
# refuses its 2 connections at admission.
helm upgrade "$RELEASE" "$chart" -n "$NS" --reuse-values --set policy.ceilings.maxConnections=1 \
  --wait --timeout 3m >/tmp/chart-e2e-upgrade.log 2>&1
rc=0
helm test "$RELEASE" -n "$NS" --logs --timeout 3m >/tmp/chart-e2e-helm-test-refused.log 2>&1 || rc=$?
check "helm test fails when its LoadTest is refused (ceilings.maxConnections=1): exit $rc" \
  bash -c "[ $rc -ne 0 ] && grep -qiE 'maxConnections|max-connections' /tmp/chart-e2e-helm-test-refused.log"

# 7. helm uninstall: the operator and its RBAC go; the CRD and LoadTests stay.
check "helm uninstall $RELEASE" bash -c "'$helm_bin' uninstall '$RELEASE' -n '$NS' --wait --timeout 90s >/tmp/chart-e2e-uninstall.log 2>&1"
check "the Deployment is gone" bash -c "! kubectl -n '$NS' get deploy '$RELEASE' >/dev/null 2>&1"
check "the Role, RoleBinding and ServiceAccount are gone (the operator's and helm test's)" \
  bash -c "! kubectl -n '$TARGET_NS' get role '$RELEASE' >/dev/null 2>&1 && ! kubectl -n '$TARGET_NS' get rolebinding '$RELEASE' >/dev/null 2>&1 && ! kubectl -n '$NS' get serviceaccount '$RELEASE' >/dev/null 2>&1 && ! kubectl -n '$TARGET_NS' get role '$RELEASE-helm-test' >/dev/null 2>&1 && ! kubectl -n '$NS' get serviceaccount '$RELEASE-helm-test' >/dev/null 2>&1"
check "the CRD and the LoadTest stay" quiet kubectl -n "$TARGET_NS" get lt smoke

finish
