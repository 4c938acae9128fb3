# Shared by the e2e scripts: PASS/FAIL bookkeeping and the closing line
# "<name>: N passed, M failed". Source it after setting E2E_NAME.
passed=0
failed=0

say() { echo "$E2E_NAME: $*"; }
ok() { passed=$((passed + 1)); say "PASS $*"; }
bad() { failed=$((failed + 1)); say "FAIL $*"; }
check() { # description command...
  local d="$1"; shift
  if "$@"; then ok "$d"; else bad "$d"; fi
}
contains() { grep -qi -- "$2" <<<"$1"; }
# A LoadTest's worker pod of one completion index (the Job controller's
# label), as a kubectl jsonpath over the pod list: {.items[0].metadata.name}.
loadtest_pod() { # namespace loadtest index jsonpath
  kubectl -n "$1" get pods -l "kubeload.dev/loadtest=$2,batch.kubernetes.io/job-completion-index=$3" \
    -o jsonpath="$4" 2>/dev/null
}
# Whether scripts/cluster's API server runs. Not `status | grep -q`: grep -q
# quits at the first match, status dies of SIGPIPE and pipefail turns the
# match into a failure, so a test would take down a cluster it did not start.
cluster_running() { contains "$("$1" status 2>/dev/null)" "kube-apiserver *running"; }
# Brings scripts/cluster ($1) up unless it already is (was_up=1 then, so the
# caller's finish leaves it running) and exports its KUBECONFIG; on failure
# records it and calls the caller's finish.
cluster_up() {
  cluster_running "$1" && was_up=1
  if ! "$1" up >"/tmp/$E2E_NAME-up.log" 2>&1; then
    tail -20 "/tmp/$E2E_NAME-up.log"
    bad "scripts/cluster up"
    finish
  fi
  eval "$("$1" env)"
}
# A loud SKIP, exit 0: the machine lacks what the tier needs.
skip() {
  echo "$E2E_NAME: ################################################################" >&2
  echo "$E2E_NAME: SKIPPING: $*" >&2
  echo "$E2E_NAME: ################################################################" >&2
  echo "$E2E_NAME: SKIP: $*"
  exit 0
}
report() {
  say "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
# The start an e2e with kubeload-operator on the host shares (the caller
# sets root, cluster, NS, IMAGE, operator_pid="" and was_up=0, and defines
# finish, usually as host_operator_e2e_finish): the local cluster up, the image
# built and imported into the nodes, the CRDs applied, and nginx behind a
# Service in $NS. SKIP when not root.
host_operator_e2e_setup() {
  [ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
  local binary
  for binary in loadgen kubeload-operator; do
    [ -x "$root/build/bin/$binary" ] || { say "FAIL build/bin/$binary is not built"; exit 1; }
  done
  cluster_up "$cluster"
  trap finish INT TERM
  check "image $IMAGE built and imported into the nodes" \
    bash -c "'$root/cluster/kubeload-image/build.sh' '$IMAGE' >/tmp/$E2E_NAME-image.log 2>&1"
  check "CRDs applied and established" "$root/scripts/install-crd"
  kubectl create namespace "$NS" >/dev/null 2>&1
  kubectl -n "$NS" apply -f "$root/cluster/manifests/nginx-target.yaml" >/dev/null
  check "nginx rolled out behind its Service" kubectl -n "$NS" rollout status deploy/nginx --timeout=120s
  : >"/tmp/$E2E_NAME-operator.log"
}
# kubeload-operator on the host for $NS, its metrics on 127.0.0.1:PORT and
# its health on PORT+1, logging to /tmp/$E2E_NAME-operator.log; sets
# operator_pid and returns once it is ready (1 after 10 s without).
start_host_operator() { # port [flags...]
  local port="$1"
  shift
  "$root/build/bin/kubeload-operator" --namespace "$NS" --loadgen-image "$IMAGE" \
    --metrics-addr "127.0.0.1:$port" --health-addr "127.0.0.1:$((port + 1))" "$@" \
    >>"/tmp/$E2E_NAME-operator.log" 2>&1 &
  operator_pid=$!
  for _ in $(seq 1 50); do curl -fs "http://127.0.0.1:$((port + 1))/readyz" >/dev/null && return 0; sleep 0.2; done
  return 1
}
stop_host_operator() { kill "$operator_pid" 2>/dev/null; wait "$operator_pid" 2>/dev/null; operator_pid=""; }
# Its end: the operator stopped, $NS deleted, the cluster down unless it was
# up before (or KUBELOAD_E2E_KEEP is set), the closing line; exits.
host_operator_e2e_finish() {
  [ -n "$operator_pid" ] && { kill "$operator_pid"; wait "$operator_pid"; } 2>/dev/null
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1
  if [ "$was_up" -eq 0 ] && [ -z "${KUBELOAD_E2E_KEEP:-}" ]; then "$cluster" down >/dev/null 2>&1; fi
  report
  exit $?
}
# Returns once the cluster's Prometheus ($1) has at least two CPU samples of
# every container of the pods of deployment $3 in namespace $2 (1 after 90
# s): a target deployed a moment ago has no cAdvisor series yet, and a run
# against it would have no target CPU for a reason that is the test's, not
# the operator's.
wait_for_target_samples() { # prometheus namespace deployment
  local query="min(count_over_time(container_cpu_usage_seconds_total{namespace=\"$2\",pod=~\"$3-.*\",container!=\"\"}[30s]))"
  local count
  for _ in $(seq 1 90); do
    count=$(curl -sf --max-time 5 "$1/api/v1/query" --data-urlencode "query=$query" |
      python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)' 2>/dev/null)
    [ "${count:-0}" -ge 2 ] 2>/dev/null && return 0
    sleep 1
  done
  return 1
}
# A field of LoadTest $1 in $NS by a jsonpath ($2); empty when it has none.
jp() { kubectl -n "$NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
# Returns once LoadTest $1 in $NS is Succeeded or Failed (1 after $2 seconds).
wait_final() { # name timeout-seconds
  local phase
  for _ in $(seq 1 "$(($2 * 2))"); do
    phase=$(jp "$1" '{.status.phase}')
    [ "$phase" = Succeeded ] || [ "$phase" = Failed ] && return 0
    sleep 0.5
  done
  return 1
}
