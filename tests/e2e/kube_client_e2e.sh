#!/usr/bin/env bash
# End-to-end check of the operator's Kubernetes client (operator/kube) against a
# real kube-apiserver: the probe (tests/fixtures/kube_client_probe) creates, gets,
# merge-patches and server-side-applies ConfigMaps, lists with selectors and
# pages, watches changes made meanwhile, resumes a watch from an old
# resourceVersion, gets 410 for a too-old one and relists, takes a 409 on a stale
# write and retries it, patches a status subresource, records an Event and
# deletes; a ListWatch whose connections are cut (through a forwarding proxy in
# the probe, so the shared API server is never restarted) backs off, reconnects
# and catches up. Then other credentials are tried: the kubeconfig flattened to
# *-data fields, a service-account bearer token (and tokenFile) limited by RBAC,
# and a kubeconfig with a broken field, whose error must name that field.
#
# Uses the cluster that is already running; it never starts or stops one:
#   $KUBECONFIG if set, else the one `scripts/cluster env` prints.
# The probe binary: $KUBE_CLIENT_PROBE, else the newest build*/bin/kube_client_probe.
# Last line: `kube-client-e2e: N passed, M failed` (exit 1 if M > 0), or a SKIP
# line (exit 0) when no API server can be reached.
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
E2E_NAME=kube-client-e2e
. "$(dirname "$0")/lib.sh"
finish() {
  report
  exit $?
}

# ------------------------------------------------------------------ find things
if [ -z "${KUBECONFIG:-}" ] && [ -x "$root/scripts/cluster" ]; then
  eval "$("$root/scripts/cluster" env 2>/dev/null)" || true
fi
[ -n "${KUBECONFIG:-}" ] || skip "no KUBECONFIG and no scripts/cluster env"
[ -f "$KUBECONFIG" ] || skip "KUBECONFIG=$KUBECONFIG does not exist (is the cluster up? scripts/cluster up)"
command -v kubectl >/dev/null || skip "kubectl not installed"
kubectl get --raw /readyz --request-timeout=5s >/dev/null 2>&1 ||
  skip "no API server answers for KUBECONFIG=$KUBECONFIG (scripts/cluster status)"

probe="${KUBE_CLIENT_PROBE:-}"
if [ -z "$probe" ]; then
  # The most recently built one: other build dirs may hold a stale probe.
  probe="$(ls -t "$root"/build*/bin/kube_client_probe 2>/dev/null | head -n1)"
fi
if [ -z "$probe" ] || [ ! -x "$probe" ]; then
  bad "kube_client_probe is built (cmake --build <dir> --target kube_client_probe, or set KUBE_CLIENT_PROBE)"
  finish
fi
say "API server: $(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'), probe: $probe"

suffix="$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
NS="kube-client-e2e-$suffix"
CRD_GROUP="e2e-$suffix.kubeload.dev"
work="$(mktemp -d /tmp/kube-client-e2e.XXXXXX)"
cleanup() {
  kubectl delete namespace "$NS" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete crd "probes.$CRD_GROUP" --wait=false --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
kubectl create namespace "$NS" >/dev/null || { bad "create namespace $NS"; finish; }

# Runs the probe; each "ok -"/"not ok -" line it prints counts as one check.
run_probe() { # label args...
  local label="$1"; shift
  local out="$work/probe-$label.out" line
  "$probe" "$@" >"$out" 2>&1
  local rc=$?
  while IFS= read -r line; do
    case "$line" in
      "ok - "*) ok "[$label] ${line#ok - }" ;;
      "not ok - "*) bad "[$label] ${line#not ok - }" ;;
      "# "*) say "note [$label] ${line#\# }" ;;
    esac
  done <"$out"
  if [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$out"; then
    bad "[$label] probe exited $rc without reporting a failed check:"
    sed 's/^/  | /' "$out"
  fi
  return "$rc"
}

# ------------------------------------------------------------------ the client, as admin (client certificate files)
run_probe admin --kubeconfig "$KUBECONFIG" --namespace "$NS" --crd-group "$CRD_GROUP"

# What the probe did, seen by kubectl rather than by our own client.
check "kubectl sees the Event the probe recorded" \
  test "$(kubectl -n "$NS" get events --field-selector reason=ProbeReason \
    -o jsonpath='{.items[0].message}')" = "the probe says hello"
check "kubectl sees probe-cm deleted" \
  bash -c "kubectl -n '$NS' get configmap probe-cm 2>&1 | grep -q NotFound"
check "kubectl still sees probe-cm-2, which the probe did not delete" \
  bash -c "kubectl -n '$NS' get configmap probe-cm-2 -o name >/dev/null"

# ------------------------------------------------------------------ inline *-data credentials
kubectl config view --raw --flatten --minify >"$work/flat.kubeconfig"
if grep -q 'client-key-data' "$work/flat.kubeconfig" && grep -q 'certificate-authority-data' "$work/flat.kubeconfig"; then
  run_probe inline-data --kubeconfig "$work/flat.kubeconfig" --namespace "$NS" --smoke
else
  bad "kubectl config view --flatten produced *-data fields"
fi

# ------------------------------------------------------------------ bearer token of a service account, limited by RBAC
server="$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')"
ca_data="$(kubectl config view --raw --flatten --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
kubectl -n "$NS" create serviceaccount probe-reader >/dev/null &&
  kubectl -n "$NS" create role cm-reader --verb=get,list,watch --resource=configmaps >/dev/null &&
  kubectl -n "$NS" create rolebinding probe-reader --role=cm-reader \
    --serviceaccount="$NS:probe-reader" >/dev/null
token="$(kubectl -n "$NS" create token probe-reader --duration=10m 2>/dev/null)"
if [ -n "$token" ]; then
  printf '%s\n' "$token" >"$work/token"
  cat >"$work/token.kubeconfig" <<K
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$server", certificate-authority-data: "$ca_data"}
users:
- name: sa
  user: {token: "$token"}
- name: sa-file
  user: {tokenFile: token}
contexts:
- name: token
  context: {cluster: c, user: sa, namespace: "$NS"}
- name: token-file
  context: {cluster: c, user: sa-file, namespace: "$NS"}
current-context: token
K
  run_probe token --kubeconfig "$work/token.kubeconfig" --smoke --expect-forbidden
  sed 's/^current-context: token$/current-context: token-file/' "$work/token.kubeconfig" >"$work/tokenfile.kubeconfig"
  run_probe token-file --kubeconfig "$work/tokenfile.kubeconfig" --smoke --expect-forbidden
else
  bad "kubectl create token for the probe's service account"
fi

# ------------------------------------------------------------------ a broken kubeconfig: the error names the field and file
sed "s#client-key: .*#client-key: $work/no-such.key#" "$KUBECONFIG" >"$work/broken.kubeconfig"
"$probe" --kubeconfig "$work/broken.kubeconfig" --namespace "$NS" --smoke >"$work/broken.out" 2>&1
rc=$?
check "a missing client-key file fails with an error naming the field and the path" \
  bash -c "[ $rc -ne 0 ] && grep -q 'field client-key: cannot read $work/no-such.key' '$work/broken.out'"
[ "$rc" -ne 0 ] || sed 's/^/  | /' "$work/broken.out"

finish
