#!/usr/bin/env python3
"""A stand-in vLLM server for vllm_monitor's integration tests, rendered by the real
prometheus_client (the library vLLM itself uses).

It registers vLLM 0.33's metric names (counters exposed as `<name>_total` with
`<name>_created`, gauges, histograms with vLLM's buckets) and runs a steady load of known
shape: CONCURRENCY requests always running, each generating TOKENS_PER_REQUEST tokens over
LATENCY seconds, so generation runs at CONCURRENCY * TOKENS_PER_REQUEST / LATENCY tokens/s
and requests finish at CONCURRENCY / LATENCY per second (Little's law). It can restart
once: the collectors are replaced by new ones that count from 0 with a new created time,
as a restarted vLLM process would: after --restart-after seconds, or on SIGUSR1.

Prints `PORT <n>` on stdout once it is serving on 127.0.0.1, then exits after --lifetime.
"""
import argparse
import signal
import threading
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SECONDS_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                   10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
               10.0, 20.0, 40.0, 80.0]
TOKEN_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]
LABELS = ["model_name", "engine"]


class Engine:
    """One vLLM process's collectors, in a registry of its own."""

    def __init__(self, concurrency):
        registry = CollectorRegistry()
        self.registry = registry

        def histogram(name, doc, buckets):
            return Histogram(name, doc, LABELS, buckets=buckets, registry=registry).labels(MODEL, "0")

        self.generation = Counter("vllm:generation_tokens", "Number of generation tokens processed.", LABELS,
                                  registry=registry).labels(MODEL, "0")
        self.prompt = Counter("vllm:prompt_tokens", "Number of prefill tokens processed.", LABELS,
                              registry=registry).labels(MODEL, "0")
        self.success = Counter("vllm:request_success", "Count of successfully processed requests.",
                               LABELS + ["finished_reason"], registry=registry).labels(MODEL, "0", "stop")
        gauge = lambda name, doc: Gauge(name, doc, LABELS, registry=registry).labels(MODEL, "0")
        gauge("vllm:num_requests_running", "Number of requests in model execution batches.").set(concurrency)
        gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.").set(0)
        gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.").set(0.25)
        self.ttft = histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                              SECONDS_BUCKETS)
        self.itl = histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                             ITL_BUCKETS)
        self.e2e = histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
                             SECONDS_BUCKETS)
        self.request_generation = histogram("vllm:request_generation_tokens",
                                            "Number of generation tokens processed.", TOKEN_BUCKETS)
        self.request_prompt = histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.",
                                        TOKEN_BUCKETS)


class Load:
    """The steady load, counted up to the present whenever anything reads or swaps the
    engine: up to the instant of each render, so that a scrape never sees a value that
    lags its own time, however a busy machine schedules the threads."""

    def __init__(self, engine, args):
        self.engine = engine
        self.args = args
        self.request_rate = args.concurrency / args.latency
        self.generation_rate = self.request_rate * args.tokens_per_request
        self.itl = args.latency / args.tokens_per_request
        self.last = time.monotonic()
        self.finished_carry = 0.0
        self.lock = threading.Lock()

    def advance(self):
        """Counts the load from the last advance up to now. Call with the lock held."""
        now = time.monotonic()
        dt = now - self.last
        self.last = now
        engine, args = self.engine, self.args
        engine.generation.inc(self.generation_rate * dt)
        engine.prompt.inc(self.request_rate * args.prompt_tokens * dt)
        self.finished_carry += self.request_rate * dt
        while self.finished_carry >= 1.0:
            self.finished_carry -= 1.0
            engine.success.inc()
            engine.ttft.observe(0.05)
            engine.e2e.observe(args.latency)
            engine.request_generation.observe(args.tokens_per_request)
            engine.request_prompt.observe(args.prompt_tokens)
            engine.itl.observe(self.itl)

    def restart(self):
        """Replaces the engine, as a restarted process would: the old one is counted up
        to this instant, the new one from it, so no token lands before its created time."""
        fresh = Engine(self.args.concurrency)
        with self.lock:
            self.advance()
            self.engine = fresh

    def collect(self):
        """What the HTTP server renders: the current engine, counted up to now. Holding
        the lock makes the restart atomic for scrapes, as a real restart is."""
        with self.lock:
            self.advance()
            return list(self.engine.registry.collect())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lifetime", type=float, default=30.0, help="seconds to serve")
    parser.add_argument("--restart-after", type=float, default=None, help="restart once, after this many seconds")
    parser.add_argument("--concurrency", type=float, default=10.0, help="requests always running")
    parser.add_argument("--tokens-per-request", type=float, default=400.0, help="generated tokens per request")
    parser.add_argument("--prompt-tokens", type=float, default=1600.0, help="prompt tokens per request")
    parser.add_argument("--latency", type=float, default=4.0, help="seconds from arrival to the last token")
    args = parser.parse_args()
    restart_now = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: restart_now.set())
    load = Load(Engine(args.concurrency), args)
    registry = CollectorRegistry()
    registry.register(load)
    server, _ = start_http_server(0, addr="127.0.0.1", registry=registry)
    print(f"PORT {server.server_port}", flush=True)
    start = time.monotonic()
    restarted = False
    while time.monotonic() - start < args.lifetime:
        time.sleep(0.01)
        due = args.restart_after is not None and time.monotonic() - start >= args.restart_after
        if not restarted and (due or restart_now.is_set()):
            load.restart()
            restarted = True
    server.shutdown()


if __name__ == "__main__":
    main()
