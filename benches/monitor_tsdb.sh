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
# PROFILE=debug uses the debug build (a quick check of the script itself).
set -euo pipefail
cd "$(dirname "$0")/.."
servers=${1:?servers}
interval=${2:-15s}
window=${3:-1m}
span=${4:-10m}
scrape=${5:-15s}
if [ "${PROFILE:-release}" = debug ]; then
  cargo build --quiet -p vllm-monitor
  bin=target/debug/vllm_monitor
else
  cargo build --release --quiet -p vllm-monitor
  bin=target/release/vllm_monitor
fi
dir=$(mktemp -d)
"$bin" --serve 127.0.0.1:0 --fleet "$servers" \
  --fleet-template tests/data/vllm/vllm-0.33-v1-single-t0.prom 2>"$dir/fleet.log" &
fleet=$!
prometheus_pid=
trap 'kill $fleet $prometheus_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do
  grep -q federate "$dir/fleet.log" && break
  sleep 0.1
done
target=$(grep -o 'http://[^ ]*/federate' "$dir/fleet.log" | sed 's|http://||; s|/federate||')
known=$(grep -o '[0-9.]* generation tok/s' "$dir/fleet.log" | cut -d' ' -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/prometheus.yml" <<EOF
global:
  scrape_interval: $scrape
  scrape_timeout: $scrape
scrape_configs:
  - job_name: fleet
    honor_labels: true
    metrics_path: /federate
    static_configs:
      - targets: ['$target']
EOF
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:$port" --log.level=warn 2>"$dir/prometheus.log" &
prometheus_pid=$!
for _ in $(seq 600); do
  curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break
  sleep 0.1
done
echo "Prometheus on 127.0.0.1:$port scrapes $servers servers every $scrape; waiting $span"
sleep "$(python3 -c "import sys; u={'s':1,'m':60,'h':3600}; t=sys.argv[1]; print(int(float(t[:-1])*u[t[-1]]))" "$span")"
/usr/bin/time -f '%U %S %M %e' -o "$dir/timing" \
  "$bin" --prometheus "http://127.0.0.1:$port" --from "-$span" --to now \
  --interval "$interval" --window "$window" --json >"$dir/out" 2>"$dir/err" || true
read -r user sys rss_kb wall < <(tail -n 1 "$dir/timing")
status=$(grep -o 'status [0-9]*' "$dir/timing" || echo "status 0")
echo "monitor exit $status"
head -c 2000 "$dir/err"
rows=$(grep -c '"urls"' "$dir/out" || true)
python3 - "$dir/out" "$known" "$servers" "$user" "$sys" "$rss_kb" "$wall" "$rows" "$interval" <<'EOF'
import json, sys
path, known, servers, user, sys_, rss_kb, wall, rows, interval = sys.argv[1:]
rows_json = [json.loads(l) for l in open(path) if '"urls"' in l]
last = next((r for r in reversed(rows_json) if (r.get("generation_tokens_per_s") or {}).get("window") is not None), None)
cpu = float(user) + float(sys_)
print(f"servers {servers}: {rows} rows in {float(wall):.1f} s (interval {interval}), "
      f"CPU {cpu:.1f} s, max RSS {int(rss_kb) / 1024:.0f} MB")
if last:
    got = last["generation_tokens_per_s"]["window"]
    groups = last.get("groups") or []
    per = [g["generation_tokens_per_s"]["window"] for g in groups]
    print(f"  generation tok/s: {got:.1f}, known {float(known):.1f} "
          f"({100 * (got - float(known)) / float(known):+.3f}%); {len(groups)} instance rows "
          f"(sum {sum(p for p in per if p is not None):.1f})")
else:
    print("  no row with a generation rate")
EOF
