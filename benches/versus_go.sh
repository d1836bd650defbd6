#!/usr/bin/env bash
# promrate against VictoriaMetrics' and prometheus/common's (expfmt) Go parsers, side by side:
# the same five pages, the same work per sample, pinned to one core, the parsers interleaved
# over several rounds, the best round of each kept. Prints the throughput ratio table.
#
# Needs Debian's Go and packaged Go sources (nothing is downloaded):
#   apt-get install golang-go golang-github-victoriametrics-victoriametrics-dev \
#     golang-github-victoriametrics-metrics-dev golang-github-victoriametrics-metricsql-dev \
#     golang-github-valyala-fastjson-dev golang-github-prometheus-common-dev
# Usage: benches/versus_go.sh [ROUNDS]   (default 3; about a minute per round)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
core=${PROMRATE_BENCH_CORE:-1}
pages=(
  tests/data/corpus/node_exporter-e2e-output.txt
  tests/data/corpus/cadvisor-prometheus_metrics.txt
  tests/data/corpus/prometheus-textparse-alltypes.237mfs.prom.txt
  tests/data/vllm/vllm-0.33-v1-single-t0.prom
  tests/data/corpus/vllm-datadog-fixture-vllm_metrics.txt
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "building the Go harness against Debian's packaged sources" >&2
(cd benches/go && GOPATH=/usr/share/gocode GO111MODULE=off go build -o "$work/harness" harness.go)
vm_version=$(dpkg-query -W -f '${Version}' golang-github-victoriametrics-victoriametrics-dev 2>/dev/null || echo '?')
common_version=$(dpkg-query -W -f '${Version}' golang-github-prometheus-common-dev 2>/dev/null || echo '?')
echo "building promrate's versus_go bench" >&2
cargo bench --bench versus_go --no-run -q 2>/dev/null

for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  for mode in samples labels; do
    taskset -c "$core" "$work/harness" -mode "$mode" -ms 1500 "${pages[@]}" \
      | sed "s/^/go $mode /" >> "$work/results"
  done
  taskset -c "$core" cargo bench -q --bench versus_go -- --output-format bencher 2>/dev/null \
    | grep '^test ' >> "$work/results"
done

python3 - "$work/results" "$vm_version" "$common_version" "${pages[@]}" <<'PY'
import os, re, sys
results, vm_version, common_version, pages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
size = {os.path.basename(p): os.path.getsize(p) for p in pages}
best = {}
def keep(key, rate):
    best[key] = max(best.get(key, 0.0), rate)
for line in open(results):
    parts = line.split()
    if parts[0] == "go":
        _, mode, parser, page, rate, _samples = parts
        keep((parser, mode, page), float(rate))
    else:
        m = re.match(r"test versus_go/(\S+)/(samples|labels) \.\.\. bench:\s+([\d,]+) ns/iter", line)
        if m:
            page, mode, ns = m.group(1), m.group(2), int(m.group(3).replace(",", ""))
            keep(("promrate", mode, page), size[page] / ns * 1e3)
print(f"MB/s on this machine, one core, best of the rounds; VictoriaMetrics {vm_version}, "
      f"prometheus/common expfmt {common_version} (Debian packages)")
for mode, title in [("samples", "name, label count, value"), ("labels", "also every label's name and value")]:
    print(f"\n{title}:\n")
    print("| page | promrate | VictoriaMetrics | expfmt | promrate / VictoriaMetrics |")
    print("|---|---|---|---|---|")
    for p in pages:
        page = os.path.basename(p)
        ours, vm, ex = (best.get((k, mode, page), 0.0) for k in ("promrate", "victoriametrics", "expfmt"))
        ratio = ours / vm if vm else float("nan")
        expfmt = f"{ex:.0f}" if ex else "refuses the page"
        print(f"| {page} ({size[page] // 1000} KB) | {ours:.0f} | {vm:.0f} | {expfmt} | {ratio:.2f}x |")
PY
