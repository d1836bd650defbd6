#!/usr/bin/env python3
"""Mutated pages read by promrate and by a reference, compared; the differences are written
out for a person to read. Not a test: what a difference means (promrate's bug, the
reference's, or a deviation on purpose) is judged by reading it; docs/conformance.md says
what the last probe found.

Two references:
  reference   Python prometheus_client's OpenMetrics parser (the pinned version), on
              OpenMetrics 1.0 pages (the official suite's and the repository's), strict mode.
  prometheus  a real Prometheus server (Debian's `prometheus`, on a free loopback port with
              a temporary TSDB) scraping every mutated page once as its own target, text
              format 0.0.4 or OpenMetrics 1.0 (`--openmetrics`), against promrate's lenient
              mode (what the monitor reads with): whether the scrape failed, how many
              samples it read, and every stored series and value.

Usage (promrate's Python module installed, as python/README.md builds it):
  python3 tests/py/probe_mutations.py reference  [--seed 1] [--pages 100000] [--out DIR]
  python3 tests/py/probe_mutations.py prometheus [--seed 1] [--pages 1500] [--openmetrics] [--out DIR]

Each page is a page (or a 12-line run of one) with one to three mutations: a line deleted,
doubled, swapped or taken from another page, a token of the formats inserted or written over
part of a line, a character inserted, deleted or replaced. The same seed gives the same pages.
"""
import argparse
import collections
import glob
import json
import math
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import promrate

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")

TOKENS = [
    "_total", "_created", "_count", "_sum", "_bucket", "_info", "_gcount", "_gsum",
    "# TYPE a counter", "# TYPE a gauge", "# TYPE a histogram", "# TYPE a summary", "# TYPE a info",
    "# TYPE a stateset", "# TYPE a unknown", "# TYPE a untyped", "# TYPE a gaugehistogram", "# UNIT a s",
    "# HELP a x", "# EOF", "#", "# ", "#TYPE", " # {a=\"b\"} 1", " # {} 1 1", "1e3", "NaN", "+Inf", "-Inf",
    "-0", "0x1", "1_0", "\\\"", "\\n", "\\\\", "\\t", "\\x", " ", "\t", "  ", "=", ",", "{", "}", "\"", ":",
    "le=\"+Inf\"", "quantile=\"0.5\"", "le=\"1\"", "1.0", "0", "-1", "1.5e-3", ".5", "5.", "1e", "+1", "inf",
    "nan", "Infinity", "+NaN", "1 1", "1 1.5", "1 -1", "1 123", "\n", "\r", "\x00", "a", "a{}", "{\"a\"}",
    "a{b=\"c\"}", "a{b=\"c\",}", "é", "__name__=\"a\"", "a_total 1", "a_created 1", "a 1", "a{a=\"1\"} 1",
    "9223372036854775808", "1.7976931348623157e308", "1e309", "4.9e-324", "00", "0.", "{,}",
]
CHARS = " \t\n{}\",=#_.-+0123456789eEaIN\\:"


def excerpts(path, rng, eof):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    for _ in range(20):
        i = rng.randrange(max(1, len(lines) - 12))
        yield "\n".join(lines[i:i + 12]) + ("\n# EOF\n" if eof else "\n")


def seeds(rng, openmetrics):
    found = []
    if openmetrics:
        for case in sorted(glob.glob(os.path.join(DATA, "openmetrics-suite", "*", "test.json"))):
            meta = json.load(open(case))
            if meta.get("type") == "text":
                found.append(open(os.path.join(os.path.dirname(case), meta["file"]), encoding="utf-8").read())
        pages = glob.glob(os.path.join(DATA, "corpus", "*.om.txt")) + glob.glob(os.path.join(DATA, "vllm", "*openmetrics*"))
    else:
        pages = [p for p in glob.glob(os.path.join(DATA, "corpus", "*")) + glob.glob(os.path.join(DATA, "engines", "*.prom"))
                 + glob.glob(os.path.join(DATA, "vllm", "*.prom")) if not p.endswith((".om.txt", ".md"))]
    for path in sorted(pages):
        found.extend(excerpts(path, rng, openmetrics))
    return found


def mutate(text, rng, pool):
    lines = text.split("\n")
    for _ in range(rng.randint(1, 3)):
        lines = lines or [""]
        i, r = rng.randrange(len(lines)), rng.random()
        line = lines[i]
        if r < 0.1:
            del lines[i]
        elif r < 0.18:
            lines.insert(i, line)
        elif r < 0.25 and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], line
        elif r < 0.32:
            lines.insert(i, rng.choice(rng.choice(pool).split("\n")))
        elif r < 0.65:
            j = rng.randint(0, len(line))
            lines[i] = line[:j] + rng.choice(TOKENS) + line[min(len(line), j + rng.choice([0, 0, 1, 1, 2, 3, 5])):]
        elif line:
            j, op = min(rng.randint(0, len(line)), len(line) - 1), rng.random()
            if op < 0.4:
                lines[i] = line[:j] + rng.choice(CHARS) + line[j:]
            elif op < 0.7:
                lines[i] = line[:j] + line[j + 1:]
            else:
                lines[i] = line[:j] + rng.choice(CHARS) + line[j + 1:]
    return "\n".join(lines)


def bits(v):
    return "NaN" if math.isnan(v) else struct.pack("<d", float(v)).hex()


def ours(text, fmt, strict):
    try:
        return "ok", [e for e in promrate.parse(text, format=fmt, strict=strict, errors="raise")
                      if isinstance(e, promrate.Sample)]
    except promrate.ParseError as e:
        return "error", str(e)


def probe_reference(args, pages):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as reference

    def ms(ts):
        if ts is None:
            return None
        exact = Fraction(ts.sec) + Fraction(ts.nsec, 10**9) if hasattr(ts, "sec") else Fraction(ts)
        return math.trunc(exact * 1000)  # as Prometheus: int64(seconds * 1000)

    def theirs(text):
        try:
            return "ok", [(s.name, sorted(s.labels.items()), bits(s.value), ms(s.timestamp))
                          for f in reference(text) for s in f.samples]
        except Exception as e:  # the reference refuses the page
            return "error", f"{type(e).__name__}: {e}"

    kinds = collections.Counter()
    for n, text in enumerate(pages):
        want, (state, got) = theirs(text), ours(text, "openmetrics", True)
        if state == "ok":
            got = [(s.name, sorted(s.labels.items()), bits(s.value), s.timestamp_ms) for s in got]
        if want[0] == state == "error":
            kinds["both refuse"] += 1
            continue
        if want == (state, got):
            kinds["same samples"] += 1
            continue
        if want[0] == state == "ok":
            # The reference drops a sample that repeats the one before it (series and time).
            kept = [s for i, s in enumerate(got) if not any(p[:2] == s[:2] and p[3] == s[3] for p in got[:i])]
            kind = "reference drops a repeated sample" if kept == want[1] else "different samples"
        else:
            kind = "promrate refuses" if state == "error" else "reference refuses"
        kinds[kind] += 1
        write(args, kind, n, {"text": text, "reference": want, "promrate": [state, got]})
    return kinds


def probe_prometheus(args, pages):
    content_type = ("application/openmetrics-text; version=1.0.0; charset=utf-8" if args.openmetrics
                    else "text/plain; version=0.0.4")

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self):
            body = pages[int(urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["page"][0])]
            body = body.encode("utf-8", errors="surrogateescape")
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:  # a scrape given up (the machine busy), or the probe's end
                pass

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    work = tempfile.mkdtemp()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    targets = [{"targets": [f"127.0.0.1:{server.server_address[1]}"],
                "labels": {"__param_page": str(n), "probe_page": str(n)}} for n in range(len(pages))]
    json.dump(targets, open(f"{work}/targets.json", "w"))
    open(f"{work}/prometheus.yml", "w").write(
        "global: {scrape_interval: 5s, scrape_timeout: 4s}\n"
        f"scrape_configs: [{{job_name: probe, honor_timestamps: false, file_sd_configs: [{{files: ['{work}/targets.json']}}]}}]\n")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/data",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=error"], stderr=subprocess.DEVNULL)

    def api(path, **params):
        url = f"http://127.0.0.1:{port}/api/v1/{path}?" + urllib.parse.urlencode(params)
        data = json.load(urllib.request.urlopen(url, timeout=60))["data"]
        return data["result"] if path == "query" else data

    try:
        for _ in range(120):
            try:
                api("query", query="up")
                break
            except OSError:
                time.sleep(0.5)
        time.sleep(17)  # every target scraped at least twice
        up = {int(r["metric"]["probe_page"]): r["value"][1] == "1" for r in api("query", query='up{job="probe"}')}
        scraped = {int(r["metric"]["probe_page"]): int(r["value"][1])
                   for r in api("query", query='scrape_samples_scraped{job="probe"}')}
        stored = collections.defaultdict(dict)
        for r in api("query", query='{job="probe", __name__!~"up|scrape_.*"}'):
            labels = dict(r["metric"])
            n = int(labels.pop("probe_page"))
            labels.pop("job"), labels.pop("instance")
            stored[n][tuple(sorted(labels.items()))] = r["value"][1]
        errors = {int(t["labels"]["probe_page"]): t.get("lastError", "")
                  for t in api("targets")["activeTargets"]}
    finally:
        prometheus.terminate()
        prometheus.wait()
        server.shutdown()
        shutil.rmtree(work)

    kinds = collections.Counter()
    for n, text in enumerate(pages):
        error = errors.get(n, "")
        if n not in up or not up[n] and (not error or error.startswith("Get ")):
            kinds["not scraped (the machine too slow)"] += 1
            continue
        state, got = ours(text, "openmetrics" if args.openmetrics else "text", False)
        detail = None
        if (state == "ok") != up[n]:
            kind = "promrate refuses" if up[n] else "Prometheus refuses"
        elif state == "error":
            kinds["both refuse"] += 1
            continue
        elif len(got) != scraped.get(n):
            kind = "sample count"
        else:
            mine = {}
            for s in got:
                labels = {k: v for k, v in s.labels.items() if v}
                labels["__name__"] = s.name
                mine.setdefault(tuple(sorted(labels.items())), s.value)
            theirs = stored.get(n, {})
            if any(k in ("job", "instance", "probe_page") for key in mine for k, _ in key):
                kinds["labels Prometheus renames"] += 1
                continue
            if set(mine) != set(theirs):
                kind, detail = "different series", sorted(map(str, set(mine) ^ set(theirs)))[:4]
            else:
                wrong = [(k, v, theirs[k]) for k, v in mine.items()
                         if not (float(theirs[k]) == v or math.isnan(v) and theirs[k] == "NaN")]
                if not wrong:
                    kinds["same samples"] += 1
                    continue
                kind, detail = "different values", str(wrong[:4])
        kinds[kind] += 1
        write(args, kind, n, {"text": text, "promrate": got if state == "error" else len(got),
                                  "prometheus_up": up[n], "prometheus_samples": scraped.get(n),
                                  "prometheus_error": error, "detail": detail})
    return kinds


def write(args, kind, n, record):
    name = f"{re.sub(r'[^a-z]+', '_', kind.lower())}-{args.seed}-{n}.json"
    with open(os.path.join(args.out, name), "w") as f:
        json.dump(record, f, indent=1, default=str, ensure_ascii=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", choices=["reference", "prometheus"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pages", type=int)
    parser.add_argument("--openmetrics", action="store_true", help="prometheus: serve OpenMetrics 1.0")
    parser.add_argument("--out", default="probe-differences")
    args = parser.parse_args()
    openmetrics = args.reference == "reference" or args.openmetrics
    rng = random.Random(args.seed)
    pool = seeds(rng, openmetrics)
    count = args.pages or (100_000 if args.reference == "reference" else 1500)
    pages = [mutate(rng.choice(pool), rng, pool) for _ in range(count)]
    os.makedirs(args.out, exist_ok=True)
    probe = probe_reference if args.reference == "reference" else probe_prometheus
    kinds = probe(args, pages)
    print(json.dumps(dict(sorted(kinds.items())), indent=1))
    print(f"{sum(kinds.values())} pages; each difference in {args.out}/")


if __name__ == "__main__":
    main()
