#!/usr/bin/env python3
"""Keeps docs/reference.md honest, in both directions:

- every field of the LoadTest CRD (crds/kubeload.dev_loadtests.yaml) is in the
  field tables, and every field the tables name is in the CRD (fields under
  status.result, which the CRD leaves open, must be keys the code writes);
  likewise the LoadTestSchedule CRD (crds/kubeload.dev_loadtestschedules.yaml)
  and the field tables of the page's "## LoadTestSchedule" section;
- every metric the C++ code registers ("kubeload_..." in loadgen/ and
  operator/) is documented, and every documented metric is registered;
- every reason and condition type of the status vocabulary
  (common/include/kubeload/api/status.hpp: kReasons, kConditionTypes) is
  documented, and every reason and condition the page names is one of them;
- every flag of loadgen (loadgen/cli/cli.cpp) and kubeload-operator
  (operator/main.cpp) is documented, and every documented flag exists.

Prints what is missing where, so the page can be updated in one pass, and
exits 1 on any difference. Run by scripts/test and `ctest -L unit`."""

import glob
import os
import re
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = "docs/reference.md"


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def sources(*patterns):
    text = {}
    for pattern in patterns:
        for path in sorted(glob.glob(os.path.join(ROOT, pattern), recursive=True)):
            text[os.path.relpath(path, ROOT)] = read(os.path.relpath(path, ROOT))
    return text


def crd_fields(path="crds/kubeload.dev_loadtests.yaml"):
    """Dotted paths of every property below spec and status ("spec.requests[].name"),
    and the paths whose subtree the CRD leaves open."""
    crd = yaml.safe_load(read(path))
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    fields, open_paths = set(), set()

    def walk(path, node):
        fields.add(path)
        if node.get("x-kubernetes-preserve-unknown-fields"):
            open_paths.add(path)
        items = node.get("items") or {}
        if items.get("properties") or items.get("x-kubernetes-preserve-unknown-fields"):
            walk(path + "[]", items)
        for name, child in (node.get("properties") or {}).items():
            walk(f"{path}.{name}", child)

    for top in ("spec", "status"):
        walk(top, schema[top])
    # "spec" itself and "spec.requests[]" are no fields of their own: the
    # tables document what is in them
    return {f for f in fields if "." in f and not f.endswith("[]")}, open_paths


def documented_fields(doc):
    """Paths in the first column of the field tables: | `spec.x.y` | ..."""
    return set(re.findall(r"^\| `((?:spec|status)(?:\.[A-Za-z0-9]+(?:\[\])?)*)` \|", doc, re.M))


def registered_metrics(code):
    names = set()
    for path, text in code.items():
        names |= set(re.findall(r'"(kubeload_[a-z0-9_]+)"', text))
    return names


def documented_metrics(doc):
    return set(re.findall(r"`(kubeload_[a-z0-9_]+)`", doc))


def api_enum(code, enum):
    """The spellings of an enum of the status vocabulary: its table's rows,
    {Enum::Value, "Spelling"}, the one place each is written."""
    names = set()
    for text in code.values():
        names |= set(re.findall(r'\{\s*' + enum + r'::\w+,\s*"([A-Z]\w+)"\s*\}', text))
    return names


def documented_reasons(doc):
    """Backticked CamelCase words in the reason columns of the two tables."""
    # The LoadTest's phases and conditions, and the LoadTestSchedule's
    # (the LoadTestResult between them has fields, no reasons).
    section = (doc[doc.index("### Phases and reasons"):doc.index("## LoadTestResult")] +
               doc[doc.index("## LoadTestSchedule"):doc.index("## Thresholds")])
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    reasons, conditions = set(), set()
    for cells in rows:
        cells = [c.strip() for c in cells[1:-1]]
        if len(cells) != 3:
            continue
        first, second, third = cells
        if first.startswith(("`spec.", "`status.")):
            continue  # a field table (the LoadTestSchedule's, in this span)
        if re.fullmatch(r"`\w+`", first) and first.strip("`") in (
                "Pending", "Starting", "Running", "Succeeded", "Failed"):
            reasons.add(second.strip("`"))  # phase | reason | when
        elif first in ("`Normal`", "`Warning`"):
            reasons.add(second.strip("`"))  # an Event: type | reason | when
        else:
            conditions.add(first.strip("`"))  # type | status | reason
            reasons |= set(re.findall(r"`([A-Z][a-z]+(?:[A-Z][a-z]+)+)`", third))
    return reasons, conditions


def code_flags(code):
    flags = set()
    for text in code.values():
        flags |= set(re.findall(r'"(--[a-z][a-z0-9-]*|-[a-zA-Z])"', text))
    return flags


def documented_flags(doc):
    section = doc[doc.index("## Command lines"):]
    flags = set()
    for line in section.splitlines():
        if line.startswith("| `-"):
            first = line.split("|")[1]
            flags |= set(re.findall(r"`(--?[a-zA-Z][a-z0-9-]*)", first))
    return flags


def main():
    doc = read(DOC)
    problems = []

    def compare(what, in_code, in_doc, code_where, allow_in_doc=lambda name: False):
        missing = sorted(in_code - in_doc)
        extra = sorted(n for n in in_doc - in_code if not allow_in_doc(n))
        if missing:
            problems.append(f"{what} in {code_where} but not in {DOC} (add a row):\n  " +
                            "\n  ".join(missing))
        if extra:
            problems.append(f"{what} in {DOC} but not in {code_where} (remove or fix the row):\n  " +
                            "\n  ".join(extra))
        return len(in_code)

    fields, open_paths = crd_fields()
    result_keys = set(re.findall(r'\["([A-Za-z]+)"\]|\{"([A-Za-z]+)",',
                                 read("common/src/result.cpp")))
    result_keys = {a or b for a, b in result_keys}

    def under_open_path(path):
        return any(path.startswith(p + ".") or path.startswith(p + "[]") for p in open_paths) and \
            path.rsplit(".", 1)[-1].rstrip("[]") in result_keys

    # The schedule's section (between "## LoadTestSchedule" and the next
    # "## ") has its own field tables; the rest of the page is the LoadTest's.
    start = doc.index("## LoadTestSchedule")
    end = doc.index("\n## ", start + 1)
    schedule_doc, loadtest_doc = doc[start:end], doc[:start] + doc[end:]
    n_fields = compare("LoadTest fields", fields, documented_fields(loadtest_doc),
                       "crds/kubeload.dev_loadtests.yaml", under_open_path)
    schedule_fields, _ = crd_fields("crds/kubeload.dev_loadtestschedules.yaml")
    n_fields += compare("LoadTestSchedule fields", schedule_fields,
                        documented_fields(schedule_doc),
                        "crds/kubeload.dev_loadtestschedules.yaml")

    metric_code = sources("loadgen/**/*.cpp", "operator/**/*.cpp")
    n_metrics = compare("metrics", registered_metrics(metric_code), documented_metrics(doc),
                        "the C++ registrations (loadgen/, operator/)")

    api_code = sources("common/include/kubeload/api/status.hpp")
    reasons_doc, conditions_doc = documented_reasons(doc)
    # One-word reasons (Measured, Forbidden) are documented in backticks like
    # the verdicts and phases the same cells name, so a one-word name counts as
    # documented where it appears backticked; only the CamelCase ones the page
    # names must be reasons.
    # The LoadTest's phases and conditions, and the LoadTestSchedule's
    # (the LoadTestResult between them has fields, no reasons).
    section = (doc[doc.index("### Phases and reasons"):doc.index("## LoadTestResult")] +
               doc[doc.index("## LoadTestSchedule"):doc.index("## Thresholds")])
    api_reasons = api_enum(api_code, "Reason")
    backticked = set(re.findall(r"`([A-Z][a-z]+)`", section))
    compare("reasons", api_reasons, reasons_doc | (backticked & api_reasons),
            "kubeload/api/status.hpp's kReasons")
    compare("condition types", api_enum(api_code, "ConditionType"), conditions_doc,
            "kubeload/api/status.hpp's kConditionTypes")

    cli_code = sources("loadgen/cli/cli.cpp", "operator/main.cpp")
    n_flags = compare("command-line flags", code_flags(cli_code), documented_flags(doc),
                      "loadgen/cli/cli.cpp and operator/main.cpp")

    for problem in problems:
        print(f"check_reference: {problem}")
    print(f"check_reference: {n_fields} CRD fields, {n_metrics} metrics, "
          f"{len(reasons_doc)} reasons, {len(conditions_doc)} conditions, {n_flags} flags; "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
