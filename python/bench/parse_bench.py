#!/usr/bin/env python3
"""promrate.parse against prometheus_client's text_string_to_metric_families, in one run.

Usage: python python/bench/parse_bench.py [--rounds N] [--json]

For each page, both parsers turn the page into Python objects (promrate: every entry, a
`Sample` with its labels dict or a `Metadata`; prometheus_client: every family with its
samples), and both results are checked (same sample count) before anything is timed. The
sides are timed in alternating rounds of timeit batches of about 0.1 s each, so a load on
the machine falls on all of them; the best batch of each side is its time, and the ratio
of the two best batches is the speed-up (the median batches' ratio is printed beside it).
A second pair walks every sample of the result in Python (its name, labels and value), as
a program reading the page does: the Python loop costs both sides the same, so that ratio
is lower.
"""

import argparse
import json
import os
import statistics
import sys
import timeit

from importlib.metadata import version

import promrate
from prometheus_client.parser import text_string_to_metric_families

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PAGES = [
    ("vLLM 0.33", "tests/data/vllm/vllm-0.33-v1-single-t0.prom", 50),
    ("node_exporter", "tests/data/corpus/node_exporter-e2e-output.txt", 30),
]


def promrate_objects(page):
    return list(promrate.parse(page))


def reference_objects(page):
    return list(text_string_to_metric_families(page))


def promrate_walk(page):
    total = 0
    for entry in promrate.parse(page):
        if type(entry) is promrate.Sample:
            total += len(entry.name) + len(entry.labels) + (entry.value == entry.value)
    return total


def reference_walk(page):
    total = 0
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            total += len(sample.name) + len(sample.labels) + (sample.value == sample.value)
    return total


def batch_size(fn, page):
    """How many calls take about 0.1 s."""
    n = 1
    while timeit.timeit(lambda: fn(page), number=n) < 0.1:
        n *= 2
    return n


def measure(page, rounds):
    sides = {
        "promrate": promrate_objects,
        "prometheus_client": reference_objects,
        "promrate walk": promrate_walk,
        "prometheus_client walk": reference_walk,
    }
    sizes = {name: batch_size(fn, page) for name, fn in sides.items()}
    times = {name: [] for name in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            n = sizes[name]
            times[name].append(timeit.timeit(lambda: fn(page), number=n) / n)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print one JSON object per page")
    args = parser.parse_args()
    if not args.json:
        print(
            f"promrate {promrate.__version__} vs prometheus_client {version('prometheus_client')}"
            f" on Python {sys.version.split()[0]}, {args.rounds} rounds"
        )
    failed = False
    for label, path, floor in PAGES:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            page = f.read()
        ours = sum(isinstance(e, promrate.Sample) for e in promrate_objects(page))
        theirs = sum(len(family.samples) for family in reference_objects(page))
        assert ours == theirs, f"{label}: {ours} samples vs prometheus_client's {theirs}"
        times = measure(page, args.rounds)
        best = {name: min(ts) for name, ts in times.items()}
        median = {name: statistics.median(ts) for name, ts in times.items()}
        ratio = best["prometheus_client"] / best["promrate"]
        result = {
            "page": label,
            "samples": ours,
            "promrate_us": round(best["promrate"] * 1e6, 1),
            "prometheus_client_us": round(best["prometheus_client"] * 1e6, 1),
            "ratio_best": round(ratio, 1),
            "ratio_median": round(median["prometheus_client"] / median["promrate"], 1),
            "walk_ratio_best": round(best["prometheus_client walk"] / best["promrate walk"], 1),
            "floor": floor,
        }
        if args.json:
            print(json.dumps(result))
        else:
            print(
                f"{label} ({ours} samples): promrate {result['promrate_us']} us, prometheus_client "
                f"{result['prometheus_client_us']} us: {result['ratio_best']}x best batch, "
                f"{result['ratio_median']}x median batch (at least {floor}x asked); "
                f"every sample walked in Python too: {result['walk_ratio_best']}x"
            )
        failed |= ratio < floor
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
