//! The simulator monitored as the run would be: support for the other modules' tests
//! (`monitor`, `scrape_with_gpus`) and the simulator's own.

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::events::EventKind;
use crate::figures::Load;
use crate::http::Page;
use crate::snapshot::Snapshot;
use crate::target::Target;

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
            content_type: None,
        };
        all_events.extend(target.ingest(at, Ok(page)).into_iter().map(|e| (t, e)));
        let snapshot = Snapshot::at(std::slice::from_ref(&target), window, at, None, Some(25_000), t);
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

pub type Monitored = (Target, Vec<(f64, Snapshot)>, Vec<(f64, crate::events::Event)>);

/// Every catalogued server, played by the simulator and scraped every second: each
/// figure its catalogue entry names is found, in the figure's unit, and the token and
/// request rates are the simulated ones within 1% (exactly the counters' increase over
/// the window, which is what the simulation counted).
#[test]
fn every_engine_gives_its_figures_at_the_simulated_rates() {
    let window = TimeDelta::seconds(PERIOD_S as i64);
    for engine in crate::engines::ENGINES {
        let sim = Simulation::new(None);
        let start = DateTime::<Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
        let mut target = Target::new("sim".into(), TimeDelta::minutes(15));
        let mut checked = 0;
        for second in 0..=40u32 {
            let t = f64::from(second);
            let at = start + TimeDelta::seconds(second.into());
            let body = if engine.kind == "vllm" {
                sim.render_at(t)
            } else {
                sim.render_engine_at(engine, t)
            };
            let page = Page {
                body,
                format: promrate::Format::PrometheusText,
                content_type: None,
            };
            target.ingest(at, Ok(page));
            assert_eq!(
                target.status.kind().map(|k| k.as_str()),
                Some(engine.kind),
                "{} recognised",
                engine.title
            );
            if t < 2.0 * PERIOD_S {
                continue;
            }
            let s = Snapshot::at(std::slice::from_ref(&target), window, at, None, None, t);
            check_engine_figures(engine, &sim, &s.figures, t);
            checked += 1;
        }
        assert_eq!(checked, 9, "{}", engine.title);
    }
}

/// The figures `f` of the simulated `engine` at `t` (a full window): see the test above.
fn check_engine_figures(
    engine: &crate::engines::Engine,
    sim: &Simulation,
    f: &crate::figures::Figures,
    t: f64,
) {
    let what = |figure: &str| format!("{}: {figure}", engine.title);
    // What the simulated server counted over the window, as the page shows it.
    let counted = |t: f64| {
        let state = sim.state_at(t);
        if engine.tokens_at_request_end {
            state.finished.floor() * TOKENS_PER_REQUEST
        } else {
            state.generated.floor()
        }
    };
    let want = (counted(t) - counted(t - PERIOD_S)) / PERIOD_S;
    close1(f.generation.window, want, &what("generation tokens/s"));
    if !engine.prompt.is_empty() {
        close1(
            f.prompt.window,
            want * PROMPT_TOKENS_PER_REQUEST / TOKENS_PER_REQUEST,
            &what("prompt tokens/s"),
        );
    }
    // vLLM's page splits them by reason, each rounded down.
    let finished_counted = |t: f64| {
        let f = sim.state_at(t).finished;
        match engine.kind {
            "vllm" => (f * 0.885).floor() + (f * 0.108).floor() + (f * 0.007).floor(),
            _ => f.floor(),
        }
    };
    let finished = (finished_counted(t) - finished_counted(t - PERIOD_S)) / PERIOD_S;
    match engine.finished.is_empty() {
        true => assert_eq!(f.requests.finished, None, "{}", what("no finished requests")),
        false => close1(f.requests.finished, finished, &what("finished requests/s")),
    }
    let state = sim.state_at(t);
    for (metrics, got, want, figure) in [
        (engine.running, f.in_flight.running, state.running, "running"),
        (engine.waiting, f.in_flight.waiting, state.waiting, "waiting"),
        (
            engine.kv_usage,
            f.in_flight.kv_usage,
            0.3 * state.running / CONCURRENCY,
            "kv usage",
        ),
    ] {
        match metrics.is_empty() {
            true => assert_eq!(got, None, "{}", what(figure)),
            false => assert!(
                (got.unwrap() - want).abs() < 1e-9,
                "{}: {got:?}, want {want}",
                what(figure)
            ),
        }
    }
    for (metrics, q, figure) in [
        (engine.ttft, f.ttft, "ttft"),
        (engine.e2e, f.e2e, "e2e"),
        (engine.itl, f.itl, "itl"),
    ] {
        // A median in seconds, whatever unit the server writes.
        assert_eq!(q.p50.is_some(), !metrics.is_empty(), "{}", what(figure));
        if let Some(p50) = q.p50 {
            assert!(p50 > 0.001 && p50 < 200.0, "{}: p50 {p50} s", what(figure));
        }
    }
    // Time per phase: the simulated means, where the server has the phase and its
    // sums are real (Ray's are estimates).
    for (metrics, got, want, phase) in [
        (engine.queue_time, f.phases.queue, model::QUEUE_S, "queue"),
        (
            engine.prefill_time,
            f.phases.prefill,
            model::TTFT_S - model::QUEUE_S,
            "prefill",
        ),
        (
            engine.decode_time,
            f.phases.decode,
            LATENCY_S - model::TTFT_S,
            "decode",
        ),
        (
            engine.inference_time,
            f.phases.inference,
            LATENCY_S - model::QUEUE_S,
            "inference",
        ),
    ] {
        match metrics.first().filter(|m| m.exact_sum) {
            Some(_) => close1(got, want, &what(phase)),
            None => assert_eq!(got, None, "{}", what(phase)),
        }
    }
    // The KV cache in tokens where the server says its size; used = usage × size.
    let c = &f.capacity;
    match engine.kv_size.is_empty() {
        true => assert_eq!(c.kv_total_tokens, None, "{}", what("kv size")),
        false => {
            assert_eq!(c.kv_total_tokens, Some(model::KV_TOKENS), "{}", what("kv size"));
            if let Some(usage) = f.in_flight.kv_usage {
                close1(c.kv_used_tokens, usage * model::KV_TOKENS, &what("kv used"));
            }
        }
    }
    for (metrics, got, figure) in [
        (engine.preemptions, c.preemptions_per_s, "preemptions_per_s"),
        (
            engine.admission_rejections,
            c.admission_rejections_per_s,
            "admission_rejections_per_s",
        ),
        (engine.aborts, c.aborts_per_s, "aborts_per_s"),
    ] {
        assert_eq!(got.is_some(), !metrics.is_empty(), "{}", what(figure));
        assert_eq!(
            c.not_exposed.contains(&figure),
            metrics.is_empty(),
            "{}",
            what(figure)
        );
    }
    // The cache panel's two figures: n/a where the page has neither a counter nor a gauge
    // for them (the simulated vLLM page has both; the other engines' simulated pages leave
    // them out, whatever the real servers expose).
    for (named, figure) in [
        (
            !engine.prefix_hits.is_empty() || !engine.prefix_hit_rate.is_empty(),
            "prefix_cache_hit_rate",
        ),
        (
            !engine.spec_accepted.is_empty() || !engine.spec_rate.is_empty(),
            "spec_decode",
        ),
    ] {
        let on_the_page = named && engine.kind == "vllm";
        assert_eq!(c.not_exposed.contains(&figure), !on_the_page, "{}", what(figure));
    }
    assert_eq!(
        c.waiting_by_reason.is_empty(),
        engine.waiting_by_reason.is_empty()
    );
    assert_eq!(c.sleep_state.is_some(), !engine.sleep_state.is_empty());
}

/// One scrape of the simulated server (`targets[0]`) and its DCGM exporter
/// (`targets[1]`), `t` seconds in, at `at`.
pub fn scrape_with_gpus(sim: &Simulation, targets: &mut [Target; 2], t: f64, at: DateTime<Utc>) {
    for (target, body) in targets.iter_mut().zip([sim.render_at(t), sim.render_dcgm_at(t)]) {
        let page = Page {
            body,
            format: promrate::Format::PrometheusText,
            content_type: None,
        };
        target.ingest(at, Ok(page));
    }
}

/// The simulated server and its simulated DCGM exporter, scraped every second: the GPUs
/// are counted once each, and joules per token, tokens per GPU and the cost per million
/// tokens are the hand computation from the pages' own counters, within 1%.
#[test]
fn joules_per_token_from_the_energy_counters_increase() {
    use crate::gpus::GpuSettings;
    let window = TimeDelta::seconds(PERIOD_S as i64);
    let sim = Simulation::new(None);
    let start = DateTime::<Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
    let mut targets = [
        Target::new("sim".into(), TimeDelta::minutes(15)),
        Target::new("dcgm".into(), TimeDelta::minutes(15)),
    ];
    let settings = GpuSettings {
        gpus: None,
        gpu_hour_price: Some(2.5),
    };
    let mut checked = 0;
    for second in 0..=40u32 {
        let t = f64::from(second);
        let at = start + TimeDelta::seconds(second.into());
        scrape_with_gpus(&sim, &mut targets, t, at);
        assert_eq!(targets[1].status.kind().map(|k| k.as_str()), Some("dcgm"));
        if t < PERIOD_S {
            continue;
        }
        let s = Snapshot::at_with(&targets, window, at, None, None, t, &settings);
        let f = &s.figures;
        let gpus = f.gpus.as_ref().expect("the DCGM page's GPUs");
        assert_eq!(
            (gpus.count, gpus.models.as_slice()),
            (2, &["NVIDIA H100 80GB HBM3".to_string()][..])
        );
        close1(gpus.power_w, sim.gpu_power_at(t), "power");
        // By hand: the energy counters' increase (whole mJ) over the tokens generated.
        let energy_j = |t: f64| (9.0e10 + sim.gpu_energy_until(t) / 2.0 * 1000.0).floor() * 2.0 / 1000.0;
        let tokens = |t: f64| sim.state_at(t).generated.floor();
        let (de, dg) = (
            energy_j(t) - energy_j(t - PERIOD_S),
            tokens(t) - tokens(t - PERIOD_S),
        );
        close1(f.per_token.joules_per_token, de / dg, "joules per token");
        // Energy is mean power × time: the counters are the power's integral.
        let mean_power = (0..1600)
            .map(|i| sim.gpu_power_at(t - PERIOD_S + (i as f64 + 0.5) * 0.01))
            .sum::<f64>()
            / 1600.0;
        close1(
            gpus.energy_window_j,
            mean_power * PERIOD_S,
            "energy = mean power × time",
        );
        let rate = f.generation.window.unwrap();
        close1(f.per_token.tokens_per_s_per_gpu, rate / 2.0, "tokens/s per GPU");
        close1(
            f.per_token.cost_per_million_tokens,
            2.5 * 2.0 / 3600.0 / rate * 1e6,
            "cost per million tokens",
        );
        checked += 1;
    }
    assert_eq!(checked, 25);
}

fn close1(got: Option<f64>, want: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: no figure"));
    assert!(
        (got - want).abs() <= 0.01 * want,
        "{what}: {got}, want {want} ± 1%"
    );
}

#[test]
fn per_request_figures_match_the_simulated_run_once_the_window_is_full() {
    // A window of one wave period: the mean running count is the configured one.
    let window = TimeDelta::seconds(PERIOD_S as i64);
    let sim = Simulation::new(None);
    let (_, snapshots, _) = monitor(&sim, 40, window);
    let mut checked = 0;
    for (t, s) in snapshots.iter().filter(|(t, _)| *t >= PERIOD_S) {
        let f = &s.figures;
        close(
            f.requests.tokens_per_request,
            TOKENS_PER_REQUEST,
            "tokens per request",
        );
        close(
            f.requests.prompt_tokens_per_request,
            PROMPT_TOKENS_PER_REQUEST,
            "prompt tokens per request",
        );
        close(
            f.in_flight.tokens_per_s_per_request,
            TOKENS_PER_S_PER_REQUEST,
            "tok/s per running request",
        );
        close(f.requests.mean_latency, LATENCY_S, "mean e2e latency");
        close(
            f.requests.steady_rate,
            CONCURRENCY / LATENCY_S,
            "Little's-law rate",
        );
        close(f.in_flight.running_mean, CONCURRENCY, "mean running");
        // The exact window rate is the simulated integral.
        let want = (sim.generated_until(*t) - sim.generated_until(t - PERIOD_S)) / PERIOD_S;
        close(f.generation.window, want, "generation tokens/s");
        assert_eq!(f.load, Load::Steady, "at {t} s");
        // ETAs: as a hand computation from the same interval's figures.
        let p = s.progress.unwrap();
        let remaining = 25_000.0 - f.since_start.finished.unwrap();
        close(
            p.eta_requests_s,
            remaining / f.requests.finished.unwrap(),
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
    assert_eq!(f.requests.finished, Some(0.0));
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

/// Each histogram family of a page, by name, with its bucket bounds as written.
fn bucket_bounds(page: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut families: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for entry in promrate::parse(page) {
        let Some(sample) = entry.expect("the page parses").into_sample() else {
            continue;
        };
        let (Some(family), Some(le)) = (sample.name().strip_suffix("_bucket"), sample.labels().get("le"))
        else {
            continue;
        };
        let bounds = families.entry(family.to_string()).or_default();
        let le = le.to_string();
        if !bounds.contains(&le) {
            bounds.push(le);
        }
    }
    families
}

/// The simulated vLLM 0.33 page has the real one's histograms, each with the real
/// bounds, so that an SLO threshold exact on a real server (`e2e=30s`) is exact on the
/// simulator too.
#[test]
fn the_simulated_histograms_have_the_real_vllm_0_33_bounds() {
    let path = format!(
        "{}/../../tests/data/vllm/vllm-0.33-v1-single-t0.prom",
        env!("CARGO_MANIFEST_DIR")
    );
    let real = bucket_bounds(&std::fs::read_to_string(&path).unwrap());
    let simulated = bucket_bounds(&Simulation::new(None).render_at(30.0));
    assert!(simulated.len() >= 9, "{simulated:?}");
    for (family, bounds) in &simulated {
        let want = real
            .get(family)
            .unwrap_or_else(|| panic!("{family} is not on the real page"));
        assert_eq!(bounds, want, "{family}");
    }
}

/// The simulated server's page served as OpenMetrics 2.0 (`--serve-as openmetrics-2.0`:
/// `st@` instead of `_created` families, histograms as composite values) gives the
/// monitor the same figures and events, every second through a restart, as the text page.
#[test]
fn the_page_as_openmetrics_2_gives_the_figures_of_the_text_page() {
    let sim = Simulation::new(Some(20.0));
    let start = DateTime::<Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
    let window = TimeDelta::seconds(10);
    // One URL for both, as the figures name their server.
    let mut text = Target::new("sim".into(), TimeDelta::minutes(15));
    let mut om2 = Target::new("sim".into(), TimeDelta::minutes(15));
    let (mut restarts, mut compared) = (0, 0);
    for second in 0..=40 {
        let at = start + TimeDelta::seconds(second);
        let body = sim.render_at(second as f64);
        let converted = super::openmetrics2::from_text(&body).expect("the page converts");
        assert!(
            converted.contains(" st@") && converted.contains("{count:"),
            "{converted}"
        );
        let page = |body: String, format| Page {
            body,
            format,
            content_type: None,
        };
        let events = |target: &mut Target, p: Page| -> Vec<String> {
            let mut kinds: Vec<String> = target
                .ingest(at, Ok(p))
                .into_iter()
                .map(|e| format!("{:?} {}", e.kind, e.message))
                .collect();
            kinds.sort();
            kinds
        };
        let from_text = events(&mut text, page(body, promrate::Format::PrometheusText));
        let from_om2 = events(&mut om2, page(converted, promrate::Format::OpenMetrics2));
        assert_eq!(from_om2, from_text, "events at {second} s");
        restarts += from_text.iter().filter(|e| e.starts_with("Restart")).count();
        let figures = |target: &Target| {
            let snapshot = Snapshot::at(
                std::slice::from_ref(target),
                window,
                at,
                None,
                None,
                second as f64,
            );
            format!("{:?}", snapshot.figures)
        };
        assert_eq!(figures(&om2), figures(&text), "figures at {second} s");
        compared += 1;
    }
    assert_eq!((restarts, compared), (1, 41));
}
