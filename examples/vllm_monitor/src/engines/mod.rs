//! The inference servers the monitor reads, as data: for each server, how its page is
//! recognised and which of its metrics gives each figure. The figures (`figures.rs`) only
//! read this table, so adding a server is one entry here and its test page in
//! `tests/data/engines/` (with its origin in that folder's `SOURCES.md`).
//!
//! A figure's metrics are alternatives: the first one a page has is used. An entry names
//! each figure by the server's current name; vLLM's older names come from one table of
//! renames (`aliases.rs`), tried after the current one. Names are compared with `:` and `_`
//! alike (the trackers normalise them), so `vllm:x` also finds vLLM's OpenMetrics spelling
//! `vllm_x`.

use promrate::Tracker;

/// One metric that gives a figure: its name, the factor that brings its values to the
/// figure's unit (every server so far writes the figures' own units: fractions, seconds;
/// one writing percent or milliseconds gets `scale: 0.01` or `0.001`), and a label a series
/// must carry to count (`status="success"` of a request counter that counts every outcome).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub scale: f64,
    pub only: Option<(&'static str, &'static str)>,
    /// Whether a histogram's `_sum` is the sum of its observations (Ray re-records bucket
    /// counts at the buckets' midpoints, so its sums are estimates: no mean is taken).
    pub exact_sum: bool,
}

/// `name`, in the figure's own unit.
pub(crate) const fn m(name: &'static str) -> Metric {
    Metric {
        name,
        scale: 1.0,
        only: None,
        exact_sum: true,
    }
}

impl Metric {
    /// A histogram whose `_sum` is an estimate.
    pub(crate) const fn estimated_sum(self) -> Metric {
        Metric {
            exact_sum: false,
            ..self
        }
    }

    /// Only the series whose label `name` is `value` count.
    pub(crate) const fn only(self, name: &'static str, value: &'static str) -> Metric {
        Metric {
            only: Some((name, value)),
            ..self
        }
    }
}

/// What the monitor knows of one inference server's page. Every list may be empty: a figure
/// the server does not expose is shown as `-`, never estimated from another.
#[derive(Debug)]
pub struct Engine {
    /// The short name in the monitor's output (`"vllm"`), as `--simulate` takes it.
    pub kind: &'static str,
    /// The server's own name, for people.
    pub title: &'static str,
    /// Metric-name prefixes that only this server writes: how its page is recognised.
    pub prefixes: &'static [&'static str],
    /// Generated tokens (a counter, or a histogram's `_sum`).
    pub generation: &'static [Metric],
    /// Prompt tokens.
    pub prompt: &'static [Metric],
    /// Prompt tokens by source (vLLM: computed, cached locally, transferred).
    pub prompt_by_source: &'static [Metric],
    /// Prompt tokens served from a prefix cache.
    pub prompt_cached: &'static [Metric],
    /// Finished requests.
    pub finished: &'static [Metric],
    /// Requests running and waiting (gauges).
    pub running: &'static [Metric],
    pub waiting: &'static [Metric],
    /// KV-cache usage as a fraction (gauge).
    pub kv_usage: &'static [Metric],
    /// Prefix-cache hits and queries (counters), or a hit-rate gauge.
    pub prefix_hits: &'static [Metric],
    pub prefix_queries: &'static [Metric],
    pub prefix_hit_rate: &'static [Metric],
    /// Speculative decoding: accepted and draft tokens, drafts (counters); or gauges of the
    /// acceptance rate and length.
    pub spec_accepted: &'static [Metric],
    pub spec_draft_tokens: &'static [Metric],
    pub spec_drafts: &'static [Metric],
    pub spec_rate: &'static [Metric],
    pub spec_length: &'static [Metric],
    /// Latency histograms, in seconds: time to first token, end to end, between tokens.
    pub ttft: &'static [Metric],
    pub e2e: &'static [Metric],
    pub itl: &'static [Metric],
    /// Per-request histograms of generated and prompt tokens.
    pub request_generation: &'static [Metric],
    pub request_prompt: &'static [Metric],
    /// Per-request histograms, in seconds, of the time spent queued, in prefill, in decode,
    /// and in the engine (prefill and decode): their means are the time per phase.
    pub queue_time: &'static [Metric],
    pub prefill_time: &'static [Metric],
    pub decode_time: &'static [Metric],
    pub inference_time: &'static [Metric],
    /// How the server says its KV cache's size in tokens.
    pub kv_size: &'static [KvSize],
    /// Preemptions (a counter): requests evicted from the batch to free KV cache.
    pub preemptions: &'static [Metric],
    /// Requests refused at admission (a counter).
    pub admission_rejections: &'static [Metric],
    /// Requests aborted (a counter; vLLM counts them among finished requests, by reason).
    pub aborts: &'static [Metric],
    /// Requests waiting, per value of the label `reason` (gauges).
    pub waiting_by_reason: &'static [Metric],
    /// The engine's sleep state: gauges, 1 for the current value of the label `sleep_state`.
    pub sleep_state: &'static [Metric],
    /// The token counters move only when a request ends (llama.cpp): a rate over less than
    /// a request's duration is a sawtooth, not the throughput.
    pub tokens_at_request_end: bool,
    /// The labels the server puts on these series (the simulator writes them).
    pub labels: &'static [(&'static str, &'static str)],
}

pub mod aliases;
mod catalogue;

pub use catalogue::{DCGM, ENGINES};

/// How a server says its KV cache's size, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvSize {
    /// An info gauge whose labels hold the size: `tokens` where the server has it, else
    /// `blocks` × `block_size` (vLLM's `cache_config_info`; V0's has no token count).
    InfoLabels {
        info: &'static str,
        tokens: &'static str,
        blocks: &'static str,
        block_size: &'static str,
    },
    /// A gauge of tokens (SGLang's `max_total_num_tokens`).
    Tokens(&'static str),
    /// A gauge of blocks and a gauge of tokens per block (TensorRT-LLM, Dynamo).
    Blocks {
        blocks: &'static str,
        tokens_per_block: &'static str,
    },
}

impl KvSize {
    /// The metric whose series each say one cache's size (one per engine).
    pub fn anchor(&self) -> &'static str {
        match *self {
            KvSize::InfoLabels { info, .. } => info,
            KvSize::Tokens(name) => name,
            KvSize::Blocks { blocks, .. } => blocks,
        }
    }

    /// Every metric it reads.
    pub fn names(&self) -> Vec<&'static str> {
        match *self {
            KvSize::Blocks {
                blocks,
                tokens_per_block,
            } => vec![blocks, tokens_per_block],
            other => vec![other.anchor()],
        }
    }
}

/// An engine with no figure, for the entries to fill in.
pub(crate) const NONE: Engine = Engine {
    kind: "",
    title: "",
    prefixes: &[],
    generation: &[],
    prompt: &[],
    prompt_by_source: &[],
    prompt_cached: &[],
    finished: &[],
    running: &[],
    waiting: &[],
    kv_usage: &[],
    prefix_hits: &[],
    prefix_queries: &[],
    prefix_hit_rate: &[],
    spec_accepted: &[],
    spec_draft_tokens: &[],
    spec_drafts: &[],
    spec_rate: &[],
    spec_length: &[],
    ttft: &[],
    e2e: &[],
    itl: &[],
    request_generation: &[],
    request_prompt: &[],
    queue_time: &[],
    prefill_time: &[],
    decode_time: &[],
    inference_time: &[],
    kv_size: &[],
    preemptions: &[],
    admission_rejections: &[],
    aborts: &[],
    waiting_by_reason: &[],
    sleep_state: &[],
    tokens_at_request_end: false,
    labels: &[],
};

impl Engine {
    /// The engine `--simulate` or the JSON output calls `kind` (the DCGM exporter too).
    pub fn named(kind: &str) -> Option<&'static Engine> {
        ENGINES.iter().copied().chain([&DCGM]).find(|e| e.kind == kind)
    }

    /// Recognises the server from the series a tracker holds: the first engine of
    /// [`ENGINES`] whose prefixes a series name has.
    pub fn detect(tracker: &Tracker) -> Option<&'static Engine> {
        // One walk: the best engine seen so far, and whether a DCGM series was (the last
        // choice: a GPU exporter is a server only when nothing else is).
        let mut best: Option<usize> = None;
        let mut gpus = false;
        for series in tracker.series() {
            let name = series.name();
            let found = ENGINES
                .iter()
                .position(|e| e.prefixes.iter().any(|p| name.starts_with(p)));
            match found {
                Some(0) => return Some(ENGINES[0]),
                Some(i) => best = Some(best.map_or(i, |b| b.min(i))),
                None => gpus = gpus || DCGM.prefixes.iter().any(|p| name.starts_with(p)),
            }
        }
        best.map(|i| ENGINES[i]).or(gpus.then_some(&DCGM))
    }
}

/// A figure's metrics over every engine, in [`ENGINES`] order, each followed by its older
/// names (`aliases.rs`): each page uses the first it has.
pub fn alternatives(figure: fn(&Engine) -> &'static [Metric]) -> Vec<Metric> {
    ENGINES
        .iter()
        .flat_map(|e| figure(e).iter())
        .flat_map(|metric| std::iter::once(*metric).chain(aliases::older_names(metric)))
        .collect()
}

/// The gauges of a ratio that older servers gave instead of the counters of `hits` (the
/// catalogue's counters): [`alternatives`] of a ratio figure, tried after the server's own.
pub fn replaced_ratio_gauges(hits: fn(&Engine) -> &'static [Metric]) -> Vec<Metric> {
    ENGINES
        .iter()
        .flat_map(|e| hits(e).iter())
        .flat_map(aliases::ratio_gauges)
        .collect()
}

/// Every list of metrics of an entry, for checks against its pages.
pub fn fields(e: &Engine) -> Vec<&'static [Metric]> {
    vec![
        e.generation,
        e.prompt,
        e.prompt_by_source,
        e.prompt_cached,
        e.finished,
        e.running,
        e.waiting,
        e.kv_usage,
        e.prefix_hits,
        e.prefix_queries,
        e.prefix_hit_rate,
        e.spec_accepted,
        e.spec_draft_tokens,
        e.spec_drafts,
        e.spec_rate,
        e.spec_length,
        e.ttft,
        e.e2e,
        e.itl,
        e.request_generation,
        e.request_prompt,
        e.queue_time,
        e.prefill_time,
        e.decode_time,
        e.inference_time,
        e.preemptions,
        e.admission_rejections,
        e.aborts,
        e.waiting_by_reason,
        e.sleep_state,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each engine's kind is unique (it names the engine in `--simulate` and JSON) and its
    /// prefixes are its own (recognition must not depend on luck).
    #[test]
    fn kinds_and_prefixes_are_unique() {
        for (i, a) in ENGINES.iter().enumerate() {
            assert!(!a.kind.is_empty() && !a.prefixes.is_empty(), "{}", a.title);
            for b in &ENGINES[i + 1..] {
                assert_ne!(a.kind, b.kind);
                for p in a.prefixes {
                    assert!(
                        !b.prefixes.iter().any(|q| p.starts_with(q) || q.starts_with(p)),
                        "{} and {} share the prefix {p}",
                        a.title,
                        b.title
                    );
                }
            }
            // Every engine gives the headline figure.
            assert!(!a.generation.is_empty(), "{}", a.title);
        }
    }
}

#[cfg(test)]
mod page_tests;
