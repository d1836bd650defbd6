#!/usr/bin/env bash
# The monitor against a simulated fleet, as a new user runs it: a `/federate` page of N
# vLLM servers (tests/data/vllm/vllm-0.33-v1-single-t0.prom repeated, every family untyped,
# every sample timestamped, counters at known rates) served by `vllm_monitor --serve
# --fleet N`, read by `vllm_monitor --federate ... --json` (which implies --by instance).
#
# Prints the rows produced, the monitor's CPU time and peak resident memory (GNU time),
# the last row's generation tokens/s against the fleet's known rate, and, from the third
# page on (pages told apart by the URL's `at_ms`), how many rows have a window figure for
# every instance and the worst per-instance error against the instance's known rate
# (instance i runs 0.4 x (1 + i mod 4) of the template's load, `src/fleet.rs`).
# The figures are the machine's as it is: say how busy it was beside them.
#
# Usage: bash benches/monitor_fleet.sh SERVERS [INTERVAL] [WINDOW] [DURATION]
#   e.g. bash benches/monitor_fleet.sh 1000 2s 10s 40s
#   the issue-34 run: bash benches/monitor_fleet.sh 10000 15s 30s 300s
# KEEP_JSON=FILE keeps the monitor's JSON rows there; BIN=PATH runs that monitor binary.
set -euo pipefail
cd "$(dirname "$0")/.."
servers=${1:?servers}
interval=${2:-2s}
window=${3:-10s}
duration=${4:-40s}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet -p vllm-monitor
fi
bin=${BIN:-target/release/vllm_monitor}
log=$(mktemp)
out=${KEEP_JSON:-$(mktemp)}
timing=$(mktemp)
"$bin" --serve 127.0.0.1:0 --fleet "$servers" \
  --fleet-template tests/data/vllm/vllm-0.33-v1-single-t0.prom 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log" "$timing"; [ -n "${KEEP_JSON:-}" ] || rm -f "$out"' EXIT
for _ in $(seq 100); do
  grep -q federate "$log" && break
  sleep 0.1
done
url=$(grep -o 'http://[^ ]*/federate' "$log")
known=$(grep -o '[0-9.]* generation tok/s' "$log" | cut -d' ' -f1)
base=${url%/federate}
/usr/bin/time -f '%U %S %M %e' -o "$timing" \
  "$bin" --federate "$base" --interval "$interval" --window "$window" --duration "$duration" \
  --timeout 60s --json >"$out" || true
# GNU time writes "Command exited with non-zero status N" first when it did.
read -r user sys rss_kb wall < <(tail -n 1 "$timing")
status=$(grep -o 'status [0-9]*' "$timing" || echo "status 0")
echo "monitor exit $status"
# From the third page on, every row should have every instance's window figure, exact.
python3 benches/fleet_rows.py "$out" "$known" "$servers" "$user" "$sys" "$rss_kb" "$wall" \
  "$interval" --pages-before 3
