#!/usr/bin/env bash
# promrate against VictoriaMetrics' and prometheus/common's (expfmt) Go parsers, side by side:
# the same five pages, the same work per sample, pinned to one core, the parsers interleaved
# over several rounds. Each side is timed in short batches (Go: ten rounds of 150 ms per
# page; criterion: twenty samples over 2 s) and judged by the same statistics: the best batch
# of all rounds, and the median batch. Prints the throughput ratio tables.
#
# Needs Debian's Go and packaged Go sources (nothing is downloaded):
#   apt-get install golang-go golang-github-victoriametrics-victoriametrics-dev \
#     golang-github-victoriametrics-metrics-dev golang-github-victoriametrics-metricsql-dev \
#     golang-github-valyala-fastjson-dev golang-github-prometheus-common-dev
# Usage: benches/versus_go.sh [ROUNDS]   (default 3; about a minute per round; docs/performance.md's
# table is five: one round is not enough on a noisy machine)
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
echo "building promrate's versus_go bench (a few minutes from a cold cache)" >&2
cargo bench --bench versus_go --no-run -q
criterion=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/criterion

for round in $(seq "$rounds"); do
  echo "round $round of $rounds" >&2
  for mode in samples labels; do
    taskset -c "$core" "$work/harness" -mode "$mode" -ms 1500 "${pages[@]}" \
      | sed "s/^/go $mode /" >> "$work/results"
  done
  taskset -c "$core" cargo bench -q --bench versus_go >/dev/null 2>&1
  # criterion keeps each sample's time and iteration count: the same statistics as Go's.
  mkdir -p "$work/criterion-$round"
  cp -r "$criterion"/versus_go_* "$work/criterion-$round/"
  for page in "${pages[@]}"; do
    for mode in samples labels; do
      name=$(basename "$page")
      echo "promrate $mode $name $work/criterion-$round/versus_go_$name/$mode/new/sample.json" >> "$work/results"
    done
  done
done

python3 - "$work/results" "$vm_version" "$common_version" "${pages[@]}" <<'PY'
import json, os, statistics, sys
results, vm_version, common_version, pages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
size = {os.path.basename(p): os.path.getsize(p) for p in pages}
best, medians = {}, {}
def keep(key, top, median):
    best[key] = max(best.get(key, 0.0), top)
    medians.setdefault(key, []).append(median)
for line in open(results):
    parts = line.split()
    if parts[0] == "go":
        _, mode, parser, page, top, _samples, median = parts
        keep((parser, mode, page), float(top), float(median))
    else:
        _, mode, page, path = parts
        sample = json.load(open(path))
        rates = sorted(size[page] / (t / n) * 1e3 for t, n in zip(sample["times"], sample["iters"]))
        keep(("promrate", mode, page), rates[-1], statistics.median(rates))
rounds = max(len(m) for m in medians.values())
print(f"MB/s on this machine, one core, {rounds} round(s); VictoriaMetrics {vm_version}, "
      f"prometheus/common expfmt {common_version} (Debian packages)")
for statistic, pick in [("best batch", lambda k: best.get(k, 0.0)),
                        ("median batch (median of the rounds' medians)",
                         lambda k: statistics.median(medians[k]) if k in medians else 0.0)]:
    for mode, title in [("samples", "name, label count, value"), ("labels", "also every label's name and value")]:
        print(f"\n{title}, {statistic}:\n")
        print("| page | promrate | VictoriaMetrics | expfmt | promrate / VictoriaMetrics |")
        print("|---|---|---|---|---|")
        for p in pages:
            page = os.path.basename(p)
            ours, vm, ex = (pick((k, mode, page)) for k in ("promrate", "victoriametrics", "expfmt"))
            ratio = ours / vm if vm else float("nan")
            expfmt = f"{ex:.0f}" if ex else "refuses the page"
            print(f"| {page} ({size[page] // 1000} KB) | {ours:.0f} | {vm:.0f} | {expfmt} | {ratio:.2f}x |")
PY
