#!/usr/bin/env bash
# End to end: scheduled runs (docs/schedules.md) on the local Kubernetes
# (scripts/cluster), kubeload-operator on the host. Three schedules of
# `* * * * *`, side by side for about two and a half minutes: one of short
# runs makes a run at each tick (two in about two minutes), each Succeeded
# and recorded, its status naming the last runs and Ready; `Forbid` with a
# run longer than a minute skips the tick that finds it going (an Event,
# status.lastSkippedTime) and creates no second run meanwhile; `Replace`
# deletes the running LoadTest at the next tick and creates the tick's run.
# The admin's policy applies to every run a schedule creates: a schedule
# asking for more connections than the operator's --max-connections makes a
# run that fails PolicyViolation, and the schedule turns Ready=False,
# Stalled=True (LastRunFailed), as a dashboard or an alert watching it needs.
# Last line: `schedule-e2e: N passed, M failed`; SKIP (exit 0) where the
# machine cannot run a local cluster.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cluster="$root/scripts/cluster"
NS=kubeload-schedule-e2e
IMAGE=localhost/kubeload/kubeload:dev
operator_pid=""
was_up=0

E2E_NAME=schedule-e2e
. "$(dirname "$0")/lib.sh"
finish() { host_operator_e2e_finish; }

host_operator_e2e_setup
check "operator ready" start_host_operator 18691 --max-connections 10

apply_schedule() { # name concurrencyPolicy load-yaml
  kubectl apply -f - >/dev/null <<YAML
apiVersion: kubeload.dev/v1alpha1
kind: LoadTestSchedule
metadata: {name: $1, namespace: $NS}
spec:
  schedule: "* * * * *"
  concurrencyPolicy: $2
  template:
    spec:
      target: {service: {name: nginx, port: 80}}
      load: $3
YAML
}
runs() { # schedule: its LoadTests' names, oldest first
  kubectl -n "$NS" get lt -l "kubeload.dev/schedule=$1" --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{end}' 2>/dev/null | xargs
}
sjp() { kubectl -n "$NS" get lts "$1" -o jsonpath="$2" 2>/dev/null; }
ljp() { kubectl -n "$NS" get lt "$1" -o jsonpath="$2" 2>/dev/null; }
event_reasons() { kubectl -n "$NS" get events --field-selector "involvedObject.name=$1" -o jsonpath='{.items[*].reason}' 2>/dev/null; }
count() { wc -w <<<"$1" | tr -d ' '; }

started=$SECONDS
apply_schedule every Forbid "{connections: 1, requests: 50}"
apply_schedule forbid Forbid "{connections: 1, duration: 100s}"
apply_schedule replace Replace "{connections: 1, duration: 10m}"
apply_schedule over-policy Forbid "{connections: 50, requests: 50}"

# The first tick (at most a minute away) makes one run of each.
first_tick() { for _ in $(seq 1 400); do [ -n "$(runs replace)" ] && [ -n "$(runs forbid)" ] && return 0; sleep 0.2; done; return 1; }
check "each schedule's first tick makes a run" first_tick
replaced=$(runs replace)
forbid_first=$(runs forbid)
check "the runs carry the schedule's test label and their tick" \
  test "$(ljp "$forbid_first" '{.metadata.labels.kubeload\.dev/test}')" = forbid -a \
       -n "$(ljp "$forbid_first" '{.metadata.annotations.kubeload\.dev/scheduled-at}')"
check "the schedule owns its runs" \
  test "$(ljp "$forbid_first" '{.metadata.ownerReferences[0].kind}')" = LoadTestSchedule

# Over the policy: the first tick's run is refused, and the schedule says so.
over_policy_failed() {
  for _ in $(seq 1 150); do
    local run
    run=$(runs over-policy)
    [ -n "$run" ] && [ "$(ljp "${run%% *}" '{.status.phase}')" = Failed ] &&
      [ "$(sjp over-policy '{.status.conditions[?(@.type=="Ready")].status}')" = False ] && return 0
    sleep 0.2
  done
  return 1
}
check "policy: a scheduled run over --max-connections fails, and its schedule turns Ready=False" over_policy_failed
over_run=$(runs over-policy | cut -d' ' -f1)
check "policy: its reason is PolicyViolation, naming the limit ($(ljp "$over_run" '{.status.message}'))" \
  test "$(ljp "$over_run" '{.status.reason}')" = PolicyViolation
check "policy: the schedule is Ready=False, Stalled=True, LastRunFailed ($(sjp over-policy '{.status.conditions[?(@.type=="Ready")].message}'))" \
  test "$(sjp over-policy '{.status.conditions[?(@.type=="Ready")].reason}/{.status.conditions[?(@.type=="Stalled")].status}')" = LastRunFailed/True

# The second tick, about a minute later.
second_tick() {
  for _ in $(seq 1 400); do
    [ "$(count "$(runs every)")" -ge 2 ] && [ "$(count "$(runs replace)")" -ge 1 ] &&
      [ "$(runs replace)" != "$replaced" ] && return 0
    sleep 0.2
  done
  return 1
}
check "a second tick: 'every' made a second run, 'replace' a new one ($((SECONDS - started))s)" second_tick
check "Replace: the running LoadTest was deleted ($replaced)" \
  bash -c "for _ in \$(seq 1 100); do kubectl -n '$NS' get lt '$replaced' >/dev/null 2>&1 || exit 0; sleep 0.2; done; exit 1"
check "Replace: its new run is the only one" test "$(count "$(runs replace)")" = 1
check "Forbid: the tick that found a run going made none ($(runs forbid))" test "$(runs forbid)" = "$forbid_first"
check "Forbid: it says so in an Event ($(event_reasons forbid))" contains "$(event_reasons forbid)" RunStillActive
check "Forbid: and in status.lastSkippedTime" test -n "$(sjp forbid '{.status.lastSkippedTime}')"

every_done() {
  for _ in $(seq 1 300); do
    local done=0
    for run in $(runs every); do [ "$(ljp "$run" '{.status.phase}')" = Succeeded ] && done=$((done + 1)); done
    [ "$done" -ge 2 ] && return 0
    sleep 0.2
  done
  return 1
}
check "'every': two runs in about two minutes, both Succeeded ($((SECONDS - started))s)" every_done
check "'every': each left a record of the test" \
  test "$(kubectl -n "$NS" get ltr -l kubeload.dev/test=every -o name 2>/dev/null | wc -l)" -ge 2
check "'every': its status names the last runs and is Ready ($(sjp every '{.status.conditions[?(@.type=="Ready")].reason}'))" \
  test "$(sjp every '{.status.conditions[?(@.type=="Ready")].status}')" = True -a -n "$(sjp every '{.status.lastRuns[0].name}')"
check "'every': the last schedule time is set" test -n "$(sjp every '{.status.lastScheduleTime}')"

finish
