//! The operator's figures on the dashboard, drawn on a TestBackend: where each is at the
//! designed size, what gives way at 80x24, and the word for what a server does not expose.

use chrono::{DateTime, TimeDelta, Utc};

use super::operator;
use super::tests::{has, rows_of, Simulated};
use crate::simulator::tests::monitor;
use crate::simulator::Simulation;
use crate::snapshot::Run;
use crate::snapshot::{History, Snapshot};
use crate::target::{ServerRow, Target};

/// 30 s of a steady simulator (no restart), its last interval's figures computed with
/// `--slo ttft=100ms,itl=150ms,e2e=90s`: every operator's figure has a value.
fn steady_with_slo() -> Simulated {
    let sim = Simulation::new(None);
    let window = TimeDelta::seconds(16);
    let (target, snapshots, events) = monitor(&sim, 30, window);
    let mut history = History::default();
    for (_, snapshot) in &snapshots {
        history.push(snapshot);
    }
    let mut last = snapshots.last().unwrap().1.clone();
    let sources = [crate::figures::Source {
        tracker: &target.tracker,
        at: target.last_ok.unwrap(),
        url: &target.url,
        retired: None,
    }];
    let objectives = crate::figures::slo::parse_objectives("ttft=100ms,itl=150ms,e2e=90s").unwrap();
    let w = promrate::WindowRule::new(window)
        .slack(TimeDelta::seconds(1))
        .gap(TimeDelta::seconds(3));
    last.figures = crate::figures::compute_with(&sources, w, None, &objectives).0;
    Simulated {
        servers: vec![ServerRow::of(&target)],
        last,
        history,
        events,
    }
}

/// The operator's figures where they belong at the designed size: the objectives on the
/// Latency panel's title and each share in its `slo` column (`~` when interpolated), the
/// time per phase beside the quantiles, the KV cache in tokens on the cache's title,
/// preemptions under it, rejections and aborts under Requests, waiting by reason under
/// Running / waiting and the sleep state on its title, prompt tokens by source. At 80x24
/// each is shown whole or not at all: the objectives and shares stay, the phases give way.
#[test]
fn the_operators_figures_fit_at_100x30_and_80x24() {
    let s = steady_with_slo();
    let f = &s.last.figures;
    let kv = crate::output::operator::kv_tokens(f).unwrap();
    let shares: Vec<String> = f.slo.iter().map(crate::output::operator::share).collect();
    assert!(shares.iter().any(|s| s.ends_with('~')), "{shares:?}");
    let rows = rows_of(&s.run(), 100, 30);
    let text = rows.join("\n");
    let mut wanted = vec![
        " Latency · slo ttft≤100ms itl≤150ms e2e≤90s ".to_string(),
        format!(" Cache · {kv} "),
        " preemptions 0.00/s ".to_string(),
        " rejected 0.00/s · aborted ".to_string(),
        " capacity 0 · deferred 0 ".to_string(),
        " Running / waiting · awake ".to_string(),
        "cache hit ".to_string(),
        " · transferred ".to_string(),
    ];
    wanted.extend(shares.iter().map(|s| format!(" {s} ")));
    wanted.extend(operator::phase_lines(f));
    for needle in &wanted {
        assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
    }
    let rows = rows_of(&s.run(), 80, 24);
    let text = rows.join("\n");
    let mut wanted = vec![
        " slo ttft≤100ms itl≤150ms e2e≤90s ".to_string(),
        // The cache panel's title: " KV ... " where it is wide enough, the tokens alone
        // in the tight layout.
        format!(" {kv} "),
    ];
    wanted.extend(shares.iter().map(|s| format!(" {s} ")));
    for needle in &wanted {
        assert!(has(&rows, needle), "{needle:?} missing at 80x24:\n{text}");
    }
    assert!(
        !has(&rows, "prefill "),
        "no room for the phases at 80x24:\n{text}"
    );
}

/// A server that exposes none of them (llama.cpp) says so in a word where each would be.
#[test]
fn figures_a_server_does_not_expose_read_n_a() {
    let engine = crate::engines::Engine::named("llamacpp").unwrap();
    let sim = Simulation::new(None);
    let start = DateTime::<Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
    let mut target = Target::new("llamacpp".into(), TimeDelta::minutes(5));
    for second in 0..=4i64 {
        let page = crate::http::Page {
            body: sim.render_engine_at(engine, second as f64),
            format: promrate::Format::PrometheusText,
            content_type: None,
        };
        target.ingest(start + TimeDelta::seconds(second), Ok(page));
    }
    let targets = [target];
    let snapshot = Snapshot::at(
        &targets,
        TimeDelta::seconds(4),
        start + TimeDelta::seconds(4),
        None,
        None,
        4.0,
    );
    let history = History::default();
    let servers: Vec<ServerRow> = targets.iter().map(ServerRow::of).collect();
    let run = Run {
        interval: TimeDelta::seconds(1),
        ewma_tau: TimeDelta::seconds(4),
        started: DateTime::from_timestamp(0, 0).unwrap(),
        setup: "every 1s",
        warnings: &[],
        snapshot: Some(&snapshot),
        history: &history,
        servers: &servers,
        events: &[],
        earlier: &crate::events::NO_EARLIER_EVENTS,
    };
    let rows = rows_of(&run, 100, 30);
    for needle in [
        " Cache · size n/a ",
        " preemptions n/a ",
        " rejected n/a · aborted n/a ",
        " waiting by reason n/a ",
        " Running · sleep n/a ",
        "prefix hit n/a ",
    ] {
        assert!(has(&rows, needle), "{needle:?} missing:\n{}", rows.join("\n"));
    }
}
