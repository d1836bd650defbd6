#!/usr/bin/env python3
"""Dump the samples the reference parser (prometheus_client) reads from a page.

Usage: dump_samples.py {text|openmetrics} FILE

One JSON object per line: {"name", "labels", "value", "timestamp_ms"} where value is
repr(float) (so NaN/inf survive) and timestamp_ms is an exact integer or null. A page the
reference parser rejects prints one line {"error": "..."}.
"""
import json
import sys
from fractions import Fraction

from prometheus_client.parser import text_string_to_metric_families as parse_text
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)


def timestamp_ms(ts, openmetrics):
    if ts is None:
        return None
    if openmetrics:
        # Timestamp(sec, nsec) or float seconds; round to the nearest millisecond.
        if hasattr(ts, "sec"):
            exact = Fraction(ts.sec) + Fraction(ts.nsec, 10**9)
        else:
            exact = Fraction(ts)
        return round(exact * 1000)
    # The text parser divides integer milliseconds by 1000; undo it exactly.
    return round(Fraction(ts) * 1000)


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    openmetrics = fmt == "openmetrics"
    parse = parse_openmetrics if openmetrics else parse_text
    out = []
    try:
        for family in parse(text):
            for s in family.samples:
                out.append(
                    {
                        "name": s.name,
                        "labels": s.labels,
                        "value": repr(float(s.value)),
                        "timestamp_ms": timestamp_ms(s.timestamp, openmetrics),
                    }
                )
    except Exception as e:  # the reference rejects the page
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return
    for row in out:
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
