//! What an operator acts on besides throughput: the KV cache in tokens (used and total),
//! preemptions, admission rejections and aborts per second, requests waiting by reason,
//! the engine's sleep state, and the figures a server does not expose, by name.
//!
//! The KV cache's size is read once per interval from the few series that say it (one per
//! engine), and joined to each engine's usage by its `instance` and `engine` labels: a
//! fleet of 1,000 servers costs a map of 1,000 sizes, not a search per series.

use std::collections::HashMap;

use promrate::{Estimator, TrackedSeries, WindowRule};

use super::query::{ByValue, Query, Split};
use super::slo::Latency;
use super::{selector, Source, NAMES};
use crate::engines::{KvSize, Metric};

/// The capacity figures of a row (the totals or a group).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capacity {
    /// KV cache in use (usage fraction × size) and its size, in tokens.
    pub kv_used_tokens: Option<f64>,
    pub kv_total_tokens: Option<f64>,
    /// Per second over the window.
    pub preemptions_per_s: Option<f64>,
    pub admission_rejections_per_s: Option<f64>,
    pub aborts_per_s: Option<f64>,
    /// Requests waiting now, per reason the server gives (vLLM: capacity, deferred).
    pub waiting_by_reason: Vec<(String, f64)>,
    /// The engines' sleep state: `awake`, or each state with its number of engines when
    /// they differ (`awake (1), weights_offloaded (1)`).
    pub sleep_state: Option<String>,
    /// The figures of the row (by their JSON names: those above, the KV cache's usage, the
    /// latencies, the phases, the prefix cache's hit rate and speculative decoding) that no
    /// server among the sources exposes.
    pub not_exposed: Vec<&'static str>,
}

impl Capacity {
    /// Whether some server among the sources exposes the figure with this JSON name.
    pub fn exposes(&self, name: &str) -> bool {
        !self.not_exposed.contains(&name)
    }
}

/// The mean time per phase as `capacity.not_exposed` names it: queue, prefill, decode,
/// inference (`phase_mean_seconds` in JSON).
pub const PHASES: [&str; 4] = [
    "phase_mean_seconds.queue",
    "phase_mean_seconds.prefill",
    "phase_mean_seconds.decode",
    "phase_mean_seconds.inference",
];

/// The prefix cache's hit rate and speculative decoding as JSON and
/// `capacity.not_exposed` name them.
pub const PREFIX_HIT_RATE: &str = "prefix_cache_hit_rate";
pub const SPEC_DECODE: &str = "spec_decode";

/// Each engine's KV size in tokens, per source (by URL), by `instance` then `engine`.
type Sizes<'s> = HashMap<&'s str, HashMap<String, HashMap<String, f64>>>;

/// The size an entry gives for `series`, one of its anchor's series.
fn size_of(
    kind: &KvSize,
    series: &TrackedSeries,
    per_block: &HashMap<String, HashMap<String, f64>>,
) -> Option<f64> {
    let number = |label: &str| {
        series
            .label(label)?
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let tokens = match *kind {
        KvSize::InfoLabels {
            tokens,
            blocks,
            block_size,
            ..
        } => number(tokens).or_else(|| Some(number(blocks)? * number(block_size)?)),
        KvSize::Tokens(_) => series.last_value(),
        KvSize::Blocks { .. } => Some(series.last_value()? * lookup(per_block, series)?),
    };
    tokens.filter(|t| t.is_finite() && *t > 0.0)
}

/// The value of `series`' engine in `map`: by its `instance` and `engine` labels, else the
/// only engine of its instance (a cache said once for a server whose usage has labels).
fn lookup(map: &HashMap<String, HashMap<String, f64>>, series: &TrackedSeries) -> Option<f64> {
    let engines = map.get(series.label("instance").unwrap_or(""))?;
    match engines.get(series.label("engine").unwrap_or("")) {
        Some(v) => Some(*v),
        None if engines.len() == 1 => engines.values().next().copied(),
        None => None,
    }
}

/// `(instance, engine) -> value` of the admitted series of `name` in `source`.
fn by_engine(
    source: &Source<'_>,
    name: &str,
    value: impl Fn(&TrackedSeries) -> Option<f64>,
) -> HashMap<String, HashMap<String, f64>> {
    let mut map: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for series in source.series(&selector(name, None)) {
        if let Some(v) = value(series) {
            map.entry(series.label("instance").unwrap_or("").to_string())
                .or_default()
                .insert(series.label("engine").unwrap_or("").to_string(), v);
        }
    }
    map
}

/// The KV size entry a source's page answers to (the first whose anchor it has).
fn kv_size_of(source: &Source<'_>) -> Option<&'static KvSize> {
    NAMES
        .kv_size
        .iter()
        .find(|k| source.series(&selector(k.anchor(), None)).next().is_some())
}

/// Each source's KV sizes, by engine.
fn sizes<'s>(sources: &'s [Source<'s>]) -> Sizes<'s> {
    let mut all = Sizes::new();
    for source in sources {
        let Some(kind) = kv_size_of(source) else {
            continue;
        };
        let per_block = match *kind {
            KvSize::Blocks { tokens_per_block, .. } => {
                by_engine(source, tokens_per_block, TrackedSeries::last_value)
            }
            _ => HashMap::new(),
        };
        let sizes = by_engine(source, kind.anchor(), |s| size_of(kind, s, &per_block));
        all.insert(source.url, sizes);
    }
    all
}

/// The capacity queries of one interval, asked once.
pub(super) struct CapacityAnswers {
    kv_total: Split,
    kv_used: Split,
    preemptions: Split,
    rejections: Split,
    aborts: Split,
    waiting_by_reason: ByValue,
    sleep_states: ByValue,
    not_exposed: Vec<&'static str>,
}

impl CapacityAnswers {
    pub(super) fn ask(q: &Query<'_>, w: WindowRule) -> CapacityAnswers {
        let sizes = sizes(q.sources);
        let anchors: Vec<Metric> = NAMES
            .kv_size
            .iter()
            .map(|k| crate::engines::m(k.anchor()))
            .collect();
        let size = |s: &TrackedSeries, src: &Source<'_>| lookup(sizes.get(src.url)?, s);
        let used =
            |s: &TrackedSeries, src: &Source<'_>| Some(s.last_value()? * lookup(sizes.get(src.url)?, s)?);
        let has_size = !sizes.values().all(HashMap::is_empty);
        let has_usage = q.present(&NAMES.kv_usage);
        let exposed = [
            ("kv_used_tokens", has_size && has_usage),
            ("kv_total_tokens", has_size),
            ("kv_cache_usage", has_usage),
            ("preemptions_per_s", q.present(&NAMES.preemptions)),
            (
                "admission_rejections_per_s",
                q.present(&NAMES.admission_rejections),
            ),
            ("aborts_per_s", q.present(&NAMES.aborts)),
            ("waiting_by_reason", q.present(&NAMES.waiting_by_reason)),
            ("engine_sleep_state", q.present(&NAMES.sleep_state)),
            (Latency::Ttft.json_name(), q.present(&NAMES.ttft)),
            (Latency::Itl.json_name(), q.present(&NAMES.itl)),
            (Latency::E2e.json_name(), q.present(&NAMES.e2e)),
            (PHASES[0], q.present(&NAMES.queue_time)),
            (PHASES[1], q.present(&NAMES.prefill_time)),
            (PHASES[2], q.present(&NAMES.decode_time)),
            (PHASES[3], q.present(&NAMES.inference_time)),
            (
                PREFIX_HIT_RATE,
                q.present(&NAMES.prefix_hits) || q.present(&NAMES.prefix_hit_rate),
            ),
            (
                SPEC_DECODE,
                q.present(&NAMES.spec_accepted) || q.present(&NAMES.spec_rate),
            ),
        ];
        CapacityAnswers {
            kv_total: if has_size {
                q.sum(&anchors, &size)
            } else {
                Split::default()
            },
            kv_used: if has_size {
                q.sum(&NAMES.kv_usage, &used)
            } else {
                Split::default()
            },
            preemptions: q.figure(&NAMES.preemptions, Estimator::WindowRate, w),
            rejections: q.figure(&NAMES.admission_rejections, Estimator::WindowRate, w),
            aborts: q.figure(&NAMES.aborts, Estimator::WindowRate, w),
            waiting_by_reason: q.figure_by_value(&NAMES.waiting_by_reason, "reason", Estimator::Last, w),
            sleep_states: q.figure_by_value(&NAMES.sleep_state, "sleep_state", Estimator::Last, w),
            // With no page to read (an outage), nothing is known not to be exposed.
            not_exposed: exposed
                .iter()
                .filter(|(_, has)| !has && !q.sources.is_empty())
                .map(|(name, _)| *name)
                .collect(),
        }
    }

    /// The capacity figures over everything (`None`) or of one group.
    pub(super) fn capacity(&self, g: Option<usize>) -> Capacity {
        let mut states: Vec<(String, f64)> = self.sleep_states.get(g);
        states.retain(|(_, engines)| *engines >= 0.5);
        states.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let sleep_state = match states.as_slice() {
            [] => None,
            [(state, _)] => Some(state.to_string()),
            several => Some(
                several
                    .iter()
                    .map(|(state, n)| format!("{state} ({n:.0})"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        };
        Capacity {
            kv_used_tokens: self.kv_used.get(g),
            kv_total_tokens: self.kv_total.get(g),
            preemptions_per_s: self.preemptions.get(g),
            admission_rejections_per_s: self.rejections.get(g),
            aborts_per_s: self.aborts.get(g),
            waiting_by_reason: self.waiting_by_reason.get(g),
            sleep_state,
            not_exposed: self.not_exposed.clone(),
        }
    }
}
