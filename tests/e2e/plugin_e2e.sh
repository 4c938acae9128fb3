#!/usr/bin/env bash
# End to end: `kubectl kubeload` (build/bin/kubectl-kubeload, found by kubectl
# on PATH) against kubeload-operator on the local Kubernetes (scripts/cluster).
# `run -f` exits 0 for a LoadTest that passes, 1 for a missed gate, 2 for a
# run that fails (its workers never start) and for a wait that times out;
# every run is a new object named after the manifest with the test label
# kept; --report writes JUnit, Markdown and HTML (checked by
# tests/reports/check_reports.py in headless Chromium); `report`, `history`
# and `compare` read the real runs, with kubectl's -o json|yaml|name|jsonpath,
# history -A and -l; a run whose LoadTest was deleted shows in history,
# compare and report from its LoadTestResult record, and the html report
# draws the test's trend from the records; and the plugin runs in a Job from the
# kubeload image with the in-cluster configuration, as the Argo CD hook and
# the Argo Rollouts AnalysisTemplate of examples/ci/ run it.
# Last line: `plugin-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
# Overridable so a run can share a cluster: its own namespaces and image tag.
NS=${KUBELOAD_E2E_NAMESPACE:-kubeload-plugin-e2e}
OTHER_NS=$NS-other
IMAGE=${KUBELOAD_E2E_IMAGE:-localhost/kubeload/kubeload:dev}
operator_pid=""
was_up=0
work="$(mktemp -d /tmp/plugin-e2e.XXXXXX)"

E2E_NAME=plugin-e2e
. "$(dirname "$0")/lib.sh"
quiet() { "$@" >/dev/null 2>&1; }
finish() {
  if [ -n "$operator_pid" ]; then kill "$operator_pid" 2>/dev/null; wait "$operator_pid" 2>/dev/null; fi
  kubectl delete namespace "$NS" "$OTHER_NS" --wait=false >/dev/null 2>&1
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
for binary in loadgen kubeload-operator kubectl-kubeload; do
  [ -x "$root/build/bin/$binary" ] || { say "FAIL build/bin/$binary is not built"; exit 1; }
done
# kubectl finds plugins on PATH: this is the binary under test.
export PATH="$root/build/bin:$PATH"
command -v kubectl >/dev/null || { say "FAIL kubectl is not on PATH"; exit 1; }

out=$(kubectl kubeload --help 2>&1)
check "kubectl finds the plugin on PATH (kubectl kubeload --help)" contains "$out" "kubectl kubeload run -f FILE"
check "kubectl plugin list shows kubectl-kubeload" contains "$(kubectl plugin list 2>&1)" "build/bin/kubectl-kubeload"
out=$(kubectl kubeload run -f "$work/missing.yaml" 2>&1); code=$?
check "a missing manifest: exit 2 naming the file ($out)" test "$code" -eq 2 -a -n "$(grep -F "$work/missing.yaml" <<<"$out")"

cluster_up "$cluster"
trap finish INT TERM
check "image $IMAGE (with kubectl-kubeload) built and imported into the nodes" \
  bash -c "'$root/cluster/kubeload-image/build.sh' '$IMAGE' >/tmp/plugin-e2e-image.log 2>&1"
check "CRD applied and established" "$root/scripts/install-crd"
kubectl delete namespace "$NS" "$OTHER_NS" --wait=true --timeout=120s >/dev/null 2>&1
kubectl create namespace "$NS" >/dev/null 2>&1
kubectl create namespace "$OTHER_NS" >/dev/null 2>&1
kubectl -n "$NS" apply -f "$root/cluster/manifests/nginx-target.yaml" >/dev/null
check "nginx rolled out behind its Service" quiet kubectl -n "$NS" rollout status deploy/nginx --timeout=120s

"$root/build/bin/kubeload-operator" --namespace "$NS" --loadgen-image "$IMAGE" \
  --metrics-addr 127.0.0.1:18491 --health-addr 127.0.0.1:18492 >/tmp/plugin-e2e-operator.log 2>&1 &
operator_pid=$!
ready=1
for _ in $(seq 1 50); do curl -fs http://127.0.0.1:18492/readyz >/dev/null 2>&1 && { ready=0; break; }; sleep 0.2; done
check "operator started" test "$ready" -eq 0

manifest() { # file name spec (indented two spaces)
  cat >"$work/$1.yaml" <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata:
  name: $2
  labels: {kubeload.dev/test: $2}
spec:
$3
YAML
}
# Runs the plugin; sets code, stdout in $out, stderr in $err.
plugin() {
  kubectl kubeload "$@" >"$work/out" 2>"$work/err"
  code=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
}
created_name() { sed -n 's#^loadtest.kubeload.dev/\([^ ]*\) created.*#\1#p' <<<"$err" | head -1; }

# 1. A passing run: exit 0, the report on stdout, reports in files.
manifest pass web "  target: {service: {name: nginx, port: 80}}
  load:
    stages: [{duration: 2s, connections: 2}, {duration: 2s, connections: 4}]
  workers: 2
  thresholds: ['errorRate < 1%', 'p99 < 5s']"
plugin run -f "$work/pass.yaml" -n "$NS" --timeout 5m \
  --report "junit=$work/pass.xml" --report "markdown=$work/pass.md" --report "html=$work/pass.html"
pass_name=$(created_name)
check "run (passing gate): exit 0 ($(tail -1 <<<"$err"))" test "$code" -eq 0
check "run: the new object is named web-<suffix> ($pass_name)" bash -c "[[ '$pass_name' =~ ^web-[a-z0-9]{5}$ ]]"
check "run: the test label is kept" test "$(kubectl -n "$NS" get lt "$pass_name" -o jsonpath='{.metadata.labels.kubeload\.dev/test}')" = web
check "run: progress on stderr" contains "$err" "workers ready"
check "run: the text report on stdout ends with the verdict" contains "$out" "Verdict: Pass"
check "run: --report junit written, no failures" bash -c "grep -q 'failures=\"0\" errors=\"0\"' '$work/pass.xml'"
check "run: --report markdown written" bash -c "grep -q '✅ Pass' '$work/pass.md'"

# 2. The same manifest again: a second run, history keeps both.
plugin run -f "$work/pass.yaml" -n "$NS" -o json
second_name=$(created_name)
check "run again: exit 0 and a second object ($second_name)" test "$code" -eq 0 -a -n "$second_name" -a "$second_name" != "$pass_name"
check "run -o json: the status as JSON" \
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["status"]["verdict"]=="Pass"' "$out"
plugin report "$second_name" -n "$NS" -o junit
printf '%s' "$out" >"$work/second.xml"
# CI tracks a check across runs by its names: both runs' JUnit names are the
# test's (label "web"), each keeps its own run name as kubeload.dev/run.
check "JUnit of two runs: the same suite and case names, the test's; each run in kubeload.dev/run" \
  python3 -c '
import sys, xml.etree.ElementTree as ET
def names(path):
    return [(e.tag, e.get("classname"), e.get("name")) for e in ET.parse(path).getroot().iter()
            if e.tag in ("testsuite", "testcase")]
def run(path):
    return {p.get("name"): p.get("value") for p in ET.parse(path).getroot().iter("property")}.get("kubeload.dev/run")
first, second = names(sys.argv[1]), names(sys.argv[2])
assert first == second and first[0] == ("testsuite", None, "web"), (first, second)
assert (run(sys.argv[1]), run(sys.argv[2])) == (sys.argv[3], sys.argv[4])
' "$work/pass.xml" "$work/second.xml" "$pass_name" "$second_name"
check "JUnit of real runs validates against tests/reports/junit.xsd" \
  xmllint --noout --schema "$root/tests/reports/junit.xsd" "$work/pass.xml" "$work/second.xml"

# 3. A missed gate: exit 1, JUnit failure with observed and limit.
manifest fail web "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 200}
  thresholds: ['p50 < 0.001ms']"
plugin run -f "$work/fail.yaml" -n "$NS" -o junit
fail_name=$(created_name)
check "run (missed gate): exit 1 ($(tail -1 <<<"$err"))" test "$code" -eq 1
check "run -o junit: the missed threshold is a failure with observed and limit" \
  contains "$out" 'type="ThresholdMissed" message="p50 &lt; 0.001ms: observed .*, limit &lt; 0.001ms"'

# 4. A run that fails (its workers never start): exit 2.
manifest broken web "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 50}
  workerTemplate: {image: localhost/kubeload/not-there:none}
  timeouts: {start: 10s}
  thresholds: ['errorRate < 1%']"
plugin run -f "$work/broken.yaml" -n "$NS" --timeout 3m --report "junit=$work/broken.xml"
broken_name=$(created_name)
check "run (failed run: workers never ready): exit 2 ($(tail -1 <<<"$err"))" test "$code" -eq 2
check "run (failed run): stderr says the run failed" contains "$err" "the run failed"
check "run (failed run): the JUnit report has an error, no green" bash -c "grep -q 'errors=\"1\"' '$work/broken.xml'"

# 5. A wait that times out: exit 2, the run goes on.
manifest slow slow "  target: {service: {name: nginx, port: 80}}
  load: {rate: 20, duration: 20s}"
plugin run -f "$work/slow.yaml" -n "$NS" --timeout 3s
check "run --timeout 3s on a 20s run: exit 2, timed out ($(grep -m1 'timed out' <<<"$err" | head -c 120))" \
  test "$code" -eq 2 -a -n "$(grep 'timed out' <<<"$err")"
plugin run -f "$work/slow.yaml" -n "$NS" --wait=false
check "run --wait=false: exit 0, prints the new name ($out)" bash -c "[ '$code' -eq 0 ] && [[ '$out' =~ ^slow-[a-z0-9]{5}$ ]]"
plugin run -f "$work/slow.yaml" -n "$NS" --wait=false -o name
check "run --wait=false -o name: loadtest.kubeload.dev/NAME at once ($out)" \
  bash -c "[ '$code' -eq 0 ] && [[ '$out' =~ ^loadtest.kubeload.dev/slow-[a-z0-9]{5}$ ]]"

# 6. report, history, compare on the real runs.
plugin report "$pass_name" -n "$NS" -o html
printf '%s\n' "$out" >"$work/report.html"
check "report -o html: a page with the latency curve" contains "$out" 'id="latency-curve-line"'
plugin report "$fail_name" -n "$NS" -o markdown
check "report -o markdown of the missed gate" contains "$out" "❌ Fail"
plugin report nope -n "$NS"
check "report of a missing LoadTest: exit 2 naming it ($err)" test "$code" -eq 2 -a -n "$(grep -F '"nope"' <<<"$err")"
plugin history web -n "$NS"
check "history web: exit 0" test "$code" -eq 0
order=$(awk 'NR > 1 {print $1}' <<<"$out" | tr '\n' ' ')
check "history web: the four runs, newest first ($order)" \
  test "$order" = "$broken_name $fail_name $second_name $pass_name "
check "history web: verdicts and rps shown" bash -c 'grep -q "$2 .*Succeeded  *Fail" <<<"$1" && grep -q "$3 .*Succeeded  *Pass  *[0-9]" <<<"$1"' _ "$out" "$fail_name" "$pass_name"
plugin history web -n "$NS" --limit 1 --format json
check "history --limit 1 --format json: the newest run's summary" \
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [r["name"] for r in d]==[sys.argv[2]]' "$out" "$broken_name"
plugin history web -n "$NS" --limit 2 -o json
check "history --limit 2 -o json: a v1 List of the two newest LoadTests, as kubectl get prints it" \
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["kind"]=="List" and d["apiVersion"]=="v1"; assert [i["metadata"]["name"] for i in d["items"]]==sys.argv[2:]; assert all(i["kind"]=="LoadTest" for i in d["items"])' \
  "$out" "$broken_name" "$fail_name"
plugin history web -n "$NS" -o name
check "history -o name: loadtest.kubeload.dev/NAME a line, newest first" test "$out" = \
  "$(printf 'loadtest.kubeload.dev/%s\n' "$broken_name" "$fail_name" "$second_name" "$pass_name")"
plugin history web -n "$NS" -o 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\n"}{end}'
check "history -o jsonpath with range: name and phase a line ($(tr '\n' ';' <<<"$out"))" test "$out" = \
  "$(printf '%s\n' "$broken_name Failed" "$fail_name Succeeded" "$second_name Succeeded" "$pass_name Succeeded")"
plugin history web -n "$NS" -o 'jsonpath={.items[*].metadata.name}'
check "history -o jsonpath: [*] results separated by spaces, no newline" \
  test "$out" = "$broken_name $fail_name $second_name $pass_name"
# Order aside: history is newest first with the name as tie-break, and
# kubectl's --sort-by has only the creationTimestamp's whole seconds, so runs
# created within one second come in either order there.
check "history -o jsonpath: the same names as kubectl get's jsonpath over the same List" test \
  "$(tr ' ' '\n' <<<"$out" | sort | xargs)" = \
  "$(kubectl -n "$NS" get lt -l kubeload.dev/test=web -o jsonpath='{.items[*].metadata.name}' | tr ' ' '\n' | sort | xargs)"
plugin report "$pass_name" -n "$NS" -o yaml
check "report -o yaml: the LoadTest as YAML" bash -c 'grep -q "^kind: LoadTest$" <<<"$1" && grep -q "^  name: $2$" <<<"$1"' _ "$out" "$pass_name"
plugin report "$pass_name" -n "$NS" -o 'jsonpath={.status.verdict}'
check "report -o jsonpath={.status.verdict}: Pass" test "$out" = Pass
plugin report "$pass_name" -n "$NS" -o 'jsonpath={..name}'
check "report -o jsonpath with recursive descent: exit 2 naming it ($err)" \
  test "$code" -eq 2 -a -n "$(grep -F 'recursive descent' <<<"$err")"

# history -A and -l: runs of one test in two namespaces, picked by a label.
# Created with kubectl (the one in $OTHER_NS has no operator watching it).
mark="e2e-$RANDOM$RANDOM"
for ns in "$NS" "$OTHER_NS"; do
  kubectl -n "$ns" create -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata:
  name: everywhere
  labels: {kubeload.dev/test: everywhere, e2e-mark: $mark}
spec:
  target: {service: {name: nginx, port: 80}}
  load: {connections: 1, requests: 1}
YAML
done
plugin history everywhere -A -l "e2e-mark=$mark"
check "history -A -l: the runs of both namespaces with a NAMESPACE column" bash -c \
  'head -1 <<<"$1" | grep -q "^NAMESPACE  *NAME" && grep -q "^$2  *everywhere " <<<"$1" && grep -q "^$3  *everywhere " <<<"$1" && [ "$(wc -l <<<"$1")" -eq 3 ]' \
  _ "$out" "$NS" "$OTHER_NS"
plugin history everywhere --all-namespaces --selector "e2e-mark in ($mark)" -o 'jsonpath={.items[*].metadata.namespace}'
check "history --all-namespaces --selector 'in (...)' -o jsonpath: both namespaces ($out)" \
  test "$(tr ' ' '\n' <<<"$out" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$NS" "$OTHER_NS" | sort | tr '\n' ' ')"
plugin history everywhere -n "$NS" -l "e2e-mark=$mark"
check "history -l without -A: only the namespace's run" bash -c '[ "$(wc -l <<<"$1")" -eq 2 ] && ! grep -q NAMESPACE <<<"$1"' _ "$out"
plugin history everywhere -A -l "e2e-mark=other-$mark"
check "history -l matching nothing: exit 0, no rows, stderr says so ($err)" \
  test "$code" -eq 0 -a -z "$(grep everywhere <<<"$out")" -a -n "$(grep -F 'no runs of test "everywhere" matching' <<<"$err")"
plugin history everywhere -A -l "e2e-mark=bad value"
check "history -l with a bad selector: exit 2 naming it ($err)" \
  test "$code" -eq 2 -a -n "$(grep -F '"bad value" is not a label value' <<<"$err")"
plugin compare "$pass_name" "$second_name" "$fail_name" -n "$NS"
check "compare: three runs side by side with changes" bash -c 'grep -q "$2 (base)" <<<"$1" && grep -q "^rps .*%)" <<<"$1" && grep -q "^p99 ms" <<<"$1"' _ "$out" "$pass_name"
plugin compare "$pass_name" nope -n "$NS"
check "compare with a missing run: exit 2" test "$code" -eq 2

# 6b. A run whose LoadTest is gone (a TTL, a GitOps tool re-creating it)
# lives on as its LoadTestResult record: history, compare and report read it.
record_name=$(kubectl -n "$NS" get lt "$second_name" -o jsonpath='{.status.resultRecord}')
check "the finished run names its record in status.resultRecord ($record_name)" \
  bash -c "[[ '$record_name' =~ ^$second_name-[0-9a-f]{8}$ ]]"
quiet kubectl -n "$NS" delete lt "$second_name" --wait=true
plugin history web -n "$NS"
check "history after its LoadTest is deleted: the run still shows, from its record, marked deleted" \
  bash -c 'grep -q "^$2 .* $3  *deleted$" <<<"$1" && grep -q "^$4 .* present$" <<<"$1"' _ "$out" "$second_name" "$record_name" "$pass_name"
check "history: the column heads name the revision, the record and the LoadTest" \
  bash -c 'head -1 <<<"$1" | grep -q "REVISION  *RECORD  *LOADTEST$"' _ "$out"
plugin history web -n "$NS" -o name
check "history -o name: the gone run as loadtestresult.kubeload.dev/RECORD, the others as loadtests" \
  bash -c 'grep -qx "loadtestresult.kubeload.dev/$2" <<<"$1" && grep -qx "loadtest.kubeload.dev/$3" <<<"$1"' _ "$out" "$record_name" "$pass_name"
plugin history web -n "$NS" --format json
check "history --format json: loadTestDeleted and record of the gone run" \
  python3 -c 'import json,sys; d={r["name"]: r for r in json.loads(sys.argv[1])}; r=d[sys.argv[2]]; assert r["loadTestDeleted"] is True and r["record"]==sys.argv[3]; assert d[sys.argv[4]]["loadTestDeleted"] is False' \
  "$out" "$second_name" "$record_name" "$pass_name"
plugin compare "$pass_name" "$second_name" -n "$NS" -o json
check "compare NAME of a deleted LoadTest: its newest record, exit 0 ($err)" \
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [r["name"] for r in d["runs"]]==sys.argv[2:] and d["runs"][1]["verdict"]=="Pass"' \
  "$out" "$pass_name" "$second_name"
plugin compare "$pass_name" "ltr/$record_name" "lt/$second_name" -n "$NS"
check "compare ltr/RECORD and lt/NAME of the deleted LoadTest: exit 0, the run twice" \
  test "$code" -eq 0 -a "$(head -1 <<<"$out" | grep -o "$second_name" | wc -l)" -eq 2
plugin compare "$pass_name" ltr/nope -n "$NS"
check "compare ltr/nope: exit 2 naming it ($err)" test "$code" -eq 2 -a -n "$(grep -F '"nope"' <<<"$err")"
plugin report "$second_name" -n "$NS"
check "report NAME of the deleted LoadTest: the text report from its record" contains "$out" "Verdict: Pass"
plugin report "ltr/$record_name" -n "$NS" -o 'jsonpath={.kind} {.loadTest.name}'
check "report ltr/RECORD -o jsonpath: the record itself ($out)" test "$out" = "LoadTestResult $second_name"
# The trend ends at the run reported on: the deleted second run's, from its
# record, shows the first run before it.
plugin report "ltr/$record_name" -n "$NS" -o html --trend 5
printf '%s\n' "$out" >"$work/trend.html"
check "report ltr/RECORD -o html --trend 5: the test's trend from the records, this run marked" \
  bash -c 'grep -q "<svg id=\"trend\"" <<<"$1" && grep -q "class=\"point p99 this-run\"" <<<"$1" && grep -q "$2" <<<"$1"' _ "$out" "$pass_name"
plugin report "$pass_name" -n "$NS" -o html --trend 0
check "report -o html --trend 0: no trend" bash -c '! grep -q "<svg id=\"trend\"" <<<"$1"' _ "$out"

# 7. In a pod: the image's kubectl-kubeload with the in-cluster configuration,
# as the Argo CD PostSync hook and the Argo Rollouts Job provider run it.
kubectl -n "$NS" create configmap gate-manifest --from-file=loadtest.yaml="$work/pass.yaml" >/dev/null
kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: kubeload-gate}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: kubeload-gate}
rules:
- apiGroups: [kubeload.dev]
  resources: [loadtests]
  verbs: [create, get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: kubeload-gate}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: kubeload-gate}
subjects: [{kind: ServiceAccount, name: kubeload-gate}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: gate}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      serviceAccountName: kubeload-gate
      containers:
      - name: gate
        image: $IMAGE
        imagePullPolicy: Never
        command: [kubectl-kubeload, run, -f, /manifests/loadtest.yaml, --timeout, 3m]
        volumeMounts: [{name: manifests, mountPath: /manifests}]
      volumes: [{name: manifests, configMap: {name: gate-manifest}}]
YAML
check "in a Job with the in-cluster configuration: the gate Job completes (exit 0)" \
  quiet kubectl -n "$NS" wait --for=condition=Complete job/gate --timeout=240s
logs=$(kubectl -n "$NS" logs job/gate 2>&1)
check "in a Job: it ran in the pod's namespace and printed the verdict" \
  bash -c "grep -q 'created in namespace $NS' <<<\"\$1\" && grep -q 'Verdict: Pass' <<<\"\$1\"" _ "$logs"

# 8. The pages in a real browser.
if python3 "$root/tests/reports/check_reports.py" --loadgen "$root/build/bin/loadgen" --out "$work/pages" \
  --html "$work/pass.html:Pass" --html "$work/report.html:Pass" --html "$work/trend.html:Pass" >"$work/reports.log" 2>&1; then
  ok "the --report html and report -o html pages render in headless Chromium ($(tail -1 "$work/reports.log"))"
else
  bad "pages in headless Chromium: $(grep FAIL "$work/reports.log" | head -5)"
fi

finish
