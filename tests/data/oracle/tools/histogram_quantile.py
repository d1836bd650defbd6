#!/usr/bin/env python3
"""histogram_quantile answers from a real Prometheus, for promrate::histogram::quantile.

Random classic histograms (a fixed seed: two runs give the same file) are written as one
OpenMetrics file of gauges `h{set="i",le="..."}`, backfilled with
`promtool tsdb create-blocks-from openmetrics` into a temporary TSDB, and a `prometheus`
started on it (127.0.0.1, a free port, no scrape jobs) answers
`histogram_quantile(q, h{set=~"..."})` for every set at once per `q`. The server is
stopped and its directory removed at the end.

Shapes: 1 to 8 bounds from a list that holds negative bounds, 0 and bounds up to 1e6,
usually a `+Inf` bucket (not always), counts that stay, rise, fall back (which PromQL makes
monotonic), all zero, or carry fractions (as rates do); q at 0, 1, the usual percentiles
and random. No two counts are within PromQL's small-delta tolerance (1e-12) of each other
unless equal: Debian's Prometheus 2.42 predates that rule (2.49), which promrate follows.

Usage:
  python3 tools/histogram_quantile.py > histogram-quantile.json   # write the file
  python3 tools/histogram_quantile.py --check histogram-quantile.json   # compare, exit 1 on a difference
Output: {"engine", "cases": [{"q", "buckets": [[le, count], ...], "answer"}]} where `le`
is the label's text, `count` a JSON number (Python's repr: exact), and `answer` what
Prometheus returned as it formats it ("NaN", "+Inf", "-Inf" or a number's shortest
round-trip text), or null when it returned nothing.
"""
import argparse
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SEED = 20261208
CASES = 1000
AT = 1_700_000_000
BOUNDS = [-10, -1, -0.5, 0, 0.001, 0.005, 0.01, 0.1, 0.25, 0.5, 1, 2, 2.5, 5, 10, 100, 1e3, 1e6]


def histograms():
    rng = random.Random(SEED)
    cases = []
    for _ in range(CASES):
        bounds = sorted(rng.sample(BOUNDS, rng.randint(1, 8)))
        if rng.random() < 0.9:
            bounds.append(math.inf)
        counts, count = [], 0
        for _ in bounds:
            count += 0 if rng.random() < 0.3 else rng.randint(1, 50)
            counts.append(count if rng.random() > 0.08 else max(0, count - rng.randint(1, 30)))
        if rng.random() < 0.05:
            counts = [0] * len(counts)
        if rng.random() < 0.1:
            counts = [c + rng.random() for c in counts]
        q = rng.choice([0, 1, 0.5, 0.9, 0.99, 0.01, 0.25, 0.75, rng.random(), rng.random()])
        le = ["+Inf" if b == math.inf else repr(float(b)) for b in bounds]
        cases.append({"q": q, "buckets": [[b, float(c)] for b, c in zip(le, counts)]})
    return cases


def answers(cases, prometheus="prometheus", promtool="promtool"):
    work = tempfile.mkdtemp(prefix="promrate-hq-")
    server = None
    try:
        lines = ["# TYPE h gauge"]
        for i, case in enumerate(cases):
            for le, count in case["buckets"]:
                for t in (AT - 60, AT):
                    lines.append(f'h{{set="{i}",le="{le}"}} {count!r} {t}')
        with open(os.path.join(work, "in.om"), "w") as f:
            f.write("\n".join(lines) + "\n# EOF\n")
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", os.path.join(work, "in.om"),
                        os.path.join(work, "data")], check=True, capture_output=True)
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write("global: {}\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(
            [prometheus, f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/data",
             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=100y",
             "--log.level=error"], stderr=subprocess.DEVNULL)

        def query(expr):
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": AT})
            return json.load(urllib.request.urlopen(url, timeout=60))

        for _ in range(200):
            try:
                query("1")
                break
            except OSError:
                time.sleep(0.1)
        by_q = {}
        for i, case in enumerate(cases):
            by_q.setdefault(case["q"], []).append(i)
        found = {}
        for q, sets in by_q.items():
            res = query(f'histogram_quantile({q!r}, h{{set=~"{"|".join(map(str, sets))}"}})')
            if res.get("status") != "success":
                raise RuntimeError(res)
            for item in res["data"]["result"]:
                found[int(item["metric"]["set"])] = item["value"][1]
        version = subprocess.run([prometheus, "--version"], capture_output=True, text=True)
        engine = (version.stdout or version.stderr).splitlines()[0]
        return engine, [found.get(i) for i in range(len(cases))]
    finally:
        if server:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", metavar="FILE", help="compare with FILE instead of printing")
    args = parser.parse_args()
    cases = histograms()
    engine, got = answers(cases)
    for case, answer in zip(cases, got):
        case["answer"] = answer
    if args.check:
        with open(args.check) as f:
            want = json.load(f)
        differ = [i for i, (a, b) in enumerate(zip(want["cases"], cases)) if a != b]
        if differ or len(want["cases"]) != len(cases):
            print(f"{len(differ)} cases differ from {args.check}, first {differ[:5]}", file=sys.stderr)
            sys.exit(1)
        print(f"{len(cases)} histogram_quantile answers of {engine} as in {args.check}")
        return
    json.dump({"engine": engine, "seed": SEED, "at": AT, "cases": cases}, sys.stdout, indent=None)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
