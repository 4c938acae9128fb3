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
