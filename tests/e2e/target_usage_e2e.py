#!/usr/bin/env python3
"""status.target on the local cluster, against its own Prometheus.

kubeload-operator (--prometheus-url: the cluster's Prometheus, which scrapes
the kubelets' cAdvisor every 5 s) runs a load sweep against nginx. The test
then reads the raw cAdvisor samples of the nginx pod over the same window
itself and checks that status.target agrees: CPU (slope of the counter) and
resident memory (highest sample); that the per-stage CPU rises with the
load; and that a url target without podSelector says why it has none.

Needs the cluster up (scripts/cluster up) and build/bin/kubeload-operator.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
NS = "kl-target-e2e"
RATES = [200, 1000, 3000]
STAGE_S = 25

passed = failed = 0


def check(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"target-usage e2e: PASS {name}", flush=True)
    else:
        failed += 1
        print(f"target-usage e2e: FAIL {name} {detail}", flush=True)


def kubectl(*args, check_rc=True, stdin=None):
    done = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True)
    if check_rc and done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def prometheus_query(url, expr, at):
    body = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"}).encode()
    with urllib.request.urlopen(url + "/api/v1/query", data=body, timeout=10) as answer:
        return json.load(answer)["data"]["result"]


def timestamp(text):
    return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")) - time.timezone


def condition(status, kind):
    return next((c for c in status.get("conditions", []) if c["type"] == kind), {})


def wait_condition(name, kind, timeout_s):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        status = json.loads(kubectl("-n", NS, "get", "lt", name, "-o", "json"))
        if condition(status.get("status", {}), kind).get("status") in ("True", "False"):
            return status["status"]
        time.sleep(2)
    return json.loads(kubectl("-n", NS, "get", "lt", name, "-o", "json")).get("status", {})


LOADTESTS = f"""
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {{name: sweep}}
spec:
  target: {{service: {{name: nginx}}}}
  load:
    maxConnections: 200
    warmup: 3s
    stages:
{"".join(f"    - {{duration: {STAGE_S}s, rate: {rate}}}{chr(10)}" for rate in RATES)}
---
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {{name: by-url}}
spec:
  target: {{url: "http://nginx.{NS}.svc/"}}
  load: {{duration: 3s, connections: 2}}
"""


def main():
    os.environ["KUBECONFIG"] = subprocess.run(
        [CLUSTER, "env"], check=True, capture_output=True, text=True).stdout.strip().split("=", 1)[1]
    prometheus = subprocess.run([CLUSTER, "prometheus-url"], check=True, capture_output=True,
                                text=True).stdout.strip()
    subprocess.run([os.path.join(ROOT, "cluster", "kubeload-image", "build.sh")], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([os.path.join(ROOT, "scripts", "install-crd")], check=True)
    kubectl("delete", "namespace", NS, "--ignore-not-found", "--wait=true", "--timeout=120s")
    kubectl("create", "namespace", NS)
    kubectl("-n", NS, "apply", "-f", os.path.join(ROOT, "cluster", "manifests", "nginx-target.yaml"))
    kubectl("-n", NS, "rollout", "status", "deploy/nginx", "--timeout=120s")
    workdir = tempfile.mkdtemp(prefix="kubeload-target-e2e-")
    log = open(os.path.join(workdir, "operator.log"), "w")
    operator = subprocess.Popen(
        [os.path.join(ROOT, "build", "bin", "kubeload-operator"), "--namespace", NS,
         "--loadgen-image", "localhost/kubeload/kubeload:dev",
         "--metrics-addr", "127.0.0.1:18391", "--health-addr", "127.0.0.1:18392",
         "--prometheus-url", prometheus, "--prometheus-scrape-interval", "5s"],
        stdout=log, stderr=log)
    try:
        kubectl("-n", NS, "apply", "-f", "-", stdin=LOADTESTS)
        by_url = wait_condition("by-url", "TargetMetrics", 180)
        # status.target still says where the load went (its addresses, and
        # other runs that loaded them: docs/experiments.md), but holds no
        # measurement: no selector, pods, CPU or memory.
        unmeasured = by_url.get("target", {})
        check(condition(by_url, "TargetMetrics").get("reason") == "NoPodSelector"
              and not {"selector", "pods", "cpuCores", "memoryBytes"} & unmeasured.keys(),
              "a url target without podSelector: no measurement in status.target "
              f"(keys {sorted(unmeasured)}), TargetMetrics False NoPodSelector",
              json.dumps(condition(by_url, "TargetMetrics")))

        status = wait_condition("sweep", "TargetMetrics", 60 + len(RATES) * STAGE_S + 180)
        target_condition = condition(status, "TargetMetrics")
        check(target_condition.get("status") == "True" and target_condition.get("reason") == "Measured",
              "the sweep: TargetMetrics True Measured", json.dumps(target_condition))
        target = status.get("target", {})
        print(f"target-usage e2e: status.target = {json.dumps(target)}")
        check(target.get("selector") == "app=nginx" and target.get("pods") == 1
              and target.get("restarts") == 0,
              "status.target: the Service's selector app=nginx, 1 pod, 0 restarts")
        pod = kubectl("-n", NS, "get", "pods", "-l", "app=nginx", "-o",
                      "jsonpath={.items[0].metadata.name}")
        start, end = (timestamp(target["window"][k]) for k in ("start", "end"))
        check(abs(start - timestamp(status["startTime"]) - 3) < 1.01,
              "the window starts after the 3 s warm-up")
        length = int(end - start)
        series = f'{{namespace="{NS}",pod="{pod}",container="nginx"}}'
        cpu = prometheus_query(prometheus, f"container_cpu_usage_seconds_total{series}[{length}s]", end)
        samples = [(float(t), float(v)) for t, v in cpu[0]["values"]] if len(cpu) == 1 else []
        if len(samples) >= 2:
            slope = (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])
            mean = target.get("cpuCores", {}).get("mean", -1)
            check(abs(mean - slope) <= max(0.03, 0.15 * slope),
                  f"CPU mean {mean} cores agrees with the counter's slope {slope:.4f} over "
                  f"{len(samples)} raw samples")
            check(target["cpuCores"].get("max", -1) >= mean,
                  f"CPU max {target['cpuCores'].get('max')} >= mean")
        else:
            check(False, "Prometheus has the nginx container's CPU samples", json.dumps(cpu)[:300])
        rss = prometheus_query(prometheus, f"container_memory_rss{series}[{length}s]", end)
        highest = max((float(v) for _, v in rss[0]["values"]), default=0) if len(rss) == 1 else 0
        got = target.get("memoryBytes", {}).get("max", -1)
        check(highest > 0 and abs(got - highest) <= 0.1 * highest,
              f"RSS max {got} B agrees with the highest raw sample {highest:.0f} B")
        stages = target.get("stages", [])
        means = [row.get("cpuCores", {}).get("mean") for row in stages]
        check(len(means) == len(RATES) and all(m is not None for m in means)
              and all(a < b for a, b in zip(means, means[1:])),
              f"per-stage CPU rises with the load ({RATES} req/s): {means}")
        wide = kubectl("-n", NS, "get", "lt", "sweep", "-o", "wide")
        check("TARGET-CPU" in wide and str(target.get("cpuCores", {}).get("mean")) in wide,
              "kubectl get lt -o wide shows Target-CPU", wide)
    finally:
        operator.terminate()
        operator.wait()
        log.close()
        kubectl("delete", "namespace", NS, "--wait=false", check_rc=False)
    print(f"target-usage e2e: {passed} passed, {failed} failed (operator log: {workdir}/operator.log)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
