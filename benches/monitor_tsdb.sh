#!/usr/bin/env bash
# `--prometheus` against a simulated fleet in a real Prometheus: `vllm_monitor --serve
# --fleet N` serves the `/federate` page of N vLLM servers (counters at known rates, every
# sample timestamped), Debian's `prometheus` scrapes it (honor_labels, so each server keeps
# its `instance`) with a temporary TSDB on a free port, and after SPAN the monitor reads
# that span back with `--prometheus ... --from -SPAN --to now --json`.
#
# Prints the rows produced, the monitor's CPU time and peak resident memory (GNU time),
# and the last row's generation tokens/s against the fleet's known rate.
#
# Usage: bash benches/monitor_tsdb.sh SERVERS [INTERVAL] [WINDOW] [SPAN] [SCRAPE]
#   e.g. bash benches/monitor_tsdb.sh 1000 15s 1m 10m 15s
# PROFILE=debug uses the debug build (a quick check of the script itself); BIN=path runs
# that binary instead (a copy, so that a rebuild during a long run does not change it).
# OUT=path keeps the monitor's JSON rows there. TIMEOUT is the monitor's --timeout (10m:
# at 10,000 servers the start's count of series per instance takes minutes). ENGINE=victoria-metrics scrapes with Debian's VictoriaMetrics instead of Prometheus (its
# Prometheus HTTP API is at the same paths), for fleets whose head would not fit
# Prometheus' memory (about 3-4 KB a series: 3.93 M series at 10,000 servers).
# BACKFILL=1 (VictoriaMetrics only) does not scrape for SPAN: it writes the fleet's page at
# every SCRAPE step of the SPAN before now into the engine (`/api/v1/import/prometheus`,
# each sample with its timestamp; `examples/vllm_monitor/examples/fleet_page.rs`), then
# reads that span back: an hour of 10,000 servers is filled in minutes, not an hour.
set -euo pipefail
cd "$(dirname "$0")/.."
servers=${1:?servers}
interval=${2:-15s}
window=${3:-1m}
span=${4:-10m}
scrape=${5:-15s}
engine=${ENGINE:-prometheus}
if [ -n "${BIN:-}" ]; then
  bin=$BIN
elif [ "${PROFILE:-release}" = debug ]; then
  cargo build --quiet -p vllm-monitor
  bin=target/debug/vllm_monitor
else
  cargo build --release --quiet -p vllm-monitor
  bin=target/release/vllm_monitor
fi
backfill=${BACKFILL:-0}
if [ "$backfill" = 1 ]; then
  [ "$engine" = victoria-metrics ] || { echo "BACKFILL=1 needs ENGINE=victoria-metrics" >&2; exit 2; }
  cargo build --release --quiet -p vllm-monitor --example fleet_page
  page=target/release/examples/fleet_page
fi
dir=$(mktemp -d)
seconds() { python3 -c "import sys; t=sys.argv[1]; print(float(t[:-1])*{'s':1,'m':60,'h':3600}[t[-1]])" "$1"; }
fleet=
prometheus_pid=
trap 'kill $fleet $prometheus_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
if [ "$backfill" = 1 ]; then
  # The span ends at the last whole scrape step before now, and the fleet's counters
  # start from their template values at its start.
  step_ms=$(python3 -c "print(int($(seconds "$scrape") * 1000))")
  span_ms=$(python3 -c "print(int($(seconds "$span") * 1000))")
  end_ms=$(( $(date +%s%3N) / step_ms * step_ms ))
  start_ms=$(( end_ms - span_ms ))
  known=$("$page" "$servers" "$start_ms" rate)
else
  "$bin" --serve 127.0.0.1:0 --fleet "$servers" \
    --fleet-template tests/data/vllm/vllm-0.33-v1-single-t0.prom 2>"$dir/fleet.log" &
  fleet=$!
  for _ in $(seq 100); do
    grep -q federate "$dir/fleet.log" && break
    sleep 0.1
  done
  target=$(grep -o 'http://[^ ]*/federate' "$dir/fleet.log" | sed 's|http://||; s|/federate||')
  known=$(grep -o '[0-9.]* generation tok/s' "$dir/fleet.log" | cut -d' ' -f1)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The engine's scrape of the fleet (a backfilled engine scrapes nothing).
[ "$backfill" = 1 ] || cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: $scrape
  scrape_timeout: $scrape
scrape_configs:
  - job_name: fleet
    honor_labels: true
    honor_timestamps: true
    metrics_path: /federate
    static_configs:
      - targets: ['$target']
EOF
case $engine in
  prometheus)
    prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
      --web.listen-address="127.0.0.1:$port" --log.level=warn 2>"$dir/prometheus.log" &
    ready=/-/ready
    ;;
  victoria-metrics)
    # Pages up to 2 GB parsed as they arrive, without stale markers (else it holds the
    # whole page and the previous one's series), caches at 30% of the memory (60% by
    # default), a query over every series (the monitor counts them per instance), and the
    # newest samples visible at once (by default the last 30 s are hidden).
    scrape_config=()
    [ "$backfill" = 1 ] || scrape_config=(-promscrape.config="$dir/prometheus.yml")
    victoria-metrics "${scrape_config[@]}" -storageDataPath="$dir/data" \
      -httpListenAddr="127.0.0.1:$port" -loggerLevel=ERROR \
      -promscrape.maxScrapeSize=2000000000 -promscrape.streamParse \
      -promscrape.noStaleMarkers -memory.allowedPercent=30 \
      -search.maxUniqueTimeseries=100000000 -search.maxQueryDuration=10m \
      -search.latencyOffset=0s 2>"$dir/prometheus.log" &
    ready=/health
    ;;
  *)
    echo "ENGINE is prometheus or victoria-metrics, not $engine" >&2
    exit 2
    ;;
esac
prometheus_pid=$!
for _ in $(seq 600); do
  curl -sf "http://127.0.0.1:$port$ready" >/dev/null && break
  sleep 0.1
done
if [ "$backfill" = 1 ]; then
  echo "$engine (pid $prometheus_pid) on 127.0.0.1:$port: writing $servers servers' pages every $scrape over $span"
  filled=$(date +%s)
  for ((at = start_ms; at <= end_ms; at += step_ms)); do
    "$page" "$servers" "$start_ms" "$at" |
      curl -sfS -X POST -T - "http://127.0.0.1:$port/api/v1/import/prometheus"
  done
  echo "filled in $(( $(date +%s) - filled )) s"
  # Written samples are searchable once the engine has flushed them (about a second).
  sleep 5
  from=$(date -u -d "@$(( start_ms / 1000 ))" +%Y-%m-%dT%H:%M:%SZ)
  to=$(date -u -d "@$(( end_ms / 1000 ))" +%Y-%m-%dT%H:%M:%SZ)
else
  echo "$engine (pid $prometheus_pid) on 127.0.0.1:$port scrapes $servers servers every $scrape; waiting $span"
  sleep "$(seconds "$span")"
  from="-$span"
  to=now
fi
/usr/bin/time -f '%U %S %M %e' -o "$dir/timing" \
  "$bin" --prometheus "http://127.0.0.1:$port" --from "$from" --to "$to" \
  --interval "$interval" --window "$window" --timeout "${TIMEOUT:-10m}" --json \
  >"$dir/out" 2>"$dir/err" || true
[ -n "${OUT:-}" ] && cp "$dir/out" "$OUT"
read -r user sys rss_kb wall < <(tail -n 1 "$dir/timing")
status=$(grep -o 'status [0-9]*' "$dir/timing" || echo "status 0")
echo "monitor exit $status"
head -c 2000 "$dir/err"
# Every row whose window lies after the engine's first scrape (the span starts when the
# engine does).
skip=$(python3 -c "import math, sys; print(math.ceil((float(sys.argv[1]) + float(sys.argv[2])) / float(sys.argv[3])))" \
  "$(seconds "$window")" "$(seconds "$scrape")" "$(seconds "$interval")")
python3 benches/fleet_rows.py "$dir/out" "$known" "$servers" "$user" "$sys" "$rss_kb" "$wall" \
  "$interval" --rows-before "$skip"
