#!/usr/bin/env bash
# Instructions per parse of the four pages of `cargo bench --bench parse formats`: the
# page with quoted names (text 1.0.0, every name and label quoted, no metadata) and the page converted to OpenMetrics 2.0 one line a sample (no metadata), read strictly (the
# default) and leniently, against the text page's samples alone (its `#` lines left out, so
# both hold the same lines); and written as a 2.0 exporter writes the same families
# (metadata, composite values), read strictly, against the whole text page (callgrind: the same count on every run, unlike time on a shared machine). A
# parse's count is (N+1 parses - 1 parse) / N, so start-up and the conversion cancel.
# Needs valgrind (apt-get install valgrind). Usage: benches/formats_instructions.sh [N]  (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
bench=$(cargo bench --bench parse --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "parse" and m.get("executable"):
        print(m["executable"])')
count() {
  PROMRATE_REPEAT="$1 $2 $3" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2>&1 \
    | awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}
per_parse() {
  local one many
  one=$(count "$1" "$2" 1)
  many=$(count "$1" "$2" $((n + 1)))
  echo $(((many - one) / n))
}
echo "| page | text 0.0.4 | its samples alone | text 1.0.0 quoted | OpenMetrics 2.0 strict | lenient | as 2.0 exporters write it |"
echo "|---|---|---|---|---|---|---|"
for page in corpus/node_exporter-e2e-output.txt corpus/cadvisor-prometheus_metrics.txt \
  corpus/prometheus-textparse-alltypes.237mfs.prom.txt vllm/vllm-0.33-v1-single-t0.prom; do
  text=$(per_parse "$page" text-0.0.4)
  bare=$(per_parse "$page" text-0.0.4-samples)
  quoted=$(per_parse "$page" text-1.0.0-quoted)
  strict=$(per_parse "$page" openmetrics-2.0)
  lenient=$(per_parse "$page" openmetrics-2.0-lenient)
  written=$(per_parse "$page" openmetrics-2.0-as-written)
  python3 -c "print(f'| $(basename "$page") | {$text/1e6:.3f} M | {$bare/1e6:.3f} M | {$quoted/1e6:.3f} M ({$quoted/$bare:.2f}x) | {$strict/1e6:.3f} M ({$strict/$bare:.2f}x) | {$lenient/1e6:.3f} M ({$lenient/$bare:.2f}x) | {$written/1e6:.3f} M ({$written/$text:.2f}x) |')"
done
