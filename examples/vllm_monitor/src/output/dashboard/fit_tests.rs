//! Every panel fits: drawn on a TestBackend at 80x24, 100x30 and 200x50, with and
//! without `--by` and `--target-requests`, the screen is read back and every figure's text
//! is found whole on it.

use chrono::{DateTime, TimeDelta, Utc};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::draw;
use crate::figures::Figures;
use crate::http::Page;
use crate::simulator::Simulation;
use crate::snapshot::Run;
use crate::snapshot::{History, Snapshot};
use crate::target::{ServerRow, Target};
use crate::text::{ms, num, percent};

const URLS: [&str; 2] = ["http://gpu1:8000/metrics", "http://gpu2:8000/metrics"];

/// Two simulated servers whose URLs differ in one character, scraped every second for
/// 40 s (requests finish from the start: the simulator plays a run in its steady state),
/// and the snapshot at the end over a 16 s window.
struct TwoServers {
    servers: Vec<ServerRow>,
    snapshot: Snapshot,
    history: History,
}

impl TwoServers {
    fn new(by: Option<&str>, target_requests: Option<u64>) -> TwoServers {
        let sims = [Simulation::new(None), Simulation::new(None).with_wave(0.0)];
        let start = DateTime::<Utc>::from_timestamp_millis((sims[0].started_unix * 1000.0) as i64).unwrap();
        let mut targets: Vec<Target> = URLS
            .iter()
            .map(|u| Target::new(u.to_string(), TimeDelta::minutes(15)))
            .collect();
        let mut history = History::default();
        let mut last = None;
        for second in 0..=40i64 {
            let at = start + TimeDelta::seconds(second);
            for (target, sim) in targets.iter_mut().zip(&sims) {
                let page = Page {
                    body: sim.render_at(second as f64),
                    format: promrate::Format::PrometheusText,
                    content_type: None,
                };
                target.ingest(at, Ok(page));
            }
            let snapshot = Snapshot::at(
                &targets,
                TimeDelta::seconds(16),
                at,
                by,
                target_requests,
                second as f64,
            );
            history.push(&snapshot);
            last = Some(snapshot);
        }
        TwoServers {
            servers: targets.iter().map(ServerRow::of).collect(),
            snapshot: last.unwrap(),
            history,
        }
    }

    fn run(&self) -> Run<'_> {
        Run {
            started: DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s · window 16s · EWMA 16s",
            interval: TimeDelta::seconds(1),
            ewma_tau: TimeDelta::seconds(16),
            warnings: &[],
            snapshot: Some(&self.snapshot),
            history: &self.history,
            servers: &self.servers,
            events: &[],
            earlier: &crate::events::NO_EARLIER_EVENTS,
        }
    }
}

fn rows_of(run: &Run<'_>, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| draw(frame, run)).unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

/// The text of every figure the panels show, as they write it.
fn figure_texts(f: &Figures) -> Vec<String> {
    let mut texts = vec![
        format!("{:.1} tok/s", f.generation.window.unwrap()),
        format!("EWMA 16s {}", num(f.generation.ewma, 1, 10)),
        num(f.generation.promql, 1, 10),
        format!("{} tok/s", num(f.in_flight.tokens_per_s_per_request, 2, 8)),
        format!("finished  {} req/s", num(f.requests.finished, 2, 8)),
        format!("steady    {} req/s", num(f.requests.steady_rate, 2, 8)),
        format!(
            "tok/req   {} gen · {} prompt",
            num(f.requests.tokens_per_request, 0, 5),
            num(f.requests.prompt_tokens_per_request, 0, 5)
        ),
        format!("e2e mean  {} s", num(f.requests.mean_latency, 1, 8)),
        format!("run {}", num(f.in_flight.running, 0, 6)),
        format!("wait {}", num(f.in_flight.waiting, 0, 6)),
        format!(" {}%", percent(f.in_flight.kv_usage)),
        format!("prefix hit {}%", percent(f.in_flight.prefix_hit_rate)),
        format!("prompt    {} tok/s", num(f.prompt.window, 1, 9)),
        format!("computed  {} tok/s", num(f.prompt_parts.computed, 1, 9)),
    ];
    let spec = f.spec_decode.expect("the simulator decodes speculatively");
    texts.push(format!("spec accept {}%", percent(spec.acceptance_rate)));
    texts.push(format!("spec length {}", num(spec.mean_acceptance_length, 2, 5)));
    for q in [&f.ttft, &f.itl, &f.e2e] {
        texts.extend([ms(q.p50), ms(q.p95), ms(q.p99)]);
    }
    texts
}

#[test]
fn every_figure_is_whole_at_80x24_100x30_and_200x50() {
    for (by, target) in [(None, None), (Some("url"), None), (Some("url"), Some(25_000))] {
        let two = TwoServers::new(by, target);
        let f = &two.snapshot.figures;
        assert!(
            f.requests.finished.is_some_and(|r| r > 0.0) && f.requests.finished_by_reason.len() >= 2,
            "a busy run"
        );
        for (width, height) in [(80, 24), (100, 30), (200, 50)] {
            let rows = rows_of(&two.run(), width, height);
            let screen = rows.join("\n");
            let whole = |text: &str| rows.iter().any(|r| r.contains(text));
            for text in figure_texts(f) {
                assert!(
                    whole(&text),
                    "{text:?} not whole at {width}x{height}, --by {by:?}:\n{screen}"
                );
            }
            // The busiest finish reason at least, whole, and the others whole or counted.
            let (reason, rate) = f
                .requests
                .finished_by_reason
                .iter()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            assert!(whole(&format!("{reason} {rate:.2}")), "{screen}");
            assert!(
                f.requests
                    .finished_by_reason
                    .iter()
                    .filter(|(_, v)| *v > 0.0)
                    .all(|(r, v)| whole(&format!("{r} {v:.2}")) || whole(" +")),
                "{screen}"
            );
            if let Some(p) = two.snapshot.progress {
                assert!(
                    whole(&format!("{}/25000 requests · ETA", num(Some(p.finished), 0, 9))),
                    "{screen}"
                );
            }
            if let Some((_, groups)) = &two.snapshot.groups {
                // A row per group at least at 80x24, both from 100x30 on, each named
                // distinctly (their URLs differ in one character) with its rate.
                let shown: Vec<&(String, Figures)> = groups
                    .iter()
                    .filter(|(url, g)| {
                        let name = url.trim_start_matches("http://").split(':').next().unwrap();
                        rows.iter().any(|r| {
                            r.starts_with('│')
                                && r.contains(name)
                                && r.contains(&num(g.generation.window, 1, 9))
                        })
                    })
                    .collect();
                let least = if width >= 100 { groups.len() } else { 1 };
                assert!(
                    shown.len() >= least,
                    "{} of {} rows at {width}x{height}:\n{screen}",
                    shown.len(),
                    groups.len()
                );
                if shown.len() < groups.len() {
                    assert!(
                        whole(&format!("{} of {} shown", shown.len(), groups.len())),
                        "{screen}"
                    );
                }
            }
            // Every server's line says its status whole.
            assert!(
                rows.iter().filter(|r| r.contains("ok (vllm)")).count() >= 1,
                "{screen}"
            );
        }
    }
}

/// The KV bar and its number never run into each other: a blank between them at every
/// width, the number whole.
#[test]
fn the_kv_bar_stands_beside_its_number() {
    for usage in [0.0, 0.374, 0.95, 1.0] {
        for width in [12u16, 20, 28, 60] {
            let line = super::panels::usage_bar(Some(usage), width);
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            assert_eq!(text.chars().count(), usize::from(width), "{text}");
            let number = format!(" {}%", percent(Some(usage)));
            assert!(text.ends_with(&number), "{text}");
            let bar = &text[..text.len() - number.len()];
            assert!(bar.chars().all(|c| c == '█' || c == '░'), "{text}");
        }
    }
}

/// A rule firing shows in the title line (which a small terminal keeps) and in the log,
/// with its value; once resolved, the title no longer says it.
#[test]
fn a_firing_alert_heads_the_title_and_shows_in_the_log() {
    let two = TwoServers::new(None, None);
    let rule: crate::alerts::Rule = "gen_tok_s < 5000 for 10s".parse().unwrap();
    let mut alerts = crate::alerts::Alerts::new(vec![rule]);
    let mut s = two.snapshot.clone();
    let mut events = Vec::new();
    for t in 0..=12 {
        s.window.computed_at = two.snapshot.window.computed_at + TimeDelta::seconds(t);
        s.elapsed = 40.0 + t as f64;
        events.extend(alerts.judge(&s, true).0.into_iter().map(|e| (s.elapsed, e)));
    }
    assert_eq!(events.len(), 1);
    let mut run = two.run();
    run.events = &events;
    for (width, height) in [(80, 24), (100, 30)] {
        let rows = rows_of(&run, width, height);
        let screen = rows.join("\n");
        assert!(rows[0].contains(" 1 alert(s) firing "), "{screen}");
        let value = format!(
            "gen_tok_s is {:.1}",
            two.snapshot.figures.generation.window.unwrap()
        );
        let log = rows
            .iter()
            .skip(1)
            .map(|r| r.trim_matches(|c| c == '│' || c == ' '))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(log.contains("alert_firing") && log.contains(&value), "{screen}");
    }
    s.figures.generation.window = Some(6000.0);
    s.window.computed_at += TimeDelta::seconds(1);
    let resolved: Vec<(f64, crate::events::Event)> =
        alerts.judge(&s, true).0.into_iter().map(|e| (53.0, e)).collect();
    let all: Vec<(f64, crate::events::Event)> = events.iter().cloned().chain(resolved).collect();
    run.events = &all;
    assert!(!rows_of(&run, 100, 30)[0].contains("firing"));
}

/// The `--by` table names groups as plain mode does: distinct even where every name is
/// too long for the column and they differ only far from both ends (numbered then), or
/// only in one character.
#[test]
fn group_names_on_the_dashboard_stay_distinct() {
    let base = TwoServers::new(None, None);
    for names in [
        vec![
            "http://gpu-node-17.cluster.example.com:8000/metrics",
            "http://gpu-node-18.cluster.example.com:8000/metrics",
        ],
        vec![
            "inference/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/model",
            "inference/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/model",
            "inference/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/model",
        ],
    ] {
        let mut snapshot = base.snapshot.clone();
        snapshot.groups = Some((
            "model_name".into(),
            names
                .iter()
                .map(|n| (n.to_string(), base.snapshot.figures.clone()))
                .collect(),
        ));
        let mut run = base.run();
        run.snapshot = Some(&snapshot);
        for (width, height) in [(100, 30), (200, 50)] {
            let rows = rows_of(&run, width, height);
            let start = rows.iter().position(|r| r.contains("By model_name")).unwrap();
            let labels: Vec<String> = rows[start + 2..start + 2 + names.len()]
                .iter()
                .map(|r| {
                    r.trim_start_matches('│')
                        .split("   ")
                        .next()
                        .unwrap()
                        .trim()
                        .to_string()
                })
                .collect();
            let mut distinct = labels.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), names.len(), "{labels:?}\n{}", rows.join("\n"));
        }
    }
}
