#!/usr/bin/env python3
"""A Tracker fed scraped pages against a real Prometheus holding the same samples: the
PromQL estimators (rate, increase, irate) per series and summed by a label, compared bit
for bit. A probe, not a test (docs/conformance.md says what the last run found).

Each run: 30 counters scraped 80 times at uneven intervals (14 to 45 s, jittered to the
millisecond), a twentieth of them missing from any one page, restarts; the same samples
backfilled into Debian's Prometheus (2.42: plain sums, 2.x windows) through
tests/data/oracle/tools/oracle.py; 150 queries at random times and windows (10 s to
50 min), each asked of both: `f(x[w])` per series and `sum by (g) (...)`, the tracker with
`Semantics.PROMETHEUS2`, `SeriesScope.UNTIL_STALE` and no start timestamps.

Then a classic histogram (8 buckets, one series each, restarts): 200 quantiles of its
buckets' rate or increase through `Tracker.quantile`, against
`histogram_quantile(q, sum by (le) (f(x_bucket[w])))`.

Usage (promrate's Python module installed, as python/README.md builds it; `prometheus`
and `promtool` on the PATH):
  python3 tests/py/probe_tracker.py [SEED...]
"""
import math
import os
import random
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "oracle", "tools"))
from oracle import PromOracle  # noqa: E402

import promrate  # noqa: E402

SERIES, SCRAPES, QUERIES = 30, 80, 150
ESTIMATORS = {"rate": promrate.Estimator.RATE, "increase": promrate.Estimator.INCREASE,
              "irate": promrate.Estimator.IRATE}


def scrape(rng):
    """The scrape times (ms), each series' samples, and the pages."""
    times, t = [], 1_700_000_000_000
    for _ in range(SCRAPES):
        t += rng.choice([15000, 15000, 15000, 14000, 16000, 30000, 45000]) + rng.randint(-700, 700)
        times.append(t)
    values = [float(rng.randint(0, 1000)) for _ in range(SERIES)]
    series, pages = [[] for _ in range(SERIES)], []
    for t in times:
        lines = ["# TYPE x counter"]
        for i in range(SERIES):
            r = rng.random()
            if r < 0.05:
                continue
            if r < 0.08:
                values[i] = float(rng.randint(0, 50))
            else:
                values[i] += rng.choice([0, 0, 1, 3, 17, 250, 1234.5, 0.25, 1e6])
            series[i].append([t / 1000, values[i]])
            lines.append(f'x{{s="{i}",g="{i % 10}"}} {values[i]!r}')
        pages.append((t, "\n".join(lines) + "\n"))
    return times, series, pages


def same(ours, theirs):
    if ours is None or theirs is None:
        return ours is None and theirs is None
    return ours == theirs or math.isnan(ours) and math.isnan(theirs)


def probe(seed):
    rng = random.Random(seed)
    times, series, pages = scrape(rng)
    tracker = promrate.Tracker(["x"], retention=3600, stale_after=1000)
    for t, page in pages:
        tracker.ingest(page, at=t / 1000)
    counts = {"series same": 0, "series differ": 0, "groups same": 0, "groups differ": 0}
    with PromOracle(series) as prometheus:
        for _ in range(QUERIES):
            at = times[rng.randrange(5, len(times))] + rng.choice(
                [0, 0, 1, -1, 5000, rng.randint(0, 20000), rng.randint(0, 400000)])
            window = rng.choice([30, 60, 120, 300, 600, 45.5, 10, 15, 15.001, 14.999, 1800, 3000])
            fn = rng.choice(sorted(ESTIMATORS))

            def ask(by):
                return tracker.evaluate(promrate.Query(
                    "x", ESTIMATORS[fn], window=window, at=at / 1000, by=[by],
                    semantics=promrate.promql.Semantics.PROMETHEUS2, start_timestamps=False,
                    scope=promrate.SeriesScope.UNTIL_STALE))

            theirs = prometheus.query(fn, window, at / 1000)
            ours = ask("s")
            for i in range(SERIES):
                group = ours.group(str(i))
                want = None if theirs[i] is None else float(theirs[i])
                ok = same(None if group is None else group.value, want)
                counts["series same" if ok else "series differ"] += 1
                if not ok:
                    print(f"{fn}[{window}s] at {at} s={i}: promrate {group}, Prometheus {want}")
            # Prometheus' series have no `g`: it is the last digit of `s`, as on the pages.
            expr = f'sum by (g) (label_replace({fn}(x[{round(window * 1000)}ms]), "g", "$1", "s", ".*(.)"))'
            answer = prometheus._get("/api/v1/query?" + urllib.parse.urlencode(
                {"query": expr, "time": f"{at / 1000:.3f}"}))
            sums = {r["metric"]["g"]: float(r["value"][1]) for r in answer["data"]["result"]}
            ours = ask("g")
            for g in range(10):
                group = ours.group(str(g))
                ok = same(None if group is None else group.value, sums.get(str(g)))
                counts["groups same" if ok else "groups differ"] += 1
    return counts


BOUNDS = ["0.005", "0.01", "0.05", "0.1", "0.5", "1.0", "5.0", "+Inf"]


def probe_quantiles(seed):
    rng = random.Random(seed)
    times, t = [], 1_700_000_000_000
    for _ in range(60):
        t += rng.choice([15000, 15000, 30000]) + rng.randint(-500, 500)
        times.append(t)
    counts, series, pages = [0.0] * len(BOUNDS), [[] for _ in BOUNDS], []
    for t in times:
        if rng.random() < 0.04:
            counts = [0.0] * len(BOUNDS)
        lines, below = ["# TYPE x histogram"], 0
        for j, bound in enumerate(BOUNDS):
            below += rng.randint(0, 30)
            counts[j] += below
            series[j].append([t / 1000, counts[j]])
            lines.append(f'x_bucket{{le="{bound}"}} {counts[j]!r}')
        pages.append((t, "\n".join(lines) + "\n"))
    tracker = promrate.Tracker(["x"], retention=3600, stale_after=1000)
    for t, page in pages:
        tracker.ingest(page, at=t / 1000)
    counts = {"quantiles same": 0, "quantiles differ": 0}
    with PromOracle(series) as prometheus:
        for _ in range(200):
            at = times[rng.randrange(5, len(times))] + rng.choice([0, 1, 5000, rng.randint(0, 30000)])
            window = rng.choice([30, 60, 120, 300, 600])
            q = rng.choice([0.5, 0.9, 0.99, 0.1, rng.random()])
            fn = rng.choice(["rate", "increase"])
            # The oracle's series `s="j"` is the bucket BOUNDS[j].
            buckets = " or ".join(f'label_replace({fn}(x{{s="{j}"}}[{window * 1000}ms]), "le", "{bound}", "s", ".*")'
                                  for j, bound in enumerate(BOUNDS))
            answer = prometheus._get("/api/v1/query?" + urllib.parse.urlencode(
                {"query": f"histogram_quantile({q!r}, sum by (le) ({buckets}))", "time": f"{at / 1000:.3f}"}))
            result = answer["data"]["result"]
            want = float(result[0]["value"][1]) if result else None
            ours = tracker.quantile(q, promrate.Query(
                "x", ESTIMATORS[fn], window=window, at=at / 1000,
                semantics=promrate.promql.Semantics.PROMETHEUS2, start_timestamps=False,
                scope=promrate.SeriesScope.UNTIL_STALE))
            value = ours.groups[0].value if ours.groups else None
            # PromQL's NaN for no quantile is promrate's missing value.
            ok = same(value, want) or value is None and (want is None or math.isnan(want))
            counts["quantiles same" if ok else "quantiles differ"] += 1
            if not ok:
                print(f"q={q} {fn}[{window}s] at {at}: promrate {value}, Prometheus {want}")
    return counts


def main():
    seeds = [int(s) for s in sys.argv[1:]] or [1]
    for seed in seeds:
        print(f"seed {seed}: {probe(seed)} {probe_quantiles(seed)}")


if __name__ == "__main__":
    main()
