#!/usr/bin/env python3
"""Reads `helm template charts/kubeload` with podMonitor, prometheusRule and
dashboards enabled on stdin and checks what the chart installs for
monitoring: the PrometheusRule's groups are charts/kubeload/files/
prometheus-rules.yaml's and promtool accepts them; one ConfigMap per
dashboards/*.json, holding the file verbatim, with the Grafana sidecar's
label and folder annotation; the PodMonitor selects the worker pods on their
http port. Usage: chart_monitoring_check.py REPO_ROOT < rendered.yaml"""

import glob
import json
import os
import subprocess
import sys
import tempfile

import yaml


def main():
    root = sys.argv[1]
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    problems = []

    rules_file = os.path.join(root, "charts", "kubeload", "files", "prometheus-rules.yaml")
    with open(rules_file) as f:
        want_groups = yaml.safe_load(f)["groups"]
    rules = by_kind.get("PrometheusRule", [])
    if len(rules) != 1 or rules[0]["spec"].get("groups") != want_groups:
        problems.append("the PrometheusRule's groups are not files/prometheus-rules.yaml's")
    else:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as out:
            yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, out)
            out.flush()
            check = subprocess.run(["promtool", "check", "rules", out.name],
                                   capture_output=True, text=True)
            if check.returncode != 0:
                problems.append(f"promtool check rules: {check.stdout}{check.stderr}")

    dashboards = {os.path.basename(p): p for p in glob.glob(os.path.join(root, "dashboards", "*.json"))}
    maps = [d for d in by_kind.get("ConfigMap", [])
            if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    found = {}
    for cm in maps:
        if cm["metadata"].get("annotations", {}).get("grafana_folder") != "kubeload":
            problems.append(f"{cm['metadata']['name']}: no grafana_folder annotation")
        for key, text in cm.get("data", {}).items():
            found[key] = text
    if set(found) != set(dashboards):
        problems.append(f"dashboard ConfigMaps hold {sorted(found)}, want {sorted(dashboards)}")
    for key, text in found.items():
        if key in dashboards:
            with open(dashboards[key]) as f:
                if json.loads(text) != json.load(f):
                    problems.append(f"{key} differs from dashboards/{key}")

    monitors = by_kind.get("PodMonitor", [])
    if len(monitors) != 1:
        problems.append(f"{len(monitors)} PodMonitors")
    else:
        spec = monitors[0]["spec"]
        if spec["selector"]["matchLabels"].get("app.kubernetes.io/name") != "kubeload-worker" \
                or spec["podMetricsEndpoints"][0].get("port") != "http":
            problems.append(f"PodMonitor does not select the workers' http port: {spec}")

    for problem in problems:
        print(f"chart monitoring: {problem}")
    print(f"chart monitoring: {len(want_groups[0]['rules'])} rules, {len(found)} dashboards, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
