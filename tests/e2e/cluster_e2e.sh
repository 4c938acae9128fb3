#!/usr/bin/env bash
# End-to-end check of the local Kubernetes (scripts/cluster): a Deployment of nginx
# (image built locally) behind a Service; an Indexed Job (parallelism 3) whose pods
# each fetch from that Service and exit; pods spread over both nodes; the Job
# completes; its termination messages show in pod status; the kernel routes nothing from a
# pod off the machine (policy routing, checked with `ip route get`, never by sending); deleting the Job
# garbage-collects its pods; the cluster's Prometheus has both kubelets' cAdvisor series, labelled,
# for a CPU-burning pod on each node; `scripts/cluster down` leaves no process behind.
#
# Each Job pod resolves the Service through cluster DNS (CoreDNS).
# Then the cluster goes up and down KUBELOAD_E2E_UP_CYCLES times in all (default
# 3) with every core busy: start-up must never mistake a slow component for a
# dead one.
# Default: brings the local cluster up, runs the checks, brings it down.
# Against any other cluster: KUBELOAD_E2E_KUBECONFIG=/path/to/kubeconfig
#   (it must have two schedulable nodes and the images below, or set
#    KUBELOAD_E2E_NGINX_IMAGE / KUBELOAD_E2E_CLIENT_IMAGE to images it can pull).
# KUBELOAD_E2E_KEEP=1 leaves the local cluster running afterwards; a cluster that
# was already up when the test started is left up too (and `down` is not checked).
# Last line: `cluster-e2e: N passed, M failed` (exit 1 if M > 0), or a SKIP line
# (exit 0) when the machine lacks what a local cluster needs.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-e2e
NGINX_IMAGE="${KUBELOAD_E2E_NGINX_IMAGE:-localhost/kubeload/nginx:1}"
CLIENT_IMAGE="${KUBELOAD_E2E_CLIENT_IMAGE:-localhost/kubeload/debian:bookworm}"
PULL_POLICY="${KUBELOAD_E2E_PULL_POLICY:-IfNotPresent}"
E2E_NAME=cluster-e2e
. "$(dirname "$0")/lib.sh"
finish() {
  report
  exit $?
}

external=0
was_up=0
if [ -n "${KUBELOAD_E2E_KUBECONFIG:-}" ]; then
  external=1
  export KUBECONFIG="$KUBELOAD_E2E_KUBECONFIG"
else
  # What a local cluster needs; anything missing here is the machine's, not ours.
  [ "$(id -u)" -eq 0 ] || skip "not root (the local cluster manages routes, bridges and containers)"
  missing_tools() {
    local t
    for t in containerd runc ctr buildah debootstrap iptables ip openssl kubectl go curl python3 prometheus promtool socat; do
      command -v "$t" >/dev/null 2>&1 || echo "$t"
    done
    [ -x /usr/lib/cni/bridge ] || echo "containernetworking-plugins"
  }
  if [ -n "$(missing_tools)" ]; then
    # Packages are the project's to install, not a reason to skip.
    say "missing: $(missing_tools | tr '\n' ' ')- running scripts/setup-cluster"
    "$root/scripts/setup-cluster" || true
  fi
  if [ -n "$(missing_tools)" ]; then
    bad "tools the local cluster needs are missing even after scripts/setup-cluster: $(missing_tools | tr '\n' ' ')"
    finish
  fi
  ip netns add kubeload-e2e-probe 2>/dev/null && ip netns del kubeload-e2e-probe \
    || skip "cannot create network namespaces here"
  [ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no cgroups"

  was_up=0
  "$cluster" status >/dev/null 2>&1 && was_up=1
  say "bringing the local cluster up (first time builds Kubernetes: long)"
  if ! "$cluster" up >/tmp/kubeload-e2e-up.log 2>&1; then
    tail -n 60 /tmp/kubeload-e2e-up.log
    bad "scripts/cluster up"
    "$cluster" down >/dev/null 2>&1
    finish
  fi
  ok "scripts/cluster up"
  eval "$("$cluster" env)"
  quiet() { "$@" >/dev/null 2>&1; }
  check "scripts/cluster up again is idempotent (all PIDs unchanged)" bash -c '
    before="$(cat "$1"/pids/*.pid | sort)"; "$0" up >/dev/null 2>&1 || exit 1
    [ "$before" = "$(cat "$1"/pids/*.pid | sort)" ]' "$cluster" "${KUBELOAD_CLUSTER_DIR:-/tmp/kubeload-cluster}"
  check "check-route: pod and service ranges cannot leave the machine" "$cluster" check-route
fi
k() { kubectl "$@"; }

cleanup_ns() { k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1; }
cleanup_ns
for _ in $(seq 60); do k get namespace "$NS" >/dev/null 2>&1 || break; sleep 1; done
k create namespace "$NS" >/dev/null

nodes="$(k get nodes --no-headers 2>/dev/null | awk '$2 == "Ready" {n++} END {print n+0}')"
check "two Ready nodes (have $nodes)" test "$nodes" -ge 2
check "default service account exists" k -n default get serviceaccount default -o name

k -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: nginx
        image: $NGINX_IMAGE
        imagePullPolicy: $PULL_POLICY
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {path: /healthz, port: 80}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
EOF
check "nginx Deployment rolls out" k -n "$NS" rollout status deployment/web --timeout=180s
if [ "$failed" -gt 0 ]; then k -n "$NS" get pods -o wide; k -n "$NS" describe pods | tail -30; fi

k -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: fetch}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  backoffLimit: 2
  template:
    metadata: {labels: {app: fetch}}
    spec:
      restartPolicy: Never
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: fetch}}}
      containers:
      - name: fetch
        image: $CLIENT_IMAGE
        imagePullPolicy: $PULL_POLICY
        command: ["/bin/bash", "-c"]
        args:
        - |
          set -e
          # by cluster DNS name (search path), and by the Service's environment variables
          body="\$(curl -sf --max-time 10 --retry 5 --retry-delay 1 --retry-all-errors http://web/hostname)"
          curl -sf --max-time 10 --retry 5 --retry-delay 1 --retry-all-errors -o /dev/null "http://\$WEB_SERVICE_HOST:\$WEB_SERVICE_PORT/healthz"
          echo "index=\$JOB_COMPLETION_INDEX served-by=\$body" | tee /dev/termination-log
EOF
check "Indexed Job completes" k -n "$NS" wait --for=condition=complete job/fetch --timeout=180s
k -n "$NS" get pods -o wide

msgs="$(k -n "$NS" get pods -l app=fetch -o jsonpath='{range .items[*]}{.status.containerStatuses[0].state.terminated.message}{"\n"}{end}')"
echo "$msgs" | grep . | sed 's/^/  termination message: /'
idx="$(echo "$msgs" | sed -n 's/^index=\([0-9]*\) served-by=web-.*/\1/p' | sort -u | tr '\n' ' ')"
check "every index fetched from the Service (by DNS name and by env) and wrote a termination message (indexes: $idx)" test "$idx" = "0 1 2 "
nodes_used="$(k -n "$NS" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)"
check "pods spread over both nodes (used $nodes_used)" test "$nodes_used" -ge 2
job_nodes="$(k -n "$NS" get pods -l app=fetch -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c .)"
check "Job pods themselves spread over both nodes (used $job_nodes)" test "$job_nodes" -ge 2

# Nothing from a pod leaves the machine: the kernel's own routing decision for a packet
# from each web pod's address arriving on its node's bridge (`ip route get ... iif`, which
# sends nothing) must be unreachable for outside addresses, while the other web pod stays
# routed through a cluster bridge (the control that shows the check can pass at all).
if [ "$external" = 0 ]; then
  mapfile -t web_pods < <(k -n "$NS" get pods -l app=web -o jsonpath='{range .items[*]}{.status.podIP} {.spec.nodeName}{"\n"}{end}')
  if [ "${#web_pods[@]}" -ge 2 ]; then
    for i in 0 1; do
      read -r pod_ip pod_node <<<"${web_pods[$i]}"
      read -r peer_ip _ <<<"${web_pods[$(( 1 - i ))]}"
      bridge="kl-br$(k get node "$pod_node" -o jsonpath='{.metadata.labels.kubeload\.dev/node}')"
      check "kernel routes nothing from pod $pod_ip on $bridge off the machine (peer $peer_ip still routed)" \
        "$cluster" check-pod-route "$pod_ip" "$bridge" "$peer_ip"
    done
  else
    bad "two web pods with addresses for the routing check (have ${#web_pods[@]})"
  fi
fi

# In-cluster API access the way the operator will use it: the projected service
# account token (signed by the API server), the kube-root-ca.crt bundle, and the
# kubernetes.default.svc name. The default account may not list pods (RBAC), so a
# 403 naming the account proves authentication and authorization both ran.
k -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: api-client}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: $CLIENT_IMAGE
    imagePullPolicy: $PULL_POLICY
    command: ["/bin/bash", "-c"]
    args:
    - |
      sa=/var/run/secrets/kubernetes.io/serviceaccount
      curl -s --max-time 10 --cacert \$sa/ca.crt -H "Authorization: Bearer \$(cat \$sa/token)" \
        "https://kubernetes.default.svc/api/v1/namespaces/\$(cat \$sa/namespace)/pods" \
        | grep '"message"' > /dev/termination-log
EOF
api_msg=""
for _ in $(seq 90); do
  phase="$(k -n "$NS" get pod api-client -o jsonpath='{.status.phase}' 2>/dev/null)"
  case "$phase" in Succeeded|Failed) break ;; esac
  sleep 1
done
api_msg="$(k -n "$NS" get pod api-client -o jsonpath='{.status.containerStatuses[0].state.terminated.message}' 2>/dev/null)"
say "  api-client ($phase): $api_msg"
check "a pod reaches the API server by DNS with its service account token (RBAC answers for system:serviceaccount:$NS:default)" \
  bash -c '[[ "$0" == *"system:serviceaccount:'"$NS"':default"* ]]' "$api_msg"

# The cluster's Prometheus scrapes both kubelets' cAdvisor: a CPU-burning pod on each node
# must show up under its own node with the labels kubeload's operator queries by, once,
# and its CPU counter must rise. Queried only at the URL scripts/cluster prints.
if [ "$external" = 0 ]; then
  prom="$("$cluster" prometheus-url)"
  promq() { # query -> per series: "node namespace pod container id value" ("-" when a label is absent)
    curl -sf --max-time 10 "$prom/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    print(*(m.get(k, "-") for k in ("node", "namespace", "pod", "container", "id")), r["value"][1])'
  }
  poll() { # seconds command... : until the command succeeds
    local i
    for ((i = 0; i < $1; i++)); do "${@:2}" && return 0; sleep 1; done
    return 1
  }
  check "Prometheus is ready at $prom (scripts/cluster prometheus-url)" curl -sf --max-time 5 -o /dev/null "$prom/-/ready"
  targets_up() { [ "$(promq 'up{job="kubelet-cadvisor"} == 1' | awk '{print $1}' | sort | tr '\n' ' ')" = "kl-node-1 kl-node-2 " ]; }
  check "Prometheus's cAdvisor targets are up for both nodes (kl-node-1, kl-node-2)" poll 30 targets_up
  for n in 1 2; do
    k -n "$NS" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: burn-$n}
spec:
  nodeName: kl-node-$n
  containers:
  - name: burn
    image: $CLIENT_IMAGE
    imagePullPolicy: $PULL_POLICY
    command: ["/bin/bash", "-c", "while :; do :; done"]
    resources: {limits: {cpu: 200m, memory: 64Mi}}
EOF
  done
  check "CPU-burning pods run on both nodes" k -n "$NS" wait --for=condition=Ready pod/burn-1 pod/burn-2 --timeout=90s
  check "a pod reaches Prometheus at $("$cluster" prometheus-url --from-pods)" \
    k -n "$NS" exec burn-1 -- curl -sf --max-time 5 -o /dev/null "$("$cluster" prometheus-url --from-pods)/-/ready"
  for n in 1 2; do
    sel="{namespace=\"$NS\",pod=\"burn-$n\",container=\"burn\"}"
    labelled() { [ "$(promq "$1$sel" | awk '{print $1, $2, $3, $4}')" = "kl-node-$n $NS burn-$n burn" ]; }
    for m in container_cpu_usage_seconds_total container_memory_rss container_memory_working_set_bytes container_start_time_seconds; do
      check "$m$sel: one series, on kl-node-$n, labelled namespace/pod/container" poll 60 labelled "$m"
    done
    id="$(promq "container_cpu_usage_seconds_total$sel" | awk '{print $5}')"
    check "burn-$n's cgroup is exported once (not also by the other node's kubelet)" \
      test "$(promq "count(container_cpu_usage_seconds_total{id=\"$id\"})" | awk '{print $6}')" = 1
    cpu_before="$(promq "container_cpu_usage_seconds_total$sel" | awk '{print $6}')"
    cpu_rises() { python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))' \
      "$(promq "container_cpu_usage_seconds_total$sel" | awk '{print $6}')" "${cpu_before:-inf}"; }
    check "burn-$n's CPU counter rises (from ${cpu_before:-nothing} s)" poll 30 cpu_rises
  done
fi

k -n "$NS" delete job fetch --wait=false >/dev/null
gc_done() {
  for _ in $(seq 60); do
    [ -z "$(k -n "$NS" get pods -l app=fetch --no-headers 2>/dev/null)" ] && return 0
    sleep 1
  done
  return 1
}
check "deleting the Job garbage-collects its pods" gc_done

cleanup_ns
if [ "$external" = 0 ] && [ "$was_up" = 1 ]; then
  say "the local cluster was up before this test: leaving it up (down not checked)"
elif [ "$external" = 0 ] && [ "${KUBELOAD_E2E_KEEP:-0}" != 1 ]; then
  state_dir="${KUBELOAD_CLUSTER_DIR:-/tmp/kubeload-cluster}"
  cache="${KUBELOAD_CACHE:-$HOME/.cache/kubeload}"
  check "scripts/cluster down" "$cluster" down
  sleep 1
  # "$state_dir/": every component names a file in it; the bare directory
  # would match the lock file of `flock /tmp/kubeload-cluster.lock ...` too.
  left="$(pgrep -af -- "$state_dir/|$cache/k8s-v|$cache/etcd-v" | grep -v pgrep || true)"
  [ -n "$left" ] && echo "$left" | sed 's/^/  left behind: /'
  check "down leaves no process behind" test -z "$left"
  check "down removes the unreachable route" bash -c '! "$0" check-route >/dev/null 2>&1' "$cluster"
  check "down removes the policy-routing rules and table" bash -c 'KUBELOAD_CLUSTER_LIB=1 . "$0"
    [ -z "$(ip -4 rule show pref "$ROUTE_PREF"; ip -4 rule show pref "$((ROUTE_PREF + 1))"; ip -6 rule show pref "$((ROUTE_PREF + 1))")" ] &&
    [ -z "$(ip -4 route show table "$ROUTE_TABLE" 2>/dev/null; ip -6 route show table "$ROUTE_TABLE" 2>/dev/null)" ]' "$cluster"

  # Up and down again, in a row, while every core is busy: a component's
  # start-up must be recognised however slowly the machine schedules it.
  cycles="${KUBELOAD_E2E_UP_CYCLES:-3}"
  load_pids=()
  trap 'kill "${load_pids[@]}" 2>/dev/null' EXIT
  for _ in $(seq "$(nproc)"); do
    nice -n 5 sha256sum /dev/zero >/dev/null 2>&1 &
    load_pids+=($!)
  done
  for cycle in $(seq 2 "$cycles"); do
    start=$SECONDS
    if "$cluster" up >"/tmp/kubeload-e2e-up-$cycle.log" 2>&1; then
      ok "up #$cycle of $cycles, every core busy ($((SECONDS - start))s)"
      eval "$("$cluster" env)"
      nodes="$(k get nodes --no-headers 2>/dev/null | awk '$2 == "Ready" {n++} END {print n+0}')"
      check "up #$cycle: two Ready nodes (have $nodes)" test "$nodes" -ge 2
    else
      tail -n 40 "/tmp/kubeload-e2e-up-$cycle.log"
      bad "up #$cycle of $cycles, every core busy"
    fi
    check "down #$cycle" "$cluster" down
    sleep 1
    left="$(pgrep -af -- "$state_dir/|$cache/k8s-v|$cache/etcd-v" | grep -v pgrep || true)"
    [ -n "$left" ] && echo "$left" | sed 's/^/  left behind: /'
    check "down #$cycle leaves no process behind" test -z "$left"
  done
  kill "${load_pids[@]}" 2>/dev/null
  wait "${load_pids[@]}" 2>/dev/null
fi
finish
