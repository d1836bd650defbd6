//! A simulated vLLM 0.33 server: the page its `prometheus_client` renders (HELP/TYPE per
//! family, `_created` gauge families, histograms, python/process metrics), with counters
//! advancing at known, time-varying rates and one restart of the server.

use std::f64::consts::PI;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use promrate::text::write::{self, GoFloat};
use promrate::MetricType;

const MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";

// The run of the founding story: a benchmark client keeps about `CONCURRENCY` requests
// running; each decodes at `TOKENS_PER_S_PER_REQUEST` and ends after `TOKENS_PER_REQUEST`
// tokens, so a request takes `LATENCY_S` and, by Little's law, the steady finished-request
// rate is `CONCURRENCY / LATENCY_S`.
/// Requests running on average.
pub const CONCURRENCY: f64 = 200.0;
/// Decode speed of one request.
pub const TOKENS_PER_S_PER_REQUEST: f64 = 8.0;
/// Generated tokens per request.
pub const TOKENS_PER_REQUEST: f64 = 650.0;
/// Prompt tokens per request.
pub const PROMPT_TOKENS_PER_REQUEST: f64 = 1950.0;
/// End-to-end latency of every request.
pub const LATENCY_S: f64 = TOKENS_PER_REQUEST / TOKENS_PER_S_PER_REQUEST;
/// The running count swings by this fraction over a wave of `PERIOD_S`, so window rates,
/// the EWMA and the sparklines visibly move.
const WAVE: f64 = 0.25;
/// Period of the wave.
pub const PERIOD_S: f64 = 16.0;
/// How long the server had been up when the simulation starts.
const UPTIME_BEFORE_S: f64 = 3600.0;
/// Requests queued when the restarted server comes up; it admits them at 4/s.
const BACKLOG_AFTER_RESTART: f64 = 40.0;

/// The simulation clock and its restart.
pub struct Simulation {
    started: Instant,
    started_unix: f64,
    restart_after_s: Option<f64>,
}

/// Counter values and gauges at one instant of the simulated server.
struct State {
    /// Generation tokens counted by the current process.
    generated: f64,
    /// Requests finished by the current process.
    finished: f64,
    running: f64,
    waiting: f64,
    process_start_unix: f64,
    created_unix: f64,
    t: f64,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Simulation {
    /// A simulation starting now; the server restarts once `restart_after_s` seconds in.
    pub fn new(restart_after_s: Option<f64>) -> Self {
        Simulation {
            started: Instant::now(),
            started_unix: unix_now(),
            restart_after_s,
        }
    }

    /// Requests running `t` seconds into the simulation.
    pub fn running_at(t: f64) -> f64 {
        CONCURRENCY * (1.0 + WAVE * (2.0 * PI * t / PERIOD_S).sin())
    }

    /// Tokens generated from 0 to `t` seconds into the simulation (negative `t` is before
    /// it): the integral of `TOKENS_PER_S_PER_REQUEST × running`.
    pub fn generated_until(t: f64) -> f64 {
        let wave = WAVE * PERIOD_S / (2.0 * PI) * (1.0 - (2.0 * PI * t / PERIOD_S).cos());
        TOKENS_PER_S_PER_REQUEST * CONCURRENCY * (t + wave)
    }

    fn state_at(&self, t: f64) -> State {
        // Before the restart the server had been up for an hour; after it, it counts from
        // 0 and its first requests finish only `LATENCY_S` later: it ramps up.
        let (since, process_start_unix) = match self.restart_after_s {
            Some(r) if t >= r => (r, self.started_unix + r),
            _ => (-UPTIME_BEFORE_S, self.started_unix - UPTIME_BEFORE_S),
        };
        let since_start = t - since;
        let generated = Self::generated_until(t) - Self::generated_until(since);
        let finished = ((Self::generated_until(t - LATENCY_S) - Self::generated_until(since))
            / TOKENS_PER_REQUEST)
            .max(0.0);
        State {
            generated,
            finished,
            running: Self::running_at(t).round(),
            waiting: (BACKLOG_AFTER_RESTART - 4.0 * since_start).max(0.0).round(),
            process_start_unix,
            created_unix: process_start_unix + 12.5,
            t,
        }
    }

    /// The page as vLLM 0.33 serves it from `/metrics`, now.
    pub fn render(&self) -> String {
        self.render_at(self.started.elapsed().as_secs_f64())
    }

    /// The page as vLLM 0.33 serves it from `/metrics` (Prometheus text format 0.0.4),
    /// `t` seconds into the simulation.
    pub fn render_at(&self, t: f64) -> String {
        let s = self.state_at(t);
        let mut page = String::with_capacity(64 * 1024);
        let p = &mut page;
        let engine = [("engine", "0"), ("model_name", MODEL)];
        let uptime = (self.started_unix + s.t - s.process_start_unix).max(0.0);

        counter(
            p,
            "python_gc_objects_collected",
            "Objects collected during gc",
            &[
                (&[("generation", "0")], (4.4e6 + uptime * 120.0).floor()),
                (&[("generation", "1")], (680175.0 + uptime * 19.0).floor()),
                (&[("generation", "2")], (118422.0 + uptime * 3.0).floor()),
            ],
            None,
        );
        counter(
            p,
            "python_gc_objects_uncollectable",
            "Uncollectable objects found during GC",
            &[
                (&[("generation", "0")], 0.0),
                (&[("generation", "1")], 0.0),
                (&[("generation", "2")], 0.0),
            ],
            None,
        );
        counter(
            p,
            "python_gc_collections",
            "Number of times this generation was collected",
            &[
                (&[("generation", "0")], (uptime * 1.3).floor()),
                (&[("generation", "1")], (uptime * 0.08).floor()),
                (&[("generation", "2")], (uptime * 0.004).floor()),
            ],
            None,
        );
        gauge(
            p,
            "python_info",
            "Python platform information",
            &[(
                &[
                    ("implementation", "CPython"),
                    ("major", "3"),
                    ("minor", "12"),
                    ("patchlevel", "11"),
                    ("version", "3.12.11"),
                ],
                1.0,
            )],
        );
        gauge(
            p,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            &[(&[], 4.0125e10)],
        );
        gauge(
            p,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            &[(&[], 7.5596e9)],
        );
        gauge(
            p,
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            &[(&[], (s.process_start_unix * 100.0).round() / 100.0)],
        );
        counter(
            p,
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            &[(&[], uptime * 0.65)],
            None,
        );
        gauge(
            p,
            "process_open_fds",
            "Number of open file descriptors.",
            &[(&[], 187.0)],
        );
        gauge(
            p,
            "process_max_fds",
            "Maximum number of open file descriptors.",
            &[(&[], 1_048_576.0)],
        );

        gauge(
            p,
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            &[(&engine, s.running)],
        );
        gauge(
            p,
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            &[(&engine, s.waiting)],
        );
        gauge(
            p,
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            &[(&engine, 0.3 * s.running / CONCURRENCY)],
        );

        let created = Some(s.created_unix);
        let prompt = (s.generated * PROMPT_TOKENS_PER_REQUEST / TOKENS_PER_REQUEST).floor();
        let cached = (prompt * 0.215).floor();
        let computed = prompt - cached;
        counter(
            p,
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            &[(&engine, prompt)],
            created,
        );
        counter(
            p,
            "vllm:prefix_cache_hits",
            "Prefix cache hits, in terms of number of cached tokens.",
            &[(&engine, cached)],
            created,
        );
        counter(
            p,
            "vllm:num_preemptions",
            "Cumulative number of preemption from the engine.",
            &[(&engine, (s.finished * 0.004).floor())],
            created,
        );
        counter(
            p,
            "vllm:prompt_tokens",
            "Number of prefill tokens processed.",
            &[(&engine, prompt)],
            created,
        );
        let by_source = |source: &'static str| [("engine", "0"), ("model_name", MODEL), ("source", source)];
        counter(
            p,
            "vllm:prompt_tokens_by_source",
            "Number of prompt tokens by source.",
            &[
                (&by_source("local_compute"), computed),
                (&by_source("local_cache_hit"), cached),
                (&by_source("external_kv_transfer"), 0.0),
            ],
            created,
        );
        counter(
            p,
            "vllm:prompt_tokens_cached",
            "Number of cached prompt tokens (local + external).",
            &[(&engine, cached)],
            created,
        );
        counter(
            p,
            "vllm:generation_tokens",
            "Number of generation tokens processed.",
            &[(&engine, s.generated.floor())],
            created,
        );
        let reason = |r: &'static str| [("engine", "0"), ("finished_reason", r), ("model_name", MODEL)];
        counter(
            p,
            "vllm:request_success",
            "Count of successfully processed requests.",
            &[
                (&reason("stop"), (s.finished * 0.885).floor()),
                (&reason("length"), (s.finished * 0.108).floor()),
                (&reason("abort"), (s.finished * 0.007).floor()),
                (&reason("error"), 0.0),
                (&reason("repetition"), 0.0),
            ],
            created,
        );
        let drafts = (s.generated / 2.27).floor();
        counter(
            p,
            "vllm:spec_decode_num_drafts",
            "Number of spec decoding drafts.",
            &[(&engine, drafts)],
            created,
        );
        counter(
            p,
            "vllm:spec_decode_num_draft_tokens",
            "Number of draft tokens.",
            &[(&engine, 3.0 * drafts)],
            created,
        );
        counter(
            p,
            "vllm:spec_decode_num_accepted_tokens",
            "Number of accepted tokens.",
            &[(&engine, (3.0 * drafts * 0.424).floor())],
            created,
        );
        let pos = |i: &'static str| [("engine", "0"), ("model_name", MODEL), ("position", i)];
        counter(
            p,
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "Accepted tokens per draft position.",
            &[
                (&pos("0"), (drafts * 0.718).floor()),
                (&pos("1"), (drafts * 0.393).floor()),
                (&pos("2"), (drafts * 0.161).floor()),
            ],
            created,
        );

        let seconds = [
            0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
            40.0, 80.0, 160.0, 640.0, 2560.0,
        ];
        let itl = [
            0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
            40.0, 80.0,
        ];
        let tokens = [
            1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0,
            50000.0, 100000.0,
        ];
        let requests = s.finished.floor();
        histogram(
            p,
            "vllm:request_prompt_tokens",
            "Number of prefill tokens processed.",
            &tokens,
            requests,
            PROMPT_TOKENS_PER_REQUEST,
            1.6,
            created,
        );
        histogram(
            p,
            "vllm:request_generation_tokens",
            "Number of generation tokens processed.",
            &tokens,
            requests,
            TOKENS_PER_REQUEST,
            2.2,
            created,
        );
        histogram(
            p,
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            &seconds,
            requests,
            0.085,
            1.9,
            created,
        );
        histogram(
            p,
            "vllm:inter_token_latency_seconds",
            "Histogram of inter-token latency in seconds.",
            &itl,
            s.generated.floor(),
            1.0 / TOKENS_PER_S_PER_REQUEST,
            3.5,
            created,
        );
        histogram(
            p,
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            &seconds,
            requests,
            LATENCY_S,
            6.0,
            created,
        );
        histogram(
            p,
            "vllm:request_queue_time_seconds",
            "Histogram of time spent in WAITING phase for request.",
            &seconds,
            requests,
            0.004,
            1.2,
            created,
        );
        gauge(
            p,
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            &[(
                &[
                    ("block_size", "16"),
                    ("cache_dtype", "auto"),
                    ("enable_prefix_caching", "True"),
                    ("engine", "0"),
                    ("gpu_memory_utilization", "0.9"),
                    ("num_gpu_blocks", "29779"),
                ],
                1.0,
            )],
        );
        page
    }
}

type LabelSet<'a> = &'a [(&'a str, &'a str)];

fn family_header(p: &mut String, name: &str, help: &str, kind: MetricType) {
    write::help(p, name, help).expect("writing to a String");
    write::metric_type(p, name, kind).expect("writing to a String");
}

fn gauge(p: &mut String, name: &str, help: &str, samples: &[(LabelSet<'_>, f64)]) {
    family_header(p, name, help, MetricType::Gauge);
    for (labels, value) in samples {
        write::sample(p, name, labels, *value, None).expect("writing to a String");
    }
}

/// A counter as prometheus_client prints it: `<name>_total`, then a `<name>_created`
/// gauge family when the process is single (multiprocess mode has none).
fn counter(
    p: &mut String,
    name: &str,
    help: &str,
    samples: &[(LabelSet<'_>, f64)],
    created_unix: Option<f64>,
) {
    let total = format!("{name}_total");
    family_header(p, &total, help, MetricType::Counter);
    for (labels, value) in samples {
        write::sample(p, &total, labels, *value, None).expect("writing to a String");
    }
    if let Some(created) = created_unix {
        let created_name = format!("{name}_created");
        family_header(p, &created_name, help, MetricType::Gauge);
        for (labels, _) in samples {
            write::sample(p, &created_name, labels, created, None).expect("writing to a String");
        }
    }
}

/// A histogram of `count` observations with mean `mean` (the sum is exactly
/// `count × mean`), distributed log-logistically with shape `shape`; bucket counts are
/// whole and cumulative.
#[allow(clippy::too_many_arguments)]
fn histogram(
    p: &mut String,
    name: &str,
    help: &str,
    bounds: &[f64],
    count: f64,
    mean: f64,
    shape: f64,
    created_unix: Option<f64>,
) {
    family_header(p, name, help, MetricType::Histogram);
    let count = count.floor();
    // The mean of a log-logistic distribution is median × (π/shape) / sin(π/shape).
    let median = mean * (PI / shape).sin() / (PI / shape);
    let cdf = |x: f64| 1.0 / (1.0 + (x / median).powf(-shape));
    let bucket = format!("{name}_bucket");
    for &le in bounds.iter().chain([f64::INFINITY].iter()) {
        let in_bucket = if le.is_infinite() {
            count
        } else {
            (count * cdf(le)).floor()
        };
        let le_text = GoFloat(le).to_string();
        let labels = [("engine", "0"), ("le", le_text.as_str()), ("model_name", MODEL)];
        write::sample(p, &bucket, &labels, in_bucket, None).expect("writing to a String");
    }
    let labels = [("engine", "0"), ("model_name", MODEL)];
    write::sample(p, &format!("{name}_count"), &labels, count, None).expect("writing to a String");
    write::sample(p, &format!("{name}_sum"), &labels, count * mean, None).expect("writing to a String");
    if let Some(created) = created_unix {
        let created_name = format!("{name}_created");
        family_header(p, &created_name, help, MetricType::Gauge);
        write::sample(p, &created_name, &labels, created, None).expect("writing to a String");
    }
}

/// Serves the simulation's page at `/metrics` on `addr` from a background thread; returns
/// the bound address (port 0 picks a free one).
pub fn serve(addr: &str, simulation: Arc<Simulation>) -> Result<SocketAddr, String> {
    serve_page(addr, move || simulation.render())
}

/// Serves what `render` writes at `/metrics` and at `/federate` (whatever the query).
pub fn serve_page(addr: &str, render: impl Fn() -> String + Send + 'static) -> Result<SocketAddr, String> {
    let server = tiny_http::Server::http(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = server
        .server_addr()
        .to_ip()
        .ok_or_else(|| format!("{addr} is not an IP address"))?;
    std::thread::spawn(move || {
        let content_type = tiny_http::Header::from_bytes(
            &b"Content-Type"[..],
            &b"text/plain; version=0.0.4; charset=utf-8"[..],
        )
        .expect("a valid header");
        for request in server.incoming_requests() {
            let path = request.url().split('?').next().unwrap_or("");
            let response = if path == "/metrics" || path == "/federate" {
                tiny_http::Response::from_string(render()).with_header(content_type.clone())
            } else {
                tiny_http::Response::from_string("not found; try /metrics\n").with_status_code(404)
            };
            let _ = request.respond(response);
        }
    });
    Ok(bound)
}

/// A short description of what the simulation does, for the monitor's header.
pub fn describe(restart_after_s: Option<f64>) -> String {
    let mut text = format!(
        "simulated vLLM 0.33 server: {CONCURRENCY:.0} running requests of {TOKENS_PER_REQUEST:.0} tokens \
         at {TOKENS_PER_S_PER_REQUEST:.0} tok/s each (±{:.0}%, {PERIOD_S:.0} s wave)",
        WAVE * 100.0
    );
    if let Some(r) = restart_after_s {
        let _ = write!(text, ", restarts after {r:.0} s");
    }
    text
}

#[cfg(test)]
pub mod tests {
    use chrono::{DateTime, TimeDelta, Utc};

    use super::*;
    use crate::common::Page;
    use crate::figures::Load;
    use crate::interval::Snapshot;
    use crate::target::{EventKind, Target};

    fn close(got: Option<f64>, want: f64, what: &str) {
        let got = got.unwrap_or_else(|| panic!("{what}: no figure"));
        assert!(
            (got - want).abs() <= 0.02 * want,
            "{what}: {got}, want {want} ± 2%"
        );
    }

    /// Scrapes the simulation every second from 0 to `until` s (with `--target-requests
    /// 25000`); returns the target, the snapshot of every second and the events.
    pub fn monitor(sim: &Simulation, until: u32, window: TimeDelta) -> Monitored {
        let start = DateTime::<Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let mut target = Target::new("sim".into(), TimeDelta::minutes(15));
        let mut snapshots = Vec::new();
        let mut all_events = Vec::new();
        for second in 0..=until {
            let t = f64::from(second);
            let at = start + TimeDelta::seconds(second.into());
            let page = Page {
                body: sim.render_at(t),
                format: promrate::Format::PrometheusText,
            };
            all_events.extend(target.ingest(at, Ok(page)).into_iter().map(|e| (t, e)));
            let snapshot =
                Snapshot::compute(std::slice::from_ref(&target), window, at, None, Some(25_000), t);
            snapshots.push((t, snapshot));
        }
        let restarts = all_events
            .iter()
            .filter(|(_, e)| e.kind == EventKind::Restart)
            .count();
        assert_eq!(
            restarts,
            usize::from(sim.restart_after_s.is_some_and(|r| r <= f64::from(until)))
        );
        (target, snapshots, all_events)
    }

    pub type Monitored = (Target, Vec<(f64, Snapshot)>, Vec<(f64, crate::target::Event)>);

    #[test]
    fn per_request_figures_match_the_simulated_run_once_the_window_is_full() {
        // A window of one wave period: the mean running count is the configured one.
        let window = TimeDelta::seconds(PERIOD_S as i64);
        let sim = Simulation::new(None);
        let (_, snapshots, _) = monitor(&sim, 40, window);
        let mut checked = 0;
        for (t, s) in snapshots.iter().filter(|(t, _)| *t >= PERIOD_S) {
            let f = &s.figures;
            close(f.tokens_per_request, TOKENS_PER_REQUEST, "tokens per request");
            close(
                f.prompt_tokens_per_request,
                PROMPT_TOKENS_PER_REQUEST,
                "prompt tokens per request",
            );
            close(
                f.tokens_per_s_per_request,
                TOKENS_PER_S_PER_REQUEST,
                "tok/s per running request",
            );
            close(f.mean_latency, LATENCY_S, "mean e2e latency");
            close(f.steady_rate, CONCURRENCY / LATENCY_S, "Little's-law rate");
            close(f.running_mean, CONCURRENCY, "mean running");
            // The exact window rate is the simulated integral.
            let want =
                (Simulation::generated_until(*t) - Simulation::generated_until(t - PERIOD_S)) / PERIOD_S;
            close(f.generation.window, want, "generation tokens/s");
            assert_eq!(f.load, Load::Steady, "at {t} s");
            // ETAs: as a hand computation from the same interval's figures.
            let p = s.progress.unwrap();
            let remaining = 25_000.0 - f.finished_since_start.unwrap();
            close(
                p.eta_requests_s,
                remaining / f.finished.unwrap(),
                "ETA by requests",
            );
            close(
                p.eta_tokens_s,
                remaining * TOKENS_PER_REQUEST / f.generation.window.unwrap(),
                "ETA by tokens",
            );
            checked += 1;
        }
        assert_eq!(checked, 25);
    }

    #[test]
    fn a_restarted_server_ramps_up_and_its_queue_drains() {
        let window = TimeDelta::seconds(10);
        let sim = Simulation::new(Some(20.0));
        let (_, snapshots, _) = monitor(&sim, 45, window);
        let at = |t: f64| &snapshots.iter().find(|(s, _)| *s == t).unwrap().1.figures;
        assert_eq!(at(15.0).load, Load::Steady);
        // Once the window holds only the new process: tokens flow, no request finished.
        let f = at(31.0);
        assert_eq!(f.finished, Some(0.0));
        assert_eq!(f.load, Load::RampingUp);
        assert!(f.generation.window.unwrap() > 1000.0);
        // The backlog of 40 appears with the restart, then drains at 4/s: the queue grew
        // at the restart and never after.
        assert_eq!(at(20.0).load, Load::QueueGrowing);
        assert!(snapshots
            .iter()
            .filter(|(t, _)| *t > 20.0)
            .all(|(_, s)| s.figures.load != Load::QueueGrowing));
    }
}
