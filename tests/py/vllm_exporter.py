#!/usr/bin/env python3
"""A stand-in vLLM server for vllm_monitor's integration test, rendered by the real
prometheus_client (the library vLLM itself uses).

It registers vLLM 0.33's metric names (counters exposed as `<name>_total` with
`<name>_created`, gauges, histograms with vLLM's buckets), advances the counters at known
constant rates, and restarts once: the collectors are replaced by new ones that count
from 0 with a new created time, as a restarted vLLM process would.

Usage: vllm_exporter.py RESTART_AFTER_SECONDS LIFETIME_SECONDS
Prints `PORT <n>` on stdout once it is serving on 127.0.0.1, then exits after LIFETIME.
"""
import sys
import threading
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

GENERATION_RATE = 1000.0  # tokens/s
PROMPT_RATE = 4000.0  # tokens/s
REQUEST_RATE = 2.5  # requests/s
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
               10.0, 20.0, 40.0, 80.0]
LABELS = ["model_name", "engine"]


class Engine:
    """One vLLM process's collectors, in a registry of its own."""

    def __init__(self):
        registry = CollectorRegistry()
        self.registry = registry
        self.collectors = [
            Counter("vllm:generation_tokens", "Number of generation tokens processed.", LABELS, registry=registry),
            Counter("vllm:prompt_tokens", "Number of prefill tokens processed.", LABELS, registry=registry),
            Counter("vllm:request_success", "Count of successfully processed requests.",
                    LABELS + ["finished_reason"], registry=registry),
            Gauge("vllm:num_requests_running", "Number of requests in model execution batches.", LABELS,
                  registry=registry),
            Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", LABELS,
                  registry=registry),
            Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", LABELS,
                  registry=registry),
            Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                      LABELS, buckets=TTFT_BUCKETS, registry=registry),
            Histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                      LABELS, buckets=ITL_BUCKETS, registry=registry),
        ]
        (self.generation, self.prompt, self.success, self.running, self.waiting, self.kv,
         self.ttft, self.itl) = self.collectors
        self.running.labels(MODEL, "0").set(12)
        self.waiting.labels(MODEL, "0").set(0)
        self.kv.labels(MODEL, "0").set(0.25)



class Current:
    """The collector the HTTP server sees: whatever engine is current. Swapping engines
    under the lock makes the restart atomic for scrapes, as a real restart is."""

    def __init__(self, engine, lock):
        self.engine = engine
        self.lock = lock

    def collect(self):
        with self.lock:
            return list(self.engine.registry.collect())


def main():
    restart_after = float(sys.argv[1])
    lifetime = float(sys.argv[2])
    lock = threading.Lock()
    engine = Engine()
    current = Current(engine, lock)
    registry = CollectorRegistry()
    registry.register(current)
    server, _ = start_http_server(0, addr="127.0.0.1", registry=registry)
    print(f"PORT {server.server_port}", flush=True)
    start = time.monotonic()
    last = start
    finished_carry = 0.0
    restarted = False
    while time.monotonic() - start < lifetime:
        time.sleep(0.01)
        now = time.monotonic()
        dt = now - last
        last = now
        if not restarted and now - start >= restart_after:
            fresh = Engine()
            with lock:
                engine = current.engine = fresh
            restarted = True
        with lock:
            engine.generation.labels(MODEL, "0").inc(GENERATION_RATE * dt)
            engine.prompt.labels(MODEL, "0").inc(PROMPT_RATE * dt)
            finished_carry += REQUEST_RATE * dt
            while finished_carry >= 1.0:
                finished_carry -= 1.0
                engine.success.labels(MODEL, "0", "stop").inc()
                engine.ttft.labels(MODEL, "0").observe(0.05)
                for _ in range(4):
                    engine.itl.labels(MODEL, "0").observe(0.02)
    server.shutdown()


if __name__ == "__main__":
    main()
