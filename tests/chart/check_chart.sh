#!/usr/bin/env bash
# The Helm chart (charts/kubeload) without a cluster: Helm's own lint, its
# values schema (a misspelled or wrongly typed value fails naming it), the
# rendering (`helm template`: byte-identical every time, no lookup of the
# cluster, no random value), kubeVersion, and what each value renders to:
# RBAC by mode, the worker token key's Secret and who may read it, the
# admission policy and its API-server parameter, the worker NetworkPolicy
# peers (standing and per run), the Prometheus Operator objects and their
# labels, the `helm test` hook, NOTES. Builds the Helm CLI
# (cluster/build/build.sh helm, cached). tests/e2e/chart_e2e.sh installs the
# chart on the local cluster. Last line: `chart-check: N passed, M failed`.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
chart="$root/charts/kubeload"
NS=kubeload-system
RELEASE=kubeload
DEFAULT_IMAGE=localhost/kubeload/kubeload:dev # what the chart names by default (appVersion)

E2E_NAME="chart-check"
. "$root/tests/e2e/lib.sh"

# shellcheck source=../../cluster/versions.env
. "$root/cluster/versions.env"
helm_bin="${KUBELOAD_CACHE:-$HOME/.cache/kubeload}/helm-v$HELM_VERSION/bin/helm"
# build.sh waits for any other cluster build to end first (one lock for all
# parts): only when Helm is missing.
if [ ! -x "$helm_bin" ] && ! "$root/cluster/build/build.sh" helm >/tmp/chart-check-helm-build.log 2>&1; then
  tail -20 /tmp/chart-check-helm-build.log
  bad "Helm $HELM_VERSION built (cluster/build/build.sh helm)"
  report
  exit $?
fi
helm_home="$(mktemp -d)"
work="$(mktemp -d)"
trap 'rm -rf "$helm_home" "$work"' EXIT
# Helm's own config, cache and data stay out of the home directory.
helm() {
  HELM_CONFIG_HOME="$helm_home/config" HELM_CACHE_HOME="$helm_home/cache" \
    HELM_DATA_HOME="$helm_home/data" "$helm_bin" "$@"
}
render() { helm template "$RELEASE" "$chart" -n "$NS" "$@" 2>/dev/null; }
# render_to NAME ARGS...: renders into a file of this run, $work/NAME.yaml
# (some renders are longer than one command-line argument may be).
render_to() {
  local name=$1
  shift
  render "$@" >"$work/$name.yaml"
}
# The output of a render that must fail, and its exit status in $rc.
render_fails() { out=$(helm template "$RELEASE" "$chart" -n "$NS" "$@" 2>&1) && rc=0 || rc=$?; }
# The kinds of the rendered objects, sorted; objects in the namespace
# `default` (the operator's read of the API server's own Service there, if
# the chart grants one) are left out: they are checked on their own.
kinds() {
  python3 -c 'import sys, yaml
print(" ".join(sorted(d["kind"] for d in yaml.safe_load_all(sys.stdin)
                      if d and d.get("metadata", {}).get("namespace") != "default")))'
}
# py SCRIPT ARGS...: the script gets the documents of the rendered file
# $work/ARG.yaml as docs(i) (a list of dicts; i counts from 1) and asserts
# on them; sys.argv[i] is ARG itself.
py() {
  local script=$1
  shift
  python3 -c "
import json, sys, yaml
work = sys.argv.pop(1)
def docs(i):
    with open(work + '/' + sys.argv[i] + '.yaml') as f:
        return [d for d in yaml.safe_load_all(f) if d]
def one(i, kind, name=None):
    found = [d for d in docs(i) if d['kind'] == kind and (name is None or d['metadata']['name'] == name)]
    assert len(found) == 1, (kind, name, [d['metadata']['name'] for d in found])
    return found[0]
def args(i):
    return one(i, 'Deployment', 'kubeload')['spec']['template']['spec']['containers'][0]['args']
def flag(i, name):
    found = [a.split('=', 1)[1] for a in args(i) if a.startswith(name + '=')]
    return found[0] if found else None
$script" "$work" "$@"
}

check "Helm is v$HELM_VERSION ($helm_bin)" contains "$(helm version --short 2>&1)" "v$HELM_VERSION"

# ---- lint
monitoring="--set metrics.serviceMonitor.enabled=true,podMonitor.enabled=true,prometheusRule.enabled=true,dashboards.enabled=true"
for values in "" "--set watchNamespace=x,replicaCount=2,metrics.serviceMonitor.enabled=true" "$monitoring" \
  "--set workerTokenKey.existingSecret=my-key,monitoring.labels.release=kube-prometheus-stack,monitoring.prometheusNamespace=monitoring"; do
  # shellcheck disable=SC2086
  check "helm lint --strict ${values:-(defaults)}" \
    bash -c "'$helm_bin' lint --strict '$chart' $values >/tmp/chart-check-lint.log 2>&1 || { cat /tmp/chart-check-lint.log; false; }"
done

# ---- the values schema: what is wrong is named
schema_refuses() { # description needle helm-template-args...
  local description=$1 needle=$2
  shift 2
  render_fails "$@"
  check "$description (helm: $(grep -m1 -o "[^:]*$needle[^\"]*" <<<"$out" | head -c 160))" \
    bash -c "[ $rc -ne 0 ] && grep -q 'values don.t meet the specifications of the schema' <<<\"\$1\" && grep -q -- \"\$2\" <<<\"\$1\"" _ "$out" "$needle"
}
schema_refuses "schema: a misspelled key (replicaCunt=2) fails naming it" "replicaCunt" --set replicaCunt=2
schema_refuses "schema: a wrong type (replicaCount=two) fails naming the value" "replicaCount" --set replicaCount=two
schema_refuses "schema: a misspelled nested key (policy.ceilings.maxWorker) fails naming it" "maxWorker" \
  --set policy.ceilings.maxWorker=3
schema_refuses "schema: an enum (image.pullPolicy=Sometimes) fails naming it" "pullPolicy" --set image.pullPolicy=Sometimes
schema_refuses "schema: a minimum (concurrency=0, the operator's --concurrency is 1 to 1000) fails naming it" \
  "concurrency" --set concurrency=0
schema_refuses "schema: a duration (policy.ceilings.maxDuration=2 hours) fails naming it" "maxDuration" \
  --set "policy.ceilings.maxDuration=2 hours"
schema_refuses "schema: a scheduling override the operator does not know fails naming it" "schedulingOverrides" \
  --set 'policy.schedulingOverrides={nodeName}'
schema_refuses "schema: a NetworkPolicy peer with a misspelled field fails naming it" "namespaceSelecter" \
  --set 'networkPolicy.metricsScrapers[0].namespaceSelecter.matchLabels.a=b'
check "schema: every value of values.yaml is typed (its own defaults pass; \"\" ceilings and an int workerThreads too)" \
  bash -c "[ -n \"\$1\" ]" _ "$(render --set policy.ceilings.maxWorkers=,policy.ceilings.maxRate=,workerThreads=4,global.x=1)"

# ---- rendering is stable, and reads nothing from a cluster
for values in "" "$monitoring --set monitoring.prometheusNamespace=monitoring,workerTokenKey.existingSecret=k"; do
  # shellcheck disable=SC2086
  render_to once $values
  # shellcheck disable=SC2086
  render_to again $values
  check "helm template twice: byte-identical ($(wc -c <"$work/once.yaml") bytes; ${values:-defaults})" \
    bash -c "[ -s '$work/once.yaml' ] && cmp '$work/once.yaml' '$work/again.yaml'"
done
# Template actions only ({{ ... }}), not the comments' words.
check "no template looks anything up in the cluster or makes a random or time value" \
  bash -c "! grep -rnE '\\{\\{[^}]*\\b(lookup|rand[A-Z][A-Za-z]*|randInt|uuidv4|now|gen[A-Z][A-Za-z]*)\\b' '$chart/templates'"

# ---- kubeVersion: the admission policy's Kubernetes
render_fails --kube-version 1.30.4
check "Kubernetes 1.30: refused by Chart.yaml's kubeVersion before rendering, naming it" \
  bash -c "[ $rc -ne 0 ] && grep -q 'kubeVersion: >=1.31.0-0' <<<\"\$1\" && grep -q 'v1.30.4' <<<\"\$1\"" _ "$out"
check "Kubernetes 1.31.0: renders, with the admission policy" \
  bash -c "grep -q 'kind: ValidatingAdmissionPolicy$' <<<\"\$1\"" _ "$(render --kube-version 1.31.0)"

# ---- what the defaults render
render_to defaults --skip-tests
rendered=$(cat "$work/defaults.yaml")
check "helm template renders (default: $(kinds <<<"$rendered"))" \
  test "$(kinds <<<"$rendered")" = "ClusterRole ClusterRole ClusterRole ClusterRoleBinding ConfigMap Deployment Deployment Role Role Role Role RoleBinding RoleBinding RoleBinding RoleBinding Service Service ServiceAccount ServiceAccount ValidatingAdmissionPolicy ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding ValidatingAdmissionPolicyBinding"
check "policy.admission=false: no admission policy" \
  bash -c "! grep -q 'kind: ValidatingAdmission' <<<\"\$1\"" _ "$(render --set policy.admission=false)"
check "the admission policy denies the API server by the live kubernetes Service (param), not an address looked up at install" \
  py "
policy = one(1, 'ValidatingAdmissionPolicy', 'kubeload-kubeload-system-loadtests')
binding = one(1, 'ValidatingAdmissionPolicyBinding', 'kubeload-kubeload-system-loadtests')
assert policy['spec']['paramKind'] == {'apiVersion': 'v1', 'kind': 'Service'}, policy['spec'].get('paramKind')
assert binding['spec']['paramRef'] == {'name': 'kubernetes', 'namespace': 'default', 'parameterNotFoundAction': 'Deny'}, binding['spec']
text = json.dumps(policy)
assert 'params.spec.clusterIPs' in text and 'variables.apiServerAddresses.exists' in text
assert 'kubernetes.default.svc' in text and 'params.metadata.name' in text
" defaults
render_to no-secret-rule --skip-tests --set policy.headersFromNeedsSecretAccess=false
check "a LoadTestSchedule's template: headersFrom only with its author's own Secret access (its runs are created by the operator); none without headersFromNeedsSecretAccess" \
  py "
policy = one(1, 'ValidatingAdmissionPolicy', 'kubeload-kubeload-system-loadtestschedules')
binding = one(1, 'ValidatingAdmissionPolicyBinding', 'kubeload-kubeload-system-loadtestschedules')
assert policy['spec']['matchConstraints']['resourceRules'][0]['resources'] == ['loadtestschedules'], policy['spec']
assert binding['spec']['policyName'] == policy['metadata']['name'], binding['spec']
text = json.dumps(policy)
assert 'object.spec.template.spec.requests' in text and \"check('get')\" in text, text
assert not [d for d in docs(2) if d['kind'] == 'ValidatingAdmissionPolicy' and d['metadata']['name'].endswith('schedules')]
" defaults no-secret-rule
check "the worker token key: no Secret in the chart; --worker-token-key-secret names <fullname>-worker-token-key; a Role may create Secrets and get only that one" \
  py "
assert not [d for d in docs(1) if d['kind'] == 'Secret']
assert flag(1, '--worker-token-key-secret') == 'kubeload-worker-token-key', args(1)
assert not [a for a in args(1) if a.startswith('--worker-token-key-file')]
pod = one(1, 'Deployment', 'kubeload')['spec']['template']['spec']
assert [v['name'] for v in pod['volumes']] == ['tmp'], pod['volumes']
role = one(1, 'Role', 'kubeload-worker-token-key')
assert role['metadata']['namespace'] == sys.argv[2]
assert role['rules'] == [
    {'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['create']},
    {'apiGroups': [''], 'resources': ['secrets'], 'resourceNames': ['kubeload-worker-token-key'], 'verbs': ['get']},
], role['rules']
binding = one(1, 'RoleBinding', 'kubeload-worker-token-key')
assert binding['subjects'] == [{'kind': 'ServiceAccount', 'name': 'kubeload', 'namespace': sys.argv[2]}], binding
" defaults "$NS"
check "Secrets a LoadTest names: the operator may get them (their metadata, for the owner's consent) and create each run's token Secret, never list or watch them" \
  py "
rules = one(1, 'ClusterRole', 'kubeload-' + sys.argv[2])['rules']
secrets = [r for r in rules if 'secrets' in r['resources']]
assert secrets == [{'apiGroups': [''], 'resources': ['secrets'], 'verbs': ['get', 'create']}], secrets
" defaults "$NS"
render_to existing --set workerTokenKey.existingSecret=team-token-key
check "workerTokenKey.existingSecret: the operator reads that Secret, and may only get it" \
  py "
assert flag(1, '--worker-token-key-secret') == 'team-token-key', args(1)
role = one(1, 'Role', 'kubeload-worker-token-key')
assert role['rules'] == [{'apiGroups': [''], 'resources': ['secrets'], 'resourceNames': ['team-token-key'], 'verbs': ['get']}], role['rules']
" existing
check "rbac.create=false: no Role for the key either (tests.enabled=false: none for helm test)" \
  bash -c "! grep -q '^kind: Role' <<<\"\$1\"" _ "$(render --set rbac.create=false,roles.create=false,tests.enabled=false)"
check "default: one replica, no leader election, Recreate (no two operators at once)" \
  bash -c "grep -q 'replicas: 1' <<<\"\$1\" && ! grep -q -- --leader-elect <<<\"\$1\" && grep -q 'type: Recreate' <<<\"\$1\"" _ "$rendered"
check "default: command kubeload-operator, --loadgen-image the same image" \
  bash -c "grep -q 'command: \[/usr/local/bin/kubeload-operator\]' <<<\"\$1\" && grep -q -- '--loadgen-image=$DEFAULT_IMAGE' <<<\"\$1\"" _ "$rendered"
check "policy.allowedImages: --allowed-worker-images, only when set" \
  bash -c "! grep -q -- '--allowed-worker-images' <<<\"\$1\" && grep -q -- '--allowed-worker-images=registry.shop/loadgen:1,registry.shop/loadgen:2$' <<<\"\$2\"" _ \
  "$rendered" "$(render --set 'policy.allowedImages={registry.shop/loadgen:1,registry.shop/loadgen:2}')"
# (roles.create=false: the author and viewer ClusterRoles for people are not the operator's)
render_to one-ns --set watchNamespace=team-a --set roles.create=false --skip-tests
check "watchNamespace: --namespace, the operator's Role and RoleBinding in it (and helm test's), the key's in the release namespace, no ClusterRole" \
  py "
assert flag(1, '--namespace') == 'team-a', args(1)
def where(kind):
    return sorted((d['metadata']['namespace'], d['metadata']['name']) for d in docs(1) if d['kind'] == kind)
for kind in ('Role', 'RoleBinding'):
    found = [x for x in where(kind) if x[0] not in ('default', 'kube-public')]
    assert found == sorted([('team-a', 'kubeload'), ('team-a', 'kubeload-helm-test'), (sys.argv[2], 'kubeload-self'), (sys.argv[2], 'kubeload-worker-token-key')]), found
assert not where('ClusterRole') and not where('ClusterRoleBinding')
" one-ns "$NS"
render_to cluster-ranges --skip-tests --set 'policy.targets.clusterCidrs={10.244.0.0/16,10.96.0.0/12}' \
  --set 'networkPolicy.egressDns=null' --set 'env[0].name=EXTRA' --set 'env[0].value=x'
check "where a run's traffic goes: the operator may read the target's EndpointSlices and kube-public/cluster-info; it knows its own pod (POD_IP) and metrics Service, the cluster domain, the cluster ranges when set, and limits the workers' egress to kube-dns by default" \
  py "
rules = one(1, 'ClusterRole', 'kubeload-' + sys.argv[2])['rules']
assert {'apiGroups': ['discovery.k8s.io'], 'resources': ['endpointslices'], 'verbs': ['list']} in rules, rules
info = one(1, 'Role', 'kubeload-' + sys.argv[2] + '-cluster-info')
assert info['metadata']['namespace'] == 'kube-public'
assert info['rules'] == [{'apiGroups': [''], 'resources': ['configmaps'], 'resourceNames': ['cluster-info'], 'verbs': ['get']}], info
container = one(1, 'Deployment', 'kubeload')['spec']['template']['spec']['containers'][0]
assert {'name': 'POD_IP', 'valueFrom': {'fieldRef': {'fieldPath': 'status.podIP'}}} in container['env'], container['env']
assert flag(1, '--deny-service') == sys.argv[2] + '/kubeload-metrics', args(1)
assert flag(1, '--cluster-domain') == 'cluster.local', args(1)
assert not [a for a in args(1) if a.startswith('--cluster-cidr')], args(1)
assert json.loads(flag(1, '--worker-egress-dns-to')) == [{'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'kube-system'}}, 'podSelector': {'matchLabels': {'k8s-app': 'kube-dns'}}}], args(1)
assert [a for a in args(3) if a.startswith('--cluster-cidr')] == ['--cluster-cidr=10.244.0.0/16', '--cluster-cidr=10.96.0.0/12'], args(3)
assert not [a for a in args(3) if a.startswith('--worker-egress-dns-to')], args(3)
assert {'name': 'EXTRA', 'value': 'x'} in one(3, 'Deployment', 'kubeload')['spec']['template']['spec']['containers'][0]['env']
" defaults "$NS" cluster-ranges
two=$(render --set replicaCount=2)
check "two replicas: --leader-elect, the Lease in the release namespace, a Role for it" \
  bash -c "grep -q -- '--leader-elect$' <<<\"\$1\" && grep -q -- '--leader-election-namespace=$NS' <<<\"\$1\" && grep -q 'name: $RELEASE-leader-election' <<<\"\$1\" && ! grep -q 'type: Recreate' <<<\"\$1\"" _ "$two"
check "prometheus.url: --prometheus-url and --prometheus-scrape-interval, only when set" \
  bash -c "! grep -q -- '--prometheus-url' <<<\"\$1\" && grep -q -- '--prometheus-url=http://prometheus-operated.monitoring.svc:9090$' <<<\"\$2\" && grep -q -- '--prometheus-scrape-interval=15s$' <<<\"\$2\"" _ \
  "$rendered" "$(render --set prometheus.url=http://prometheus-operated.monitoring.svc:9090,prometheus.scrapeInterval=15s)"

# ---- who may reach the workers
render_to scrapers --set 'networkPolicy.metricsScrapers[0].namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=scrapers' \
  --set monitoring.prometheusNamespace=monitoring
render_to not-per-run --set networkPolicy.perRun=false
render_to standing --set watchNamespace=team-a,monitoring.prometheusNamespace=monitoring
check "networkPolicy.perRun (default): --worker-network-policy-from names the operator's pods, then the scrapers, then monitoring.prometheusNamespace; off: absent" \
  py "
found = json.loads(flag(1, '--worker-network-policy-from'))
ns = sys.argv[3]
assert found[0]['namespaceSelector'] == {'matchLabels': {'kubernetes.io/metadata.name': ns}}, found
assert found[0]['podSelector']['matchLabels']['app.kubernetes.io/component'] == 'operator', found
assert found[1] == {'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'scrapers'}}}, found
assert found[2] == {'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'monitoring'}}}, found
assert len(found) == 3, found
assert flag(2, '--worker-network-policy-from') is None
assert len(json.loads(flag(4, '--worker-network-policy-from'))) == 1
" scrapers not-per-run "$NS" defaults
check "monitoring.prometheusNamespace: the standing worker NetworkPolicy admits the same peers as the per-run one" \
  py "
policy = one(1, 'NetworkPolicy')
(rule,) = policy['spec']['ingress']
assert rule['from'] == json.loads(flag(1, '--worker-network-policy-from')), rule
assert rule['from'][-1] == {'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'monitoring'}}}, rule
assert rule['ports'] == [{'protocol': 'TCP', 'port': 8080}], rule
" standing

# ---- the Prometheus Operator objects
check "ServiceMonitor only when asked for" \
  bash -c "! grep -q 'kind: ServiceMonitor' <<<\"\$1\" && grep -q 'kind: ServiceMonitor' <<<\"\$2\"" _ \
  "$rendered" "$(render --set metrics.serviceMonitor.enabled=true)"
# What enabling them adds to the default render, and nothing else.
added=$(comm -13 <(render | grep '^kind: ' | sort) <(render $monitoring | grep '^kind: ' | sort) |
  cut -d' ' -f2 | paste -sd' ')
check "ServiceMonitor, PodMonitor, PrometheusRule and dashboard ConfigMaps only when enabled (added: $added)" \
  bash -c "! grep -q -e 'kind: PodMonitor' -e 'kind: PrometheusRule' -e 'grafana_dashboard' <<<\"\$1\" && test \"\$2\" = 'ConfigMap ConfigMap PodMonitor PrometheusRule ServiceMonitor'" _ \
  "$rendered" "$added"
check "the PrometheusRule is files/prometheus-rules.yaml (promtool check rules), the dashboard ConfigMaps dashboards/*.json verbatim with the sidecar label and folder" \
  bash -c "'$helm_bin' template '$RELEASE' '$chart' -n '$NS' $monitoring --skip-tests | python3 '$root/tests/e2e/chart_monitoring_check.py' '$root'"
runbooks="https://docs.example.internal/kubeload/runbooks.md"
render_to runbooks $monitoring --set monitoring.runbookBaseURL=$runbooks/
check "monitoring.runbookBaseURL is where every alert's runbook_url points (4 alerts)" \
  bash -c "test \"\$(grep -c 'runbook_url: $runbooks#kubeload' '$work/runbooks.yaml')\" = 4 && ! grep -q 'github.com/kubeload' '$work/runbooks.yaml'"
render_to labels $monitoring --set monitoring.labels.release=kube-prometheus-stack,podMonitor.labels.release=mine,metrics.serviceMonitor.labels.team=a
check "monitoring.labels: on the ServiceMonitor, PodMonitor and PrometheusRule; an object's own labels win; the chart's stay" \
  py "
for kind in ('ServiceMonitor', 'PodMonitor', 'PrometheusRule'):
    labels = one(1, kind)['metadata']['labels']
    assert labels['release'] == ('mine' if kind == 'PodMonitor' else 'kube-prometheus-stack'), (kind, labels)
    assert labels['app.kubernetes.io/part-of'] == 'kubeload', (kind, labels)
    assert labels.get('team') == ('a' if kind == 'ServiceMonitor' else None), (kind, labels)
" labels

# ---- NOTES. Helm renders NOTES.txt only on install, which asks the cluster
# even with --dry-run=client; here a copy of the chart renders it with the
# same values and helpers into a ConfigMap, without a cluster.
cp -rL "$chart" "$work/notes-chart"
mv "$work/notes-chart/templates/NOTES.txt" "$work/notes-chart/NOTES.txt"
cat >"$work/notes-chart/templates/zz-notes.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: notes}
data:
  notes: {{ tpl (.Files.Get "NOTES.txt") . | toJson }}
YAML
notes() {
  helm template "$RELEASE" "$work/notes-chart" -n "$NS" --show-only templates/zz-notes.yaml "$@" 2>/dev/null |
    python3 -c 'import sys, yaml; print(yaml.safe_load(sys.stdin)["data"]["notes"])'
}
check "NOTES: the kube-prometheus-stack one-liner while no monitor is on" \
  bash -c "grep -q 'monitoring.labels.release=kube-prometheus-stack,monitoring.prometheusNamespace=monitoring' <<<\"\$1\" && ! grep -q WARNING <<<\"\$1\"" _ "$(notes)"
check "NOTES: warns when the PodMonitor is on and no scraper may reach the workers" \
  contains "$(notes --set podMonitor.enabled=true)" "WARNING: podMonitor is on"
check "NOTES: no warning with monitoring.prometheusNamespace (the documented one-liner)" \
  bash -c "n=\$1; grep -q 'helm test' <<<\"\$n\" && ! grep -q -e WARNING -e 'no labels of' -e 'helm upgrade' <<<\"\$n\"" _ \
  "$(notes --set metrics.serviceMonitor.enabled=true,podMonitor.enabled=true,prometheusRule.enabled=true \
    --set monitoring.labels.release=kube-prometheus-stack,monitoring.prometheusNamespace=monitoring)"
# Every `kubectl wait` a user copies has a timeout (kubectl's default, 30s,
# is shorter than the runs they wait for).
for file in "$chart/templates/NOTES.txt" "$root/docs/deploy.md" "$root/README.md"; do
  check "every kubectl wait in ${file#"$root"/} has --timeout" \
    bash -c "! grep -nE '^ *(\\$ *)?kubectl .*\\bwait ' '$file' | grep -v -- '--timeout='"
done

# ---- helm test
render_to tests --set watchNamespace=team-a --show-only templates/helm-test.yaml --show-only templates/tests/loadtest.yaml
check "helm test: a test hook pod runs kubectl-kubeload run on a LoadTest in the watched namespace, against an idle pod of the same image there (never the operator), with RBAC to create and follow LoadTests there only" \
  py "
pod = one(1, 'Pod')
assert pod['metadata']['annotations']['helm.sh/hook'] == 'test', pod['metadata']
container = pod['spec']['containers'][0]
assert container['image'] == sys.argv[2], container
assert container['command'][:4] == ['/usr/local/bin/kubectl-kubeload', 'run', '-f', '/manifests/loadtest.yaml'], container
assert pod['spec']['restartPolicy'] == 'Never'
sa = pod['spec']['serviceAccountName']
# The pod is the one hook: the rest is installed (and uninstalled) with the release.
for kind in ('ServiceAccount', 'Role', 'RoleBinding', 'Service', 'ConfigMap', 'Deployment'):
    assert 'helm.sh/hook' not in one(1, kind)['metadata'].get('annotations', {}), kind
role = one(1, 'Role')
assert role['metadata']['namespace'] == 'team-a'
assert role['rules'] == [{'apiGroups': ['kubeload.dev'], 'resources': ['loadtests'], 'verbs': ['create', 'get', 'list', 'watch']}]
assert one(1, 'RoleBinding')['subjects'][0]['name'] == sa
loadtest = yaml.safe_load(one(1, 'ConfigMap')['data']['loadtest.yaml'])
assert loadtest['metadata']['namespace'] == 'team-a', loadtest
service = one(1, 'Service')
target = one(1, 'Deployment')
assert service['metadata']['namespace'] == target['metadata']['namespace'] == 'team-a', service
assert loadtest['spec']['target'] == {'service': {'name': service['metadata']['name'], 'port': 8080}}, loadtest
assert loadtest['spec']['thresholds'] == ['failures == 0', 'requests == 100'], loadtest
# The target Service selects the idle target pod: not the test pod, not the operator's.
selector = service['spec']['selector'].items()
assert selector <= target['spec']['template']['metadata']['labels'].items()
assert not selector <= pod['metadata']['labels'].items(), pod['metadata']['labels']
assert not selector <= one(4, 'Deployment', 'kubeload')['spec']['template']['metadata']['labels'].items()
assert target['spec']['template']['spec']['containers'][0]['image'] == sys.argv[2]
" tests "$DEFAULT_IMAGE" "$NS" defaults
check "tests.enabled=false: no helm test objects" \
  bash -c "! grep -q 'helm-test' <<<\"\$1\"" _ "$(render --set tests.enabled=false)"
check "helm test: the LoadTest manifest is a valid LoadTest (the CRD's schema)" \
  python3 - "$root/crds/kubeload.dev_loadtests.yaml" "$work/tests.yaml" <<'PY'
import sys, yaml, jsonschema
crd = yaml.safe_load(open(sys.argv[1]))
schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
docs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d and d["kind"] == "ConfigMap"]
loadtest = yaml.safe_load(docs[0]["data"]["loadtest.yaml"])
def strip(node):  # keep the JSON Schema keywords jsonschema knows
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if not k.startswith("x-kubernetes")}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node
# The CRD's schema is OpenAPI 3.0's JSON Schema: draft 4 (exclusiveMinimum: true).
jsonschema.Draft4Validator(strip(schema)).validate(loadtest)
assert len(loadtest["metadata"]["name"]) <= 40
PY

# ---- run records: written by the operator only
render_to history --skip-tests --set policy.history.keep=20 --set policy.history.maxAge=720h \
  --set 'policy.history.namespaces.team-a.keep=200' --set 'policy.history.namespaces.team-a.maxAgeLimit=2160h'
check "history: the policy's flags, one --history-namespace per namespace; the operator writes LoadTestResults, people read and delete them, never create or change one" \
  py "
assert flag(1, '--history-keep') == '20' and flag(1, '--history-max-keep') == '1000', args(1)
assert flag(1, '--history-max-age') == '720h', args(1)
assert flag(1, '--history-namespace') == 'team-a:keep=200,maxAgeLimit=2160h', args(1)
rules = one(1, 'ClusterRole', 'kubeload-' + sys.argv[2])['rules']
assert {'apiGroups': ['kubeload.dev'], 'resources': ['loadtestresults'], 'verbs': ['get', 'list', 'create', 'patch', 'delete']} in rules, rules
for role in ('loadtest-author', 'loadtest-viewer'):
    for rule in one(1, 'ClusterRole', 'kubeload-' + sys.argv[2] + '-' + role)['rules']:
        if 'loadtestresults' in rule['resources']:
            assert not set(rule['verbs']) & {'create', 'update', 'patch'}, (role, rule)
" history "$NS"

# ---- the CRDs
for file in kubeload.dev_loadtests.yaml kubeload.dev_loadtestresults.yaml kubeload.dev_loadtestschedules.yaml; do
  check "charts/kubeload/crds/ holds the very file crds/$file" \
    cmp "$chart/crds/$file" "$root/crds/$file"
  crd=$(helm template "$RELEASE" "$chart" --include-crds 2>/dev/null |
    awk -v source="# Source: kubeload/crds/$file" '$0 == source {on = 1; next} on && /^---$/ {exit} on')
  check "the CRD Helm renders is crds/$file" \
    test "$crd" = "$(cat "$root/crds/$file")"
done

report
