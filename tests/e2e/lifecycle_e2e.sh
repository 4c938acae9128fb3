#!/usr/bin/env bash
# End to end: the run lifecycle (docs/lifecycle.md) on the local Kubernetes
# (scripts/cluster), with kubeload-operator on the host. Every run ends, on
# its own data: a LoadTest deleted and applied again under the same name
# while the old Job is still being garbage-collected runs fresh; a Job the
# API server refuses, a worker image that does not exist, one the operator
# does not allow and a worker that cannot be scheduled end Failed with the
# reason (and the kept Job's pods go); the spec cannot be edited under a run; a worker evicted mid-run,
# through the Eviction API or by its node's kubelet (over its ephemeral-storage
# limit), fails the run and its kept result says it was interrupted; a
# worker the operator cannot reach fails the run WorkersUnreachable. The
# operator runs with no worker token key flag, as the README shows: it keeps
# its key in the Secret kubeload-worker-token-key, so killed mid-run and
# started again it still drives the run to Succeeded; it denies the API
# server's Service and endpoint addresses it reads at start. Where the
# packets go: a denied pod behind an allowed Service, another namespace's
# Service by url and a literal cluster IP under --cluster-cidr are refused.
# Last line: `lifecycle-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-lifecycle-e2e
IMAGE=localhost/kubeload/kubeload:dev
operator_pid=""
was_up=0

E2E_NAME=lifecycle-e2e
. "$(dirname "$0")/lib.sh"
firewalled=""  # the iptables rule of section 7, removed however the script ends
finish() {
  [ -n "$firewalled" ] && iptables -D OUTPUT $firewalled 2>/dev/null
  [ -n "$operator_pid" ] && { kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}

[ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
for binary in loadgen kubeload-operator; do
  [ -x "$root/build/bin/$binary" ] || { say "FAIL build/bin/$binary is not built"; exit 1; }
done

cluster_up "$cluster"
trap finish INT TERM
check "image $IMAGE built and imported into the nodes" \
  bash -c "'$root/cluster/kubeload-image/build.sh' '$IMAGE' >/tmp/lifecycle-e2e-image.log 2>&1"
check "CRD applied and established" "$root/scripts/install-crd"
kubectl create namespace "$NS" >/dev/null 2>&1
kubectl -n "$NS" apply -f "$root/cluster/manifests/nginx-target.yaml" >/dev/null
check "nginx rolled out behind its Service" kubectl -n "$NS" rollout status deploy/nginx --timeout=120s

: >/tmp/lifecycle-e2e-operator.log
# No --worker-token-key-file or --worker-token-key-secret: the default Secret.
start_operator() { # [extra flags]
  "$root/build/bin/kubeload-operator" --namespace "$NS" --loadgen-image "$IMAGE" \
    --metrics-addr 127.0.0.1:18491 --health-addr 127.0.0.1:18492 --worker-unreachable-timeout 20s \
    --allowed-worker-images localhost/kubeload/does-not-exist:none "$@" \
    >>/tmp/lifecycle-e2e-operator.log 2>&1 &
  operator_pid=$!
  for _ in $(seq 1 50); do curl -fs http://127.0.0.1:18492/readyz >/dev/null && return 0; sleep 0.2; done
  return 1
}
check "operator ready" start_operator

apply_loadtest() { # name spec-yaml (indented two spaces)
  kubectl apply -f - <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: $1, namespace: $NS, labels: {kubeload.dev/test: lifecycle}}
spec:
$2
YAML
}
jp() { kubectl -n "$NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
wait_phase() { # name phase timeout-seconds
  for _ in $(seq 1 "$(( $3 * 5 ))"); do [ "$(jp "$1" '{.status.phase}')" = "$2" ] && return 0; sleep 0.2; done
  return 1
}
no_running_pods() { # loadtest seconds: no worker pod of it is Pending or Running
  for _ in $(seq 1 "$(( $2 * 5 ))"); do
    [ -z "$(kubectl -n "$NS" get pods -l "kubeload.dev/loadtest=$1" --field-selector=status.phase!=Succeeded,status.phase!=Failed -o name 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}
event_reasons() { kubectl -n "$NS" get events --field-selector "involvedObject.name=$1" -o jsonpath='{.items[*].reason}' 2>/dev/null; }

# 1. Recreated by name while the old run's Job is still there: the new run
# is fresh, its numbers its own.
apply_loadtest again "  target: {service: {name: nginx, port: 80}}
  load: {rate: 100, duration: 30s}
  workers: 2" >/dev/null
check "recreate: the first run is Running" wait_phase again Running 120
old_uid=$(jp again '{.metadata.uid}')
kubectl -n "$NS" delete lt again --wait=false >/dev/null
apply_loadtest again "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 300}
  workers: 2" >/dev/null
new_uid=$(jp again '{.metadata.uid}')
check "recreate: a new object ($old_uid -> $new_uid)" test -n "$new_uid" -a "$new_uid" != "$old_uid"
check "recreate: the new run ends Succeeded ($(jp again '{.status.reason}: {.status.message}'))" wait_phase again Succeeded 180
check "recreate: exactly its own 300 requests ($(jp again '{.status.result.requests}'))" \
  test "$(jp again '{.status.result.requests}')" = 300
check "recreate: the kept results are this run's" \
  bash -c "kubectl -n '$NS' get configmap -l 'kubeload.dev/loadtest-uid=$new_uid' -o jsonpath='{.items[0].data}' | grep -q '$new_uid'"

# 2. A Job the API server refuses: Failed with its message and an Event.
apply_loadtest rejected "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  workerTemplate: {resources: {limits: {cpu: two}}}" >/dev/null
check "rejected Job: Failed ($(jp rejected '{.status.reason}: {.status.message}'))" wait_phase rejected Failed 60
check "rejected Job: reason JobRejected" test "$(jp rejected '{.status.reason}')" = JobRejected
check "rejected Job: the API server's message says what is wrong" \
  bash -c "kubectl -n '$NS' get lt rejected -o jsonpath='{.status.message}' | grep -Eq 'quantities|two|cpu'"
check "rejected Job: a JobRejected Event ($(event_reasons rejected))" contains "$(event_reasons rejected)" JobRejected
sleep 3
check "rejected Job: not retried (still Failed, no Job)" \
  bash -c "[ \"\$(kubectl -n '$NS' get lt rejected -o jsonpath='{.status.phase}')\" = Failed ] && ! kubectl -n '$NS' get job rejected-workers >/dev/null 2>&1"

# 3. A worker image that does not exist: WorkersNotReady by timeouts.start,
# and the kept Job is ended so no pod waits on.
apply_loadtest noimage "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  workerTemplate: {image: localhost/kubeload/does-not-exist:none}
  timeouts: {start: 20s}" >/dev/null
check "missing image: Failed" wait_phase noimage Failed 90
check "missing image: WorkersNotReady naming the pull error ($(jp noimage '{.status.message}'))" \
  bash -c "[ \"\$(kubectl -n '$NS' get lt noimage -o jsonpath='{.status.reason}')\" = WorkersNotReady ] && kubectl -n '$NS' get lt noimage -o jsonpath='{.status.message}' | grep -Eq 'ErrImagePull|ImagePullBackOff|InvalidImageName'"
check "missing image: no worker pod left waiting" no_running_pods noimage 90

# 3b. An image the operator does not allow: PolicyViolation, nothing created.
apply_loadtest otherimage "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  workerTemplate: {image: docker.io/library/busybox:latest}" >/dev/null
check "image not allowed: Failed" wait_phase otherimage Failed 60
check "image not allowed: PolicyViolation naming the image and the flag ($(jp otherimage '{.status.message}'))" \
  bash -c "[ \"\$(kubectl -n '$NS' get lt otherimage -o jsonpath='{.status.reason}')\" = PolicyViolation ] && kubectl -n '$NS' get lt otherimage -o jsonpath='{.status.message}' | grep -q 'docker.io/library/busybox:latest\" is not an allowed worker image.*--allowed-worker-images'"
check "image not allowed: no Job created" bash -c "! kubectl -n '$NS' get job otherimage-workers >/dev/null 2>&1"

# 3c. A Service of another namespace, which the operator does not allow by default.
apply_loadtest otherns "  target: {service: {name: kube-dns, namespace: kube-system, port: 53}}
  load: {connections: 1, requests: 1}" >/dev/null
check "Service of another namespace: Failed PolicyViolation naming the namespace ($(jp otherns '{.status.message}'))" \
  bash -c "for i in \$(seq 1 150); do [ \"\$(kubectl -n '$NS' get lt otherns -o jsonpath='{.status.reason}')\" = PolicyViolation ] && break; sleep 0.2; done; kubectl -n '$NS' get lt otherns -o jsonpath='{.status.message}' | grep -q 'spec.target.service.namespace: \"kube-system\" is not this LoadTest.s namespace'"
check "Service of another namespace: no Job created" bash -c "! kubectl -n '$NS' get job otherns-workers >/dev/null 2>&1"

# 4. A worker that cannot be scheduled.
apply_loadtest unschedulable "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  workerTemplate: {nodeSelector: {kubeload.dev/no-such-node: 'true'}}
  timeouts: {start: 15s}" >/dev/null
check "unschedulable: Failed WorkersNotReady ($(jp unschedulable '{.status.message}'))" \
  bash -c "for i in \$(seq 1 300); do [ \"\$(kubectl -n '$NS' get lt unschedulable -o jsonpath='{.status.reason}')\" = WorkersNotReady ] && exit 0; sleep 0.2; done; exit 1"
check "unschedulable: the message says why" contains "$(jp unschedulable '{.status.message}')" "Unschedulable"
check "unschedulable: no worker pod left pending" no_running_pods unschedulable 90

# 5. The spec cannot change under a run.
apply_loadtest edited "  target: {service: {name: nginx, port: 80}}
  load: {rate: 50, duration: 10s}" >/dev/null
wait_phase edited Running 120
out=$(kubectl -n "$NS" patch lt edited --type merge -p '{"spec":{"load":{"rate":500}}}' 2>&1)
check "spec edit: refused with \"is immutable\" ($(head -c 200 <<<"$out"))" contains "$out" "is immutable"
check "spec edit: the run ends on its own spec" wait_phase edited Succeeded 120

# 6. A worker evicted mid-run (the Eviction API: SIGTERM, then the pod goes).
apply_loadtest evicted "  target: {service: {name: nginx, port: 80}}
  load: {rate: 100, duration: 30s}
  workers: 2" >/dev/null
check "eviction: Running" wait_phase evicted Running 120
sleep 3
pod=$(kubectl -n "$NS" get pods -l kubeload.dev/loadtest=evicted -o jsonpath='{.items[0].metadata.name}')
kubectl create --raw "/api/v1/namespaces/$NS/pods/$pod/eviction" -f - >/dev/null 2>&1 <<JSON
{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "$pod", "namespace": "$NS"}}
JSON
check "eviction: the run is Failed" wait_phase evicted Failed 60
check "eviction: WorkerFailed, interrupted or deleted ($(jp evicted '{.status.message}'))" \
  bash -c "[ \"\$(kubectl -n '$NS' get lt evicted -o jsonpath='{.status.reason}')\" = WorkerFailed ] && kubectl -n '$NS' get lt evicted -o jsonpath='{.status.message}' | grep -Eq 'interrupted|deleted'"
check "eviction: the other worker's pod does not linger" no_running_pods evicted 90

# 6b. A worker evicted by its node: the kubelet's eviction manager, not the
# API server, SIGTERMs it with a short grace because the pod's local storage
# is over its ephemeral-storage limit. The storage grows from outside the
# worker: a file in the pod's log directory on its node (scripts/cluster
# pod-logs-dir), which the kubelet counts as the pod's, as it counts the
# pod's logs. The pod already uses a copy of its image (this cluster's
# containerd snapshotter copies it for each container), so the file is what
# takes the kubelet's own count of the pod (its stats summary) 16 MiB over
# the limit; the other worker, under the same limit, is not evicted. The
# kubelet looks every 10 s.
pod_storage_mib() { # node pod: the pod's ephemeral storage as its kubelet counts it, MiB
  kubectl get --raw "/api/v1/nodes/$1/proxy/stats/summary" 2>/dev/null | python3 -c '
import json, sys
for pod in json.load(sys.stdin)["pods"]:
    if pod["podRef"]["name"] == sys.argv[1]:
        print(pod["ephemeral-storage"]["usedBytes"] // 2**20)' "$2"
}
evicted_by_kubelet() { # pod seconds: an Evicted event from its node's kubelet
  for _ in $(seq 1 "$(( $2 * 5 ))"); do
    kubectl -n "$NS" get events --field-selector "involvedObject.name=$1,reason=Evicted" \
      -o jsonpath='{.items[*].source.component}' 2>/dev/null | grep -q kubelet && return 0
    sleep 0.2
  done
  return 1
}
apply_loadtest nodeevicted "  target: {service: {name: nginx, port: 80}}
  load: {rate: 100, duration: 90s}
  workers: 2
  workerTemplate:
    resources: {limits: {ephemeral-storage: 1Gi}}" >/dev/null
check "kubelet eviction: Running" wait_phase nodeevicted Running 120
read -r pod node pod_uid <<<"$(loadtest_pod "$NS" nodeevicted 0 \
  '{.items[0].metadata.name} {.items[0].spec.nodeName} {.items[0].metadata.uid}')"
other_pod=$(loadtest_pod "$NS" nodeevicted 1 '{.items[0].metadata.name}')
used=""
# A new container's usage shows once the kubelet has measured it.
for _ in $(seq 1 30); do used=$(pod_storage_mib "$node" "$pod"); [ "${used:-0}" -gt 0 ] && break; sleep 1; done
check "kubelet eviction: the kubelet counts ${used:-?} MiB for $pod, under its 1Gi" \
  test -n "$used" -a "${used:-1024}" -lt 1024
pod_logs="$("$cluster" pod-logs-dir "$node")/${NS}_${pod}_${pod_uid}"
fill=$(( 1024 - ${used:-1024} + 16 ))
check "kubelet eviction: $fill MiB more in its local storage ($pod_logs)" \
  dd if=/dev/zero of="$pod_logs/kubeload-e2e-fill" bs=1M count="$fill" status=none
check "kubelet eviction: the kubelet evicted $pod" evicted_by_kubelet "$pod" 60
check "kubelet eviction: the run is Failed" wait_phase nodeevicted Failed 60
check "kubelet eviction: WorkerFailed, interrupted ($(jp nodeevicted '{.status.message}'))" \
  bash -c "[ \"\$(kubectl -n '$NS' get lt nodeevicted -o jsonpath='{.status.reason}')\" = WorkerFailed ] && kubectl -n '$NS' get lt nodeevicted -o jsonpath='{.status.message}' | grep -q 'worker 0 reported: interrupted'"
check "kubelet eviction: the other worker ($other_pod), under the same limit, was not evicted" \
  bash -c "! kubectl -n '$NS' get events --field-selector 'involvedObject.name=$other_pod,reason=Evicted' -o name | grep -q ."
check "kubelet eviction: the other worker's pod does not linger" no_running_pods nodeevicted 90
rm -f "$pod_logs/kubeload-e2e-fill"

# 7. A worker the operator cannot reach (a firewall, a NetworkPolicy, a mesh
# between them): this host's own firewall rejects the operator's connections
# to the worker pod's control port mid-run. The run fails with
# WorkersUnreachable after --worker-unreachable-timeout (20s here), naming
# the port, instead of waiting for the run deadline.
apply_loadtest unreachable "  target: {service: {name: nginx, port: 80}}
  load: {rate: 20, duration: 300s}
  workers: 1" >/dev/null
check "unreachable: Running" wait_phase unreachable Running 120
ip=$(kubectl -n "$NS" get pods -l kubeload.dev/loadtest=unreachable -o jsonpath='{.items[0].status.podIP}')
firewalled="-d $ip -p tcp --dport 8080 -j REJECT --reject-with tcp-reset"
check "unreachable: the host rejects connections to $ip:8080" iptables -I OUTPUT $firewalled
blocked_at=$SECONDS
check "unreachable: the run is Failed" wait_phase unreachable Failed 90
took=$((SECONDS - blocked_at))
check "unreachable: after the 20s timeout, well before the run's 300s (${took}s)" \
  test "$took" -ge 20 -a "$took" -lt 90
check "unreachable: WorkersUnreachable naming the port ($(jp unreachable '{.status.reason}: {.status.message}'))" \
  bash -c '[ "$1" = WorkersUnreachable ] && grep -q "TCP port 8080" <<<"$2"' _ \
  "$(jp unreachable '{.status.reason}')" "$(jp unreachable '{.status.message}')"
iptables -D OUTPUT $firewalled && firewalled=""

# 8. The worker token key outlives the operator process. Started with no key
# flag, the operator made the Secret kubeload-worker-token-key in its
# namespace (--namespace here) at its first start; killed (SIGKILL) mid-run
# and started again, it reads the same key, derives the same tokens and ends
# the run Succeeded. With a key per process the workers answered the new
# operator 403 and the run failed (WorkerTokenRefused, before that
# WorkersUnreachable).
key_secret() { kubectl -n "$NS" get secret kubeload-worker-token-key -o jsonpath="$1" 2>/dev/null; }
check "token key: the operator created the Secret kubeload-worker-token-key, labelled as its own" \
  test "$(key_secret '{.metadata.labels.app\.kubernetes\.io/managed-by}')" = kubeload-operator
key_before=$(key_secret '{.data.key}')
secret_uid=$(key_secret '{.metadata.uid}')
check "token key: 32 random bytes in data.key" test "$(base64 -d <<<"$key_before" | wc -c)" -eq 32
apply_loadtest keykept "  target: {service: {name: nginx, port: 80}}
  load: {rate: 50, duration: 40s}
  workers: 2" >/dev/null
check "token key: Running" wait_phase keykept Running 120
worker_args=$(kubectl -n "$NS" get job keykept-workers -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null)
sleep 2
{ kill -KILL "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
operator_pid=""
check "token key: the operator started again after SIGKILL mid-run" start_operator
check "token key: the restarted operator read the key, did not make one" \
  test "$(grep -c '"created":false.*"msg":"worker token key"' /tmp/lifecycle-e2e-operator.log)" -ge 1
wait_phase keykept Succeeded 150
succeeded=$?
check "token key: the run ends Succeeded after the restart ($(jp keykept '{.status.phase} {.status.reason}: {.status.message}'))" \
  test "$succeeded" -eq 0
check "token key: the Secret is the same object with the same key" \
  test "$(key_secret '{.metadata.uid}') $(key_secret '{.data.key}')" = "$secret_uid $key_before"

# 9. The API server is never a target: the operator read the kubernetes
# Service's cluster IP and the API server's EndpointSlice addresses at start
# (the admin kubeconfig may read them) and denies them to every worker.
denied=$(grep '"msg":"the API server.s addresses are denied as targets"' /tmp/lifecycle-e2e-operator.log | tail -1)
service_ip=$(kubectl -n default get service kubernetes -o jsonpath='{.spec.clusterIP}')
endpoints=$(kubectl -n default get endpointslices -l kubernetes.io/service-name=kubernetes \
  -o jsonpath='{.items[*].endpoints[*].addresses[*]}')
check "API server: the kubernetes Service's $service_ip is denied ($denied)" contains "$denied" "\"$service_ip\""
for address in $endpoints; do
  check "API server: its endpoint $address is denied" contains "$denied" "\"$address\""
done
check "API server: a run's workers get $service_ip as --deny-cidr" \
  contains "$(tr -d ' ' <<<"$worker_args")" "\"--deny-cidr\",\"$service_ip\""

# 10. A run's objects are trusted by their controller, not their name: a
# Secret of the name the run's token Secret will have, made by someone else
# before the operator saw the run (here: while it was stopped), is not taken
# for the run's (it would hand the workers a token of someone else's
# choosing). The run fails ObjectNameTaken, no Job is made, the Secret is
# left alone.
{ kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
operator_pid=""
apply_loadtest squatted "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}" >/dev/null
squatted_uid=$(jp squatted '{.metadata.uid}')
squatted_secret="squatted-workers-token-${squatted_uid:0:8}"
kubectl -n "$NS" create secret generic "$squatted_secret" \
  --from-literal=token=chosen-by-someone-else >/dev/null
check "taken name: the operator started again" start_operator
check "taken name: Failed ($(jp squatted '{.status.reason}: {.status.message}'))" \
  wait_phase squatted Failed 60
check "taken name: reason ObjectNameTaken ($(jp squatted '{.status.message}'))" \
  test "$(jp squatted '{.status.reason}')" = ObjectNameTaken
check "taken name: the message names the Secret" contains "$(jp squatted '{.status.message}')" "$squatted_secret"
check "taken name: no Job" bash -c "! kubectl -n '$NS' get job squatted-workers >/dev/null 2>&1"
check "taken name: the Secret is left as it was" \
  test "$(kubectl -n "$NS" get secret "$squatted_secret" -o jsonpath='{.data.token}' | base64 -d)" = chosen-by-someone-else

# 11. A quota that allows no more Secrets refuses the run's token Secret: the
# run fails ObjectRejected with the API server's message instead of staying
# Pending for ever.
secrets_now=$(kubectl -n "$NS" get secrets --no-headers 2>/dev/null | wc -l)
kubectl -n "$NS" create quota no-more-secrets --hard="secrets=$secrets_now" >/dev/null
quota_counted() { # quota: the quota controller has counted what is there (admission needs it)
  for _ in $(seq 1 150); do
    [ -n "$(kubectl -n "$NS" get quota "$1" -o jsonpath='{.status.used}' 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}
check "quota: no-more-secrets counted ($secrets_now Secrets)" quota_counted no-more-secrets
apply_loadtest overquota "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}" >/dev/null
check "quota: Failed ($(jp overquota '{.status.reason}: {.status.message}'))" wait_phase overquota Failed 60
check "quota: reason ObjectRejected" test "$(jp overquota '{.status.reason}')" = ObjectRejected
check "quota: the API server's message ($(jp overquota '{.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt overquota -o jsonpath='{.status.message}' | grep -q 'exceeded quota'"
check "quota: an ObjectRejected Event ($(event_reasons overquota))" contains "$(event_reasons overquota)" ObjectRejected
check "quota: no Job" bash -c "! kubectl -n '$NS' get job overquota-workers >/dev/null 2>&1"
kubectl -n "$NS" delete quota no-more-secrets >/dev/null 2>&1

# 12. A worker is a pod the run's Job made (its controller, by uid), never a
# pod that carries the run's labels: anyone who may create pods in the
# namespace can copy those, index included, and such a pod taken for worker
# 0 would be handed the run's token and leave the real worker 0 unasked
# (the run failing WorkersUnreachable). Named to sort after the real pods.
apply_loadtest forged "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, duration: 15s}" >/dev/null
check "forged pod: the run is Running" wait_phase forged Running 120
forged_uid=$(jp forged '{.metadata.uid}')
kubectl -n "$NS" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: zz-forged-worker
  namespace: $NS
  labels: {kubeload.dev/loadtest: forged, kubeload.dev/loadtest-uid: "$forged_uid", batch.kubernetes.io/job-completion-index: "0"}
  annotations: {batch.kubernetes.io/job-completion-index: "0"}
spec:
  containers: [{name: loadgen, image: localhost/kubeload/nginx:1, imagePullPolicy: IfNotPresent}]
YAML
check "forged pod: it runs beside the run with the run's labels" \
  kubectl -n "$NS" wait --for=condition=Ready pod/zz-forged-worker --timeout=60s
check "forged pod: the run Succeeded all the same ($(jp forged '{.status.reason}: {.status.message}'))" \
  wait_phase forged Succeeded 120
check "forged pod: 1 worker counted ($(jp forged '{.status.workers}'))" \
  test "$(jp forged '{.status.workers.succeeded}')" = 1
kubectl -n "$NS" delete pod zz-forged-worker --wait=false >/dev/null 2>&1

# 13. The results ConfigMap is the run's when the LoadTest controls it: one
# of its name made by someone else (with data naming the run's uid, which is
# no secret) would put a forged merge in the status. The run fails
# ObjectNameTaken naming it, and the ConfigMap is left as it was.
{ kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
operator_pid=""
apply_loadtest forgedkept "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}" >/dev/null
forgedkept_uid=$(jp forgedkept '{.metadata.uid}')
forgedkept_map="forgedkept-workers-results-${forgedkept_uid:0:8}"
kubectl -n "$NS" create configmap "$forgedkept_map" --from-literal=loadTestUid="$forgedkept_uid" \
  --from-literal=workers='{}' >/dev/null
check "forged results: the operator started again" start_operator
check "forged results: Failed ($(jp forgedkept '{.status.reason}: {.status.message}'))" \
  wait_phase forgedkept Failed 120
check "forged results: reason ObjectNameTaken" test "$(jp forgedkept '{.status.reason}')" = ObjectNameTaken
check "forged results: the message names the ConfigMap" \
  contains "$(jp forgedkept '{.status.message}')" "$forgedkept_map"
check "forged results: the ConfigMap is left as it was" \
  test "$(kubectl -n "$NS" get configmap "$forgedkept_map" -o jsonpath='{.data.workers}')" = '{}'

# 14. A spec of 250 KiB runs: the workers read their manifest from a file
# the run's spec ConfigMap mounts (one environment string of Linux holds at
# most 128 KiB, and the CRD allows a 256 KiB body). Created, not applied:
# kubectl apply's last-applied annotation could not hold it.
big_body=$(head -c 250000 /dev/zero | tr '\0' 'x')
kubectl create -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: bigspec, namespace: $NS}
spec:
  target: {service: {name: nginx, port: 80}}
  load: {connections: 1, requests: 5}
  requests:
  - {name: big, method: POST, path: /, body: "$big_body", expect: {status: [405]}}
YAML
check "250 KiB spec: Succeeded ($(jp bigspec '{.status.reason}: {.status.message}'))" \
  wait_phase bigspec Succeeded 180
check "250 KiB spec: 5 requests sent ($(jp bigspec '{.status.result.requests}'))" \
  test "$(jp bigspec '{.status.result.requests}')" = 5
bigspec_uid=$(jp bigspec '{.metadata.uid}')
check "250 KiB spec: the manifest is in the run's spec ConfigMap, owned by the LoadTest" \
  test "$(kubectl -n "$NS" get configmap "bigspec-workers-spec-${bigspec_uid:0:8}" \
    -o jsonpath='{.metadata.ownerReferences[0].uid}')" = "$bigspec_uid"

# 15. A quota that allows no NetworkPolicy refuses the run's own (the
# operator gives each run one with --worker-network-policy-from, as the
# chart does): the run fails ObjectRejected with the API server's message
# instead of staying Pending for ever, and no Job is made.
{ kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
operator_pid=""
kubectl -n "$NS" create quota no-networkpolicies \
  --hard="count/networkpolicies.networking.k8s.io=0" >/dev/null
check "policy quota: no-networkpolicies counted" quota_counted no-networkpolicies
check "policy quota: the operator started with a NetworkPolicy per run" \
  start_operator --worker-network-policy-from '[{"podSelector": {}}]'
apply_loadtest nopolicy "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}" >/dev/null
check "policy quota: Failed ($(jp nopolicy '{.status.reason}: {.status.message}'))" \
  wait_phase nopolicy Failed 60
check "policy quota: reason ObjectRejected" test "$(jp nopolicy '{.status.reason}')" = ObjectRejected
check "policy quota: the message names the NetworkPolicy and quotes the API server ($(jp nopolicy '{.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt nopolicy -o jsonpath='{.status.message}' | grep -q \"NetworkPolicy.*exceeded quota\""
check "policy quota: no Job" bash -c "! kubectl -n '$NS' get job nopolicy-workers >/dev/null 2>&1"
kubectl -n "$NS" delete quota no-networkpolicies >/dev/null 2>&1

# 16. Where the packets go (issue 26): with the cluster's ranges given, a
# Service the LoadTest names runs (its cluster IP decided by the operator),
# a literal cluster IP does not; with nginx's pod denied, the Service in front
# of it is refused however it is named, and nginx logs nothing; another
# namespace's Service by url is refused.
{ kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
operator_pid=""
ranges=(--cluster-cidr 10.244.0.0/16 --cluster-cidr 10.245.0.0/16)
check "destinations: the operator started with the cluster's ranges" start_operator "${ranges[@]}"
nginx_cluster_ip=$(kubectl -n "$NS" get svc nginx -o jsonpath='{.spec.clusterIP}')
nginx_pod_ip=$(kubectl -n "$NS" get pod -l app=nginx -o jsonpath='{.items[0].status.podIP}')
apply_loadtest decided "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}" >/dev/null
check "destinations: the Service it names runs to Succeeded under --cluster-cidr ($(jp decided '{.status.reason}: {.status.message}'))" \
  wait_phase decided Succeeded 120
# Applied together by a GitOps tool, the LoadTest before its Service: the run
# waits for the Service (Pending, saying so), then runs on its decided
# cluster IP.
apply_loadtest late-service "  target: {service: {name: late, port: 80}}
  load: {connections: 2, requests: 10}" >/dev/null
sleep 3
check "destinations: a Service not there yet is waited for ($(jp late-service '{.status.phase}: {.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt late-service -o jsonpath='{.status.phase} {.status.message}' | grep -q '^Pending .*the target Service $NS/late does not exist yet'"
kubectl -n "$NS" create service clusterip late --tcp=80:80 >/dev/null
kubectl -n "$NS" patch service late --type merge -p '{"spec":{"selector":{"app":"nginx"}}}' >/dev/null
check "destinations: then runs to Succeeded ($(wait_phase late-service Succeeded 120; jp late-service '{.status.reason}: {.status.message}'))" \
  test "$(jp late-service '{.status.phase}')" = Succeeded
apply_loadtest literal "  target: {url: 'http://$nginx_cluster_ip/literal-cluster-ip'}
  load: {connections: 2, requests: 10}" >/dev/null
wait_phase literal Failed 120
check "destinations: a literal cluster IP fails, its worker naming the cluster's range ($(jp literal '{.status.reason}: {.status.message}'))" \
  bash -c "kubectl -n '$NS' get lt literal -o jsonpath='{.status.message}' | grep -q 'in the cluster.s range 10.245.0.0/16'"
{ kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
operator_pid=""
check "destinations: the operator started denying nginx's pod $nginx_pod_ip only" \
  start_operator "${ranges[@]}" --target-deny-cidr "$nginx_pod_ip/32"
nginx_gets() { kubectl -n "$NS" logs deploy/nginx 2>/dev/null | grep -c 'behind-service' || true; }
before=$(nginx_gets)
apply_loadtest behind-service "  target: {service: {name: nginx, port: 80}}
  load: {connections: 2, requests: 10}
  requests: [{name: r, path: /behind-service}]" >/dev/null
apply_loadtest behind-url "  target: {url: 'http://NGINX.$NS.svc.cluster.local./behind-service'}
  load: {connections: 2, requests: 10}" >/dev/null
apply_loadtest other-namespace "  target: {url: 'http://vault2.other-ns.svc.cluster.local/'}
  load: {connections: 2, requests: 10}" >/dev/null
for name in behind-service behind-url; do
  check "destinations: $name fails PolicyViolation naming the denied endpoint ($(wait_phase $name Failed 60; jp $name '{.status.reason}: {.status.message}'))" \
    bash -c "[ \"\$(kubectl -n '$NS' get lt $name -o jsonpath='{.status.reason}')\" = PolicyViolation ] &&
      kubectl -n '$NS' get lt $name -o jsonpath='{.status.message}' | grep -qF 'sends to its endpoint $nginx_pod_ip'"
  check "destinations: $name made no Job" bash -c "! kubectl -n '$NS' get job $name-workers >/dev/null 2>&1"
done
check "destinations: another namespace's Service by url fails PolicyViolation ($(wait_phase other-namespace Failed 60; jp other-namespace '{.status.reason}: {.status.message}'))" \
  bash -c "[ \"\$(kubectl -n '$NS' get lt other-namespace -o jsonpath='{.status.reason}')\" = PolicyViolation ]"
sleep 1
check "destinations: the denied pod logged no request ($(nginx_gets) after, $before before)" test "$(nginx_gets)" = "$before"

kubectl -n "$NS" get lt 2>/dev/null
finish
