#!/usr/bin/env python3
"""Translates upstream's `start_timestamps.test` (Prometheus v3.14.0,
promql/promqltest/testdata, in ../upstream/) into JSON cases promrate's tests read.

    python3 tests/data/oracle/tools/start_timestamps_test.py > tests/data/oracle/start-timestamps-upstream.json

Only what promrate computes is translated: float series, and evals of `rate`, `increase`,
`irate` and `resets` over a plain range selector (`f(metric{matchers}[window])`), instant
or range. Histogram series, subqueries, `round(..)` and `start_timestamp()` are left out;
the output says how many evals and answers were taken and left.

The load grammar (promqltest's `parseSeries` and `parseSTSequence`): `load STEP` then one
line per series, `name{labels} VALUES`; a line `name{labels}@st OFFSETS` before it gives
each sample's start time as an offset from the sample's own time (an omitted one, `_`, is
0: unknown). Values: `_` (none), `_xN`, `V`, `VxN` (N+1 times), `V+DxN` / `V-DxN` (N+1
values stepping by D). Times start at 0 ms. Expected values after an eval use the same
expansion; `_` there is "no output at this step".

Output: {"source": ..., "cases": [{"fn", "window_ms", "times_ms": [...],
"series": [{"labels": {...}, "points": [[t_ms, value, st_ms], ...]}],
"expected": [[value or null per time] per series, in "series" order]}], "taken": {...}}.
Values are JSON numbers or null; expected values are the decimal text upstream wrote.
"""

import json
import re
import sys
from pathlib import Path

UPSTREAM = Path(__file__).resolve().parent.parent / "upstream" / "start_timestamps.test"
FUNCTIONS = ("rate", "increase", "irate", "resets")
UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def duration_ms(text):
    """A Prometheus duration (`1m30s`, `-59999ms`, `0`) in milliseconds."""
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    if re.fullmatch(r"\d+", text):
        return sign * int(text)
    total, pos = 0, 0
    for m in re.finditer(r"(\d+)(ms|s|m|h|d)", text):
        if m.start() != pos:
            raise ValueError(f"bad duration {text!r}")
        total += int(m.group(1)) * UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text):
        raise ValueError(f"bad duration {text!r}")
    return sign * total


def expand(items, number):
    """promqltest's value sequence: a list of values, None for `_`."""
    out = []
    for item in items.split():
        if item == "_":
            out.append(None)
            continue
        m = re.fullmatch(r"_x(\d+)", item)
        if m:
            out.extend([None] * int(m.group(1)))
            continue
        m = re.fullmatch(r"(.+?)([+-])(.+)x(\d+)", item) or re.fullmatch(r"(.+)()()x(\d+)", item)
        if m and m.group(1):
            start, sign, step, times = m.groups()
            start = number(start)
            step = number(step) if step else 0
            step = -step if sign == "-" else step
            out.extend(start + i * step for i in range(int(times) + 1))
            continue
        out.append(number(item))
    return out


def value(text):
    return float(text)


def parse_metric(text):
    m = re.fullmatch(r"([A-Za-z_:][A-Za-z0-9_:]*)?(\{.*\})?", text.strip())
    if not m:
        raise ValueError(text)
    labels = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', m.group(2) or ""))
    if m.group(1):
        labels["__name__"] = m.group(1)
    return labels


def matches(labels, matchers):
    for name, op, want in matchers:
        have = labels.get(name, "")
        if (op == "=" and have != want) or (op == "!=" and have == want):
            return False
    return True


EVAL = re.compile(
    r"eval (?:instant at (?P<at>\S+)|range from (?P<start>\S+) to (?P<end>\S+) step (?P<step>\S+)) "
    r"(?P<fn>\w+)\((?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?P<matchers>\{[^}]*\})?\[(?P<window>[^\]:]+)\]\)$"
)


def main():
    lines = UPSTREAM.read_text().splitlines()
    series = {}
    cases, taken, left = [], 0, []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line.startswith("load "):
            step = duration_ms(line.split()[1])
            starts = {}
            while i < len(lines) and lines[i].strip():
                text = lines[i].strip()
                i += 1
                metric, _, rest = text.partition(" ")
                rest = rest.strip()
                is_st = metric.endswith("@st")
                labels = parse_metric(metric[:-3] if is_st else metric)
                key = json.dumps(labels, sort_keys=True)
                if is_st:
                    starts[key] = expand(rest, duration_ms)
                    continue
                if "{{" in rest:
                    continue  # a histogram series: not promrate's
                values = expand(rest, value)
                offsets = starts.pop(key, [None] * len(values))
                points = []
                for n, (v, offset) in enumerate(zip(values, offsets)):
                    if v is None:
                        continue
                    t = n * step
                    points.append([t, v, 0 if offset is None else t + offset])
                series[key] = (labels, points)
        elif line == "clear":
            series = {}
        elif line.startswith("eval "):
            body = []
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(("eval", "clear", "load")):
                body.append(lines[i].strip())
                i += 1
            m = EVAL.match(line)
            if not m or m.group("fn") not in FUNCTIONS or "{{" in " ".join(body):
                left.append(line)
                continue
            if m.group("at"):
                times = [duration_ms(m.group("at"))]
            else:
                a, b, s = (duration_ms(m.group(k)) for k in ("start", "end", "step"))
                times = list(range(a, b + 1, s))
            matchers = re.findall(r'(\w+)\s*(!=|=)\s*"([^"]*)"', m.group("matchers") or "")
            matchers.append(("__name__", "=", m.group("name")))
            picked = [(k, v) for k, v in series.items() if matches(v[0], matchers)]
            expected = {}
            for row in body:
                if row.startswith("expect") or row.startswith("#"):
                    continue
                metric, _, rest = row.partition("} ") if "}" in row else (row, None, "")
                labels = parse_metric(metric + "}")
                labels["__name__"] = m.group("name")
                expected[json.dumps(labels, sort_keys=True)] = expand(rest, value)
            if any(key not in series for key in expected):
                left.append(line)  # over a histogram series
                continue
            out_series, out_expected = [], []
            for key, (labels, points) in picked:
                want = expected.pop(key, [None] * len(times))
                if len(want) != len(times):
                    raise SystemExit(f"{line}: {len(want)} values for {len(times)} steps")
                out_series.append({"labels": labels, "points": points})
                out_expected.append(want)
                taken += sum(v is not None for v in want)
            cases.append({
                "fn": m.group("fn"),
                "window_ms": duration_ms(m.group("window")),
                "times_ms": times,
                "series": out_series,
                "expected": out_expected,
                "eval": line,
            })
    json.dump({
        "source": "prometheus/prometheus v3.14.0 (d7598b7141418fa35be2b5ec5d0fefb634199610) "
                  "promql/promqltest/testdata/start_timestamps.test, Apache-2.0",
        "taken": {"evals": len(cases), "answers": taken},
        "left_out": left,
        "cases": cases,
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
