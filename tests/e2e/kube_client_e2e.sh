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
# an exec credential plugin handing out that token (and one that fails, whose
# stderr the error quotes), kubectl-kubeload through the exec plugin and with
# --as/--as-group/--request-timeout, KUBECONFIG split over two files, a CONNECT
# proxy on loopback (tests/e2e/connect_proxy.py, counting its tunnels),
# tls-server-name, and a kubeconfig with a broken field, whose error must name
# that field.
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

# ------------------------------------------------------------------ an exec credential plugin
# The plugin hands out the service account's token from the TokenRequest API
# (kubectl create token, with the admin kubeconfig it gets through exec.env),
# as an ExecCredential; the kubeconfig has no other credential for the user.
if [ -n "$token" ]; then
  cat >"$work/sa-token-plugin.sh" <<P
#!/bin/sh
echo run >>"$work/plugin-runs"
printf '%s' "\$KUBERNETES_EXEC_INFO" >"$work/plugin-exec-info"
tok=\$(KUBECONFIG="\$ADMIN_KUBECONFIG" kubectl -n "\$SA_NAMESPACE" create token probe-reader --duration=10m) || exit 1
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "\$tok"
P
  cat >"$work/failing-plugin.sh" <<'P'
#!/bin/sh
echo "e2e: your session expired; run the login command" >&2
exit 4
P
  chmod +x "$work/sa-token-plugin.sh" "$work/failing-plugin.sh"
  exec_kubeconfig() { # command
    cat <<K
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$server", certificate-authority-data: "$ca_data"}
users:
- name: exec
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $1
      interactiveMode: Never
      provideClusterInfo: true
      env:
      - {name: ADMIN_KUBECONFIG, value: "$KUBECONFIG"}
      - {name: SA_NAMESPACE, value: "$NS"}
contexts:
- name: exec
  context: {cluster: c, user: exec, namespace: "$NS"}
current-context: exec
K
  }
  # A relative command resolves against the kubeconfig's directory.
  exec_kubeconfig ./sa-token-plugin.sh >"$work/exec.kubeconfig"
  run_probe exec --kubeconfig "$work/exec.kubeconfig" --smoke --expect-forbidden
  check "the exec plugin ran (once: its token has no expiry and was never refused)" \
    test "$(wc -l <"$work/plugin-runs" 2>/dev/null)" = 1
  check "the plugin got KUBERNETES_EXEC_INFO with the cluster's server" \
    grep -qF "\"server\":\"$server\"" "$work/plugin-exec-info"
  # The plugin binary with the same kubeconfig: the API server knows it as the
  # service account (403 on loadtests names it).
  plugin_bin="$(ls -t "$root"/build*/bin/kubectl-kubeload 2>/dev/null | head -n1)"
  if [ -n "$plugin_bin" ]; then
    out="$("$plugin_bin" report nope --kubeconfig "$work/exec.kubeconfig" 2>&1)"
    check "kubectl-kubeload authenticates through the exec plugin (the API server names the service account: $out)" \
      contains "$out" "system:serviceaccount:$NS:probe-reader"
    out="$("$plugin_bin" report nope -n "$NS" --kubeconfig "$KUBECONFIG" \
      --as "system:serviceaccount:$NS:probe-reader" --as-group system:authenticated 2>&1)"
    check "kubectl-kubeload --as/--as-group impersonates ($out)" \
      contains "$out" "system:serviceaccount:$NS:probe-reader"
    # cpprestsdk reports a cut handshake or read, not the word "timeout".
    out="$("$plugin_bin" report nope -n "$NS" --kubeconfig "$KUBECONFIG" --request-timeout 1ms 2>&1)"
    check "kubectl-kubeload --request-timeout 1ms gives up ($out)" contains "$out" "cannot reach the API server"
  else
    bad "build/bin/kubectl-kubeload is built (for the exec and --as checks)"
  fi
  exec_kubeconfig "$work/failing-plugin.sh" >"$work/exec-failing.kubeconfig"
  "$probe" --kubeconfig "$work/exec-failing.kubeconfig" --smoke >"$work/exec-failing.out" 2>&1
  rc=$?
  check "a failing exec plugin: the error quotes the command, exit code and stderr" \
    bash -c "[ $rc -ne 0 ] && grep -qF 'exec plugin \"$work/failing-plugin.sh\" failed with exit code 4: e2e: your session expired; run the login command' '$work/exec-failing.out'"
  [ "$rc" -ne 0 ] || sed 's/^/  | /' "$work/exec-failing.out"

  # ---------------------------------------------------------------- KUBECONFIG as a list of files
  # The cluster and current-context in one file, the user and context in
  # another, a missing file first: kubectl's merge.
  mkdir -p "$work/split"
  cat >"$work/split/clusters" <<K
current-context: split
clusters:
- name: c
  cluster: {server: "$server", certificate-authority-data: "$ca_data"}
K
  cat >"$work/split/users" <<K
current-context: ignored-second
users:
- name: sa-file
  user: {tokenFile: ../token}
contexts:
- name: split
  context: {cluster: c, user: sa-file, namespace: "$NS"}
K
  KUBECONFIG="$work/split/missing:$work/split/clusters:$work/split/users" \
    run_probe split-kubeconfig --smoke --expect-forbidden

  # ---------------------------------------------------------------- a CONNECT proxy, and tls-server-name
  python3 "$root/tests/e2e/connect_proxy.py" "$work/proxy.port" "$work/proxy.log" 2>"$work/proxy.err" &
  proxy_pid=$!
  for _ in $(seq 50); do [ -s "$work/proxy.port" ] && break; sleep 0.1; done
  proxy_port="$(cat "$work/proxy.port" 2>/dev/null)"
  sed "s#certificate-authority-data: \"$ca_data\"#&, proxy-url: \"http://127.0.0.1:$proxy_port\"#" \
    "$work/token.kubeconfig" >"$work/proxy.kubeconfig"
  run_probe proxy --kubeconfig "$work/proxy.kubeconfig" --smoke --expect-forbidden
  host_port="${server#https://}"
  check "the proxy tunnelled the calls (CONNECT $host_port, list and watch: $(wc -l <"$work/proxy.log") tunnels)" \
    bash -c "[ \$(grep -cF 'CONNECT $host_port' '$work/proxy.log') -ge 1 ]"
  kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null
  # The API server's certificate always names "kubernetes": with that as
  # tls-server-name the server's address need not be in the certificate.
  sed "s#certificate-authority-data: \"$ca_data\"#&, tls-server-name: kubernetes#" \
    "$work/token.kubeconfig" >"$work/sni.kubeconfig"
  run_probe tls-server-name --kubeconfig "$work/sni.kubeconfig" --smoke --expect-forbidden
  sed "s#certificate-authority-data: \"$ca_data\"#&, tls-server-name: not-the-apiserver.invalid#" \
    "$work/token.kubeconfig" >"$work/wrong-sni.kubeconfig"
  "$probe" --kubeconfig "$work/wrong-sni.kubeconfig" --smoke >"$work/wrong-sni.out" 2>&1
  rc=$?
  check "a tls-server-name the certificate does not name fails the TLS handshake" \
    bash -c "[ $rc -ne 0 ] && grep -qi 'certificate\|handshake\|verify' '$work/wrong-sni.out'"
  [ "$rc" -ne 0 ] || sed 's/^/  | /' "$work/wrong-sni.out"
fi

# ------------------------------------------------------------------ a broken kubeconfig: the error names the field and file
sed "s#client-key: .*#client-key: $work/no-such.key#" "$KUBECONFIG" >"$work/broken.kubeconfig"
"$probe" --kubeconfig "$work/broken.kubeconfig" --namespace "$NS" --smoke >"$work/broken.out" 2>&1
rc=$?
check "a missing client-key file fails with an error naming the field and the path" \
  bash -c "[ $rc -ne 0 ] && grep -q 'field client-key: cannot read $work/no-such.key' '$work/broken.out'"
[ "$rc" -ne 0 ] || sed 's/^/  | /' "$work/broken.out"

finish
