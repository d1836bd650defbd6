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
rows=$(grep -c '"urls"' "$out" || true)
python3 - "$out" "$known" "$servers" "$user" "$sys" "$rss_kb" "$wall" "$rows" "$interval" <<'EOF'
import json, sys
path, known, servers, user, sys_, rss_kb, wall, rows, interval = sys.argv[1:]
rows_json = [json.loads(l) for l in open(path) if '"urls"' in l]
last = next((r for r in reversed(rows_json) if (r.get("generation_tokens_per_s") or {}).get("window") is not None), None)
cpu = float(user) + float(sys_)
print(f"servers {servers}: {rows} rows in {float(wall):.1f} s (interval {interval}), "
      f"CPU {cpu:.1f} s = {100 * cpu / float(wall):.1f}% of one core, max RSS {int(rss_kb) / 1024:.0f} MB")
if last:
    got = last["generation_tokens_per_s"]["window"]
    skipped = sum(u.get("skipped_pages", 0) for u in last["urls"])
    groups = last.get("groups") or []
    per = [g["generation_tokens_per_s"]["window"] for g in groups]
    print(f"  generation tok/s: {got:.1f}, known {float(known):.1f} "
          f"({100 * (got - float(known)) / float(known):+.3f}%); {len(groups)} instance rows "
          f"(sum {sum(p for p in per if p is not None):.1f}); {skipped} page(s) skipped")
else:
    print("  no row with a generation rate")

# From the third page on: every row should have every instance's window figure, exact.
n = int(servers)
loads = [0.4 * (1 + i % 4) for i in range(n)]
per_load = float(known) / sum(loads)
pages, late, full, worst, shortened = set(), 0, 0, 0.0, {}
for row in rows_json:
    at = row["urls"][0].get("at_ms")
    if at is not None:
        pages.add(at)
    if len(pages) < 3:
        continue
    late += 1
    rates = []
    for g in row.get("groups") or []:
        rate = (g.get("generation_tokens_per_s") or {}).get("window")
        if rate is None:
            break
        i = int(str(g["instance"]).split("-")[1].split(":")[0])
        rates.append(abs(rate - loads[i] * per_load) / (loads[i] * per_load))
    if len(rates) == n:
        full += 1
        worst = max([worst] + rates)
    why = row.get("window_shortened")
    if why:
        shortened[why] = shortened.get(why, 0) + 1
print(f"  from the third page on: {full} of {late} rows with all {n} instances' window figures; "
      f"worst per-instance error {100 * worst:.3f}%; shortened: {shortened or 'none'}")
EOF
