#!/usr/bin/env python3
"""Write what the reference parser (prometheus_client) reads from each page as a golden file.

Usage: dump_samples.py OUT_DIR PAGE...

For each PAGE, OUT_DIR/<page file name>.jsonl gets a header line
{"reference": "prometheus_client <version>", "page": ..., "format": "text"|"openmetrics"}
then one JSON object per sample: {"name", "labels", "value", "timestamp_ms"}, where value is
repr(float) (so NaN and inf survive) and timestamp_ms is an exact integer or null. A page the
reference parser rejects gets one line {"error": "..."} after the header.

The format follows the file name, as in the Rust tests: `.om.txt` or `openmetrics` in the
name means OpenMetrics, anything else the text format 0.0.4.
"""
import json
import os
import sys
from fractions import Fraction
from importlib.metadata import version

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


def dump(path):
    name = os.path.basename(path)
    openmetrics = name.endswith(".om.txt") or "openmetrics" in name
    header = {
        "reference": f"prometheus_client {version('prometheus_client')}",
        "page": name,
        "format": "openmetrics" if openmetrics else "text",
    }
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parse = parse_openmetrics if openmetrics else parse_text
    rows = []
    try:
        for family in parse(text):
            for s in family.samples:
                rows.append(
                    {
                        "name": s.name,
                        "labels": s.labels,
                        "value": repr(float(s.value)),
                        "timestamp_ms": timestamp_ms(s.timestamp, openmetrics),
                    }
                )
    except Exception as e:  # the reference rejects the page
        rows = [{"error": f"{type(e).__name__}: {e}"}]
    return name, [header] + rows


def main():
    out_dir, pages = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    for page in pages:
        name, lines = dump(page)
        with open(os.path.join(out_dir, name + ".jsonl"), "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
