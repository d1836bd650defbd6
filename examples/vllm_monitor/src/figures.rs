//! The monitor's figures, computed from promrate trackers (one per URL) with the metric
//! names of vLLM V1 and V0, SGLang and TGI. No arithmetic on raw samples happens here:
//! every number comes from a tracker query.
//!
//! Cost: each figure is one indexed query per tracker (it visits only the series of the
//! metric it names), grouped by the `--by` label in the same query; the whole interval
//! and every group are then assembled from those answers. A fleet of 1,000 servers costs
//! what its series of the named metrics cost, not 1,000 times the whole tracker.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, TimeDelta, Utc};
use promrate::histogram::{self, Bucket};
use promrate::promql::Range;
use promrate::{MatchOp, Matcher, Selector, TrackedSeries, Tracker};

use crate::engines::{alternatives, Engine, Metric, ENGINES};
use crate::gpus::{self, Gpus, PerToken};

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
    prefix_hit_rate: alternatives(|e| e.prefix_hit_rate),
    spec_accepted: alternatives(|e| e.spec_accepted),
    spec_draft_tokens: alternatives(|e| e.spec_draft_tokens),
    spec_drafts: alternatives(|e| e.spec_drafts),
    spec_rate: alternatives(|e| e.spec_rate),
    spec_length: alternatives(|e| e.spec_length),
    ttft: alternatives(|e| e.ttft),
    e2e: alternatives(|e| e.e2e),
    itl: alternatives(|e| e.itl),
    request_generation: alternatives(|e| e.request_generation),
    request_prompt: alternatives(|e| e.request_prompt),
});

/// One URL's tracker and the time of its newest successful scrape.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub tracker: &'a Tracker,
    pub at: DateTime<Utc>,
    pub url: &'a str,
}

impl Source<'_> {
    /// Whether a series counts: on the newest page (a vanished target's old points are
    /// never averaged in).
    pub fn admits(&self, series: &TrackedSeries) -> bool {
        series.last_seen_scrape() == self.tracker.scrapes()
    }

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
        if all.iter().all(|e| e.server == self.server) {
            self.engine.clone()
        } else {
            format!("{} engine {}", self.server, self.engine)
        }
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
    /// Requests run but no token was generated for several intervals (`signals.rs`).
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
    /// The GPUs of the DCGM pages among the sources (a group's: those on its host).
    pub gpus: Option<Gpus>,
    /// Tokens per GPU, joules per token, cost per million tokens (see `gpus.rs`), for the
    /// totals and for groups with GPUs (`Snapshot::with_gpu_settings`).
    pub per_token: PerToken,
    /// Generation tokens/s of each data-parallel engine of each server, totals only.
    pub engine_rates: Vec<EngineRate>,
    /// The engine generating under half the others' mean, if one is (`signals.rs`).
    pub imbalanced_engine: Option<String>,
    /// Some server counts tokens only when a request ends (TGI, llama.cpp, TensorRT-LLM):
    /// the window rate is the throughput, the EWMA and PromQL's extrapolation of a sawtooth
    /// are not, and are left out of the totals and of every group, for generated and
    /// prompt tokens alike.
    pub tokens_at_request_end: bool,
}

/// The selector `{__name__="<name>"}` (names compared with ':' and '_' alike by the
/// tracker), with the label the metric requires.
pub(crate) fn selector(name: &str, only: Option<(&str, &str)>) -> Selector {
    let mut matchers = vec![Matcher::new("__name__", MatchOp::Equal, name).expect("an equality matcher")];
    if let Some((label, value)) = only {
        matchers.push(Matcher::new(label, MatchOp::Equal, value).expect("an equality matcher"));
    }
    Selector::from_matchers(matchers)
}

/// The selector of a metric.
fn named(metric: &Metric) -> Selector {
    selector(metric.name, metric.only)
}

/// A series' figure, given the source it belongs to.
type PerSeries<'f> = &'f dyn Fn(&TrackedSeries, &Source<'_>) -> Option<f64>;

/// The groups of one query, numbered as they are first seen: splits hold their groups by
/// number, so assembling a group's figures is array indexing, and a group's name is stored
/// once (shared with the trackers' series).
#[derive(Debug, Default)]
struct GroupIds {
    ids: HashMap<Arc<str>, usize>,
    names: Vec<Arc<str>>,
}

impl GroupIds {
    fn id(&mut self, name: &Arc<str>) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len();
        self.ids.insert(Arc::clone(name), id);
        self.names.push(Arc::clone(name));
        id
    }
}

/// One figure over all sources and, with `--by`, per group (by number, see [`GroupIds`]): a
/// sum (or other aggregate) and the number of series it rests on.
#[derive(Debug, Clone, Default)]
struct Split {
    total: Option<(f64, usize)>,
    groups: Vec<Option<(f64, usize)>>,
}

impl Split {
    fn add(&mut self, group: Option<usize>, value: f64, series: usize) {
        let total = self.total.get_or_insert((0.0, 0));
        total.0 += value;
        total.1 += series;
        if let Some(group) = group {
            if self.groups.len() <= group {
                self.groups.resize(group + 1, None);
            }
            let entry = self.groups[group].get_or_insert((0.0, 0));
            entry.0 += value;
            entry.1 += series;
        }
    }

    /// The value over all sources (`None`) or in one group.
    fn get(&self, group: Option<usize>) -> Option<f64> {
        self.pair(group).map(|(v, _)| v)
    }

    fn pair(&self, group: Option<usize>) -> Option<(f64, usize)> {
        match group {
            None => self.total,
            Some(g) => self.groups.get(g).copied().flatten(),
        }
    }

    /// The mean per series.
    fn mean(&self, group: Option<usize>) -> Option<f64> {
        let (sum, n) = self.pair(group)?;
        (n > 0).then(|| sum / n as f64)
    }
}

/// Buckets of one histogram over all sources and per group (by number).
#[derive(Debug, Clone, Default)]
struct Buckets {
    total: Vec<Bucket>,
    groups: Vec<Vec<Bucket>>,
}

impl Buckets {
    fn quantiles(&self, group: Option<usize>) -> Quantiles {
        let buckets = match group {
            None => &self.total,
            Some(g) => match self.groups.get(g) {
                Some(b) if !b.is_empty() => b,
                _ => return Quantiles::default(),
            },
        };
        let q = |q: f64| histogram::quantile(q, buckets).filter(|v| v.is_finite());
        Quantiles {
            p50: q(0.5),
            p95: q(0.95),
            p99: q(0.99),
        }
    }
}

/// The queries of one interval: over `sources`, grouped by `by` (a label, or `url` for one
/// group per source) when asked.
struct Query<'q> {
    sources: &'q [Source<'q>],
    by: Option<&'q str>,
    groups: RefCell<GroupIds>,
}

impl<'q> Query<'q> {
    fn new(sources: &'q [Source<'q>], by: Option<&'q str>) -> Self {
        Query {
            sources,
            by,
            groups: RefCell::default(),
        }
    }

    /// The label to group by inside each tracker (`url` groups by source instead).
    fn label(&self) -> Option<&str> {
        self.by.filter(|l| *l != "url")
    }

    /// The group of a tracker's group with these labels (the label's value; "" is left to
    /// the total only), or of the source's URL.
    fn group_of(&self, source: &Source<'_>, labels: &promrate::GroupLabels) -> Option<usize> {
        let name: Arc<str> = match self.by? {
            "url" => Arc::from(source.url),
            _ => Arc::clone(&labels.first()?.1),
        };
        (!name.is_empty()).then(|| self.groups.borrow_mut().id(&name))
    }

    /// `sum by (by) (f(name))` over every source, `name` being the first of `names` the
    /// source has (servers of different kinds name a figure differently): one indexed
    /// query per source.
    fn sum(&self, names: &[Metric], f: PerSeries<'_>) -> Split {
        let by: Vec<&str> = self.label().into_iter().collect();
        let mut split = Split::default();
        for source in self.sources {
            let Some(metric) = first_present(source, names) else {
                continue;
            };
            let groups = source.tracker.sum_by(&named(metric), &by, source.admitted(f));
            for group in groups {
                let value = group.value * metric.scale;
                split.add(self.group_of(source, &group.labels), value, group.series);
            }
        }
        split
    }

    /// Whether any source has series of any of `names`.
    fn present(&self, names: &[Metric]) -> bool {
        self.sources.iter().any(|s| first_present(s, names).is_some())
    }

    /// The buckets of `histogram_quantile(q, sum by (le, by) (f(<name>_bucket)))` over the
    /// first histogram of `names` each source has.
    fn buckets(&self, names: &[Metric], f: PerSeries<'_>) -> Buckets {
        let by: Vec<&str> = self.label().into_iter().collect();
        let mut all = Buckets::default();
        for source in self.sources {
            let Some(metric) = first_present_part(source, names, "_bucket") else {
                continue;
            };
            for (labels, mut buckets) in
                source
                    .tracker
                    .histogram_buckets(&named(metric), &by, source.admitted(f))
            {
                // Bounds in the figure's unit (seconds from milliseconds).
                for bucket in &mut buckets {
                    bucket.upper_bound *= metric.scale;
                }
                all.total.extend(buckets.iter().copied());
                if let Some(group) = self.group_of(source, &labels) {
                    if all.groups.len() <= group {
                        all.groups.resize_with(group + 1, Vec::new);
                    }
                    all.groups[group].extend(buckets);
                }
            }
        }
        all
    }

    /// The `_sum` and `_count` splits of the first histogram of `names` each source has
    /// (their ratio is the mean observation).
    fn histogram_parts(&self, names: &[Metric], f: PerSeries<'_>) -> (Split, Split) {
        let by: Vec<&str> = self.label().into_iter().collect();
        let (mut sums, mut counts) = (Split::default(), Split::default());
        for source in self.sources {
            // A mean needs the observations' real sum.
            let Some(metric) = first_present_part(source, names, "_count").filter(|m| m.exact_sum) else {
                continue;
            };
            let part = |suffix: &str| selector(&format!("{}{suffix}", metric.name), metric.only);
            // Observations in the figure's unit; counts are counts.
            for (split, suffix, scale) in [(&mut sums, "_sum", metric.scale), (&mut counts, "_count", 1.0)] {
                for group in source.tracker.sum_by(&part(suffix), &by, source.admitted(f)) {
                    split.add(
                        self.group_of(source, &group.labels),
                        group.value * scale,
                        group.series,
                    );
                }
            }
        }
        (sums, counts)
    }
}

/// The first metric of `names` that `source` has series for on its newest page.
fn first_present<'n>(source: &Source<'_>, names: &'n [Metric]) -> Option<&'n Metric> {
    names
        .iter()
        .find(|metric| source.tracker.matching(&named(metric)).any(|x| source.admits(x)))
}

/// The first histogram of `names` whose `suffix` series (`_bucket`, `_count`) `source`
/// has on its newest page.
fn first_present_part<'n>(source: &Source<'_>, names: &'n [Metric], suffix: &str) -> Option<&'n Metric> {
    names.iter().find(|metric| {
        let part = selector(&format!("{}{suffix}", metric.name), metric.only);
        let present = source.tracker.matching(&part).any(|x| source.admits(x));
        present
    })
}

fn ratio(parts: &(Split, Split), group: Option<usize>) -> Option<f64> {
    let count = parts.1.get(group)?;
    let total = parts.0.get(group)?;
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

/// Every query of one interval, asked once; [`Answers::figures`] assembles the figures of
/// the whole or of one group from them.
struct Answers {
    generation: [Split; 3],
    prompt: [Split; 3],
    /// `(local_compute, local_cache_hit, external_kv_transfer)` of vLLM's prompt tokens by
    /// source, when the page has them.
    prompt_by_source: Option<[Split; 3]>,
    prompt_cached: Split,
    finished: Option<(Split, Split, Split)>,
    finished_by_reason: BTreeMap<String, Split>,
    generated_since_start: Split,
    running: Split,
    waiting: Split,
    kv_usage: Split,
    prefix_hits: Split,
    prefix_queries: Split,
    prefix_hit_rate_gauge: Split,
    spec: Option<[Split; 3]>,
    spec_gauges: (Split, Split),
    ttft: Buckets,
    itl: Buckets,
    e2e: Buckets,
    tokens_per_request: (Split, Split),
    prompt_tokens_per_request: (Split, Split),
    tokens_per_request_since_start: (Split, Split),
    mean_latency: (Split, Split),
    running_mean: Split,
    waiting_first: Split,
    waiting_max: Split,
}

/// The window rate of vLLM's prompt tokens from each source, when the page has them.
fn prompt_rates_by_source(q: &Query<'_>, window: TimeDelta) -> Option<[Split; 3]> {
    let by_source = |source: &'static str| {
        move |s: &TrackedSeries, src: &Source<'_>| {
            (s.label("source") == Some(source))
                .then(|| s.counter()?.exact_rate(window, src.at))
                .flatten()
        }
    };
    q.present(&NAMES.prompt_by_source).then(|| {
        [
            q.sum(&NAMES.prompt_by_source, &by_source("local_compute")),
            q.sum(&NAMES.prompt_by_source, &by_source("local_cache_hit")),
            q.sum(&NAMES.prompt_by_source, &by_source("external_kv_transfer")),
        ]
    })
}

/// The generation rate of each data-parallel engine (the `engine` label of vLLM and
/// LMDeploy), per server: a server is the `instance` label where a page has one (a
/// federation page), else the source's URL. Each server's engines in name order.
fn engine_rates(sources: &[Source<'_>], window: TimeDelta) -> Vec<EngineRate> {
    let window_rate = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.exact_rate(window, src.at);
    let mut rates = Vec::new();
    for source in sources {
        let Some(metric) = first_present(source, &NAMES.generation) else {
            continue;
        };
        let groups = source.tracker.sum_by(
            &named(metric),
            &["instance", "engine"],
            source.admitted(&window_rate),
        );
        for group in groups {
            let engine = group.label("engine").unwrap_or("");
            if engine.is_empty() {
                continue;
            }
            let server = group
                .label("instance")
                .filter(|i| !i.is_empty())
                .unwrap_or(source.url);
            rates.push(EngineRate {
                server: server.to_string(),
                engine: engine.to_string(),
                rate: group.value * metric.scale,
            });
        }
    }
    rates.sort_by(|a, b| (&a.server, &a.engine).cmp(&(&b.server, &b.engine)));
    rates
}

/// The finished-request rate per `finished_reason`: one query per reason seen (a
/// handful of values).
fn finished_rates_by_reason(q: &Query<'_>, window: TimeDelta) -> BTreeMap<String, Split> {
    let window_rate = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.exact_rate(window, src.at);
    let reasons = Query::new(q.sources, Some("finished_reason"));
    reasons.sum(&NAMES.finished, &window_rate);
    let mut by_reason = BTreeMap::new();
    for reason in reasons.groups.into_inner().names {
        let reason_rate = |s: &TrackedSeries, src: &Source<'_>| {
            (s.label("finished_reason") == Some(&*reason))
                .then(|| window_rate(s, src))
                .flatten()
        };
        by_reason.insert(reason.to_string(), q.sum(&NAMES.finished, &reason_rate));
    }
    by_reason
}

impl Answers {
    fn ask(q: &Query<'_>, window: TimeDelta) -> Answers {
        let range = Range::new(window);
        let window_rate = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.exact_rate(window, src.at);
        let ewma = |s: &TrackedSeries, _: &Source<'_>| s.counter()?.ewma_rate();
        let promql = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.rate(&range, src.at);
        let increase = |s: &TrackedSeries, src: &Source<'_>| s.counter()?.exact_increase(window, src.at);
        // Since the series' first point: the tracker keeps the total, whatever the retention.
        let since_start = |s: &TrackedSeries, _: &Source<'_>| Some(s.counter()?.total_increase());
        let last = |s: &TrackedSeries, _: &Source<'_>| s.last_value();
        let rate_of = |names: &[Metric]| {
            [
                q.sum(names, &window_rate),
                q.sum(names, &ewma),
                q.sum(names, &promql),
            ]
        };
        let prompt_by_source = prompt_rates_by_source(q, window);
        let finished = q.present(&NAMES.finished).then(|| {
            (
                q.sum(&NAMES.finished, &window_rate),
                q.sum(&NAMES.finished, &increase),
                q.sum(&NAMES.finished, &since_start),
            )
        });
        let finished_by_reason = match finished {
            Some(_) => finished_rates_by_reason(q, window),
            None => BTreeMap::new(),
        };
        let spec = q.present(&NAMES.spec_accepted).then(|| {
            [
                q.sum(&NAMES.spec_accepted, &increase),
                q.sum(&NAMES.spec_draft_tokens, &increase),
                q.sum(&NAMES.spec_drafts, &increase),
            ]
        });
        let mean_over_window = |s: &TrackedSeries, src: &Source<'_>| s.gauge()?.avg_over(window, src.at);
        // Waiting at the window's start and its highest (with the newest value: the queue's
        // course over the window).
        let edge = |pick: fn(&[promrate::promql::Point]) -> Option<f64>| {
            move |s: &TrackedSeries, src: &Source<'_>| {
                let start_ms = (src.at - window).timestamp_millis();
                let points = s.gauge()?.points();
                let from = points.iter().position(|p| p.timestamp_ms > start_ms)?;
                pick(&points[from..])
            }
        };
        Answers {
            generation: rate_of(&NAMES.generation),
            prompt: rate_of(&NAMES.prompt),
            prompt_by_source,
            prompt_cached: q.sum(&NAMES.prompt_cached, &window_rate),
            finished,
            finished_by_reason,
            generated_since_start: q.sum(&NAMES.generation, &since_start),
            running: q.sum(&NAMES.running, &last),
            waiting: q.sum(&NAMES.waiting, &last),
            kv_usage: q.sum(&NAMES.kv_usage, &last),
            prefix_hits: q.sum(&NAMES.prefix_hits, &increase),
            prefix_queries: q.sum(&NAMES.prefix_queries, &increase),
            prefix_hit_rate_gauge: q.sum(&NAMES.prefix_hit_rate, &last),
            spec,
            spec_gauges: (q.sum(&NAMES.spec_rate, &last), q.sum(&NAMES.spec_length, &last)),
            ttft: q.buckets(&NAMES.ttft, &increase),
            itl: q.buckets(&NAMES.itl, &increase),
            e2e: q.buckets(&NAMES.e2e, &increase),
            tokens_per_request: q.histogram_parts(&NAMES.request_generation, &increase),
            prompt_tokens_per_request: q.histogram_parts(&NAMES.request_prompt, &increase),
            tokens_per_request_since_start: q.histogram_parts(&NAMES.request_generation, &since_start),
            mean_latency: q.histogram_parts(&NAMES.e2e, &increase),
            running_mean: q.sum(&NAMES.running, &mean_over_window),
            waiting_first: q.sum(&NAMES.waiting, &edge(|p| Some(p.first()?.value))),
            waiting_max: q.sum(
                &NAMES.waiting,
                &edge(|p| p.iter().map(|p| p.value).reduce(f64::max)),
            ),
        }
    }

    /// The groups (by number, named in `ids`) that the main figures have, in name order.
    fn groups(&self, ids: &GroupIds) -> Vec<(Arc<str>, usize)> {
        let mut has = vec![false; ids.names.len()];
        let main = [
            &self.generation[0],
            &self.prompt[0],
            &self.running,
            &self.waiting,
            &self.kv_usage,
        ];
        for split in main.into_iter().chain(self.finished.as_ref().map(|f| &f.0)) {
            for (g, value) in split.groups.iter().enumerate() {
                has[g] |= value.is_some();
            }
        }
        let mut groups: Vec<(Arc<str>, usize)> = ids
            .names
            .iter()
            .enumerate()
            .filter(|&(g, _)| has[g])
            .map(|(g, name)| (Arc::clone(name), g))
            .collect();
        groups.sort();
        groups
    }

    /// The figures over everything (`None`) or of one group.
    fn figures(&self, g: Option<usize>) -> Figures {
        let rate = |r: &[Split; 3]| Rate {
            window: r[0].get(g),
            ewma: r[1].get(g),
            promql: r[2].get(g),
        };
        let mut f = Figures {
            generation: rate(&self.generation),
            prompt: rate(&self.prompt),
            ..Figures::default()
        };
        if let Some([computed, local, external]) = &self.prompt_by_source {
            f.prompt_computed = computed.get(g);
            f.prompt_cached = local.get(g).map(|l| l + external.get(g).unwrap_or(0.0));
        } else if let (Some(prompt), Some(cached)) = (f.prompt.window, self.prompt_cached.get(g)) {
            f.prompt_cached = Some(cached);
            f.prompt_computed = Some(prompt - cached);
        }
        if let Some((rate, in_window, since_start)) = &self.finished {
            f.finished = rate.get(g);
            f.finished_in_window = in_window.get(g);
            f.finished_since_start = since_start.get(g);
            f.finished_by_reason = self
                .finished_by_reason
                .iter()
                .filter_map(|(reason, split)| Some((reason.clone(), split.get(g)?)))
                .collect();
        }
        f.generated_since_start = self.generated_since_start.get(g);
        f.running = self.running.get(g);
        f.waiting = self.waiting.get(g);
        // Averaged across engines and servers: summing fractions would be meaningless.
        f.kv_usage = self.kv_usage.mean(g);
        f.prefix_hit_rate = match (self.prefix_hits.get(g), self.prefix_queries.get(g)) {
            (Some(hits), Some(queries)) if queries > 0.0 => Some(hits / queries),
            (Some(_), Some(_)) => None,
            _ => self.prefix_hit_rate_gauge.get(g).filter(|r| *r >= 0.0),
        };
        if let Some([accepted, draft_tokens, drafts]) = &self.spec {
            if let Some(accepted) = accepted.get(g) {
                let draft_tokens = draft_tokens.get(g).filter(|d| *d > 0.0);
                let drafts = drafts.get(g).filter(|d| *d > 0.0);
                f.spec_decode = Some(SpecDecode {
                    acceptance_rate: draft_tokens.map(|d| accepted / d),
                    mean_acceptance_length: drafts.map(|d| 1.0 + accepted / d),
                });
            }
        } else if let Some(rate) = self.spec_gauges.0.get(g) {
            f.spec_decode = Some(SpecDecode {
                acceptance_rate: Some(rate),
                mean_acceptance_length: self.spec_gauges.1.get(g),
            });
        }
        f.ttft = self.ttft.quantiles(g);
        f.itl = self.itl.quantiles(g);
        f.e2e = self.e2e.quantiles(g);
        f.tokens_per_request = ratio(&self.tokens_per_request, g);
        f.prompt_tokens_per_request = ratio(&self.prompt_tokens_per_request, g);
        f.tokens_per_request_since_start = ratio(&self.tokens_per_request_since_start, g);
        f.mean_latency = ratio(&self.mean_latency, g);
        f.running_mean = self.running_mean.get(g);
        f.tokens_per_s_per_request = match (f.generation.window, f.running_mean) {
            (Some(rate), Some(running)) if running > 0.0 => Some(rate / running),
            _ => None,
        };
        f.steady_rate = match (f.running_mean, f.mean_latency) {
            (Some(running), Some(latency)) if latency > 0.0 => Some(running / latency),
            _ => None,
        };
        // One server's queue; with several, judged on their sum at each end.
        let waiting = self
            .waiting_first
            .get(g)
            .zip(self.waiting_max.get(g))
            .zip(f.waiting)
            .map(|((first, max), last)| (first, max, last));
        f.load = load(&f, waiting);
        f
    }
}

/// The figures over `sources` and, with `by`, per value of that label (`url` groups by
/// server): every query asked once, grouped in the same query.
pub fn compute(
    sources: &[Source<'_>],
    window: TimeDelta,
    by: Option<&str>,
) -> (Figures, Vec<(String, Figures)>) {
    let query = Query::new(sources, by);
    let answers = Answers::ask(&query, window);
    let ids = query.groups.into_inner();
    // The DCGM series read once; the totals and each group's GPUs are folds of them.
    let readings = gpus::Readings::read(sources, window);
    let all_gpus = readings.gpus(None);
    let groups = match by {
        Some(by) => answers
            .groups(&ids)
            .into_iter()
            .map(|(name, g)| {
                let mut f = answers.figures(Some(g));
                // GPUs join a group by host: `--by instance` (host:port) and `--by url`.
                // Asked only when some page has GPUs: a fleet without DCGM pays nothing.
                f.gpus = all_gpus
                    .as_ref()
                    .and_then(|_| gpus::host_of_group(by, &name))
                    .and_then(|host| readings.gpus(Some(&host)));
                (name.to_string(), f)
            })
            .collect(),
        None => Vec::new(),
    };
    let mut total = answers.figures(None);
    total.gpus = all_gpus;
    total.engine_rates = engine_rates(sources, window);
    // By the name index (the generation metric of such a server), not by walking every
    // series of every tracker each interval.
    total.tokens_at_request_end = ENGINES
        .iter()
        .filter(|e| e.tokens_at_request_end)
        .any(|e| sources.iter().any(|s| first_present(s, e.generation).is_some()));
    let mut groups = groups;
    if total.tokens_at_request_end {
        // The same rule for the totals and every row, prompt tokens as generated ones
        // (TGI and llama.cpp count both when a request ends).
        for f in std::iter::once(&mut total).chain(groups.iter_mut().map(|(_, f)| f)) {
            f.tokens_at_request_end = true;
            for rate in [&mut f.generation, &mut f.prompt] {
                rate.ewma = None;
                rate.promql = None;
            }
        }
    }
    (total, groups)
}

/// Figures per value of `label` (`url` groups by server), for `--by`.
#[cfg(test)]
pub fn grouped(sources: &[Source<'_>], label: &str, window: TimeDelta) -> Vec<(String, Figures)> {
    compute(sources, window, Some(label)).1
}
