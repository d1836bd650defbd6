#!/usr/bin/env bash
# Instructions per parse of the five pages of versus_go (callgrind: the same count on every
# run, unlike time on a shared machine), with the same work per sample as versus_go, in
# both of its modes. A parse's count is (N+1 parses - 1 parse) / N, so start-up cancels.
# Needs valgrind (apt-get install valgrind). Usage: benches/instructions.sh [N]  (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
bench=$(cargo bench --bench versus_go --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "versus_go" and m.get("executable"):
        print(m["executable"])')
count() {
  PROMRATE_REPEAT="$1 $2 $3" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2>&1 \
    | awk '/refs:/ { gsub(",", "", $NF); print $NF }'
}
echo "| page | instructions per parse | with every label read |"
echo "|---|---|---|"
for page in corpus/node_exporter-e2e-output.txt corpus/cadvisor-prometheus_metrics.txt \
  corpus/prometheus-textparse-alltypes.237mfs.prom.txt vllm/vllm-0.33-v1-single-t0.prom \
  corpus/vllm-datadog-fixture-vllm_metrics.txt; do
  row="| $(basename "$page") |"
  for mode in samples labels; do
    one=$(count "$page" "$mode" 1)
    many=$(count "$page" "$mode" $((n + 1)))
    row="$row $(python3 -c "print(f'{($many - $one) / $n / 1e6:.3f} M')") |"
  done
  echo "$row"
done
