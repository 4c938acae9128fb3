#!/usr/bin/env python3
"""The gate reports as their readers read them.

1. JUnit: every golden (tests/golden/gate/*.junit.xml) and the JUnit report of
   a real `loadgen run` validate against the common JUnit schema
   (tests/reports/junit.xsd, by xmllint from Debian's libxml2-utils) and
   their counts add up: tests/failures/errors on each element match the test
   cases, and every failure carries what was observed and the limit. Their
   names are the test's identity (suite and classname; the label, else the
   manifest's name), never a run's generated name, so CI keeps history.
2. Markdown of the goldens and of the same run, rendered to HTML by a real
   GitHub-flavoured Markdown renderer (cmark-gfm, GitHub's fork of cmark,
   from Debian's cmark-gfm) and read back with html.parser: the verdict
   headline, the tables with their headers and one row per threshold and
   stage, and nothing meant as a table left as a paragraph.
3. HTML: the page of a real run (and any --html pages, e.g. the e2e's
   `kubectl kubeload report -o html`) rendered by headless Chromium. The DOM
   Chromium builds holds the latency curve with its points and the stage and
   threshold tables; the screenshot is not blank and shows the curve's own
   colour along a line, the verdict banner's colour, and table text.

The run goes to a server on 127.0.0.1 started here. Chromium runs with every
background service off, DNS mapped to nothing and a dead proxy on 127.0.0.1,
so it cannot send a packet off this machine. Last line:
"reports: N passed, M failed".
"""

import argparse
import html.parser
import http.server
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CURVE_RGB = (0x09, 0x69, 0xDA)  # .curve stroke in reports/report_html.cpp
FAIL_BANNER_RGB = (0xFF, 0xEB, 0xE9)  # header.fail background
PASS_BANNER_RGB = (0xDA, 0xFB, 0xE1)  # header.pass background

passed = 0
failed = 0


def check(what, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"reports: PASS {what}")
    else:
        failed += 1
        print(f"reports: FAIL {what}" + (f": {detail}" if detail else ""))
    return condition


# ---- JUnit -----------------------------------------------------------------


SCHEMA = os.path.join(ROOT, "tests", "reports", "junit.xsd")


def schema_errors(text):
    """xmllint's complaints about a JUnit document, "" when it validates."""
    result = subprocess.run(["xmllint", "--noout", "--schema", SCHEMA, "-"], input=text,
                            capture_output=True, text=True, timeout=60)
    return "" if result.returncode == 0 else (result.stderr.strip() or f"exit {result.returncode}")


def check_schema_rejects_what_it_must():
    """The validator can fail: documents every reader would not take are refused."""
    with open(os.path.join(ROOT, "tests", "golden", "gate", "passed.junit.xml"),
              encoding="utf-8") as f:
        good = f.read()
    check("junit.xsd: a golden validates", schema_errors(good) == "", schema_errors(good))
    broken = {
        "a count that is not an integer": re.sub(r'tests="\d+"', 'tests="six"', good, count=2),
        "a test case without a classname": re.sub(r' classname="[^"]*"', "", good, count=1),
        "a time that is not decimal seconds": good.replace('time="0"', 'time="0s"', 1),
        "two outcomes in one test case": good.replace(
            "<system-out>", '<failure message="a"/><error message="b"/><system-out>', 1),
    }
    for what, text in broken.items():
        check(f"junit.xsd rejects {what}", schema_errors(text) != "", "it validated")


def check_junit(label, text, expect_failures=None, expect_identity=None):
    try:
        root = ET.fromstring(text.encode("utf-8"))
    except ET.ParseError as e:
        check(f"{label}: parses as XML", False, str(e))
        return None
    check(f"{label}: parses as XML", True)
    errors = schema_errors(text)
    check(f"{label}: validates against tests/reports/junit.xsd", errors == "", errors[-500:])
    check(f"{label}: root is <testsuites>", root.tag == "testsuites", root.tag)
    suites = root.findall("testsuite")
    check(f"{label}: one <testsuite>", len(suites) == 1, str(len(suites)))
    for element in [root] + suites:
        cases = element.iter("testcase")
        cases = list(cases)
        n_fail = sum(1 for c in cases if c.find("failure") is not None)
        n_err = sum(1 for c in cases if c.find("error") is not None)
        counts = (int(element.get("tests", -1)), int(element.get("failures", -1)),
                  int(element.get("errors", -1)))
        check(f"{label}: <{element.tag}> counts {counts} match its test cases",
              counts == (len(cases), n_fail, n_err), f"cases {len(cases)}, {n_fail}, {n_err}")
    identity = suites[0].get("name") if suites else None
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    check(f"{label}: the suite is named by the test (kubeload.dev/test {identity!r})",
          identity and properties.get("kubeload.dev/test") == identity, str(properties))
    if expect_identity is not None:
        check(f"{label}: the test is {expect_identity!r}", identity == expect_identity,
              str(identity))
    run = properties.get("kubeload.dev/run", "")
    names = []
    for case in root.iter("testcase"):
        names.append(case.get("name"))
        check(f"{label}: test case {case.get('name')!r} has the test as classname and a time",
              case.get("classname") == identity and case.get("time") is not None,
              str(case.attrib))
        if run:
            check(f"{label}: test case {case.get('name')!r} is not named after the run {run!r}",
                  run not in case.get("name") and run not in case.get("classname"))
        failure = case.find("failure")
        if failure is not None:
            message = failure.get("message", "")
            check(f"{label}: failure of {case.get('name')!r} carries observed and limit",
                  "observed" in message and "limit" in message, message)
    check(f"{label}: test case names are unique (GitLab keeps only the first of a name)",
          len(names) == len(set(names)), str(names))
    check(f"{label}: the first test case is the run", names[:1] == ["run"], str(names))
    if expect_failures is not None:
        actual = int(root.get("failures", -1))
        check(f"{label}: {expect_failures} failure(s)", actual == expect_failures, str(actual))
    return root


# ---- Markdown -------------------------------------------------------------


def render_gfm(markdown):
    """HTML of GitHub-flavoured Markdown as GitHub renders a job summary or a
    comment: cmark-gfm with GitHub's extensions; raw HTML (<details>, <sub>)
    is kept, as GitHub keeps those tags."""
    result = subprocess.run(["cmark-gfm", "--unsafe", "-e", "table", "-e", "strikethrough",
                             "-e", "autolink", "-e", "tagfilter"],
                            input=markdown, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"cmark-gfm failed: {result.stderr.strip()}")
    return result.stdout


class RenderedMarkdown(html.parser.HTMLParser):
    """The blocks a reader sees: headings, paragraphs and tables (header
    cells, then rows of cells), each as its text."""

    def __init__(self, rendered):
        super().__init__()
        self.headings, self.paragraphs, self.tables = [], [], []
        self._text = None  # text of the heading, paragraph or cell being read
        self._row = None
        self.feed(rendered)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"header": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag in ("th", "td", "p", "h1", "h2", "h3", "h4", "h5", "h6"):
            self._text = []

    def handle_endtag(self, tag):
        text = "".join(self._text).strip() if self._text is not None else ""
        if tag in ("th", "td") and self._row is not None:
            self._row.append(text)
        elif tag == "tr" and self.tables and self._row is not None:
            table = self.tables[-1]
            if not table["header"]:
                table["header"] = self._row
            else:
                table["rows"].append(self._row)
            self._row = None
        elif tag == "p" and self._row is None:
            self.paragraphs.append(text)
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings.append(text)
        if tag in ("th", "td", "p", "h1", "h2", "h3", "h4", "h5", "h6"):
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def table(self, header):
        return [t for t in self.tables if t["header"] == header]


SUMMARY_HEADER = ["", "requests", "rps", "errors", "p50 ms", "p90 ms", "p99 ms", "max ms"]
THRESHOLDS_HEADER = ["", "threshold", "observed", "limit"]
STAGES_HEADER = ["stage"] + SUMMARY_HEADER[1:]


def table_left_as_paragraph(page):
    """A paragraph with a line of pipes: a table the renderer did not take as one."""
    return [p for p in page.paragraphs if any(line.strip().startswith("|")
                                              for line in p.splitlines())]


def check_markdown(label, markdown, verdict, thresholds, stages=None, has_result=True):
    """thresholds: [(expression, passed)] in order; stages: the stage labels;
    has_result: whether the run collected a result (a summary table)."""
    page = RenderedMarkdown(render_gfm(markdown))
    check(f"{label}: the headline says {verdict}",
          bool(page.headings) and page.headings[0].endswith(verdict), str(page.headings[:1]))
    stray = table_left_as_paragraph(page)
    check(f"{label}: no table renders as a paragraph", not stray, str(stray)[:300])
    for table in page.tables:
        widths = {len(row) for row in table["rows"]}
        check(f"{label}: every row of the table {table['header']} has a cell per column",
              widths <= {len(table["header"])}, str(widths))
    summary = page.table(SUMMARY_HEADER)
    if has_result:
        check(f"{label}: the summary table, one row for the total",
              len(summary) == 1 and [r[0] for r in summary[0]["rows"]] == ["total"], str(summary))
    else:
        check(f"{label}: no summary table without a result", not summary, str(summary))
    found = page.table(THRESHOLDS_HEADER)
    rows = found[0]["rows"] if len(found) == 1 else []
    shown = [(r[1], r[0]) for r in rows]
    want = [(expression, "✅" if passed else "❌") for expression, passed in thresholds]
    check(f"{label}: the thresholds table, one row per threshold with its pass or fail",
          shown == want, f"shown {shown}, want {want}")
    if stages is not None:
        found = page.table(STAGES_HEADER)
        shown = [r[0] for r in found[0]["rows"]] if len(found) == 1 else None
        check(f"{label}: the stages table, one row per stage", shown == stages, str(shown))
    return page


COMPARISONS_HEADER = ["", "comparison", "outcome", "margin", "limit"]


def check_experiment_markdown(markdown, junit_root):
    """An experiment: a table with a column per variant, the differences, and
    one comparison row per comparison test case, green only where the case
    passed (Fail and Inconclusive are failures)."""
    page = RenderedMarkdown(render_gfm(markdown))
    label = "experiment.md"
    check(f"{label}: the headline says Fail", bool(page.headings) and
          page.headings[0].endswith("❌ Fail"), str(page.headings[:1]))
    stray = table_left_as_paragraph(page)
    check(f"{label}: no table renders as a paragraph", not stray, str(stray)[:300])
    variants = [t for t in page.tables if t["header"][1:2] == ["a (base)"]]
    check(f"{label}: the variants side by side, a column each",
          len(variants) == 1 and variants[0]["header"] == ["", "a (base)", "b"] and
          ["requests", "4,000", "4,000"] in variants[0]["rows"], str(variants))
    differences = page.table(["metric", "b - a"])
    check(f"{label}: the differences with their intervals",
          len(differences) == 1 and any(r[0] == "p99" and "[" in r[1]
                                        for r in differences[0]["rows"]), str(differences))
    found = page.table(COMPARISONS_HEADER)
    shown = [(r[1], r[0] == "✅") for r in found[0]["rows"]] if len(found) == 1 else None
    cases = {c.get("name"): c.find("failure") is None for c in junit_root.iter("testcase")}
    want = [(expression, cases.get(expression)) for expression, _ in shown or []]
    check(f"{label}: one comparison row per comparison test case, green only where it passed",
          shown is not None and len(shown) == 3 and shown == want, f"shown {shown}, want {want}")


def check_search_markdown(markdown, junit_root):
    """A capacity search: its sweep table renders as a table, a row per step
    the JUnit run case lists, each failing row naming what it failed."""
    page = RenderedMarkdown(render_gfm(markdown))
    label = "search.md"
    check(f"{label}: the headline says Pass", bool(page.headings) and
          page.headings[0].endswith("✅ Pass"), str(page.headings[:1]))
    stray = table_left_as_paragraph(page)
    check(f"{label}: no table renders as a paragraph", not stray, str(stray)[:300])
    found = [t for t in page.tables if t["header"][:3] == ["step", "rate", "verdict"]]
    out = "".join(c.findtext("system-out") or "" for c in junit_root.iter("testcase")
                  if c.get("name") == "run")
    listed = [line.split(":")[0] for line in out.splitlines() if line.startswith("step ")]
    rows = found[0]["rows"] if len(found) == 1 else []
    check(f"{label}: one sweep row per step of the JUnit run case ({len(rows)} rows, {len(listed)} steps)",
          len(rows) == len(listed) > 0 and [f"step {r[0]}" for r in rows] == listed, str(rows)[:300])
    check(f"{label}: every failing step names the threshold it failed",
          all((r[2] == "Fail") == (r[-1] != "-") for r in rows), str(rows)[:300])


def check_markdown_check_can_fail(markdown):
    """A table without its delimiter row is a paragraph to a real renderer:
    the check must see it."""
    broken = re.sub(r"^\|---\|---\|---:\|---\|\n", "", markdown, count=1, flags=re.M)
    page = RenderedMarkdown(render_gfm(broken))
    check("a thresholds table without its delimiter row is caught as a paragraph",
          broken != markdown and table_left_as_paragraph(page) and
          not page.table(THRESHOLDS_HEADER))


def golden_thresholds(junit_root):
    """(expression, passed) of each threshold test case of a JUnit golden."""
    return [(c.get("name"), c.find("failure") is None) for c in junit_root.iter("testcase")
            if c.get("name") != "run" and not c.get("name").startswith("baseline")]


# ---- a real run --------------------------------------------------------------


class SlowTailHandler(http.server.BaseHTTPRequestHandler):
    """Most answers at once, every 10th after 2 ms, every 100th after 15 ms:
    a latency curve with a visible tail."""

    count = 0
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with SlowTailHandler.lock:
            SlowTailHandler.count += 1
            n = SlowTailHandler.count
        if n % 100 == 0:
            time.sleep(0.015)
        elif n % 10 == 0:
            time.sleep(0.002)
        body = b"kubeload report check\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def run_loadgen(loadgen, manifest, fmt):
    result = subprocess.run([loadgen, "run", manifest, "--format", fmt, "-q"],
                            capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout, result.stderr


# ---- Chromium and PNG --------------------------------------------------------


def find_chromium(given):
    for name in [given, "chromium", "chromium-browser", "google-chrome"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def chromium_args(chromium, profile):
    # Nothing may leave this machine: no background services, every host
    # name resolves to nothing, and any request that still tries goes to a
    # proxy on 127.0.0.1 where nothing listens.
    return [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-default-apps",
            "--disable-domain-reliability", "--disable-client-side-phishing-detection",
            "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
            "--no-pings", "--metrics-recording-only", "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={profile}"]


def decode_png(path):
    """RGB(A) 8-bit non-interlaced PNG -> (width, height, rows of (r, g, b))."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, color = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or color not in (2, 6) or interlace != 0:
                raise ValueError(f"unsupported PNG (depth {depth}, colour {color})")
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, i = [], bytearray(stride), 0
    for _ in range(height):
        kind = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = previous[x]
            c = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + predictor) & 0xFF
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def near(color, target, tolerance=24):
    return all(abs(a - b) <= tolerance for a, b in zip(color, target))


def check_html_page(label, html_path, chromium, out_dir, verdict, want_stages=True):
    with open(html_path, encoding="utf-8") as f:
        html = f.read()
    check(f"{label}: no URL to fetch (no src=, href=, url(), @import)",
          not re.search(r"\b(src|href)\s*=|url\(|@import", html))
    profile = tempfile.mkdtemp(prefix="kubeload-chromium-")
    try:
        url = "file://" + os.path.abspath(html_path)
        dom = subprocess.run(chromium_args(chromium, profile) + ["--dump-dom", url],
                             capture_output=True, text=True, timeout=120)
        check(f"{label}: Chromium loads it (exit {dom.returncode})", dom.returncode == 0,
              dom.stderr[-500:])
        text = dom.stdout
        curve = re.search(r'<polyline id="latency-curve-line"[^>]*points="([^"]+)"', text)
        points = curve.group(1).split() if curve else []
        check(f"{label}: the DOM holds the latency curve ({len(points)} points)", len(points) >= 8)
        check(f"{label}: the percentile axis is logarithmic (0%, 90%, 99% ticks)",
              all(f">{p}</text>" in text for p in ("0%", "90%", "99%")))
        check(f"{label}: the DOM holds the thresholds table",
              re.search(r'<table id="thresholds">.*?<td', text, re.S) is not None)
        if want_stages:
            stages = re.search(r'<table id="stages">(.*?)</table>', text, re.S)
            rows = stages.group(1).count("<tr>") - 1 if stages else 0
            check(f"{label}: the DOM holds the per-stage table ({rows} stages)", rows >= 2)
        # The full page to look at, and a half-scale one to count pixels of
        # (a quarter of the work for this pure-Python PNG decoder).
        png = os.path.join(out_dir, os.path.basename(html_path).rsplit(".", 1)[0] + ".png")
        small = png[:-4] + "-half.png"
        for path, scale in ((png, "1"), (small, "0.5")):
            shot = subprocess.run(chromium_args(chromium, profile) +
                                  ["--window-size=960,1500", f"--force-device-scale-factor={scale}",
                                   f"--screenshot={path}", url],
                                  capture_output=True, text=True, timeout=120)
            if not check(f"{label}: Chromium takes a screenshot at scale {scale}",
                         shot.returncode == 0 and os.path.exists(path), shot.stderr[-500:]):
                return
        width, height, rows = decode_png(small)
        colors = {}
        curve_rows = set()
        for y in range(0, height):
            for x in range(0, width):
                c = rows[y][x]
                colors[c] = colors.get(c, 0) + 1
                if near(c, CURVE_RGB, 40):
                    curve_rows.add(y)
        white = colors.get((255, 255, 255), 0)
        check(f"{label}: the screenshot ({width}x{height}) is not blank "
              f"({len(colors)} colours, {100 * white // (width * height)}% white)",
              len(colors) > 50 and white < width * height * 0.97)
        check(f"{label}: the curve is drawn ({len(curve_rows)} pixel rows in its colour)",
              len(curve_rows) >= 10)
        banner = FAIL_BANNER_RGB if verdict == "Fail" else PASS_BANNER_RGB
        banner_pixels = sum(n for c, n in colors.items() if near(c, banner, 6))
        check(f"{label}: the {verdict} banner is shown ({banner_pixels} pixels)",
              banner_pixels > 1500)
        dark = sum(n for c, n in colors.items() if max(c) < 90)
        check(f"{label}: text is rendered ({dark} dark pixels)", dark > 500)
        print(f"reports: screenshot {png}")
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loadgen", default=os.path.join(ROOT, "build", "bin", "loadgen"))
    parser.add_argument("--chromium", default="", help="the browser (default: chromium on PATH)")
    parser.add_argument("--out", default="/tmp/kubeload-reports", help="where pages and screenshots go")
    parser.add_argument("--html", action="append", default=[], metavar="FILE[:VERDICT]",
                        help="also render this page (verdict Pass or Fail for the banner)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    golden = os.path.join(ROOT, "tests", "golden", "gate")
    goldens = sorted(f for f in os.listdir(golden) if f.endswith(".junit.xml"))
    check("JUnit goldens exist", len(goldens) >= 3, str(goldens))
    for tool in ("xmllint", "cmark-gfm"):
        if not check(f"{tool} is installed (scripts/setup installs it)", shutil.which(tool)):
            return finish()
    check_schema_rejects_what_it_must()
    verdicts = {"passed": "✅ Pass", "gate_failed": "❌ Fail", "run_failed": "💥 run failed",
                "running": "⏳ Running"}
    for name in goldens:
        scenario = name[:-len(".junit.xml")]
        # The experiment's and the search's goldens are gitops fixtures' LoadTests.
        identity = {"experiment": "nginx-ab", "search": "nginx-capacity"}.get(scenario, "checkout")
        with open(os.path.join(golden, name), encoding="utf-8") as f:
            root = check_junit(name, f.read(), expect_identity=identity)
        with open(os.path.join(golden, scenario + ".md"), encoding="utf-8") as f:
            markdown = f.read()
        if root is not None and scenario in verdicts:
            check_markdown(scenario + ".md", markdown, verdicts[scenario],
                           golden_thresholds(root), has_result=scenario != "run_failed")
            if scenario == "gate_failed":
                check_markdown_check_can_fail(markdown)
        if root is not None and scenario == "experiment":
            check_experiment_markdown(markdown, root)
        if root is not None and scenario == "search":
            check_search_markdown(markdown, root)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowTailHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    manifest = os.path.join(args.out, "report-check.yaml")
    with open(manifest, "w") as f:
        f.write(f"""apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata:
  name: report-check
  labels: {{kubeload.dev/test: report-gate}}
spec:
  target: {{url: "http://127.0.0.1:{port}/"}}
  load:
    stages: [{{duration: 1s, connections: 2}}, {{duration: 1s, connections: 4}}]
  thresholds: ["p999 < 10s", "errorRate < 1%", "p50 < 0.001ms"]
""")
    try:
        code, junit, err = run_loadgen(args.loadgen, manifest, "junit")
        check("loadgen --format junit: exit 1 for the missed p50 threshold", code == 1, err[-300:])
        root = check_junit("loadgen --format junit", junit, expect_failures=1,
                           expect_identity="report-gate")
        if root is not None:
            names = [c.get("name") for c in root.iter("testcase")]
            check("loadgen --format junit: the run and each threshold are test cases",
                  names == ["run", "p999 < 10s", "errorRate < 1%", "p50 < 0.001ms"], str(names))
        code, markdown, err = run_loadgen(args.loadgen, manifest, "markdown")
        check_markdown("loadgen --format markdown", markdown, "❌ Fail",
                       [("p999 < 10s", True), ("errorRate < 1%", True), ("p50 < 0.001ms", False)],
                       stages=["stage 0 (2 conns)", "stage 1 (4 conns)"])
        code, html, err = run_loadgen(args.loadgen, manifest, "html")
        page = os.path.join(args.out, "loadgen-report.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html)
        chromium = find_chromium(args.chromium)
        if not check("Chromium is installed (scripts/setup installs it)", chromium is not None):
            return finish()
        check_html_page("loadgen --format html", page, chromium, args.out, "Fail")
        for spec in args.html:
            path, _, verdict = spec.partition(":")
            check_html_page(os.path.basename(path), path, chromium, args.out, verdict or "Pass",
                            want_stages=False)
    finally:
        server.shutdown()
    return finish()


def finish():
    print(f"reports: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
