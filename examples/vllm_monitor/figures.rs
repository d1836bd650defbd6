//! The monitor's figures, computed from promrate trackers (one per URL) with the metric
//! names of vLLM V1 and V0, SGLang and TGI. No arithmetic on raw samples happens here:
//! every number comes from a tracker query.

use chrono::{DateTime, TimeDelta, Utc};
use promrate::histogram;
use promrate::promql::Range;
use promrate::{MatchOp, Matcher, Selector, TrackedSeries, Tracker};

/// Which server a page comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    Vllm,
    Sglang,
    Tgi,
}

impl ServerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerKind::Vllm => "vllm",
            ServerKind::Sglang => "sglang",
            ServerKind::Tgi => "tgi",
        }
    }

    /// Recognises the server from the series a tracker holds.
    pub fn detect(tracker: &Tracker) -> Option<ServerKind> {
        let mut kind = None;
        for s in tracker.series() {
            let name = s.name();
            if name.starts_with("vllm:") || name.starts_with("vllm_") {
                return Some(ServerKind::Vllm);
            } else if name.starts_with("sglang:") || name.starts_with("sglang_") {
                kind = Some(ServerKind::Sglang);
            } else if name.starts_with("tgi_") && kind.is_none() {
                kind = Some(ServerKind::Tgi);
            }
        }
        kind
    }
}

// Alternatives in order of preference: vLLM V1, vLLM V0, SGLang, TGI. The trackers
// normalize names, so `vllm:x` also finds vLLM's OpenMetrics spelling `vllm_x`.
const GENERATION: &[&str] = &[
    "vllm:generation_tokens_total",
    "sglang:generation_tokens_total",
    "tgi_request_generated_tokens_sum",
];
const PROMPT: &[&str] = &[
    "vllm:prompt_tokens_total",
    "sglang:prompt_tokens_total",
    "tgi_request_input_length_sum",
];
const PROMPT_BY_SOURCE: &[&str] = &["vllm:prompt_tokens_by_source_total"];
const PROMPT_CACHED: &[&str] = &["vllm:prompt_tokens_cached_total", "sglang:cached_tokens_total"];
const FINISHED: &[&str] = &[
    "vllm:request_success_total",
    "sglang:num_requests_total",
    "tgi_request_success",
];
const RUNNING: &[&str] = &[
    "vllm:num_requests_running",
    "sglang:num_running_reqs",
    "tgi_batch_current_size",
];
const WAITING: &[&str] = &[
    "vllm:num_requests_waiting",
    "sglang:num_queue_reqs",
    "tgi_queue_size",
];
const KV_USAGE: &[&str] = &[
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
];
const PREFIX_HITS: &[&str] = &["vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"];
const PREFIX_QUERIES: &[&str] = &[
    "vllm:prefix_cache_queries_total",
    "vllm:gpu_prefix_cache_queries_total",
];
const PREFIX_HIT_RATE_GAUGE: &[&str] = &["vllm:gpu_prefix_cache_hit_rate", "sglang:cache_hit_rate"];
const SPEC_ACCEPTED: &[&str] = &["vllm:spec_decode_num_accepted_tokens_total"];
const SPEC_DRAFT_TOKENS: &[&str] = &["vllm:spec_decode_num_draft_tokens_total"];
const SPEC_DRAFTS: &[&str] = &["vllm:spec_decode_num_drafts_total"];
const SPEC_RATE_GAUGE: &[&str] = &[
    "vllm:spec_decode_draft_acceptance_rate",
    "sglang:spec_accept_rate",
];
const SPEC_LENGTH_GAUGE: &[&str] = &["sglang:spec_accept_length"];
const TTFT: &[&str] = &[
    "vllm:time_to_first_token_seconds",
    "sglang:time_to_first_token_seconds",
];
const E2E: &[&str] = &[
    "vllm:e2e_request_latency_seconds",
    "sglang:e2e_request_latency_seconds",
    "tgi_request_duration",
];
const REQUEST_GENERATION: &[&str] = &["vllm:request_generation_tokens", "tgi_request_generated_tokens"];
const REQUEST_PROMPT: &[&str] = &["vllm:request_prompt_tokens", "tgi_request_input_length"];
const ITL: &[&str] = &[
    "vllm:inter_token_latency_seconds",
    "vllm:time_per_output_token_seconds",
    "sglang:inter_token_latency_seconds",
    "tgi_request_mean_time_per_token_duration",
];

/// One URL's tracker and the time of its newest successful scrape.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub tracker: &'a Tracker,
    pub at: DateTime<Utc>,
    /// When monitoring of this URL began (for totals since start).
    pub since: DateTime<Utc>,
    pub url: &'a str,
    /// Only series with this label value count (for `--by`).
    pub only: Option<(&'a str, &'a str)>,
}

impl Source<'_> {
    /// Whether a series counts: on the newest page (a vanished target's old points are
    /// never averaged in) and in the group asked for.
    fn admits(&self, series: &TrackedSeries) -> bool {
        series.last_seen_scrape() == self.tracker.scrapes()
            && self
                .only
                .is_none_or(|(label, value)| series.label(label).unwrap_or("") == value)
    }
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
}

impl Load {
    pub fn as_str(self) -> &'static str {
        match self {
            Load::Unknown => "unknown",
            Load::Steady => "steady",
            Load::RampingUp => "ramping_up",
            Load::QueueGrowing => "queue_growing",
        }
    }

    /// A short label for the screen ("" when there is nothing to say).
    pub fn label(self) -> &'static str {
        match self {
            Load::Unknown => "",
            Load::Steady => "steady",
            Load::RampingUp => "ramping up",
            Load::QueueGrowing => "queue growing",
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SpecDecode {
    pub acceptance_rate: Option<f64>,
    pub mean_acceptance_length: Option<f64>,
}

#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub generation: Rate,
    pub prompt: Rate,
    /// Prompt tokens computed (not served from a cache), as vLLM's log line counts them.
    pub prompt_computed: Option<f64>,
    pub prompt_cached: Option<f64>,
    pub finished: Option<f64>,
    /// Requests finished within the window (how much the rate above rests on).
    pub finished_in_window: Option<f64>,
    pub finished_by_reason: Vec<(String, f64)>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub prefix_hit_rate: Option<f64>,
    pub spec_decode: Option<SpecDecode>,
    pub ttft: Quantiles,
    pub itl: Quantiles,
    pub e2e: Quantiles,
    /// Mean generated and prompt tokens per finished request over the window
    /// (`increase(x_sum) / increase(x_count)` of vLLM's per-request histograms).
    pub tokens_per_request: Option<f64>,
    pub prompt_tokens_per_request: Option<f64>,
    /// Mean generated tokens per request finished since monitoring began (the ETA by
    /// tokens falls back on it while no request has finished in the window).
    pub tokens_per_request_since_start: Option<f64>,
    /// Running requests averaged over the window (for the per-request figures).
    pub running_mean: Option<f64>,
    /// Generation tokens/s per running request (generation rate ÷ mean running).
    pub tokens_per_s_per_request: Option<f64>,
    /// Mean end-to-end latency of the requests that finished in the window.
    pub mean_latency: Option<f64>,
    /// The finished-request rate Little's law implies: mean running ÷ mean latency.
    pub steady_rate: Option<f64>,
    pub load: Load,
    /// Requests finished and tokens generated since monitoring began.
    pub finished_since_start: Option<f64>,
    pub generated_since_start: Option<f64>,
}

/// The selector `{__name__="<name>"}` (names compared with ':' and '_' alike by the tracker).
fn named(name: &str) -> Selector {
    let matcher = Matcher::new("__name__", MatchOp::Equal, name).expect("an equality matcher");
    Selector::from_matchers(vec![matcher])
}

/// Sums `f` over every series named `name` in every source (`None` if none has a figure).
fn sum(
    sources: &[Source<'_>],
    name: &str,
    f: &dyn Fn(&TrackedSeries, &Source<'_>) -> Option<f64>,
) -> Option<f64> {
    let mut total = None;
    for source in sources {
        for group in source.tracker.sum_by(&named(name), &[], |s| {
            if source.admits(s) {
                f(s, source)
            } else {
                None
            }
        }) {
            *total.get_or_insert(0.0) += group.value;
        }
    }
    total
}

/// The first name of `names` that any source has series for.
fn present<'n>(sources: &[Source<'_>], names: &[&'n str]) -> Option<&'n str> {
    names.iter().copied().find(|name| {
        sources
            .iter()
            .any(|s| s.tracker.matching(&named(name)).any(|x| s.admits(x)))
    })
}

fn sum_first(
    sources: &[Source<'_>],
    names: &[&str],
    f: &dyn Fn(&TrackedSeries, &Source<'_>) -> Option<f64>,
) -> Option<f64> {
    sum(sources, present(sources, names)?, f)
}

/// `histogram_quantile(q, sum by (le) (increase(<name>_bucket[window])))` over all sources.
fn quantile(sources: &[Source<'_>], names: &[&str], q: f64, window: TimeDelta) -> Option<f64> {
    let bucket_names: Vec<String> = names.iter().map(|n| format!("{n}_bucket")).collect();
    let bucket_refs: Vec<&str> = bucket_names.iter().map(String::as_str).collect();
    let base = present(sources, &bucket_refs)?.strip_suffix("_bucket")?;
    let mut buckets = Vec::new();
    for source in sources {
        let increase = |s: &TrackedSeries| {
            if source.admits(s) {
                s.counter()?.exact_increase(window, source.at)
            } else {
                None
            }
        };
        for (_, group) in source.tracker.histogram_buckets(&named(base), &[], increase) {
            buckets.extend(group);
        }
    }
    let value = histogram::quantile(q, &buckets);
    value.is_finite().then_some(value)
}

/// `increase(<name>_sum) / increase(<name>_count)` over all sources: the mean observation
/// of the requests that finished in the window.
fn histogram_mean(
    sources: &[Source<'_>],
    names: &[&str],
    increase: &dyn Fn(&TrackedSeries, &Source<'_>) -> Option<f64>,
) -> Option<f64> {
    let count_names: Vec<String> = names.iter().map(|n| format!("{n}_count")).collect();
    let count_refs: Vec<&str> = count_names.iter().map(String::as_str).collect();
    let base = present(sources, &count_refs)?.strip_suffix("_count")?;
    let count = sum(sources, &format!("{base}_count"), increase)?;
    let total = sum(sources, &format!("{base}_sum"), increase)?;
    (count > 0.0).then(|| total / count)
}

/// Steady, ramping up or queueing, from the window's figures:
/// - the queue grows when the number waiting is at its highest of the window at its end,
///   and above where it started;
/// - a run ramps up when requests run but none has finished in the window, or they
///   finish at under 80% of the rate Little's law implies (judged on 10 requests or
///   more: fewer are too coarse to tell).
fn load(f: &Figures, waiting: Option<(f64, f64, f64)>) -> Load {
    let running = f.running_mean.unwrap_or(0.0);
    if running <= 0.0 || f.generation.window.is_none() {
        return Load::Unknown;
    }
    if waiting.is_some_and(|(first, max, last)| last >= max && last >= first + 1.0) {
        return Load::QueueGrowing;
    }
    let finished_in_window = f.finished_in_window.unwrap_or(0.0);
    match (f.finished, f.steady_rate) {
        (Some(finished), _) if finished <= 0.0 => Load::RampingUp,
        (Some(_), Some(_)) if finished_in_window < 10.0 => Load::Unknown,
        (Some(finished), Some(steady)) if finished < 0.8 * steady => Load::RampingUp,
        (Some(_), Some(_)) => Load::Steady,
        _ => Load::Unknown,
    }
}

impl Figures {
    /// Computes every figure over `sources` for a window ending at each source's newest scrape.
    pub fn compute(sources: &[Source<'_>], window: TimeDelta) -> Figures {
        let range = Range::new(window);
        let window_rate = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.exact_rate(window, src.at);
        let ewma = |s: &TrackedSeries, _: &Source<'_>| s.counter()?.ewma_rate();
        let promql = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.rate(&range, src.at);
        let increase = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.exact_increase(window, src.at);
        let since_start = |s: &TrackedSeries, src: &Source<'_>| {
            s.counter()?
                .exact_increase(src.at.signed_duration_since(src.since), src.at)
        };
        let last = |s: &TrackedSeries, _: &Source<'_>| s.last_value();
        let rate_of = |names: &[&str]| Rate {
            window: sum_first(sources, names, &window_rate),
            ewma: sum_first(sources, names, &ewma),
            promql: sum_first(sources, names, &promql),
        };

        let mut f = Figures {
            generation: rate_of(GENERATION),
            prompt: rate_of(PROMPT),
            ..Figures::default()
        };
        if let Some(name) = present(sources, PROMPT_BY_SOURCE) {
            let by = |source: &'static str| {
                move |s: &TrackedSeries, src: &Source<'_>| {
                    (s.label("source") == Some(source))
                        .then(|| window_rate(s, src))
                        .flatten()
                }
            };
            f.prompt_computed = sum(sources, name, &by("local_compute"));
            let local = sum(sources, name, &by("local_cache_hit"));
            let external = sum(sources, name, &by("external_kv_transfer"));
            f.prompt_cached = local.map(|l| l + external.unwrap_or(0.0));
        } else if let (Some(prompt), Some(cached)) =
            (f.prompt.window, sum_first(sources, PROMPT_CACHED, &window_rate))
        {
            f.prompt_cached = Some(cached);
            f.prompt_computed = Some(prompt - cached);
        }
        if let Some(name) = present(sources, FINISHED) {
            f.finished = sum(sources, name, &window_rate);
            f.finished_in_window = sum(sources, name, &increase);
            f.finished_since_start = sum(sources, name, &since_start);
            let mut by_reason: Vec<(String, f64)> = Vec::new();
            for source in sources {
                let admitted = |s: &TrackedSeries| {
                    if source.admits(s) {
                        window_rate(s, source)
                    } else {
                        None
                    }
                };
                for g in source
                    .tracker
                    .sum_by(&named(name), &["finished_reason"], admitted)
                {
                    let reason = g.label("finished_reason").unwrap_or("").to_string();
                    match by_reason.iter_mut().find(|(r, _)| *r == reason) {
                        Some((_, v)) => *v += g.value,
                        None => by_reason.push((reason, g.value)),
                    }
                }
            }
            by_reason.retain(|(reason, _)| !reason.is_empty());
            f.finished_by_reason = by_reason;
        }
        f.generated_since_start = sum_first(sources, GENERATION, &since_start);
        f.running = sum_first(sources, RUNNING, &last);
        f.waiting = sum_first(sources, WAITING, &last);
        if let Some(name) = present(sources, KV_USAGE) {
            // Average across engines and servers: summing fractions would be meaningless.
            let (mut total, mut n) = (0.0, 0usize);
            for source in sources {
                for g in source.tracker.sum_by(&named(name), &[], |s| {
                    if source.admits(s) {
                        s.last_value()
                    } else {
                        None
                    }
                }) {
                    total += g.value;
                    n += g.series;
                }
            }
            f.kv_usage = (n > 0).then(|| total / n as f64);
        }
        f.prefix_hit_rate = match (
            sum_first(sources, PREFIX_HITS, &increase),
            sum_first(sources, PREFIX_QUERIES, &increase),
        ) {
            (Some(hits), Some(queries)) if queries > 0.0 => Some(hits / queries),
            (Some(_), Some(_)) => None,
            _ => sum_first(sources, PREFIX_HIT_RATE_GAUGE, &last).filter(|r| *r >= 0.0),
        };
        let accepted = sum_first(sources, SPEC_ACCEPTED, &increase);
        if let Some(accepted) = accepted {
            let draft_tokens = sum_first(sources, SPEC_DRAFT_TOKENS, &increase).filter(|d| *d > 0.0);
            let drafts = sum_first(sources, SPEC_DRAFTS, &increase).filter(|d| *d > 0.0);
            f.spec_decode = Some(SpecDecode {
                acceptance_rate: draft_tokens.map(|d| accepted / d),
                mean_acceptance_length: drafts.map(|d| 1.0 + accepted / d),
            });
        } else if let Some(rate) = sum_first(sources, SPEC_RATE_GAUGE, &last) {
            f.spec_decode = Some(SpecDecode {
                acceptance_rate: Some(rate),
                mean_acceptance_length: sum_first(sources, SPEC_LENGTH_GAUGE, &last),
            });
        }
        let quantiles = |names: &[&str]| Quantiles {
            p50: quantile(sources, names, 0.5, window),
            p95: quantile(sources, names, 0.95, window),
            p99: quantile(sources, names, 0.99, window),
        };
        f.ttft = quantiles(TTFT);
        f.itl = quantiles(ITL);
        f.e2e = quantiles(E2E);
        f.tokens_per_request = histogram_mean(sources, REQUEST_GENERATION, &increase);
        f.prompt_tokens_per_request = histogram_mean(sources, REQUEST_PROMPT, &increase);
        f.tokens_per_request_since_start = histogram_mean(sources, REQUEST_GENERATION, &since_start);
        f.mean_latency = histogram_mean(sources, E2E, &increase);
        let mean_over_window = |s: &TrackedSeries, src: &Source<'_>| s.gauge()?.avg_over(window, src.at);
        f.running_mean = sum_first(sources, RUNNING, &mean_over_window);
        f.tokens_per_s_per_request = match (f.generation.window, f.running_mean) {
            (Some(rate), Some(running)) if running > 0.0 => Some(rate / running),
            _ => None,
        };
        f.steady_rate = match (f.running_mean, f.mean_latency) {
            (Some(running), Some(latency)) if latency > 0.0 => Some(running / latency),
            _ => None,
        };
        // Waiting at the window's start, its highest and at its end (one server's queue;
        // with several, the figure is judged on their sum at each end).
        let edge = |pick: fn(&[promrate::promql::Point]) -> Option<f64>| {
            move |s: &TrackedSeries, src: &Source<'_>| {
                let start_ms = (src.at - window).timestamp_millis();
                let points = s.gauge()?.points();
                let from = points.iter().position(|p| p.timestamp_ms > start_ms)?;
                pick(&points[from..])
            }
        };
        let first = sum_first(sources, WAITING, &edge(|p| Some(p.first()?.value)));
        let max = sum_first(
            sources,
            WAITING,
            &edge(|p| p.iter().map(|p| p.value).reduce(f64::max)),
        );
        let waiting = first
            .zip(max)
            .zip(f.waiting)
            .map(|((first, max), last)| (first, max, last));
        f.load = load(&f, waiting);
        f
    }
}

/// Figures per value of `label` (`url` groups by server), for `--by`.
pub fn grouped(sources: &[Source<'_>], label: &str, window: TimeDelta) -> Vec<(String, Figures)> {
    if label == "url" {
        return sources
            .iter()
            .map(|s| {
                (
                    s.url.to_string(),
                    Figures::compute(std::slice::from_ref(s), window),
                )
            })
            .collect();
    }
    let mut values: Vec<String> = sources
        .iter()
        .flat_map(|s| {
            // Values on the newest page only: a vanished instance gets no empty row.
            s.tracker
                .series()
                .filter(|x| x.last_seen_scrape() == s.tracker.scrapes())
                .filter_map(|x| x.label(label).map(str::to_string))
        })
        .collect();
    values.sort();
    values.dedup();
    values
        .into_iter()
        .map(|value| {
            let subset: Vec<Source<'_>> = sources
                .iter()
                .map(|s| Source {
                    only: Some((label, value.as_str())),
                    ..*s
                })
                .collect();
            let figures = Figures::compute(&subset, window);
            (value, figures)
        })
        .collect()
}
