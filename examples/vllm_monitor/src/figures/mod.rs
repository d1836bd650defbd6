//! The monitor's figures, computed from promrate trackers (one per URL) with the metric
//! names of vLLM V1 and V0, SGLang and TGI. No arithmetic on raw samples happens here:
//! every number comes from a tracker query.
//!
//! Cost: each figure is one indexed query per tracker (it visits only the series of the
//! metric it names), grouped by the `--by` label in the same query; the whole interval
//! and every group are then assembled from those answers. A fleet of 1,000 servers costs
//! what its series of the named metrics cost, not 1,000 times the whole tracker.

mod answers;
mod capacity;
#[cfg(test)]
mod drift_tests;
#[cfg(test)]
mod known_tests;
mod query;
pub mod row;
pub mod slo;

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use promrate::{Selector, Shortened, TrackedSeries, Tracker, WindowRule};

use answers::{engine_rates, Answers};
pub use capacity::{Capacity, PHASES, PREFIX_HIT_RATE, SPEC_DECODE};
use query::{first_present, PerSeries, Query};
use slo::{Attainment, Objective};

use crate::engines::{alternatives, replaced_ratio_gauges, Engine, KvSize, Metric, ENGINES};
use crate::gpus::{self, GpuSettings, Gpus, PerToken};
pub use crate::source::{measured, selector, Source};

/// Which server a page comes from: its entry in the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct ServerKind(pub &'static Engine);

impl PartialEq for ServerKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind == other.0.kind
    }
}

impl Eq for ServerKind {}

impl ServerKind {
    pub fn as_str(self) -> &'static str {
        self.0.kind
    }

    /// Recognises the server from the series a tracker holds.
    pub fn detect(tracker: &Tracker) -> Option<ServerKind> {
        Engine::detect(tracker).map(ServerKind)
    }
}

/// The metrics of each figure over every engine of the catalogue, in preference order.
struct Names {
    generation: Vec<Metric>,
    prompt: Vec<Metric>,
    prompt_by_source: Vec<Metric>,
    prompt_cached: Vec<Metric>,
    finished: Vec<Metric>,
    running: Vec<Metric>,
    waiting: Vec<Metric>,
    kv_usage: Vec<Metric>,
    prefix_hits: Vec<Metric>,
    prefix_queries: Vec<Metric>,
    prefix_hit_rate: Vec<Metric>,
    spec_accepted: Vec<Metric>,
    spec_draft_tokens: Vec<Metric>,
    spec_drafts: Vec<Metric>,
    spec_rate: Vec<Metric>,
    spec_length: Vec<Metric>,
    ttft: Vec<Metric>,
    e2e: Vec<Metric>,
    itl: Vec<Metric>,
    request_generation: Vec<Metric>,
    request_prompt: Vec<Metric>,
    queue_time: Vec<Metric>,
    prefill_time: Vec<Metric>,
    decode_time: Vec<Metric>,
    inference_time: Vec<Metric>,
    kv_size: Vec<KvSize>,
    preemptions: Vec<Metric>,
    admission_rejections: Vec<Metric>,
    aborts: Vec<Metric>,
    waiting_by_reason: Vec<Metric>,
    sleep_state: Vec<Metric>,
}

static NAMES: LazyLock<Names> = LazyLock::new(|| Names {
    generation: alternatives(|e| e.generation),
    prompt: alternatives(|e| e.prompt),
    prompt_by_source: alternatives(|e| e.prompt_by_source),
    prompt_cached: alternatives(|e| e.prompt_cached),
    finished: alternatives(|e| e.finished),
    running: alternatives(|e| e.running),
    waiting: alternatives(|e| e.waiting),
    kv_usage: alternatives(|e| e.kv_usage),
    prefix_hits: alternatives(|e| e.prefix_hits),
    prefix_queries: alternatives(|e| e.prefix_queries),
    prefix_hit_rate: [
        alternatives(|e| e.prefix_hit_rate),
        replaced_ratio_gauges(|e| e.prefix_hits),
    ]
    .concat(),
    spec_accepted: alternatives(|e| e.spec_accepted),
    spec_draft_tokens: alternatives(|e| e.spec_draft_tokens),
    spec_drafts: alternatives(|e| e.spec_drafts),
    spec_rate: [
        alternatives(|e| e.spec_rate),
        replaced_ratio_gauges(|e| e.spec_accepted),
    ]
    .concat(),
    spec_length: alternatives(|e| e.spec_length),
    ttft: alternatives(|e| e.ttft),
    e2e: alternatives(|e| e.e2e),
    itl: alternatives(|e| e.itl),
    request_generation: alternatives(|e| e.request_generation),
    request_prompt: alternatives(|e| e.request_prompt),
    queue_time: alternatives(|e| e.queue_time),
    prefill_time: alternatives(|e| e.prefill_time),
    decode_time: alternatives(|e| e.decode_time),
    inference_time: alternatives(|e| e.inference_time),
    kv_size: ENGINES.iter().flat_map(|e| e.kv_size.iter().copied()).collect(),
    preemptions: alternatives(|e| e.preemptions),
    admission_rejections: alternatives(|e| e.admission_rejections),
    aborts: alternatives(|e| e.aborts),
    waiting_by_reason: alternatives(|e| e.waiting_by_reason),
    sleep_state: alternatives(|e| e.sleep_state),
});

/// The figures' own use of a source (beside the shared ones in `source.rs`).
impl Source<'_> {
    /// `f` of the series this source admits (`None` for the others).
    fn admitted<'f>(&'f self, f: PerSeries<'f>) -> impl Fn(&TrackedSeries) -> Option<f64> + 'f {
        move |s| if self.admits(s) { f(s, self) } else { None }
    }
}

/// One data-parallel engine's generation rate (`Figures::engine_rates`).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineRate {
    /// The server: its `instance` label, or the URL of its page.
    pub server: String,
    /// The `engine` label's value.
    pub engine: String,
    /// Generation tokens/s over the window.
    pub rate: f64,
}

impl EngineRate {
    /// How outputs name the engine among `all`: its `engine` value when every engine is
    /// one server's, else the server's name too.
    pub fn name(&self, all: &[EngineRate]) -> String {
        self.named(one_server(all))
    }

    /// Every engine's name among `all`, as [`EngineRate::name`] gives it: whether they are
    /// one server's is asked once, not once per engine (16,000 engines are 16,000 names,
    /// not 256 million comparisons).
    pub fn names(all: &[EngineRate]) -> impl Iterator<Item = String> + '_ {
        let one = one_server(all);
        all.iter().map(move |e| e.named(one))
    }

    fn named(&self, one_server: bool) -> String {
        if one_server {
            self.engine.clone()
        } else {
            format!("{} engine {}", self.server, self.engine)
        }
    }
}

/// Whether every engine of `all` is one server's.
fn one_server(all: &[EngineRate]) -> bool {
    all.windows(2).all(|w| w[0].server == w[1].server)
}

/// What the window figures of a row actually cover: from the oldest scrape compared to
/// the newest, and the longest span of one series (servers scraped apart have spans
/// that overlap, not one span).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    pub seconds: f64,
    /// Why a series' window is shorter than the one asked, as the library's coverage says
    /// (the first such series'): it began inside the window, or scrapes resumed after a gap.
    pub shortened: Option<Shortened>,
}

/// Why a row has no window yet, as the library's answer says: one page so far, or one
/// page since scrapes resumed after a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoWindow {
    OnePage,
    OnePageSinceGap,
}

/// Why a row's window is shorter than the one asked, in the words every output uses:
/// the library's reason (`span.shortened`), or why there is no window at all. A window
/// within half an interval (`slack`) of the one asked is the one asked: a scrape's jitter
/// does not shorten it.
fn shortened_words(span: Option<&Span>, no_window: Option<NoWindow>, w: &WindowRule) -> Option<&'static str> {
    let Some(span) = span else {
        return no_window.map(|n| match n {
            NoWindow::OnePage => "one page so far",
            NoWindow::OnePageSinceGap => "one page since scrapes resumed",
        });
    };
    if span.seconds >= (w.window - w.slack / 2).as_seconds_f64() {
        return None;
    }
    span.shortened.map(|why| match why {
        Shortened::SinceFirstPoint => "since the first page",
        Shortened::AfterGap => "since scrapes resumed",
        // Older points let go (the retention), or a reason a later promrate gives.
        _ => why.as_str(),
    })
}

/// A rate three ways: exact over the window, EWMA, and PromQL `rate()` over the window.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rate {
    pub window: Option<f64>,
    pub ewma: Option<f64>,
    pub promql: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Quantiles {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

/// Whether the finished-request rate is the server's steady rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Load {
    /// Not enough data (nothing running, or no window yet).
    #[default]
    Unknown,
    /// Requests finish about as fast as Little's law says they should.
    Steady,
    /// Requests run but finish well below the rate their latency implies: the run is
    /// still filling up (the first requests have not had time to finish).
    RampingUp,
    /// More requests are waiting at the end of the window than at its start.
    QueueGrowing,
    /// Requests run but no token was generated for several intervals: the signals'
    /// verdict ([`Verdict::load`]), never an answer's.
    Stalled,
}

impl Load {
    pub fn as_str(self) -> &'static str {
        match self {
            Load::Unknown => "unknown",
            Load::Steady => "steady",
            Load::RampingUp => "ramping_up",
            Load::QueueGrowing => "queue_growing",
            Load::Stalled => "stalled",
        }
    }

    /// A short label for the screen ("" when there is nothing to say).
    pub fn label(self) -> &'static str {
        match self {
            Load::Unknown => "",
            Load::Steady => "steady",
            Load::RampingUp => "ramping up",
            Load::QueueGrowing => "queue growing",
            Load::Stalled => "STALLED",
        }
    }
}

/// Mean seconds a request spent in each phase over the window (`increase(x_sum) /
/// increase(x_count)` of the server's per-request histograms); inference is prefill and
/// decode together, as vLLM counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseMeans {
    pub queue: Option<f64>,
    pub prefill: Option<f64>,
    pub decode: Option<f64>,
    pub inference: Option<f64>,
}

/// Prompt tokens/s by where they came from (vLLM's `prompt_tokens_by_source`): computed
/// here (the cache's misses), hits of the local prefix cache, transferred from another
/// instance's KV cache.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PromptSources {
    pub local_compute: Option<f64>,
    pub local_cache_hit: Option<f64>,
    pub external_kv_transfer: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SpecDecode {
    pub acceptance_rate: Option<f64>,
    pub mean_acceptance_length: Option<f64>,
}

/// What a row's servers counted since monitoring began (the summary's figures, and the
/// ETA's), as opposed to the window's.
#[derive(Debug, Clone, Default)]
pub struct SinceStart {
    /// Requests finished and tokens generated.
    pub finished: Option<f64>,
    pub generated: Option<f64>,
    /// Whether a newest page had the token counter: false while `generated` is only what
    /// earlier pages counted (an exporter leaving the family out), so a mean over the
    /// run ends at the newest interval that counted.
    pub counting: bool,
    /// Mean generated tokens per request finished (the ETA by tokens falls back on it while
    /// no request has finished in the window).
    pub tokens_per_request: Option<f64>,
    /// The share of requests within each `--slo` objective (the totals' only).
    pub slo: Vec<Attainment>,
}

/// The signals' verdict on an interval's totals (`signals.rs`): part of the snapshot, beside
/// the figures it was judged on, which it does not change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    /// Requests run and no token came for several intervals.
    pub stalled: bool,
    /// The engine generating under half its server's others' mean, if one is.
    pub imbalanced_engine: Option<String>,
}

impl Verdict {
    /// The load as shown: stalled, else what the figures say.
    pub fn load(&self, f: &Figures) -> Load {
        if self.stalled {
            Load::Stalled
        } else {
            f.load
        }
    }
}

/// What a row's figures are given besides the trackers' answers, so that every field is
/// written in one place (`Answers::figures`).
pub(crate) struct RowContext<'a> {
    /// The row's GPUs (a group's: those of its host), and what the user said of GPUs.
    pub gpus: Option<Gpus>,
    pub gpu_settings: &'a GpuSettings,
    /// Whether this is the totals' row (per-token figures with `--gpus` alone, engines).
    pub total: bool,
    pub engine_rates: Vec<EngineRate>,
    pub tokens_at_request_end: bool,
}

/// One row's figures (the totals, or one group), built at once by `Answers::figures`
/// from the trackers' answers and the `RowContext`; nothing writes them after. Split by
/// concern: the window, tokens, requests, what is in flight, latencies, capacity, GPUs.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// What the window figures cover, and why it is shorter than asked.
    pub window: Window,
    pub generation: Rate,
    pub prompt: Rate,
    /// How the prompt tokens were served, where the server says.
    pub prompt_parts: PromptParts,
    /// Finished requests: their rate, count, reasons and per-request means.
    pub requests: Requests,
    /// What is in flight now: running, waiting, the KV cache, the prefix cache.
    pub in_flight: InFlight,
    pub spec_decode: Option<SpecDecode>,
    pub ttft: Quantiles,
    pub itl: Quantiles,
    pub e2e: Quantiles,
    /// Mean time per phase, beside the latency quantiles.
    pub phases: PhaseMeans,
    /// The share of requests within each `--slo` objective over the window (none without
    /// `--slo`).
    pub slo: Vec<Attainment>,
    /// KV cache in tokens, preemptions, rejections, aborts, waiting by reason, sleep state.
    pub capacity: Capacity,
    pub load: Load,
    /// What the servers counted since monitoring began.
    pub since_start: SinceStart,
    /// The GPUs of the DCGM pages among the sources (a group's: those on its host).
    pub gpus: Option<Gpus>,
    /// Tokens per GPU, joules per token, cost per million tokens (see `gpus.rs`), for the
    /// totals and for groups with GPUs (`PerToken::of_row`).
    pub per_token: PerToken,
    /// Generation tokens/s of each data-parallel engine of each server, totals only.
    pub engine_rates: Vec<EngineRate>,
    /// Some server counts tokens only when a request ends (TGI, llama.cpp, TensorRT-LLM):
    /// the window rate is the throughput, the EWMA and PromQL's extrapolation of a sawtooth
    /// are not, and are left out of the totals and of every group, for generated and
    /// prompt tokens alike.
    pub tokens_at_request_end: bool,
    /// Sources (a URL, or one group of its series) whose counters go down with no restart
    /// (the `erratic` event): left out of the rates of this row, which then cover the
    /// others only.
    pub not_rated: usize,
}

/// What a row's window figures cover (`None`: no window yet), and why it is shorter than
/// the window asked, if it is ("since the first page", "since scrapes resumed").
#[derive(Debug, Clone, Default)]
pub struct Window {
    pub span: Option<Span>,
    pub shortened: Option<&'static str>,
}

/// How the prompt tokens were served.
#[derive(Debug, Clone, Default)]
pub struct PromptParts {
    /// Prompt tokens computed (not served from a cache), as vLLM's log line counts them.
    pub computed: Option<f64>,
    pub cached: Option<f64>,
    /// The same prompt tokens by source, where the server says so (vLLM).
    pub sources: Option<PromptSources>,
}

/// Finished requests over the window.
#[derive(Debug, Clone, Default)]
pub struct Requests {
    /// Requests finished per second.
    pub finished: Option<f64>,
    /// Requests finished within the window (how much the rate above rests on).
    pub finished_in_window: Option<f64>,
    pub finished_by_reason: Vec<(String, f64)>,
    /// Mean generated and prompt tokens per finished request over the window
    /// (`increase(x_sum) / increase(x_count)` of vLLM's per-request histograms).
    pub tokens_per_request: Option<f64>,
    pub prompt_tokens_per_request: Option<f64>,
    /// Mean end-to-end latency of the requests that finished in the window.
    pub mean_latency: Option<f64>,
    /// The finished-request rate Little's law implies: mean running ÷ mean latency.
    pub steady_rate: Option<f64>,
}

/// What is in flight: the servers' gauges, newest values.
#[derive(Debug, Clone, Default)]
pub struct InFlight {
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub prefix_hit_rate: Option<f64>,
    /// Running requests averaged over the window (for the per-request figures).
    pub running_mean: Option<f64>,
    /// Generation tokens/s per running request (generation rate ÷ mean running).
    pub tokens_per_s_per_request: Option<f64>,
}

/// The selector of a metric.
fn named(metric: &Metric) -> Selector {
    selector(metric.name, metric.only)
}
/// The figures over `sources` and, with `by`, per value of that label (`url` groups by
/// server): every query asked once, grouped in the same query.
pub fn compute(sources: &[Source<'_>], w: WindowRule, by: Option<&str>) -> (Figures, Vec<(String, Figures)>) {
    compute_with(sources, w, by, &[])
}

/// [`compute`], with the attainment of latency objectives (`--slo`).
pub fn compute_with(
    sources: &[Source<'_>],
    w: WindowRule,
    by: Option<&str>,
    slo: &[Objective],
) -> (Figures, Vec<(String, Figures)>) {
    compute_for(sources, w, by, slo, &GpuSettings::default())
}

/// [`compute_with`], with what the user said of the GPUs (`--gpus`, `--gpu-hour-price`)
/// for the per-token figures.
pub fn compute_for(
    sources: &[Source<'_>],
    w: WindowRule,
    by: Option<&str>,
    slo: &[Objective],
    gpu_settings: &GpuSettings,
) -> (Figures, Vec<(String, Figures)>) {
    let query = Query::new(sources, by);
    let answers = Answers::ask(&query, w, slo);
    let ids = query.groups.into_inner();
    // The DCGM series read once; the totals and each group's GPUs are folds of them.
    let readings = gpus::Readings::read(sources, w);
    let all_gpus = readings.gpus(None);
    // By the name index (the generation metric of such a server), not by walking every
    // series of every tracker each interval.
    let tokens_at_request_end = ENGINES
        .iter()
        .filter(|e| e.tokens_at_request_end)
        .any(|e| sources.iter().any(|s| first_present(s, e.generation).is_some()));
    let context = |gpus, total, engine_rates| RowContext {
        gpus,
        gpu_settings,
        total,
        engine_rates,
        tokens_at_request_end,
    };
    let groups = match by {
        Some(by) => answers
            .groups(&ids)
            .into_iter()
            .map(|(name, g)| {
                // GPUs join a group by host: `--by instance` (host:port) and `--by url`.
                // Asked only when some page has GPUs: a fleet without DCGM pays nothing.
                let gpus = all_gpus
                    .as_ref()
                    .and_then(|_| gpus::host_of_group(by, &name))
                    .and_then(|host| readings.gpus(Some(&host)));
                (
                    name.to_string(),
                    answers.figures(Some(g), context(gpus, false, Vec::new()), &w),
                )
            })
            .collect(),
        None => Vec::new(),
    };
    let total = answers.figures(None, context(all_gpus, true, engine_rates(sources, w)), &w);
    (total, groups)
}

/// Figures per value of `label` (`url` groups by server), for `--by`.
#[cfg(test)]
pub fn grouped(sources: &[Source<'_>], label: &str, window: chrono::TimeDelta) -> Vec<(String, Figures)> {
    let w = WindowRule::new(window)
        .slack(chrono::TimeDelta::seconds(1))
        .gap(chrono::TimeDelta::seconds(3));
    compute(sources, w, Some(label)).1
}
