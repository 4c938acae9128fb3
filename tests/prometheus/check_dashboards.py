#!/usr/bin/env python3
"""Checks the Grafana dashboards in dashboards/ against a real Prometheus.

Usage: python3 tests/prometheus/check_dashboards.py [--loadgen build/bin/loadgen]
           [--operator build/bin/kubeload-operator] [--fault-server build/bin/fault_server]
           [--nginx /usr/sbin/nginx] [--prometheus prometheus] [--kubeconfig PATH]
           [--no-operator] [-v]

The operator's panels need the project's local Kubernetes (scripts/cluster
up; this check never brings it up, down or restarts it). The kubeconfig is
--kubeconfig, else $KUBECONFIG, else the one `scripts/cluster env` names.

What runs, all stopped (and the namespace deleted) at the end, also on failure:
  - on the local cluster, in namespace kubeload-dash only (created fresh,
    deleted at the end; other tests may use the cluster meanwhile): the CRD
    (applied if missing), nginx from cluster/manifests/nginx-target.yaml, the
    worker image localhost/kubeload/kubeload:dev (cluster/kubeload-image/build.sh,
    from build/bin), and three small LoadTests: dash-pass (2 workers, 4
    connections, 400 requests, passes its thresholds), dash-gate (misses `p50 < 0.001ms`:
    phase Succeeded, verdict Fail) and dash-invalid (`nope.p99 < 10ms`: phase
    Failed, InvalidSpec, no pods), labelled kubeload.dev/test; run to their
    end by build/bin/kubeload-operator on the host (--namespace kubeload-dash,
    --resync-period 1s so it keeps reconciling after the runs ended);
  - on 127.0.0.1: nginx (tests/integration/servers.py) and our fault_server
    as targets; a closed-model LoadTest "dash-closed" (labelled namespace
    kubeload-dash) as two `loadgen worker` processes, started with POST /start
    the way the operator does, loading fault_server with a weighted mix
    (/slow/5, /ok, /status/503) in two stages; its live metrics are the
    workers' /metrics; a scenario LoadTest "dash-journey" (one worker, two
    virtual users logging in to fault_server's shop, carrying the token to
    the cart and the checkout, 15 ms of think time) for the iteration
    panels; an open-model plain run, `loadgen -r 200
    --metrics-addr ...` against nginx (labels loadtest="local", no namespace),
    for the target rate and the late/dropped counters;
  - Debian's prometheus with a temp config and temp storage, scraping the
    loadgen processes and the operator every second.

Checks:
  - static: the dashboard JSON model (schemaVersion, unique uid and panel ids,
    gridPos inside the 24-column grid and not overlapping, the datasource
    template variable on every panel and target, namespace/loadtest query
    variables from label_values, every $variable defined), and every metric
    name a query uses is one the C++ sources define (loadgen/engine/metrics.cpp,
    operator/operator_metrics.cpp), and every defined metric is on a dashboard;
  - the alert rules: `promtool check rules`, `promtool test rules
    tests/prometheus/rules_test.yaml` (when KubeloadRunFailed fires), and
    every alert's runbook_url is a section of docs/runbooks.md;
  - the three LoadTests' statuses (Succeeded/Pass, Succeeded/Fail, Failed);
  - the template variables' label_values queries return exactly the label
    values of what runs;
  - every panel target, with the variables substituted (All: ".*"; then one
    LoadTest at a time) and $__rate_interval as 5s, is accepted by
    /api/v1/query (a syntax error is a 400) and returns at least one finite
    sample; panels that need an open-model run (they use
    kubeload_target_requests_per_second)
    must be empty for the closed-model LoadTest and the journey, and the
    iteration panels (kubeload_iteration*) for every run but the journey;
  - a few panels' values against what the run is known to produce (the
    workers and runs present, status codes 200/503, only "status" errors, the
    stage, target rate 200/s and achieved ~200/s, p50 of /slow/5 in the 5-10 ms
    bucket, the journey's one scenario iterating with none failed and its
    p50 in the 10-25 ms bucket), once a whole 5 s rate window of scrapes is in; on the operator
    side, the phase and verdict counts, and each LoadTest's phase, verdict,
    RPS, p50, p99, error ratio and requests equal to its status as
    `kubectl get loadtests -o json` reads it back; reconciles/s > 0;
  - every metric name the dashboards query was scraped;
  - Prometheus' naming conventions over what was scraped: no name says rps
    or rate (a rate is ..._per_second), a quantile label only on summaries
    (types from /api/v1/metadata);
  - the rules of Grafana's dashboard linter that apply (lint_rules: titles
    and descriptions, units, rate windows, counters only through
    rate/increase, variables refreshed on time change);
  - per test (the newest finished run of the kubeload.dev/test label, by
    completionTime): the trend panels equal that run's status, the verdict
    panel shows it and the run before, the run-window annotations its start
    and end; the chart's alert rules (charts/kubeload/files/
    prometheus-rules.yaml) loaded by this Prometheus fire for the failed run
    and, when the gated run ended after the passing one, for the regression;
  - last, dash-invalid deleted: the operator's /metrics has no series of it
    left, and its test's last failure stays.

About a minute with the cluster (a good half of it the image build),
25 s without. Prints one line per check (PASS/FAIL/SKIP), ends with
"dashboards: N passed, M failed"; exit 1 on any failure. Without a
prometheus binary it prints SKIP and exits 0. Without a reachable cluster
(no kubeconfig, or `kubectl get --raw /readyz` fails), with --no-operator, or
without the operator binary, it checks the results dashboard's queries for
syntax only and says so in a "note: !!! OPERATOR PANELS NOT CHECKED WITH
DATA ..." line, first and again before the last line.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from servers import (LOOPBACK, FaultServer, Nginx, free_port, read_tail,  # noqa: E402
                     stop_process, wait_for_listener)

DASHBOARDS = ("kubeload-run.json", "kubeload-results.json")
METRIC_SOURCES = ("loadgen/engine/metrics.cpp", "operator/operator_metrics.cpp")
PANEL_TYPES = {"row", "timeseries", "stat", "table"}
# Series that exist only while a run is under way: the LoadTests here end
# before Prometheus starts scraping (tests/unit/operator/metrics_test.cpp
# checks their values).
ONLY_WHILE_RUNNING = {"kubeload_loadtest_run_deadline_timestamp_seconds"}
RULES_FILE = os.path.join(ROOT, "charts", "kubeload", "files", "prometheus-rules.yaml")
RULES_TEST = os.path.join(HERE, "rules_test.yaml")
RUNBOOKS = os.path.join(ROOT, "docs", "runbooks.md")
# Name parts that say a rate or a unit other than the base one
# (prometheus.io/docs/practices/naming): a rate is ..._per_second.
WRONG_UNIT = re.compile(r"(^|_)(rps|qps|rate|ms|milliseconds|percent)(_|$)")
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
BUILTINS = {"__rate_interval": "5s", "__interval": "1s", "__range": "1m", "__range_s": "60",
            "__range_ms": "60000"}
NAMESPACE = "kubeload-dash"
CLOSED = "dash-closed"
JOURNEY = "dash-journey"  # a scenario LoadTest: the iteration panels' data
JOURNEY_STEPS = ("login", "items", "cart", "checkout")
OPEN = "local"  # a plain `loadgen --metrics-addr` run is labelled loadtest="local"
# The LoadTests the operator runs on the local cluster, in NAMESPACE.
PASSING = "dash-pass"
GATED = "dash-gate"
INVALID = "dash-invalid"
TEST_LABEL = "dashboards"  # kubeload.dev/test of PASSING and GATED
INVALID_TEST_LABEL = "dashboards-invalid"
WORKER_IMAGE = "localhost/kubeload/kubeload:dev"
CRD_NAME = "loadtests.kubeload.dev"
CRD_FILE = "crds/kubeload.dev_loadtests.yaml"
NGINX_MANIFEST = os.path.join(ROOT, "cluster", "manifests", "nginx-target.yaml")
# kubectl's words for "the API server is not there right now".
API_SERVER_AWAY = re.compile(r"connection (to the server .* was )?refused|Unable to connect to "
                             r"the server|the server is currently unable|ServiceUnavailable")
DEADLINE_S = 45


# ------------------------------------------------------------------ reporting

class Report:
    def __init__(self, verbose):
        self.passed = 0
        self.failed = 0
        self.verbose = verbose

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS {name}" + (f": {detail}" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}", flush=True)
        return ok

    def note(self, text):
        print(f"note: {text}", flush=True)

    def debug(self, text):
        if self.verbose:
            print(f"  {text}", flush=True)


# --------------------------------------------------------------- static checks

def defined_metrics():
    """{name: is_histogram} from the C++ sources that register the metrics."""
    names = {}
    for source in METRIC_SOURCES:
        with open(os.path.join(ROOT, source)) as f:
            text = f.read()
        for match in re.finditer(r'"(kubeload_[a-z0-9_]+)"', text):
            names[match[1]] = False
        for match in re.finditer(r'BuildHistogram\(\)[^"]*"(kubeload_[a-z0-9_]+)"', text):
            names[match[1]] = True
    return names


def series_names(metrics):
    """Every series name the exposition has: histograms add _bucket, _sum, _count."""
    names = set()
    for name, histogram in metrics.items():
        if histogram:
            names.update(name + suffix for suffix in ("_bucket", "_sum", "_count"))
        else:
            names.add(name)
    return names


def metric_names(expr):
    return set(re.findall(r"\b(kubeload_[a-z0-9_]+)\b", expr))


def variables_in(text):
    return {m[0] or m[1] or m[2] for m in
            re.findall(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", text)}


def all_panels(doc):
    for panel in doc.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def query_panels(doc):
    return [p for p in all_panels(doc) if p.get("type") != "row"]


def static_checks(report, name, doc, metrics):
    """The JSON model. Returns False when the file is unusable for the query checks."""
    panels = list(all_panels(doc))
    problems = []
    if not isinstance(doc.get("schemaVersion"), int) or doc["schemaVersion"] < 36:
        problems.append(f"schemaVersion {doc.get('schemaVersion')!r} (want >= 36)")
    for key in ("uid", "title"):
        if not doc.get(key):
            problems.append(f"no {key}")
    report.check(not problems, f"static {name}: dashboard model",
                 "; ".join(problems) or f"schemaVersion {doc.get('schemaVersion')}, "
                 f"uid {doc.get('uid')}, {len(panels)} panels")

    ids = [p.get("id") for p in panels]
    duplicates = sorted({i for i in ids if ids.count(i) > 1 or not isinstance(i, int)},
                        key=str)
    report.check(not duplicates, f"static {name}: unique panel ids",
                 f"duplicate or missing ids {duplicates}" if duplicates
                 else f"{len(ids)} ids")

    problems = []
    cells = {}
    for p in panels:
        grid = p.get("gridPos")
        label = f"panel {p.get('id')} {p.get('title')!r}"
        if not isinstance(grid, dict) or not all(isinstance(grid.get(k), int)
                                                 for k in ("h", "w", "x", "y")):
            problems.append(f"{label}: gridPos {grid!r}")
            continue
        if grid["x"] < 0 or grid["y"] < 0 or grid["w"] < 1 or grid["h"] < 1 \
                or grid["x"] + grid["w"] > 24:
            problems.append(f"{label}: gridPos {grid} outside the 24-column grid")
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                if (x, y) in cells:
                    problems.append(f"{label} overlaps {cells[(x, y)]}")
                    break
                cells[(x, y)] = label
            else:
                continue
            break
    report.check(not problems, f"static {name}: gridPos", "; ".join(problems) or
                 "present on every panel, inside the grid, no overlaps")

    problems = [f"panel {p.get('id')}: type {p.get('type')!r}" for p in panels
                if p.get("type") not in PANEL_TYPES]
    report.check(not problems, f"static {name}: panel types", "; ".join(problems) or
                 ", ".join(sorted({p['type'] for p in panels})))

    variables = {v.get("name"): v for v in doc.get("templating", {}).get("list", [])}
    problems = []
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append(f"datasource variable {ds!r}")
    for var in ("namespace", "loadtest"):
        v = variables.get(var)
        query = (v or {}).get("query")
        query = query.get("query") if isinstance(query, dict) else query
        if not v or v.get("type") != "query" or not str(query).startswith("label_values("):
            problems.append(f"{var}: not a label_values query variable")
        elif v.get("datasource") != DATASOURCE:
            problems.append(f"{var}: datasource {v.get('datasource')!r}")
    report.check(not problems, f"static {name}: template variables", "; ".join(problems) or
                 ", ".join(variables))

    problems = []
    targets = 0
    for p in query_panels(doc):
        label = f"panel {p.get('id')} {p.get('title')!r}"
        if p.get("datasource") != DATASOURCE:
            problems.append(f"{label}: datasource {p.get('datasource')!r}")
        refs = [t.get("refId") for t in p.get("targets", [])]
        if not refs:
            problems.append(f"{label}: no targets")
        if len(set(refs)) != len(refs):
            problems.append(f"{label}: duplicate refIds {refs}")
        for t in p.get("targets", []):
            targets += 1
            if "datasource" in t and t["datasource"] != DATASOURCE:
                problems.append(f"{label} {t.get('refId')}: datasource {t['datasource']!r}")
            if not t.get("expr"):
                problems.append(f"{label} {t.get('refId')}: no expr")
    report.check(not problems, f"static {name}: datasource variable on every panel and target",
                 "; ".join(problems) or f"{targets} targets")

    problems = set()
    texts = [t.get("expr", "") for p in query_panels(doc) for t in p.get("targets", [])]
    for v in variables.values():
        query = v.get("query")
        texts.append(query.get("query", "") if isinstance(query, dict) else str(query or ""))
    for text in texts:
        for var in variables_in(text):
            if var not in variables and var not in BUILTINS:
                problems.add(var)
    report.check(not problems, f"static {name}: every $variable is defined",
                 f"undefined: {sorted(problems)}" if problems else "")

    annotations = annotation_queries(doc)
    problems = [f"annotation {a.get('name')!r}: datasource {a.get('datasource')!r}"
                for a in annotations if a.get("datasource") != DATASOURCE]
    problems += [f"annotation {a.get('name')!r}: no expr" for a in annotations
                 if not a.get("expr")]
    report.check(not problems, f"static {name}: annotations query Prometheus through the "
                 "datasource variable", "; ".join(problems) or f"{len(annotations)} annotations")
    texts += [a.get("expr", "") for a in annotations]

    lint_rules(report, name, doc, variables, metrics)

    known = series_names(metrics)
    used = set().union(*(metric_names(t) for t in texts))
    unknown = sorted(used - known)
    report.check(not unknown, f"static {name}: metric names defined in "
                 f"{' and '.join(METRIC_SOURCES)}",
                 f"unknown: {unknown}" if unknown else f"{len(used)} names")
    return True


def annotation_queries(doc):
    """The dashboard's Prometheus annotations (not Grafana's built-in one)."""
    return [a for a in doc.get("annotations", {}).get("list", []) if not a.get("builtIn")]


COUNTER_SUFFIXES = ("_total", "_bucket", "_sum", "_count")
# Like the linter's .lint file: (dashboard, panel id, rule) -> why it is excluded.
LINT_EXCLUSIONS = {
    ("kubeload-run.json", 5, "target-counter-agg-rule"):
        "the Requests stat shows the exact count completed so far, which increase() "
        "would extrapolate into a non-integer",
}


def lint_rules(report, name, doc, variables, metrics):
    """The rules of Grafana's dashboard linter (github.com/grafana/dashboard-linter)
    that apply to dashboards not built from a mixin, written here because the
    linter is not packaged: each check is named after its rule. Not applied:
    template-job-rule and template-instance-rule (they want $job and $instance
    variables, which only mixin dashboards have; ours select by namespace and
    LoadTest) and target-logql-rule (no Loki)."""
    panels = query_panels(doc)
    problems = [f"panel {p.get('id')}: {'title' if not p.get('title') else 'description'} missing"
                for p in panels if not p.get("title") or not p.get("description")]
    report.check(not problems, f"lint {name}: panel-title-description-rule",
                 "; ".join(problems) or f"{len(panels)} panels with title and description")

    problems = [f"panel {p.get('id')} {p.get('title')!r}" for p in panels
                if p.get("type") in ("timeseries", "stat", "gauge", "bargauge")
                and not p.get("fieldConfig", {}).get("defaults", {}).get("unit")]
    report.check(not problems, f"lint {name}: panel-units-rule",
                 "no unit: " + "; ".join(problems) if problems else "every graph has a unit")

    problems = [f"panel {p.get('id')} {p.get('title')!r}" for p in panels
                if not p.get("targets")]
    report.check(not problems, f"lint {name}: panel-no-targets-rule",
                 "no targets: " + "; ".join(problems) if problems else "")

    problems = []
    counters = {n for n in series_names(metrics) if n.endswith(COUNTER_SUFFIXES)}
    for p in panels:
        for t in p.get("targets", []):
            expr = t.get("expr", "")
            label = f"panel {p.get('id')} {t.get('refId')}"
            for window in re.findall(r"\b(?:rate|irate)\([^\[]*\[([^\]]+)\]", expr):
                if window != "$__rate_interval":
                    problems.append(f"{label}: rate over [{window}], not [$__rate_interval]")
            excluded = (name, p.get("id"), "target-counter-agg-rule") in LINT_EXCLUSIONS
            for counter in metric_names(expr) & counters:
                # A counter is only meaningful through rate(), irate() or increase().
                if not excluded and not re.search(r"\b(?:rate|irate|increase)\(\s*" + counter + r"\b", expr):
                    problems.append(f"{label}: counter {counter} not in rate/irate/increase")
    report.check(not problems, f"lint {name}: target-rate-interval-rule, target-counter-agg-rule",
                 "; ".join(problems) or "")

    problems = [f"${v['name']}: refresh {v.get('refresh')!r}" for v in variables.values()
                if v.get("type") == "query" and v.get("refresh") != 2]
    report.check(not problems, f"lint {name}: template-on-time-change-reload-rule",
                 "; ".join(problems) or "query variables refresh on time range change")


def rule_checks(report, promtool):
    """The alert rules without a cluster: promtool accepts them, its unit
    tests (tests/prometheus/rules_test.yaml) pass, and each alert has a
    runbook_url into a section docs/runbooks.md has."""
    if not promtool:
        report.check(False, "rules: promtool", "no promtool (apt-get install prometheus)")
        return
    for args, name in ((["check", "rules", RULES_FILE], "promtool check rules"),
                       (["test", "rules", RULES_TEST], "promtool test rules "
                        "tests/prometheus/rules_test.yaml")):
        result = subprocess.run([promtool, *args], capture_output=True, text=True, timeout=60)
        report.check(result.returncode == 0, f"rules: {name}",
                     " ".join((result.stdout + result.stderr).split())[-1500:])
    with open(RULES_FILE) as f:
        rules = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r]
    with open(RUNBOOKS) as f:
        # GitHub's anchors: the heading in lower case, spaces as dashes.
        anchors = {line.lstrip("#").strip().lower().replace(" ", "-")
                   for line in f if line.startswith("## ")}
    alerts = [r["alert"] for r in rules]
    links = {r["alert"]: r.get("annotations", {}).get("runbook_url", "") for r in rules}
    problems = [f"{a}: runbook_url {link!r} is not into docs/runbooks.md" for a, link in
                links.items() if not re.search(r"/docs/runbooks\.md#[a-z0-9-]+$", link)]
    problems += [f"{a}: docs/runbooks.md has no section #{link.split('#')[-1]}"
                 for a, link in links.items() if "#" in link and link.split("#")[-1] not in anchors]
    report.check(bool(alerts) and not problems, "rules: every alert's runbook_url is a section "
                 "of docs/runbooks.md", "; ".join(problems) or f"{len(alerts)} alerts")


def naming_checks(report, prometheus):
    """Prometheus' naming conventions over what was scraped: no name says
    rps or rate (a rate is ..._per_second), and the quantile label, which
    Prometheus gives a summary's quantiles, is on no other type."""
    names = sorted(n for n in prometheus.label_values("__name__") if n.startswith("kubeload_"))
    wrong = [n for n in names if WRONG_UNIT.search(n)]
    report.check(bool(names) and not wrong, "names: rates named ..._per_second, base units",
                 f"{wrong}" if wrong else f"{len(names)} names")
    status, document = prometheus.api("/api/v1/metadata")
    types = {name: entries[0]["type"] for name, entries in document.get("data", {}).items()}
    with_quantile = {s[0]["__name__"] for s in
                     samples(prometheus, 'count by (__name__) ({__name__=~"kubeload_.*", '
                                         'quantile!=""})')}
    wrong = sorted(n for n in with_quantile if types.get(n) != "summary")
    report.check(status == 200 and not wrong, "names: a quantile label only on summaries",
                 f"{wrong} ({', '.join(types.get(n, '?') for n in wrong)})" if wrong else
                 f"{len(types)} families' types read from /api/v1/metadata")


# ----------------------------------------------------------------- processes

class Processes:
    """Everything this check started, stopped in reverse order."""

    def __init__(self):
        self.stack = []

    def add(self, name, stopper):
        self.stack.append((name, stopper))

    def stop_all(self):
        while self.stack:
            name, stopper = self.stack.pop()
            try:
                stopper()
            except Exception as error:  # cleanup goes on
                print(f"note: stopping {name}: {error}", file=sys.stderr)


def spawn(processes, name, argv, log_path, **kwargs):
    log = open(log_path, "w")
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT, **kwargs)

    def stop():
        stop_process(process, name)
        log.close()
    processes.add(name, stop)
    return process


def http_get(url, timeout=5, data=None, headers=None):
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET",
                                     headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_http(url, process, timeout_s, want=200):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return False
        try:
            if http_get(url, timeout=2)[0] == want:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def closed_spec(target_url):
    return {
        "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
        "metadata": {"name": CLOSED, "namespace": NAMESPACE,
                     "labels": {"kubeload.dev/test": "dashboards"}},
        "spec": {
            "target": {"url": target_url},
            "requests": [
                {"name": "slow", "path": "/slow/5", "weight": 8},
                {"name": "ok", "path": "/ok", "weight": 4},
                {"name": "unavailable", "path": "/status/503", "weight": 1},
            ],
            "load": {"stages": [{"duration": "4s", "connections": 2},
                                {"duration": "116s", "connections": 4}],
                     "timeout": "5s"},
            "workers": 2,
        },
    }


def journey_spec(target_url):
    """The shop journey of examples/shop-journey.yaml, its users numbered
    instead of read from a file, with 15 ms of think time so that two virtual
    users iterate about a hundred times a second, not as fast as two cores
    shared with Prometheus allow."""
    bearer = {"Authorization": "Bearer ${token}", "X-Shop-User": "dash-${vu}"}
    return {
        "apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
        "metadata": {"name": JOURNEY, "namespace": NAMESPACE,
                     "labels": {"kubeload.dev/test": "dashboards"}},
        "spec": {
            "target": {"url": target_url},
            "scenarios": [{"name": "buy", "steps": [
                {"name": "login", "method": "POST", "path": "/shop/login",
                 "body": '{"user": "dash-${vu}", "password": "pw"}',
                 "extract": [{"name": "token", "json": "/token"}]},
                {"name": "items", "path": "/shop/items",
                 "extract": [{"name": "item", "json": "/items/3/id"}],
                 "thinkTime": {"constant": "15ms"}},
                {"name": "cart", "method": "POST", "path": "/shop/cart", "headers": bearer,
                 "body": '{"item": ${item}}'},
                {"name": "checkout", "method": "POST", "path": "/shop/checkout",
                 "headers": bearer, "checks": [{"json": "/items", "equals": "1"}]},
            ]}],
            "load": {"duration": "120s", "connections": 2, "timeout": "5s"},
            "workers": 1,
        },
    }


def start_workers(processes, args, workdir, spec, count, token):
    """count `loadgen worker` processes of one LoadTest, as its pods would be,
    started together with POST /start; their metrics ports."""
    name = spec["metadata"]["name"]
    spec_path = os.path.join(workdir, f"{name}.json")
    with open(spec_path, "w") as out:
        json.dump(spec, out)
    ports = []
    for index in range(count):
        port = free_port()
        log = os.path.join(workdir, f"{name}-worker-{index}.log")
        process = spawn(processes, f"loadgen worker {name}/{index}", [
            args.loadgen, "worker", "--spec", spec_path, "--index", str(index),
            "--workers", str(count), "--listen", f"{LOOPBACK}:{port}", "-t", "1",
            "--termination-log", os.path.join(workdir, f"{name}-termination-{index}"),
            "--linger", "5m"], log, env=dict(os.environ, KUBELOAD_WORKER_TOKEN=token))
        if not wait_http(f"http://{LOOPBACK}:{port}/healthz", process, 15):
            raise RuntimeError(f"loadgen worker {name}/{index} did not come up: {read_tail(log)}")
        ports.append(port)
    for port in ports:
        status, body = http_get(f"http://{LOOPBACK}:{port}/start", data=b"",
                                headers={"Authorization": f"Bearer {token}"})
        if status != 202:
            raise RuntimeError(f"POST /start on worker :{port}: {status} {body[:200]!r}")
    return ports


# ------------------------------------------------------------ the local cluster

def cluster_loadtests():
    """The three LoadTests the operator runs in NAMESPACE: {name: (test label, spec)}.
    Small (a few hundred requests, 1-2 workers): the machine has 2 cores.
    Every worker gets 2 connections: with fewer connections than its threads
    (a pod's default is its cores) a worker's request budget is not reached."""
    nginx = {"service": {"name": "nginx", "port": 80}}
    return {
        PASSING: (TEST_LABEL, {
            "target": nginx, "load": {"connections": 4, "requests": 400}, "workers": 2,
            "thresholds": ["errorRate < 1%", "requests == 400"]}),
        GATED: (TEST_LABEL, {
            "target": nginx, "load": {"connections": 2, "requests": 200}, "workers": 1,
            "thresholds": ["p50 < 0.001ms"]}),
        INVALID: (INVALID_TEST_LABEL, {
            "target": nginx, "load": {"connections": 2, "requests": 10},
            "thresholds": ["nope.p99 < 10ms"]}),
    }


def find_kubeconfig(explicit):
    """--kubeconfig, else $KUBECONFIG, else the one `scripts/cluster env` names (if it exists)."""
    if explicit:
        return explicit
    if os.environ.get("KUBECONFIG"):
        return os.environ["KUBECONFIG"]
    try:
        out = subprocess.run([os.path.join(ROOT, "scripts", "cluster"), "env"],
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"KUBECONFIG=(\S+)", out)
    return match[1] if match and os.path.exists(match[1]) else None


class Cluster:
    """The project's local Kubernetes (scripts/cluster), reached with kubectl.
    Everything this check makes lives in NAMESPACE, deleted at the end; the
    cluster itself is never brought up, down or restarted here."""

    def __init__(self, kubeconfig, workdir):
        self.kubeconfig = kubeconfig
        self.env = dict(os.environ, KUBECONFIG=kubeconfig)
        self.workdir = workdir

    def kubectl(self, *args, stdin=None, timeout=60, check=True, unavailable_s=60):
        """kubectl with KUBECONFIG. Other tests share the cluster and one of them
        restarts kube-apiserver: while it is away (connection refused), retry
        for up to unavailable_s."""
        away_since = None
        while True:
            try:
                result = subprocess.run(["kubectl", *args], input=stdin, capture_output=True,
                                        text=True, env=self.env, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"kubectl {' '.join(args)}: no answer in {timeout}s") from None
            if result.returncode == 0 or not API_SERVER_AWAY.search(result.stderr):
                break
            away_since = away_since or time.monotonic()
            if time.monotonic() - away_since > unavailable_s:
                break
            time.sleep(1)
        if check and result.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: "
                               f"{(result.stderr or result.stdout).strip()[-600:]}")
        return result

    def reachable(self):
        """(True, version) or (False, why)."""
        if not shutil.which("kubectl"):
            return False, "no kubectl"
        if not self.kubeconfig or not os.path.exists(self.kubeconfig):
            return False, f"no kubeconfig ({self.kubeconfig or 'KUBECONFIG unset'})"
        try:
            # A short grace: another test may be restarting kube-apiserver.
            result = self.kubectl("get", "--raw", "/readyz", timeout=15, check=False,
                                  unavailable_s=20)
        except RuntimeError as error:
            return False, str(error)
        if result.returncode != 0 or result.stdout.strip() != "ok":
            return False, (f"kubectl get --raw /readyz with {self.kubeconfig}: "
                           f"{(result.stderr or result.stdout).strip()[-300:]}")
        return True, self.kubeconfig

    def namespace_exists(self):
        return self.kubectl("get", "namespace", NAMESPACE, check=False).returncode == 0

    def fresh_namespace(self):
        """NAMESPACE, newly created: one left over by an earlier run is deleted first."""
        if self.namespace_exists():
            self.kubectl("delete", "namespace", NAMESPACE, "--wait=true", "--timeout=180s",
                         timeout=200)
        deadline = time.monotonic() + 180
        while self.namespace_exists():  # a Terminating one from a --wait=false delete
            if time.monotonic() > deadline:
                raise RuntimeError(f"namespace {NAMESPACE} is still terminating")
            time.sleep(1)
        self.kubectl("create", "namespace", NAMESPACE)

    def delete_namespace(self):
        self.kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false",
                     timeout=60, unavailable_s=120)

    def ensure_crd(self):
        """Applied (other tests share it: the same file), then waited for."""
        subprocess.run([os.path.join(ROOT, "scripts", "install-crd")], check=True, timeout=130,
                       env=self.env)

    def deploy_nginx(self):
        self.kubectl("-n", NAMESPACE, "apply", "-f", NGINX_MANIFEST)
        self.kubectl("-n", NAMESPACE, "rollout", "status", "deploy/nginx", "--timeout=180s",
                     timeout=200)

    def apply_loadtests(self, loadtests):
        items = [{"apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
                  "metadata": {"name": name, "namespace": NAMESPACE,
                               "labels": {"kubeload.dev/test": test}},
                  "spec": spec}
                 for name, (test, spec) in loadtests.items()]
        self.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": items}))

    def loadtests(self):
        """{name: LoadTest} as the API server has them now."""
        out = self.kubectl("-n", NAMESPACE, "get", "loadtests", "-o", "json").stdout
        return {item["metadata"]["name"]: item for item in json.loads(out)["items"]}

    def wait_completed(self, name, timeout_s):
        result = self.kubectl("-n", NAMESPACE, "wait", "--for=condition=Completed",
                              f"loadtest/{name}", f"--timeout={timeout_s}s",
                              timeout=timeout_s + 15, check=False)
        return result.returncode == 0, (result.stderr or result.stdout).strip()[-300:]

    def wait_phase(self, name, phase, timeout_s):
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.loadtests().get(name, {}).get("status", {})
            if status.get("phase") == phase or time.monotonic() > deadline:
                return status.get("phase") == phase
            time.sleep(0.5)

    def has_job(self, name):
        return self.kubectl("-n", NAMESPACE, "get", "job", name, check=False).returncode == 0

    def describe(self):
        """A little context for a failure: the LoadTests and pods in NAMESPACE."""
        out = self.kubectl("-n", NAMESPACE, "get", "loadtests,jobs,pods", "-o", "wide",
                           check=False, timeout=20)
        return (out.stdout or out.stderr).strip()[-1500:]


def build_worker_image(processes, workdir):
    """cluster/kubeload-image/build.sh: the worker image from build/bin, imported
    into the nodes. Started in the background (about a minute); returns a
    wait() that raises if the build failed."""
    log_path = os.path.join(workdir, "image.log")
    log = open(log_path, "w")
    process = subprocess.Popen([os.path.join(ROOT, "cluster", "kubeload-image", "build.sh"),
                                WORKER_IMAGE], stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)

    def stop():
        if process.poll() is None:  # interrupted mid-build: its whole process group
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()
    processes.add("worker image build", stop)

    def wait(timeout_s=900):
        try:
            code = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{WORKER_IMAGE}: build.sh still running after {timeout_s}s")
        if code != 0:
            raise RuntimeError(f"{WORKER_IMAGE}: build.sh exited {code}: {read_tail(log_path)}")
    return wait


def run_in_cluster(report, args, cluster, processes, workdir):
    """Sets up NAMESPACE, runs the operator on the host against the cluster and
    the three LoadTests to their end. Returns (operator metrics port, {name:
    LoadTest} as read back with kubectl)."""
    started = time.monotonic()
    # The ordered delete: the namespace goes after the operator stopped
    # (Processes stops in reverse order of registration).
    processes.add(f"namespace {NAMESPACE}", cluster.delete_namespace)
    route = subprocess.run([os.path.join(ROOT, "scripts", "cluster"), "check-route"],
                           capture_output=True, text=True, env=cluster.env, timeout=30)
    if not report.check(route.returncode == 0,
                        "cluster: the unreachable route guards the cluster ranges",
                        (route.stdout + route.stderr).strip()[-300:]):
        raise RuntimeError("scripts/cluster check-route failed: no load is sent")
    image_built = build_worker_image(processes, workdir)
    cluster.ensure_crd()
    cluster.fresh_namespace()
    cluster.deploy_nginx()
    report.check(True, f"cluster: namespace {NAMESPACE}, CRD established, nginx rolled out",
                 f"{time.monotonic() - started:.0f}s")
    image_built()
    report.check(True, f"cluster: {WORKER_IMAGE} built from build/bin and imported",
                 f"{time.monotonic() - started:.0f}s")

    operator_port, health_port = free_port(), free_port()
    operator_log = os.path.join(workdir, "operator.log")
    operator = spawn(processes, "kubeload-operator", [
        args.operator, "--kubeconfig", cluster.kubeconfig, "--namespace", NAMESPACE,
        "--loadgen-image", WORKER_IMAGE,
        # Every LoadTest is reconciled each second, also after its run ended,
        # so the reconcile rate and duration panels have data to show.
        "--resync-period", "1s",
        "--metrics-addr", f"{LOOPBACK}:{operator_port}",
        "--health-addr", f"{LOOPBACK}:{health_port}"], operator_log)
    if not wait_http(f"http://{LOOPBACK}:{health_port}/readyz", operator, 30):
        raise RuntimeError(f"kubeload-operator not ready: {read_tail(operator_log)}")

    cluster.apply_loadtests(cluster_loadtests())
    problems = []
    if not cluster.wait_phase(INVALID, "Failed", 60):
        problems.append(f"{INVALID} not Failed")
    for name in (PASSING, GATED):
        ok, detail = cluster.wait_completed(name, 180)
        if not ok:
            problems.append(f"{name} not Completed: {detail}")
    if problems:
        raise RuntimeError(f"{'; '.join(problems)}\n{cluster.describe()}\n"
                           f"operator log: {read_tail(operator_log)}")
    loadtests = cluster.loadtests()
    statuses = {name: lt.get("status", {}) for name, lt in loadtests.items()}

    def shown(name):
        status = statuses.get(name, {})
        result = status.get("result", {})
        return (f"{status.get('phase')}/{status.get('verdict', 'None')}"
                + (f", {result.get('requests')} requests, {result.get('rps', 0):.0f}/s, p99 "
                   f"{result.get('latencyMs', {}).get('p99')} ms" if result else
                   f", {status.get('reason')}: {status.get('message', '')[:80]}"))
    report.check(statuses.get(PASSING, {}).get("phase") == "Succeeded"
                 and statuses[PASSING].get("verdict") == "Pass"
                 and statuses[PASSING].get("result", {}).get("requests") == 400,
                 f"cluster: {PASSING} passes its thresholds", shown(PASSING))
    report.check(statuses.get(GATED, {}).get("phase") == "Succeeded"
                 and statuses[GATED].get("verdict") == "Fail",
                 f"cluster: {GATED} misses its gate (phase Succeeded, verdict Fail)",
                 shown(GATED))
    report.check(statuses.get(INVALID, {}).get("phase") == "Failed"
                 and statuses[INVALID].get("reason") == "InvalidSpec"
                 and not cluster.has_job(f"{INVALID}-workers"),
                 f"cluster: {INVALID} is Failed (InvalidSpec) without a worker Job",
                 shown(INVALID))
    report.note(f"the cluster part took {time.monotonic() - started:.0f}s")
    return operator_port, loadtests


# ---------------------------------------------------------------- Prometheus

class Prometheus:
    def __init__(self, binary, workdir, jobs, rule_files=()):
        self.binary = binary
        self.workdir = workdir
        self.jobs = jobs
        self.rule_files = list(rule_files)
        self.port = None
        self.process = None

    def config(self):
        lines = ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s",
                 "  evaluation_interval: 1s"]
        if self.rule_files:
            lines += ["rule_files:"] + [f"  - {json.dumps(path)}" for path in self.rule_files]
        lines += ["scrape_configs:"]
        for job, targets in self.jobs.items():
            lines += [f"  - job_name: {job}",
                      # The metrics' own namespace label is the LoadTest's; keep it.
                      "    honor_labels: true",
                      "    static_configs:",
                      f"      - targets: [{', '.join(repr(t) for t in targets)}]"]
        return "\n".join(lines) + "\n"

    def start(self, processes, attempts=3):
        config = os.path.join(self.workdir, "prometheus.yml")
        with open(config, "w") as out:
            out.write(self.config())
        log = os.path.join(self.workdir, "prometheus.log")
        for attempt in range(attempts):
            self.port = free_port()
            storage = os.path.join(self.workdir, f"tsdb-{attempt}")
            self.process = spawn(processes, "prometheus", [
                self.binary, f"--config.file={config}", f"--storage.tsdb.path={storage}",
                f"--web.listen-address={LOOPBACK}:{self.port}", "--log.level=warn"],
                log, cwd=self.workdir)
            if wait_http(self.url("/-/ready"), self.process, 30):
                return
            stop_process(self.process, "prometheus")  # say, the port was taken meanwhile
        raise RuntimeError(f"prometheus did not start: {read_tail(log)}")

    def url(self, path, **params):
        query = urllib.parse.urlencode(params, doseq=True)
        return f"http://{LOOPBACK}:{self.port}{path}" + (f"?{query}" if query else "")

    def api(self, path, **params):
        status, body = http_get(self.url(path, **params), timeout=10)
        try:
            document = json.loads(body)
        except ValueError:
            document = {"status": "error", "error": body[:200].decode(errors="replace")}
        return status, document

    def query(self, expr):
        return self.api("/api/v1/query", query=expr)

    def label_values(self, label, match=None):
        params = {"match[]": [match]} if match else {}
        status, document = self.api(f"/api/v1/label/{label}/values", **params)
        if status != 200:
            raise RuntimeError(f"label values of {label} ({match}): {status} {document}")
        return set(document["data"])

    def targets_up(self):
        status, document = self.api("/api/v1/targets")
        if status != 200:
            return False, f"/api/v1/targets: {status}"
        targets = document["data"]["activeTargets"]
        down = [f"{t['scrapeUrl']} {t['health']} {t.get('lastError', '')}".strip()
                for t in targets if t["health"] != "up"]
        return not down and targets, "; ".join(down) or f"{len(targets)} targets up"


# ------------------------------------------------------------------- queries

def substitute(expr, values):
    def value(match):
        name = match[1] or match[2] or match[3]
        if name in BUILTINS:
            return BUILTINS[name]
        return values.get(name, ".*")
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]", value, expr)


def regex_value(text):
    """A label value as Grafana puts it into a =~ matcher (regex metacharacters escaped)."""
    return re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\\\1", text)


def evaluate(prometheus, expr):
    """(parsed, samples, finite samples, message)."""
    status, document = prometheus.query(expr)
    if status != 200 or document.get("status") != "success":
        return False, 0, 0, f"{status} {document.get('errorType', '')}: {document.get('error')}"
    data = document["data"]
    if data["resultType"] == "vector":
        values = [float(s["value"][1]) for s in data["result"]]
    elif data["resultType"] == "scalar":
        values = [float(data["result"][1])]
    elif data["resultType"] == "matrix":
        values = [float(v[1]) for s in data["result"] for v in s["values"]]
    else:
        values = []
    finite = [v for v in values if math.isfinite(v)]
    return True, len(values), len(finite), f"{len(values)} series"


def samples(prometheus, expr):
    """[(labels, value)] of an instant query (raises on an error)."""
    status, document = prometheus.query(expr)
    if status != 200 or document.get("status") != "success":
        raise RuntimeError(f"{status} {document.get('error')}: {expr}")
    return [(s["metric"], float(s["value"][1])) for s in document["data"]["result"]]


def find_target(doc, title, ref):
    for panel in query_panels(doc):
        if panel.get("title") == title:
            for t in panel["targets"]:
                if t["refId"] == ref:
                    return t["expr"]
    raise KeyError(f"no panel {title!r} with target {ref}")


def value_checks(report, prometheus, dashboard, doc, cases, settle_s=20):
    """cases: [(panel title, refId, variable values, what, predicate(samples) -> bool)]:
    the numbers a panel shows are the ones the run produced. Rates over a few
    1 s scrapes are noisy at first, so each case may take up to settle_s."""
    pending = list(cases)
    outcome = {}
    deadline = time.monotonic() + settle_s
    while pending:
        for case in list(pending):
            title, ref, values, what, predicate = case
            try:
                got = samples(prometheus, substitute(find_target(doc, title, ref), values))
            except (KeyError, RuntimeError) as error:
                outcome[id(case)] = (False, str(error))
                pending.remove(case)
                continue
            shown = ", ".join(
                "{" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())) + f"}} {value:g}"
                for labels, value in sorted(got, key=lambda s: sorted(s[0].items())))
            ok = predicate(got)
            outcome[id(case)] = (ok, shown or "no series")
            if ok:
                pending.remove(case)
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(1)
    for case in cases:
        ok, detail = outcome[id(case)]
        report.check(ok, f"value {dashboard} {case[0]!r} {case[1]}: {case[3]}", detail)


def by_label(got, label):
    return {labels.get(label, ""): value for labels, value in got}


def close_to(value, want, tolerance=1e-9):
    return abs(value - want) <= tolerance * max(1.0, abs(want))


class PanelCheck:
    """One panel under one variable assignment; `want` is "finite" (every target
    returns a finite sample), "empty" (every target parses and returns nothing)
    or "syntax" (every target parses)."""

    def __init__(self, dashboard, panel, case, values, want):
        self.name = (f"query {dashboard} #{panel['id']} {panel['title']!r} [{case}]")
        self.exprs = [(t["refId"], substitute(t["expr"], values)) for t in panel["targets"]]
        self.want = want
        self.done = False
        self.ok = False
        self.detail = "not evaluated"

    def run(self, prometheus):
        parts = []
        ok = True
        for ref, expr in self.exprs:
            parsed, samples, finite, message = evaluate(prometheus, expr)
            if not parsed:
                self.done, self.ok, self.detail = True, False, f"{ref}: {message}: {expr}"
                return
            if self.want == "finite" and finite == 0:
                ok = False
                parts.append(f"{ref}: no finite sample ({samples} samples)")
            elif self.want == "empty" and samples:
                ok = False
                parts.append(f"{ref}: {samples} samples, expected none")
            else:
                parts.append(f"{ref} {samples}")
        self.ok = ok
        self.done = ok
        summary = {"finite": "series (finite values) per target",
                   "empty": "empty as it should be (a panel of another kind of run: open model, scenarios)",
                   "syntax": "syntax only (no operator running)"}[self.want]
        self.detail = ", ".join(parts) if not ok else f"{summary}: {', '.join(parts)}"


def panel_checks(dashboard, doc, cases):
    """cases: [(label, variable values, want(panel) -> str)]."""
    checks = []
    for label, values, want in cases:
        for panel in query_panels(doc):
            checks.append(PanelCheck(dashboard, panel, label, values, want(panel)))
    return checks


def uses_target_rate(panel):
    return any("kubeload_target_requests_per_second" in t["expr"] for t in panel["targets"])


def uses_iterations(panel):
    """A scenario run's panel (kubeload_iterations_total and the like)."""
    return any("kubeload_iteration" in t["expr"] for t in panel["targets"])


def variable_query(doc, name):
    for v in doc["templating"]["list"]:
        if v["name"] == name:
            query = v["query"]
            return query["query"] if isinstance(query, dict) else query
    raise KeyError(name)


def check_variables(report, prometheus, dashboard, doc, expected):
    """Each label_values(...) variable (the others at All) must list exactly `expected`."""
    for name, want in expected.items():
        query = substitute(variable_query(doc, name), {})
        match = re.fullmatch(r"label_values\((?:(.+),\s*)?(\w+)\)", query.strip())
        if not match:
            report.check(False, f"variable {dashboard} ${name}", f"not label_values: {query}")
            continue
        selector, label = match[1], match[2]
        got = prometheus.label_values(label, selector)
        report.check(got == want, f"variable {dashboard} ${name}",
                     f"{query} -> {sorted(got)}" + ("" if got == want
                                                   else f", expected {sorted(want)}"))


def operator_value_cases(loadtests):
    """value_checks cases for the results dashboard: what the operator exports
    must be what the LoadTests' statuses say (read back with kubectl)."""
    statuses = {name: lt.get("status", {}) for name, lt in loadtests.items()}
    phases = {p: 0 for p in ("Pending", "Starting", "Running", "Succeeded", "Failed")}
    verdicts = {v: 0 for v in ("Pass", "Fail", "None")}
    for status in statuses.values():
        phases[status.get("phase", "Pending")] += 1
        verdicts[status.get("verdict", "None")] += 1

    def one(want):
        return lambda got: len(got) == 1 and close_to(got[0][1], want)

    def counts(what):
        return ", ".join(f"{k} {v}" for k, v in what.items() if v) + ", others 0"
    cases = [
        ("LoadTests by phase", "A", {}, f"{counts(phases)} (kubectl get loadtests)",
         lambda got: by_label(got, "phase") == phases),
        ("Verdicts", "A", {}, f"{counts(verdicts)} (kubectl get loadtests)",
         lambda got: by_label(got, "verdict") == verdicts),
        ("Reconciles/s by result", "A", {}, "success > 0 (--resync-period 1s reconciles "
         "every LoadTest each second)",
         lambda got: by_label(got, "result").get("success", 0) > 0),
    ]
    for name in (PASSING, GATED):
        status = statuses[name]
        result = status["result"]
        latency = result["latencyMs"]
        only = {"loadtest": name}
        cases += [
            ("LoadTests", "A", only, f"{name}: phase {status['phase']}",
             lambda got, want=status["phase"]: [l.get("phase") for l, _ in got] == [want]),
            ("LoadTests", "B", only, f"{name}: verdict {status['verdict']}",
             lambda got, want=status["verdict"]: [l.get("verdict") for l, _ in got] == [want]),
            ("LoadTests", "C", only, f"{name}: RPS {result['rps']:g} from status.result.rps",
             one(result["rps"])),
            ("LoadTests", "F", only,
             f"{name}: p99 {latency['p99'] / 1000:g} s from status.result.latencyMs.p99",
             one(latency["p99"] / 1000)),
            ("LoadTests", "G", only,
             f"{name}: error ratio {result['errorRate']:g} from status.result.errorRate",
             one(result["errorRate"])),
            ("LoadTests", "H", only,
             f"{name}: requests {result['requests']} from status.result.requests",
             one(result["requests"])),
            ("Result latency p50 / p90 / p99", "A", only,
             f"{name}: p50 {latency['p50'] / 1000:g} s from status.result.latencyMs.p50",
             one(latency["p50"] / 1000)),
        ]
    cases.append(("Result RPS", "A", {"loadtest": INVALID},
                  f"no result for {INVALID} (it never ran)", lambda got: got == []))

    # Per test: the newest finished run of the test label, as the operator
    # orders them (completionTime, then name).
    newest, before = newest_runs(statuses)
    last, previous = statuses[newest], statuses[before]
    test = {"test": TEST_LABEL}
    cases += [
        ("Test RPS across runs", "A", test,
         f"{TEST_LABEL}: RPS {last['result']['rps']:g} of its newest run {newest}",
         one(last["result"]["rps"])),
        ("Test latency p50 / p99 across runs", "B", test,
         f"{TEST_LABEL}: p99 {last['result']['latencyMs']['p99'] / 1000:g} s of {newest}",
         one(last["result"]["latencyMs"]["p99"] / 1000)),
        ("Test requests across runs", "A", test,
         f"{TEST_LABEL}: requests {last['result']['requests']} of {newest}",
         one(last["result"]["requests"])),
        ("Test error ratio across runs", "A", test,
         f"{TEST_LABEL}: error ratio {last['result']['errorRate']:g} of {newest}",
         one(last["result"]["errorRate"])),
        ("Test verdicts: newest and the run before", "A", test,
         f"{TEST_LABEL}: newest {newest} {last['verdict']}",
         lambda got, want=last["verdict"]: [l.get("verdict") for l, _ in got] == [want]),
        ("Test verdicts: newest and the run before", "B", test,
         f"{TEST_LABEL}: the run before, {before}, {previous['verdict']}",
         lambda got, want=previous["verdict"]: [l.get("verdict") for l, _ in got] == [want]),
        ("Thresholds of each test's newest run", "B", test,
         f"{TEST_LABEL}: each threshold of {newest} passed or not as its status says",
         lambda got, want={str(i): 1.0 if t["passed"] else 0.0
                           for i, t in enumerate(last["thresholds"])}:
         {l["threshold"]: v for l, v in got} == want),
        ("Thresholds of each test's newest run", "C", test,
         f"{TEST_LABEL}: each threshold's limit, in the same units as its value",
         lambda got, want=threshold_limits(last): len(got) == len(want) and all(
             close_to(v, want[l["threshold"]]) for l, v in got)),
        ("Thresholds of each test's newest run", "A", test,
         f"{TEST_LABEL}: each threshold's value as status.thresholds[].value (seconds for "
         "latencies)",
         lambda got, want=threshold_values(last): len(got) == len(want) and all(
             close_to(v, want[l["threshold"]]) for l, v in got)),
        ("Test RPS across runs", "A", {"test": INVALID_TEST_LABEL},
         f"{INVALID_TEST_LABEL}: no numbers (its newest run, {INVALID}, has no result)",
         lambda got: got == []),
        ("Runs past their deadline", "A", {}, "0: every run ended within its deadline",
         lambda got: [v for _, v in got] == [0.0]),
    ]
    return cases


def newest_runs(statuses):
    """(newest, the one before) of PASSING and GATED, which share TEST_LABEL."""
    ordered = sorted((statuses[n].get("completionTime", ""), n) for n in (PASSING, GATED))
    return ordered[-1][1], ordered[0][1]


LATENCY_METRICS = ("p50", "p90", "p95", "p99", "p999", "max", "mean", "min")


def threshold_limits(status):
    """{index in spec.thresholds: limit in base units}, read from each expression
    ("p99 < 50ms" is 0.05 s; the thresholds of these runs use ms, % and plain numbers)."""
    limits = {}
    for i, t in enumerate(status.get("thresholds", [])):
        metric, _, text = t["expression"].split()
        metric = metric.split(".")[-1]
        if text.endswith("ms"):
            value = float(text[:-2]) / 1000
        elif text.endswith("%"):
            value = float(text[:-1]) / 100
        else:
            value = float(text)
            if metric in LATENCY_METRICS:
                value /= 1000
        limits[str(i)] = value
    return limits


def threshold_values(status):
    """{index in spec.thresholds: value in base units} from status.thresholds[].value."""
    values = {}
    for i, t in enumerate(status.get("thresholds", [])):
        if "value" not in t:
            continue
        metric = t["expression"].split()[0].split(".")[-1]
        values[str(i)] = t["value"] / 1000 if metric in LATENCY_METRICS else t["value"]
    return values


def alert_and_annotation_checks(report, prometheus, doc, loadtests):
    """The chart's alert rules, evaluated by this Prometheus over the real runs,
    and the results dashboard's run-window annotations."""
    statuses = {name: lt.get("status", {}) for name, lt in loadtests.items()}
    status, document = prometheus.api("/api/v1/rules")
    rules = [r for g in document.get("data", {}).get("groups", []) for r in g["rules"]]
    unhealthy = [f"{r['name']}: {r.get('health')} {r.get('lastError', '')}" for r in rules
                 if r.get("health") != "ok"]
    report.check(status == 200 and len(rules) == 4 and not unhealthy,
                 "alerts: the chart's rules loaded and evaluated",
                 "; ".join(unhealthy) or f"{[r['name'] for r in rules]}")

    newest, before = newest_runs(statuses)
    regressed = statuses[newest].get("verdict") == "Fail" and \
        statuses[before].get("verdict") == "Pass"
    want = {("KubeloadRunFailed", INVALID_TEST_LABEL)}
    if regressed:
        want.add(("KubeloadVerdictRegressed", TEST_LABEL))
    deadline = time.monotonic() + 20
    while True:
        # KubeloadRunFailed waits for: 1m before it fires (tests/prometheus/
        # rules_test.yaml checks that): pending is as good here.
        firing = {(s[0].get("alertname"), s[0].get("test")) for s in
                  samples(prometheus, 'ALERTS{alertname=~"Kubeload.*", alertstate="firing"} or '
                                      'ALERTS{alertname="KubeloadRunFailed", alertstate="pending"}')}
        if firing >= want or time.monotonic() > deadline:
            break
        time.sleep(1)
    firing.discard(("KubeloadReconcileErrors", None))  # not what this run is about
    report.check(firing == want, "alerts: firing (KubeloadRunFailed: pending or firing) for the "
                 "failed run"
                 + (f" and the regressed test ({before} passed, then {newest} failed)"
                    if regressed else f" only (newest run {newest} did not regress)"),
                 f"firing {sorted(map(str, firing))}, want {sorted(map(str, want))}")

    last = statuses[newest]
    for annotation in annotation_queries(doc):
        field = "startTime" if "start" in annotation["expr"] else "completionTime"
        got = samples(prometheus, substitute(annotation["expr"], {"test": TEST_LABEL}))
        want_ms = epoch_ms(last.get(field))
        report.check(len(got) == 1 and want_ms is not None and close_to(got[0][1], want_ms),
                     f"annotation {annotation['name']!r}: {TEST_LABEL}'s newest run "
                     f"{newest} {field} {last.get(field)} as the annotation time",
                     f"{got}")


def deleted_series_checks(report, cluster, operator_port):
    """A LoadTest deleted: the operator's /metrics has no series of its run
    left (CI makes a new run each time; series must not grow with the runs),
    while its test's series, which outlive the runs, stay."""
    cluster.kubectl("-n", NAMESPACE, "delete", "loadtest", INVALID, "--wait=true",
                    "--timeout=60s", timeout=75)
    url = f"http://{LOOPBACK}:{operator_port}/metrics"
    deadline = time.monotonic() + 20
    while True:
        text = http_get(url)[1].decode()
        left = [line for line in text.splitlines() if f'loadtest="{INVALID}"' in line]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    report.check(not left, f"operator /metrics: no series of the deleted LoadTest {INVALID}",
                 "; ".join(left[:5]) or f"none of {len(text.splitlines())} lines")
    kept = [line for line in text.splitlines()
            if line.startswith("kubeload_test_last_failure_timestamp_seconds{")
            and f'test="{INVALID_TEST_LABEL}"' in line]
    report.check(len(kept) == 1, f"operator /metrics: test {INVALID_TEST_LABEL}'s last failure "
                 "outlives its deleted run", "; ".join(kept) or "gone")


def epoch_ms(rfc3339):
    if not rfc3339:
        return None
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000


# ---------------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loadgen", default=os.path.join(ROOT, "build/bin/loadgen"))
    parser.add_argument("--operator", default=os.path.join(ROOT, "build/bin/kubeload-operator"))
    parser.add_argument("--fault-server", default=os.path.join(ROOT, "build/bin/fault_server"))
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    parser.add_argument("--prometheus", default=shutil.which("prometheus") or "")
    parser.add_argument("--dashboards", default=os.path.join(ROOT, "dashboards"))
    parser.add_argument("--kubeconfig", default="",
                        help="the local cluster's kubeconfig (default: $KUBECONFIG, else "
                        "what `scripts/cluster env` names)")
    parser.add_argument("--no-operator", action="store_true",
                        help="do not run the operator: its dashboard is checked for syntax only")
    parser.add_argument("--keep-temp", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()

    if not args.prometheus or not os.access(args.prometheus, os.X_OK):
        print("SKIP dashboards: no prometheus binary (apt-get install prometheus; "
              "scripts/setup installs it)")
        print("dashboards: 0 passed, 0 failed")
        return 0

    # SIGTERM (say, from a test runner's timeout) must still run the cleanup.
    def interrupted(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)
    report = Report(args.verbose)
    metrics = defined_metrics()
    docs = {}
    for name in DASHBOARDS:
        path = os.path.join(args.dashboards, name)
        try:
            with open(path) as f:
                docs[name] = json.load(f)
        except (OSError, ValueError) as error:
            report.check(False, f"static {name}: valid JSON", str(error))
            continue
        report.check(True, f"static {name}: valid JSON", os.path.relpath(path, ROOT))
        static_checks(report, name, docs[name], metrics)
    uids = [doc.get("uid") for doc in docs.values()]
    report.check(len(set(uids)) == len(uids), "static dashboard uids are distinct",
                 ", ".join(map(str, uids)))
    used = set()
    for doc in docs.values():
        for panel in query_panels(doc):
            for t in panel.get("targets", []):
                used |= metric_names(t.get("expr", ""))
        for annotation in annotation_queries(doc):
            used |= metric_names(annotation.get("expr", ""))
    missing = sorted(m for m, hist in metrics.items()
                     if not ({m} | ({m + "_bucket"} if hist else set())) & used)
    report.check(not missing, "static every metric the sources define is on a dashboard",
                 f"not shown: {missing}" if missing else f"{len(metrics)} metrics")

    rule_checks(report, shutil.which("promtool"))

    workdir = tempfile.mkdtemp(prefix="kubeload-dashboards-")
    cluster = None
    why_not = ""
    if args.no_operator:
        why_not = "--no-operator"
    elif not os.access(args.operator, os.X_OK):
        why_not = f"{args.operator} is not built"
    else:
        cluster = Cluster(find_kubeconfig(args.kubeconfig), workdir)
        reachable, detail = cluster.reachable()
        if reachable:
            report.note(f"operator panels: kubeload-operator against the local cluster "
                        f"({detail}), namespace {NAMESPACE}")
        else:
            why_not = f"no cluster reachable: {detail}; scripts/cluster up starts one"
            cluster = None
    if why_not:
        why_not = (f"!!! OPERATOR PANELS NOT CHECKED WITH DATA ({why_not}): "
                   "kubeload-results.json is checked for query syntax only !!!")
        report.note(why_not)

    processes = Processes()
    try:
        run_live_checks(report, args, docs, processes, workdir, cluster)
    except KeyboardInterrupt:
        report.check(False, "run", "interrupted by a signal")
    except Exception as error:  # a setup failure is a failed check, not a traceback
        report.check(False, "setup", f"{type(error).__name__}: {error}")
    finally:
        processes.stop_all()
        if args.keep_temp:
            report.note(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if why_not:
        report.note(why_not)
    print(f"dashboards: {report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


def run_live_checks(report, args, docs, processes, workdir, cluster):
    run_operator = cluster is not None
    scrape = {"kubeload-loadgen": [], "kubeload-operator": []}
    # First the operator's part on the cluster (about half a minute, most of it the
    # image build), so the local runs below are young when Prometheus starts.
    if run_operator:
        operator_port, loadtests = run_in_cluster(report, args, cluster, processes, workdir)
        scrape["kubeload-operator"].append(f"{LOOPBACK}:{operator_port}")
    else:
        del scrape["kubeload-operator"]

    # Targets: fault_server for the closed-model mix, nginx for the open model.
    fault = FaultServer(args.fault_server, workdir)
    fault.start()
    processes.add("fault_server", fault.stop)
    nginx = Nginx(args.nginx, workdir)
    processes.add("nginx", nginx.stop)
    nginx.start()

    # The closed-model LoadTest (two workers in pod mode) and the scenario
    # LoadTest (one), each with its run's token, as the operator would hand
    # it to its worker pods.
    for spec, count in ((closed_spec(fault.url("/")), 2), (journey_spec(fault.url("/")), 1)):
        for port in start_workers(processes, args, workdir, spec, count, os.urandom(16).hex()):
            scrape["kubeload-loadgen"].append(f"{LOOPBACK}:{port}")

    # The open-model run: plain loadgen with --metrics-addr.
    metrics_port = free_port()
    open_run = spawn(processes, "loadgen (open model)", [
        args.loadgen, "-r", "200", "--max-connections", "8", "-d", "120s", "-t", "1", "-q",
        "--metrics-addr", f"{LOOPBACK}:{metrics_port}", nginx.url("/index.html", "dashboards")],
        os.path.join(workdir, "open.log"))
    if not wait_for_listener(metrics_port, open_run, 15):
        raise RuntimeError(f"loadgen -r did not serve metrics: "
                           f"{read_tail(os.path.join(workdir, 'open.log'))}")
    scrape["kubeload-loadgen"].append(f"{LOOPBACK}:{metrics_port}")

    # The chart's alerts (what prometheusRule.enabled installs), evaluated
    # over the real runs.
    prometheus = Prometheus(args.prometheus, workdir, scrape,
                            [RULES_FILE] if run_operator else [])
    prometheus.start(processes)
    version = subprocess.run([args.prometheus, "--version"], capture_output=True, text=True)
    report.note(f"{(version.stdout or version.stderr).splitlines()[0]} on :{prometheus.port}, "
                f"scraping {sum(len(t) for t in scrape.values())} targets every 1s")

    deadline = time.monotonic() + 20
    while True:
        up, detail = prometheus.targets_up()
        if up or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    report.check(bool(up), "prometheus targets up", detail)
    if not up:
        return
    up_at = time.monotonic()

    run_doc = docs.get("kubeload-run.json")
    results_doc = docs.get("kubeload-results.json")
    checks = []
    if run_doc:
        closed_values = {"namespace": NAMESPACE, "loadtest": CLOSED}
        journey_values = {"namespace": NAMESPACE, "loadtest": JOURNEY}
        checks += panel_checks("kubeload-run.json", run_doc, [
            ("all", {}, lambda p: "finite"),
            (f"loadtest={CLOSED}", {k: regex_value(v) for k, v in closed_values.items()},
             lambda p: "empty" if uses_target_rate(p) or uses_iterations(p) else "finite"),
            (f"loadtest={JOURNEY}", {k: regex_value(v) for k, v in journey_values.items()},
             lambda p: "empty" if uses_target_rate(p) else "finite"),
            (f"loadtest={OPEN}", {"loadtest": regex_value(OPEN)},
             lambda p: "empty" if uses_iterations(p) else "finite"),
            ("worker=1, request=unavailable", {"worker": "1", "request": "unavailable"},
             lambda p: "empty" if uses_target_rate(p) or uses_iterations(p) else "finite"),
        ])
    if results_doc:
        if run_operator:
            checks += panel_checks("kubeload-results.json", results_doc, [
                ("all", {}, lambda p: "finite"),
                (f"loadtest={PASSING}", {"namespace": NAMESPACE, "test": TEST_LABEL,
                                         "loadtest": PASSING},
                 lambda p: "finite"),
            ])
        else:
            checks += panel_checks("kubeload-results.json", results_doc,
                                   [("all", {}, lambda p: "syntax")])

    # Rates need a few scrapes; evaluate until every check holds or time is up.
    deadline = time.monotonic() + DEADLINE_S
    while True:
        for check in checks:
            if not check.done:
                check.run(prometheus)
        pending = [c for c in checks if not c.done]
        if not pending or time.monotonic() > deadline:
            break
        report.debug(f"{len(pending)} checks waiting for data")
        time.sleep(1)
    for check in checks:
        report.check(check.ok, check.name, check.detail)

    # A malformed expression must be reported as such, or "parsed" above means nothing.
    status, document = prometheus.query("sum(rate(kubeload_requests_total[5s])")
    report.check(status == 400 and document.get("errorType") == "bad_data",
                 "prometheus rejects a malformed query",
                 f"{status} {document.get('errorType')}: {document.get('error')}")

    naming_checks(report, prometheus)

    # Values: only once a whole $__rate_interval (5s) of scrapes is in, since
    # rate() over a partly filled window extrapolates to less than the rate.
    time.sleep(max(0.0, up_at + 7 - time.monotonic()))
    if run_doc:
        closed = {"namespace": NAMESPACE, "loadtest": CLOSED}
        value_checks(report, prometheus, "kubeload-run.json", run_doc, [
            ("Requests/s by load test and worker", "A", {}, "one series per worker of each run",
             lambda got: sorted((l.get("namespace", ""), l["loadtest"], l["worker"])
                                for l, _ in got) ==
             [("", OPEN, "0"), (NAMESPACE, CLOSED, "0"), (NAMESPACE, CLOSED, "1"),
              (NAMESPACE, JOURNEY, "0")]
             and all(v > 0 for _, v in got)),
            ("Responses by status code", "A", closed,
             "200 and 503 (the mix's /status/503); code=\"0\" (no response) exists at zero",
             lambda got: {c for c, v in by_label(got, "code").items() if v > 0} == {"200", "503"}
             and by_label(got, "code").get("0") == 0),
            ("Errors by kind", "A", closed, "only kind=status is non-zero",
             lambda got: by_label(got, "kind").get("status", 0) > 0
             and all(v == 0 for k, v in by_label(got, "kind").items() if k != "status")),
            ("Stage", "A", closed, "stage 1 (the second of spec.load.stages)",
             lambda got: [v for _, v in got] == [1.0]),
            ("Target rate vs achieved", "A", {"loadtest": OPEN}, "target 200/s (-r 200)",
             lambda got: [v for _, v in got] == [200.0]),
            ("Target rate vs achieved", "B", {"loadtest": OPEN}, "achieved 200/s within 15%",
             lambda got: len(got) == 1 and 170 <= got[0][1] <= 230),
            ("Latency quantiles", "A", dict(closed, request="slow"),
             "p50 of /slow/5 in the (5 ms, 10 ms] bucket",
             lambda got: len(got) == 1 and 0.005 <= got[0][1] <= 0.010),
            ("Iterations/s by scenario", "A", {"loadtest": JOURNEY},
             "one series, scenario buy, iterating",
             lambda got: [(l.get("scenario"), v > 0) for l, v in got] == [("buy", True)]),
            ("Iterations/s by scenario", "B", {"loadtest": JOURNEY}, "no failed iteration",
             lambda got: [(l.get("scenario"), v) for l, v in got] == [("buy", 0.0)]),
            ("Iteration duration", "A", {"loadtest": JOURNEY},
             "p50 in the (10 ms, 25 ms] bucket (15 ms of think time and four quick steps)",
             lambda got: len(got) == 1 and 0.010 <= got[0][1] <= 0.025),
        ])
    if results_doc and run_operator:
        value_checks(report, prometheus, "kubeload-results.json", results_doc,
                     operator_value_cases(loadtests))
        alert_and_annotation_checks(report, prometheus, results_doc, loadtests)

    if run_doc:
        check_variables(report, prometheus, "kubeload-run.json", run_doc, {
            "namespace": {NAMESPACE},
            "loadtest": {CLOSED, JOURNEY, OPEN},
            "worker": {"0", "1"},
            "request": {"slow", "ok", "unavailable", "default", *JOURNEY_STEPS},
            "scenario": {"buy"},
        })
    if results_doc and run_operator:
        check_variables(report, prometheus, "kubeload-results.json", results_doc, {
            "namespace": {NAMESPACE},
            "test": {TEST_LABEL, INVALID_TEST_LABEL},
            "loadtest": {PASSING, GATED, INVALID},
        })

    scraped = prometheus.label_values("__name__")
    for name, doc in docs.items():
        if name == "kubeload-results.json" and not run_operator:
            continue
        used = set()
        for panel in query_panels(doc):
            for t in panel["targets"]:
                used |= metric_names(t["expr"])
        missing = sorted(used - scraped - ONLY_WHILE_RUNNING)
        report.check(not missing, f"scraped {name}: every metric name queried exists",
                     f"never scraped: {missing}" if missing else
                     f"{len(used - ONLY_WHILE_RUNNING)} names (not expected: "
                     f"{', '.join(sorted(ONLY_WHILE_RUNNING))})")
    # Last: it deletes one of the LoadTests the checks above read.
    if run_operator:
        deleted_series_checks(report, cluster, scrape["kubeload-operator"][0].rsplit(":", 1)[1])


if __name__ == "__main__":
    sys.exit(main())
