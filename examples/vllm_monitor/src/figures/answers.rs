//! Every query of one interval asked once ([`Answers::ask`]), and the figures of the whole
//! or of one group assembled from the answers ([`Answers::figures`]).

use std::sync::Arc;

use super::capacity::CapacityAnswers;
use super::query::{ask, first_present, ratio, Buckets, ByValue, GroupIds, Query, Rated, Spans, Split};
use promrate::{Estimator, TrackedSeries, WindowRule};

use super::slo::{attainment, Attainment, Latency, Objective};
use super::{
    shortened_words, EngineRate, Figures, Load, PhaseMeans, PromptSources, Rate, RowContext, SinceStart,
    Source, SpecDecode, Window, NAMES,
};
use crate::engines::Metric;
use crate::gpus::PerToken;

/// Steady, ramping up or queueing, from the window's figures:
/// - the queue grows when the number waiting is at its highest of the window at its end,
///   and above where it started;
/// - a run ramps up when requests run but none has finished in the window, or they
///   finish at under 80% of the rate Little's law implies (judged on 10 requests or
///   more: fewer are too coarse to tell).
fn load(f: &Figures, waiting: Option<(f64, f64, f64)>) -> Load {
    let running = f.in_flight.running_mean.unwrap_or(0.0);
    if running <= 0.0 || f.generation.window.is_none() {
        return Load::Unknown;
    }
    if waiting.is_some_and(|(first, max, last)| last >= max && last >= first + 1.0) {
        return Load::QueueGrowing;
    }
    let finished_in_window = f.requests.finished_in_window.unwrap_or(0.0);
    match (f.requests.finished, f.requests.steady_rate) {
        (Some(finished), _) if finished <= 0.0 => Load::RampingUp,
        (Some(_), Some(_)) if finished_in_window < 10.0 => Load::Unknown,
        (Some(finished), Some(steady)) if finished < 0.8 * steady => Load::RampingUp,
        (Some(_), Some(_)) => Load::Steady,
        _ => Load::Unknown,
    }
}

/// Every query of one interval, asked once; [`Answers::figures`] assembles the figures of
/// the whole or of one group from them.
pub(super) struct Answers {
    spans: Spans,
    /// The sources and groups the generation rate had a value for, or refused as no
    /// counter (erratic).
    generating: Rated,
    generation: [Split; 3],
    prompt: [Split; 3],
    /// `(local_compute, local_cache_hit, external_kv_transfer)` of vLLM's prompt tokens by
    /// source, when the page has them.
    prompt_by_source: Option<[Split; 3]>,
    prompt_cached: Split,
    finished: Option<(Split, Split, Split)>,
    finished_by_reason: ByValue,
    generated_since_start: Split,
    /// Whether any source's newest page has the token counter.
    generation_on_newest_page: bool,
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
    /// Over the sources and groups with a generation rate only: what it is divided by.
    running_mean_generating: Split,
    waiting_first: Split,
    waiting_max: Split,
    /// `_sum` and `_count` of queue, prefill, decode and inference time.
    phases: [(Split, Split); 4],
    capacity: CapacityAnswers,
    /// The `--slo` objectives, and the buckets since the start of the latencies they bound.
    slo: Vec<Objective>,
    slo_since_start: Vec<(Latency, Buckets)>,
}

/// The attainment of `objective` in `buckets`.
fn attained(objective: Objective, buckets: &[promrate::histogram::Bucket]) -> Attainment {
    let share = attainment(buckets, objective.seconds);
    Attainment {
        objective,
        attained: share.map(|(s, _)| s),
        exact: share.is_some_and(|(_, exact)| exact),
    }
}

/// The window rate of vLLM's prompt tokens from each source, when the page has them.
fn prompt_rates_by_source(q: &Query<'_>, w: WindowRule) -> Option<[Split; 3]> {
    let from = |source: &str| {
        q.figure_where(
            &NAMES.prompt_by_source,
            ("source", source),
            Estimator::WindowRate,
            w,
        )
    };
    q.present(&NAMES.prompt_by_source).then(|| {
        [
            from("local_compute"),
            from("local_cache_hit"),
            from("external_kv_transfer"),
        ]
    })
}

/// The generation rate of each data-parallel engine (the `engine` label of vLLM and
/// LMDeploy), per server: a server is the `instance` label where a page has one (a
/// federation page), else the source's URL. Each server's engines in name order.
pub(super) fn engine_rates(sources: &[Source<'_>], w: WindowRule) -> Vec<EngineRate> {
    let mut rates = Vec::new();
    for source in sources {
        let Some(metric) = first_present(source, &NAMES.generation) else {
            continue;
        };
        let query = ask(&super::named(metric), Estimator::WindowRate, w, source).by(["instance", "engine"]);
        let Ok(answer) = source.tracker.evaluate(&query) else {
            continue;
        };
        for group in answer.groups {
            let (Some(engine), Ok(rate)) = (group.label("engine"), &group.value) else {
                continue;
            };
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
                rate: rate * metric.scale,
            });
        }
    }
    rates.sort_by(|a, b| (&a.server, &a.engine).cmp(&(&b.server, &b.engine)));
    rates
}

/// The finished-request rate per `finished_reason`.
fn finished_rates_by_reason(q: &Query<'_>, w: WindowRule) -> ByValue {
    q.figure_by_value(&NAMES.finished, "finished_reason", Estimator::WindowRate, w)
}

/// The finished-request rate, its increase over the window and since the start, and the
/// rate per `finished_reason`, where the servers count finished requests.
fn finished_answers(q: &Query<'_>, w: WindowRule) -> (Option<(Split, Split, Split)>, ByValue) {
    // Counted since the start even while the newest pages leave the counter out.
    let finished = q.counted(&NAMES.finished).then(|| {
        (
            q.figure(&NAMES.finished, Estimator::WindowRate, w),
            q.figure(&NAMES.finished, Estimator::WindowIncrease, w),
            q.figure(&NAMES.finished, Estimator::TotalIncrease, w),
        )
    });
    let finished_by_reason = match finished {
        Some(_) => finished_rates_by_reason(q, w),
        None => ByValue::default(),
    };
    (finished, finished_by_reason)
}

/// Speculative decoding's accepted tokens, draft tokens and drafts over the window, where
/// the servers count them.
fn spec_answers(q: &Query<'_>, w: WindowRule) -> Option<[Split; 3]> {
    q.present(&NAMES.spec_accepted).then(|| {
        [
            q.figure(&NAMES.spec_accepted, Estimator::WindowIncrease, w),
            q.figure(&NAMES.spec_draft_tokens, Estimator::WindowIncrease, w),
            q.figure(&NAMES.spec_drafts, Estimator::WindowIncrease, w),
        ]
    })
}

/// Waiting at the window's start and its highest (with the newest value: the queue's
/// course over the window).
fn waiting_edges(q: &Query<'_>, window: chrono::TimeDelta) -> (Split, Split) {
    let edge = |pick: fn(&[promrate::promql::Point]) -> Option<f64>| {
        move |s: &TrackedSeries, src: &Source<'_>| {
            let start_ms = (src.at - window).timestamp_millis();
            let points = s.gauge()?.points();
            let from = points.iter().position(|p| p.timestamp_ms > start_ms)?;
            pick(&points[from..])
        }
    };
    (
        q.sum(&NAMES.waiting, &edge(|p| Some(p.first()?.value))),
        q.sum(
            &NAMES.waiting,
            &edge(|p| p.iter().map(|p| p.value).reduce(f64::max)),
        ),
    )
}

/// The buckets since the start of each latency an `--slo` objective bounds.
fn slo_since_start(q: &Query<'_>, w: WindowRule, slo: &[Objective]) -> Vec<(Latency, Buckets)> {
    let mut latencies: Vec<Latency> = slo.iter().map(|o| o.latency).collect();
    latencies.dedup();
    latencies
        .into_iter()
        .map(|l| {
            (
                l,
                q.buckets(Answers::latency_names(l), Estimator::TotalIncrease, w),
            )
        })
        .collect()
}

impl Answers {
    pub(super) fn ask(q: &Query<'_>, w: WindowRule, slo: &[Objective]) -> Answers {
        let window = w.window;
        // Over the window; since the series' first point (the tracker keeps the total,
        // whatever the retention); the newest values.
        let (increase, since_start, last) = (
            Estimator::WindowIncrease,
            Estimator::TotalIncrease,
            Estimator::Last,
        );
        // Window rate (and which sources and groups it rated), EWMA and PromQL's rate().
        let (generation_window, spans, generating) =
            q.figure_rated(&NAMES.generation, Estimator::WindowRate, w);
        let (running_mean, running_mean_generating) =
            q.figure_and_among(&NAMES.running, Estimator::Average, w, &generating);
        let prompt_by_source = prompt_rates_by_source(q, w);
        let (finished, finished_by_reason) = finished_answers(q, w);
        let spec = spec_answers(q, w);
        let (waiting_first, waiting_max) = waiting_edges(q, window);
        let slo_since_start = slo_since_start(q, w, slo);
        Answers {
            phases: [
                &NAMES.queue_time,
                &NAMES.prefill_time,
                &NAMES.decode_time,
                &NAMES.inference_time,
            ]
            .map(|names| q.histogram_parts(names, increase, w)),
            capacity: CapacityAnswers::ask(q, w),
            slo: slo.to_vec(),
            slo_since_start,
            spans,
            generation: [
                generation_window,
                q.figure(&NAMES.generation, Estimator::Ewma, w),
                q.figure_of_counters(&NAMES.generation, Estimator::Rate, w, &generating),
            ],
            prompt: {
                let (window, _, prompting) = q.figure_rated(&NAMES.prompt, Estimator::WindowRate, w);
                [
                    window,
                    q.figure(&NAMES.prompt, Estimator::Ewma, w),
                    q.figure_of_counters(&NAMES.prompt, Estimator::Rate, w, &prompting),
                ]
            },
            prompt_by_source,
            // After the figures that read it.
            generating,
            prompt_cached: q.figure(&NAMES.prompt_cached, Estimator::WindowRate, w),
            finished,
            finished_by_reason,
            generated_since_start: q.figure(&NAMES.generation, since_start, w),
            generation_on_newest_page: q.present(&NAMES.generation),
            running: q.figure(&NAMES.running, last, w),
            waiting: q.figure(&NAMES.waiting, last, w),
            kv_usage: q.figure(&NAMES.kv_usage, last, w),
            prefix_hits: q.figure(&NAMES.prefix_hits, Estimator::WindowIncrease, w),
            prefix_queries: q.figure(&NAMES.prefix_queries, Estimator::WindowIncrease, w),
            prefix_hit_rate_gauge: q.figure(&NAMES.prefix_hit_rate, last, w),
            spec,
            spec_gauges: (
                q.figure(&NAMES.spec_rate, last, w),
                q.figure(&NAMES.spec_length, last, w),
            ),
            ttft: q.buckets(&NAMES.ttft, increase, w),
            itl: q.buckets(&NAMES.itl, increase, w),
            e2e: q.buckets(&NAMES.e2e, increase, w),
            tokens_per_request: q.histogram_parts(&NAMES.request_generation, increase, w),
            prompt_tokens_per_request: q.histogram_parts(&NAMES.request_prompt, increase, w),
            tokens_per_request_since_start: q.histogram_parts(&NAMES.request_generation, since_start, w),
            mean_latency: q.histogram_parts(&NAMES.e2e, increase, w),
            running_mean,
            running_mean_generating,
            waiting_first,
            waiting_max,
        }
    }

    /// Tokens a second per running request: `rate` over the running requests of the
    /// servers that have a generation rate (a server joining, or not rated, has running
    /// requests before it has one).
    fn per_running_request(&self, rate: Option<f64>, g: Option<usize>) -> Option<f64> {
        let running = self
            .running_mean_generating
            .get(g)
            .filter(|running| *running > 0.0);
        rate.zip(running).map(|(rate, running)| rate / running)
    }

    /// The histograms of a latency, as the catalogue names them.
    fn latency_names(latency: Latency) -> &'static [Metric] {
        match latency {
            Latency::Ttft => &NAMES.ttft,
            Latency::Itl => &NAMES.itl,
            Latency::E2e => &NAMES.e2e,
        }
    }

    /// The window's buckets of a latency.
    fn window_buckets(&self, latency: Latency) -> &Buckets {
        match latency {
            Latency::Ttft => &self.ttft,
            Latency::Itl => &self.itl,
            Latency::E2e => &self.e2e,
        }
    }

    /// The groups (by number, named in `ids`) that the main figures have, in name order.
    pub(super) fn groups(&self, ids: &GroupIds) -> Vec<(Arc<str>, usize)> {
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

    /// Prompt tokens/s by source, computed and cached: from vLLM's by-source counters
    /// where the page has them, else computed as the prompt rate less the cached one.
    fn prompt_parts(
        &self,
        g: Option<usize>,
        prompt: Option<f64>,
    ) -> (Option<PromptSources>, Option<f64>, Option<f64>) {
        if let Some([computed, local, external]) = &self.prompt_by_source {
            let sources = PromptSources {
                local_compute: computed.get(g),
                local_cache_hit: local.get(g),
                external_kv_transfer: external.get(g),
            };
            let cached = local.get(g).map(|l| l + external.get(g).unwrap_or(0.0));
            return (Some(sources), computed.get(g), cached);
        }
        match (prompt, self.prompt_cached.get(g)) {
            (Some(prompt), Some(cached)) => (None, Some(prompt - cached), Some(cached)),
            _ => (None, None, None),
        }
    }

    /// Prefix cache hits ÷ queries over the window, else the server's own ratio gauge.
    fn prefix_hit_rate(&self, g: Option<usize>) -> Option<f64> {
        match (self.prefix_hits.get(g), self.prefix_queries.get(g)) {
            (Some(hits), Some(queries)) if queries > 0.0 => Some(hits / queries),
            (Some(_), Some(_)) => None,
            _ => self.prefix_hit_rate_gauge.get(g).filter(|r| *r >= 0.0),
        }
    }

    /// Speculative decoding's acceptance, from the counters over the window, else from
    /// the server's gauges.
    fn spec_decode(&self, g: Option<usize>) -> Option<SpecDecode> {
        if let Some([accepted, draft_tokens, drafts]) = &self.spec {
            let accepted = accepted.get(g)?;
            let draft_tokens = draft_tokens.get(g).filter(|d| *d > 0.0);
            let drafts = drafts.get(g).filter(|d| *d > 0.0);
            return Some(SpecDecode {
                acceptance_rate: draft_tokens.map(|d| accepted / d),
                mean_acceptance_length: drafts.map(|d| 1.0 + accepted / d),
            });
        }
        let rate = self.spec_gauges.0.get(g)?;
        Some(SpecDecode {
            acceptance_rate: Some(rate),
            mean_acceptance_length: self.spec_gauges.1.get(g),
        })
    }

    /// The `--slo` attainments over the window.
    fn attainments(&self, g: Option<usize>) -> Vec<Attainment> {
        self.slo
            .iter()
            .map(|o| attained(*o, self.window_buckets(o.latency).of(g)))
            .collect()
    }

    /// What was counted since the start; the `--slo` attainments since then for the
    /// totals only (the summary's).
    fn since_start(&self, g: Option<usize>) -> SinceStart {
        let slo = match g {
            Some(_) => Vec::new(),
            None => self
                .slo
                .iter()
                .filter_map(|o| {
                    let (_, buckets) = self.slo_since_start.iter().find(|(l, _)| *l == o.latency)?;
                    Some(attained(*o, buckets.of(None)))
                })
                .collect(),
        };
        SinceStart {
            finished: self
                .finished
                .as_ref()
                .and_then(|(_, _, since_start)| since_start.get(g)),
            generated: self.generated_since_start.get(g),
            counting: self.generation_on_newest_page,
            tokens_per_request: ratio(&self.tokens_per_request_since_start, g),
            slo,
        }
    }

    /// The figures over everything (`None`) or of one group.
    pub(super) fn figures(&self, g: Option<usize>, context: RowContext<'_>, w: &WindowRule) -> Figures {
        // Where a server counts tokens when a request ends, the window rate is the
        // throughput; the EWMA and PromQL's extrapolation of a sawtooth are not, and are
        // left out, for generated and prompt tokens alike (TGI and llama.cpp count both).
        let smooth = !context.tokens_at_request_end;
        let rate = |r: &[Split; 3]| Rate {
            window: r[0].get(g),
            ewma: r[1].get(g).filter(|_| smooth),
            promql: r[2].get(g).filter(|_| smooth),
        };
        let span = self.spans.get(g);
        let mut f = Figures {
            window: Window {
                shortened: shortened_words(span.as_ref(), self.spans.no_window(g), w),
                span,
            },
            generation: rate(&self.generation),
            prompt: rate(&self.prompt),
            not_rated: self.generating.not_counters(g),
            tokens_at_request_end: context.tokens_at_request_end,
            ..Figures::default()
        };
        (
            f.prompt_parts.sources,
            f.prompt_parts.computed,
            f.prompt_parts.cached,
        ) = self.prompt_parts(g, f.prompt.window);
        if let Some((rate, in_window, _)) = &self.finished {
            f.requests.finished = rate.get(g);
            f.requests.finished_in_window = in_window.get(g);
            f.requests.finished_by_reason = self.finished_by_reason.get(g);
        }
        f.in_flight.running = self.running.get(g);
        f.in_flight.waiting = self.waiting.get(g);
        // Averaged across engines and servers: summing fractions would be meaningless.
        f.in_flight.kv_usage = self.kv_usage.mean(g);
        f.in_flight.prefix_hit_rate = self.prefix_hit_rate(g);
        f.spec_decode = self.spec_decode(g);
        f.ttft = self.ttft.quantiles(g);
        f.itl = self.itl.quantiles(g);
        f.e2e = self.e2e.quantiles(g);
        let [queue, prefill, decode, inference] = &self.phases;
        f.phases = PhaseMeans {
            queue: ratio(queue, g),
            prefill: ratio(prefill, g),
            decode: ratio(decode, g),
            inference: ratio(inference, g),
        };
        f.slo = self.attainments(g);
        f.since_start = self.since_start(g);
        f.capacity = self.capacity.capacity(g);
        f.requests.tokens_per_request = ratio(&self.tokens_per_request, g);
        f.requests.prompt_tokens_per_request = ratio(&self.prompt_tokens_per_request, g);
        f.requests.mean_latency = ratio(&self.mean_latency, g);
        f.in_flight.running_mean = self.running_mean.get(g);
        f.in_flight.tokens_per_s_per_request = self.per_running_request(f.generation.window, g);
        f.requests.steady_rate = match (f.in_flight.running_mean, f.requests.mean_latency) {
            (Some(running), Some(latency)) if latency > 0.0 => Some(running / latency),
            _ => None,
        };
        // One server's queue; with several, judged on their sum at each end.
        let waiting = self
            .waiting_first
            .get(g)
            .zip(self.waiting_max.get(g))
            .zip(f.in_flight.waiting)
            .map(|((first, max), last)| (first, max, last));
        f.load = load(&f, waiting);
        f.per_token = PerToken::of_row(
            context.gpu_settings,
            context.gpus.as_ref(),
            f.generation.window,
            context.total,
        );
        f.gpus = context.gpus;
        f.engine_rates = context.engine_rates;
        f
    }
}
