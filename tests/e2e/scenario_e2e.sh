#!/usr/bin/env bash
# End to end: a scenario (docs/scenarios.md) on the local Kubernetes
# (scripts/cluster), kubeload-operator on the host. The shop
# (cluster/shop-image, cluster/manifests/shop-target.yaml) runs behind its
# Service; 60 users are the rows of a ConfigMap, created after the LoadTest
# (an order a GitOps tool may apply them in: the run must wait Pending, its
# message naming the ConfigMap, with no Job, then run); a LoadTest of 3 workers and
# 6 virtual users runs the shop journey (log in, take the token, list items,
# take an id, add it to the cart, check out) with the rows handed out
# `unique` and `onExhausted: stop`, for at most 60 s. The run must end by
# itself, long before the 60 s, once the 60 rows are used; then the shop's
# own counters (GET /shop/stats from the shop's pod IP) must show each of the
# 60 users with exactly 1 login, 1 cart and 1 checkout (each row once across
# the 3 workers, none lost), no other user, and no invalid, mismatched or
# stale token (every step carried the token its own login issued); and the
# LoadTest's status must agree: 60 requests in each step's row, 60
# iterations, none failed.
# Last line: `scenario-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-scenario-e2e
IMAGE=localhost/kubeload/kubeload:dev
SHOP_IMAGE=localhost/kubeload/shop:dev  # shop-target.yaml's
USERS=60
DURATION_S=60
operator_pid=""
was_up=0
users_file=""

E2E_NAME=scenario-e2e
. "$(dirname "$0")/lib.sh"
finish() {
  [ -z "$users_file" ] || rm -f "$users_file"
  host_operator_e2e_finish
}

host_operator_e2e_setup
check "image $SHOP_IMAGE built and imported into the nodes" \
  bash -c "'$root/cluster/shop-image/build.sh' '$SHOP_IMAGE' >/tmp/$E2E_NAME-shop-image.log 2>&1"
kubectl -n "$NS" apply -f "$root/cluster/manifests/shop-target.yaml" >/dev/null
check "the shop rolled out behind its Service" kubectl -n "$NS" rollout status deploy/shop --timeout=120s
shop_ip=$(kubectl -n "$NS" get pods -l app=shop -o jsonpath='{.items[0].status.podIP}' 2>/dev/null)
check "operator ready" start_host_operator 18791

# The users: e2e-user-01 ... e2e-user-60, one row each.
users_file=$(mktemp /tmp/scenario-e2e-users.XXXXXX)
{
  echo "name,password"
  for i in $(seq -w 1 "$USERS"); do echo "e2e-user-$i,pw-$i"; done
} >"$users_file"
started_at=$SECONDS
kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: journey, namespace: $NS}
spec:
  target: {service: {name: shop, port: 8080}}
  workers: 3
  data:
  - name: user
    configMapKeyRef: {name: e2e-users, key: users.csv}
    columns: [name, password]
    mode: unique
    onExhausted: stop
  scenarios:
  - name: buy
    steps:
    - name: login
      method: POST
      path: /shop/login
      headers: {Content-Type: application/json}
      body: '{"user": "\${user.name}", "password": "\${user.password}"}'
      expect: {status: [200]}
      extract:
      - {name: token, json: /token}
    - name: items
      path: /shop/items
      extract:
      - {name: item, json: /items/3/id}
    - name: cart
      method: POST
      path: /shop/cart
      headers: {Authorization: "Bearer \${token}", X-Shop-User: "\${user.name}"}
      body: '{"item": \${item}}'
      expect: {status: [200]}
    - name: checkout
      method: POST
      path: /shop/checkout
      headers: {Authorization: "Bearer \${token}", X-Shop-User: "\${user.name}"}
      checks:
      - {json: /items, equals: "1"}
  load: {connections: 6, duration: ${DURATION_S}s}
  thresholds: ["checkout.errorRate < 1%", "iterations >= $USERS", "failedIterations == 0"]
YAML

# The GitOps order in which the LoadTest comes before its data: the run
# waits Pending, naming the ConfigMap, and creates nothing (a worker pod
# would wait in ContainerCreating, saying why only in an Event) ...
waiting_for_users() {
  for _ in $(seq 1 30); do
    contains "$(jp journey '{.status.phase} {.status.message}')" \
      'Pending ConfigMap "e2e-users" (spec.data\[0\].configMapKeyRef.name) does not exist' && return 0
    sleep 1
  done
  return 1
}
check "without its ConfigMap the run waits Pending, naming it ($(jp journey '{.status.phase}: {.status.message}'))" \
  waiting_for_users
check "... and has created no Job ($(kubectl -n "$NS" get jobs -o name 2>/dev/null | xargs))" \
  test -z "$(kubectl -n "$NS" get jobs -o name 2>/dev/null)"
# ... until it comes.
check "the users' ConfigMap created after the LoadTest" \
  kubectl -n "$NS" create configmap e2e-users --from-file=users.csv="$users_file"

# A run that cannot start (refused spec, pods that never run) ends Failed:
# wait for either, then say which.
check "the run ends" wait_final journey 300
check "phase Succeeded, verdict Pass ($(jp journey '{.status.phase}/{.status.verdict}: {.status.reason}: {.status.message}'))" \
  test "$(jp journey '{.status.phase}/{.status.verdict}')" = Succeeded/Pass
say "applied to final in $((SECONDS - started_at)) s"
check "3 of 3 workers succeeded ($(jp journey '{.status.workers}'))" \
  test "$(jp journey '{.status.workers.desired}/{.status.workers.succeeded}')" = 3/3
# The run's own span, from the workers' start to the final phase: the rows
# ran out and ended it, not the 60 s of spec.load.duration.
span=$(jp journey '{.status.startTime} {.status.completionTime}' | python3 -c '
import datetime, sys
times = sys.stdin.read().split()
at = [datetime.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in times]
print(int((at[1] - at[0]).total_seconds()) if len(at) == 2 else "none")')
check "the run ended itself once the rows ran out: ${span} s from start to end, duration ${DURATION_S} s" \
  bash -c "[ '$span' != none ] && [ '$span' -lt $((DURATION_S - 15)) ]"

# The LoadTest's status: a row per step, each of the 60 iterations once.
for step in login items cart checkout; do
  check "status.requestResults: $step has $USERS requests, 0 failures ($(jp journey "{.status.requestResults[?(@.name==\"$step\")]}"))" \
    test "$(jp journey "{.status.requestResults[?(@.name==\"$step\")].requests}/{.status.requestResults[?(@.name==\"$step\")].failures}")" = "$USERS/0"
done
check "status.scenarioResults: buy has $USERS iterations, 0 failed ($(jp journey '{.status.scenarioResults}'))" \
  test "$(jp journey '{.status.scenarioResults[?(@.name=="buy")].iterations}/{.status.scenarioResults[?(@.name=="buy")].failedIterations}')" = "$USERS/0"

# The shop's view (its counters count this pod's life, all of it this run's).
stats=$(curl -sf --max-time 10 "http://$shop_ip:8080/shop/stats")
check "GET /shop/stats from the shop's pod ($shop_ip)" test -n "$stats"
verdict=$(python3 -c '
import json, sys
try:
    stats = json.loads(sys.argv[1])
except ValueError:
    sys.exit("no JSON from /shop/stats")
users = int(sys.argv[2])
seen = stats["users"]
want = {f"e2e-user-{i:02d}": {"logins": 1, "carts": 1, "checkouts": 1} for i in range(1, users + 1)}
problems = [f"{name}: {seen.get(name)}" for name in want if seen.get(name) != want[name]]
problems += [f"{name} is no user of the ConfigMap" for name in seen if name not in want]
for endpoint in ("login", "items", "cart", "checkout"):
    counts = stats["endpoints"][endpoint]
    if counts["requests"] != users or counts["statuses"] != {"200": users}:
        problems.append(f"{endpoint}: {counts}")
problems += [f"{counter} {stats[counter]}" for counter in
             ("invalidTokens", "mismatchedTokens", "staleTokens") if stats[counter]]
print("; ".join(problems[:10]) or "ok")
' "$stats" "$USERS" 2>&1)
check "the shop saw each of the $USERS users log in, add to the cart and check out exactly once, every token its own ($verdict)" \
  test "$verdict" = ok

finish
