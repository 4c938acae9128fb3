#!/usr/bin/env python3
"""Checks kubeload's HdrHistogram V2 codec against the Python `hdrh` package.

Usage: python3 tests/hdr_interop/check.py path/to/hdr_interop_tool

Both directions:
  ours -> hdrh: the tool records pseudo-random values and encodes them; hdrh
                decodes the text and must see the same buckets and statistics.
  hdrh -> ours: hdrh records values into several layouts and encodes them; the
                tool decodes the text and must report what hdrh reports.

Percentiles: hdrh ranks with round(p * N), HdrHistogram (Java/C, and ours)
with ceil(p * N). Where p * N is an integer the two agree and hdrh's own
get_value_at_percentile is compared; for every case the ceil rank is also
walked over hdrh's decoded counts. Prints one line per case and ends with
"hdr-interop: N passed, M failed"; exits non-zero on any failure.
"""

import base64
import json
import math
import random
import subprocess
import sys
import zlib
from fractions import Fraction

try:
    from hdrh.histogram import HdrHistogram
except ImportError as error:  # a missing checker must not look like a pass
    print(f"hdr-interop: cannot import hdrh ({error}); pip install hdrhistogram")
    print("hdr-interop: 0 passed, 1 failed")
    sys.exit(1)

PERCENTILES = ["0", "50", "90", "99", "99.9", "99.99", "100"]
DEFAULT_LAYOUT = (1, 24 * 3600 * 1000 * 1000, 3)
RELATIVE_TOLERANCE = 1e-9  # mean/stddev: hdrh sums exact integers, we sum doubles


def run_tool(tool, *args):
    completed = subprocess.run([tool, *map(str, args)], capture_output=True, text=True,
                               timeout=120, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{tool} {args[0]} exited {completed.returncode}: "
                           f"{completed.stderr.strip()}")
    return json.loads(completed.stdout)


def nonempty_buckets(histogram):
    return [[histogram.get_value_from_index(index), histogram.get_count_at_index(index)]
            for index in range(histogram.counts_len)
            if histogram.get_count_at_index(index) != 0]


def value_at_ceil_rank(histogram, percentile_text):
    """HdrHistogram's getValueAtPercentile, walked over hdrh's counts."""
    total = histogram.get_total_count()
    rank = max(1, math.ceil(Fraction(percentile_text) * total / 100))
    running = 0
    for index in range(histogram.counts_len):
        running += histogram.get_count_at_index(index)
        if running >= rank:
            value = histogram.get_value_from_index(index)
            if Fraction(percentile_text) == 0:
                return histogram.get_lowest_equivalent_value(value)
            return histogram.get_highest_equivalent_value(value)
    return 0


def rank_is_integral(percentile_text, total):
    return (Fraction(percentile_text) * total / 100).denominator == 1


def close(a, b):
    return math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-9)


def compare(ours, theirs):
    """Returns a list of differences between our JSON and an hdrh histogram."""
    problems = []

    def expect(what, our_value, their_value, equal=lambda a, b: a == b):
        if not equal(our_value, their_value):
            problems.append(f"{what}: ours {our_value!r}, hdrh {their_value!r}")

    expect("lowest", ours["lowest"], theirs.lowest_trackable_value)
    expect("highest", ours["highest"], theirs.highest_trackable_value)
    expect("significant digits", ours["significant_digits"], theirs.significant_figures)
    expect("total count", ours["total_count"], theirs.get_total_count())
    expect("min", ours["min"], theirs.get_min_value())
    expect("max", ours["max"], theirs.get_max_value())
    expect("mean", ours["mean"], theirs.get_mean_value(), close)
    expect("stddev", ours["stddev"], theirs.get_stddev(), close)
    their_buckets = nonempty_buckets(theirs)
    if ours["buckets"] != their_buckets:
        differing = [pair for pair in zip(ours["buckets"], their_buckets) if pair[0] != pair[1]]
        problems.append(f"buckets: ours {len(ours['buckets'])}, hdrh {len(their_buckets)} "
                        f"non-empty; first difference {differing[:1]}")
    total = theirs.get_total_count()
    for percentile in PERCENTILES:
        ours_value = ours["percentiles"][percentile]
        expect(f"p{percentile} (ceil rank)", ours_value, value_at_ceil_rank(theirs, percentile))
        # hdrh's float rank is only exact below 2^53 (past that its p100 finds nothing).
        if 0 < total < 2**53 and rank_is_integral(percentile, total):
            expect(f"p{percentile} (hdrh)", ours_value,
                   theirs.get_value_at_percentile(float(percentile)))
    return problems


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def record(self, name, check):
        try:
            problems = check()
        except Exception as error:  # any crash on either side is a failure of this case
            problems = [f"{type(error).__name__}: {error}"]
        if problems:
            self.failed += 1
            print(f"FAIL {name}")
            for problem in problems:
                print(f"     {problem}")
        else:
            self.passed += 1
            print(f"ok   {name}")


def differing_summaries(decoded, ours):
    """The summary keys in which two of our tool's descriptions differ."""
    return [key for key in ("total_count", "min", "max", "percentiles", "buckets")
            if decoded[key] != ours[key]]


def ours_to_hdrh(tool, seed, count):
    ours = run_tool(tool, "encode", seed, count)
    theirs = HdrHistogram.decode(ours["encoded"])
    problems = compare(ours, theirs)
    if count and ours["total_count"] != count:
        problems.append(f"tool recorded {ours['total_count']} values, asked for {count}")
    # And back: what hdrh re-encodes from our data decodes to the same thing.
    again = run_tool(tool, "decode", theirs.encode().decode("ascii"))
    problems += [f"hdrh re-encoding changed {key}" for key in differing_summaries(again, ours)]
    # The uncompressed form (a worker's final /result) is HdrHistogram's bare
    # V2 payload: hdrh reads only the compressed framing, so it is framed here
    # (deflated, behind the compressed cookie and its length) and hdrh must
    # read the same histogram from it; our decoder reads it as it is.
    payload = base64.b64decode(ours["uncompressed"])
    if payload[:4] != (0x1C849313).to_bytes(4, "big"):
        problems.append(f"uncompressed form starts {payload[:4].hex()}, not the V2 payload cookie")
    deflated = zlib.compress(payload)
    framed = (0x1C849314).to_bytes(4, "big") + len(deflated).to_bytes(4, "big") + deflated
    problems += [f"uncompressed: {problem}"
                 for problem in compare(ours, HdrHistogram.decode(base64.b64encode(framed)))]
    plain = run_tool(tool, "decode", ours["uncompressed"])
    problems += [f"our decoder read the uncompressed form's {key} differently"
                 for key in differing_summaries(plain, ours)]
    return problems


def hdrh_to_ours(tool, layout, values):
    theirs = HdrHistogram(*layout)
    for value, count in values:
        theirs.record_value(value, count)
    encoded = theirs.encode().decode("ascii")
    ours = run_tool(tool, "decode", encoded)
    # hdrh's own decoder as the reference for min/max, which a decode derives
    # from the counts (a live histogram keeps the raw extremes).
    reference = HdrHistogram.decode(encoded)
    problems = compare(ours, reference)
    if ours["total_count"] != theirs.get_total_count():
        problems.append("total count differs from the recording histogram")
    return problems


def random_values(seed, count, highest):
    generator = random.Random(seed)
    values = []
    for _ in range(count):
        roll = generator.random()
        if roll < 0.001:
            values.append((generator.randint(1, highest), 1))  # outliers up to the top
        elif roll < 0.002:
            values.append((0, generator.randint(1, 5)))
        else:
            latency = int(generator.lognormvariate(math.log(1500), 1.3))
            values.append((min(latency, highest), generator.choice((1, 1, 1, 3))))
    return values


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tool = sys.argv[1]
    tally = Tally()

    for seed, count in [(1, 0), (2, 1), (3, 1000), (4, 12345), (5, 100000), (6, 200000)]:
        tally.record(f"ours->hdrh seed={seed} n={count}",
                     lambda seed=seed, count=count: ours_to_hdrh(tool, seed, count))

    layouts = [DEFAULT_LAYOUT, (1, 3600 * 1000 * 1000, 3), (1000, 10_000_000_000, 2),
               (1, 10_000_000, 4), (1, 2**40, 1), (3, 2**62, 3)]
    for number, layout in enumerate(layouts):
        highest = layout[1]
        for count in (0, 1, 5000):
            values = random_values(100 * number + count, count, highest)
            tally.record(f"hdrh->ours layout={layout} n={count}",
                         lambda layout=layout, values=values: hdrh_to_ours(tool, layout, values))
    tally.record("hdrh->ours large counts",
                 lambda: hdrh_to_ours(tool, DEFAULT_LAYOUT,
                                      [(7, 2**40), (123456, 3**30), (10**9, 1),
                                       (5, 2**60)]))

    print(f"hdr-interop: {tally.passed} passed, {tally.failed} failed")
    return 0 if tally.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
