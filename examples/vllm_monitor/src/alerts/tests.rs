//! The rules' state over intervals of known figures, on a clock of whole seconds.

use chrono::{DateTime, TimeDelta, Utc};

use super::*;
use crate::figures::{Figures, Rate, Span};
use crate::snapshot::WindowState;
use crate::target::ServerRow;

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
}

/// Figures with this generation rate and a full window.
fn figures(generation: Option<f64>) -> Figures {
    Figures {
        window: crate::figures::Window {
            span: Some(Span {
                shortened: None,
                start: at(0),
                end: at(1),
                seconds: 1.0,
            }),
            shortened: None,
        },
        generation: Rate {
            window: generation,
            ..Rate::default()
        },
        ..Figures::default()
    }
}

/// The interval computed at `seconds`, with these figures, groups and URLs.
fn snapshot(
    seconds: i64,
    f: Figures,
    groups: Option<(&str, Vec<(&str, Figures)>)>,
    servers: Vec<ServerRow>,
) -> Snapshot {
    Snapshot {
        verdict: crate::figures::Verdict::default(),
        elapsed: seconds as f64,
        at: at(seconds),
        window: WindowState {
            asked: TimeDelta::seconds(10),
            computed_at: at(seconds),
            newest_age_s: Some(0.0),
            fresh_pages: 1,
        },
        figures: f,
        servers,
        groups: groups.map(|(label, rows)| {
            (
                label.to_string(),
                rows.into_iter().map(|(v, f)| (v.to_string(), f)).collect(),
            )
        }),
        progress: None,
        on_screen: None,
    }
}

fn alerts(rules: &[&str]) -> Alerts {
    Alerts::new(rules.iter().map(|r| r.parse().unwrap()).collect())
}

/// (seconds, kind, value, held) of each event.
type Seen = Vec<(i64, EventKind, f64, f64)>;

fn run(alerts: &mut Alerts, values: &[(i64, Option<f64>)]) -> Seen {
    let mut seen = Vec::new();
    for &(t, v) in values {
        let (events, _) = alerts.judge(&snapshot(t, figures(v), None, Vec::new()), true);
        for e in events {
            let facts = e.alert.as_ref().unwrap();
            seen.push((t, e.kind, facts.value, facts.held_s));
        }
    }
    seen
}

#[test]
fn a_rule_fires_after_exactly_its_duration_and_resolves() {
    let mut a = alerts(&["gen_tok_s < 1000 for 5s"]);
    let values: Vec<(i64, Option<f64>)> = (0..12)
        .map(|t| {
            (
                t,
                Some(if (2..9).contains(&t) {
                    900.0 + t as f64
                } else {
                    2000.0
                }),
            )
        })
        .collect();
    let seen = run(&mut a, &values);
    assert_eq!(
        seen,
        [
            (7, EventKind::AlertFiring, 907.0, 5.0),
            (9, EventKind::AlertResolved, 2000.0, 2.0),
        ]
    );
    let fired = a.fired();
    assert_eq!(fired.len(), 1);
    assert_eq!(
        (fired[0].times, fired[0].firing_s, fired[0].at_end),
        (1, 2.0, false)
    );
    assert_eq!(fired[0].rule, "gen_tok_s < 1000 for 5s");
}

#[test]
fn without_for_a_rule_fires_at_once_and_a_short_dip_never_fires() {
    let mut at_once = alerts(&["gen_tok_s <= 1000"]);
    let seen = run(
        &mut at_once,
        &[(0, Some(2000.0)), (1, Some(1000.0)), (2, Some(999.0))],
    );
    assert_eq!(seen, [(1, EventKind::AlertFiring, 1000.0, 0.0)]);
    assert!(at_once.fired()[0].at_end);
    assert_eq!(at_once.fired()[0].firing_s, 1.0, "firing up to the last interval");
    let mut patient = alerts(&["gen_tok_s < 1000 for 3s"]);
    let dips = [
        (0, Some(900.0)),
        (1, Some(900.0)),
        (2, Some(1500.0)),
        (3, Some(900.0)),
        (5, Some(900.0)),
    ];
    assert!(
        run(&mut patient, &dips).is_empty(),
        "the dip at 2 s restarts the wait"
    );
    assert!(patient.fired().is_empty());
}

/// An unknown figure (null) neither fires nor resolves, and a pending rule stays pending
/// through it; an interval without a new page judges nothing either.
#[test]
fn unknown_figures_neither_fire_nor_resolve() {
    let mut a = alerts(&["gen_tok_s < 1000 for 4s"]);
    let values = [
        (0, Some(500.0)),
        (1, None),
        (2, None),
        (3, None),
        (4, Some(500.0)),
        (5, None),
        (6, None),
        (7, Some(1500.0)),
    ];
    assert_eq!(
        run(&mut a, &values),
        [
            (4, EventKind::AlertFiring, 500.0, 4.0),
            (7, EventKind::AlertResolved, 1500.0, 3.0),
        ]
    );
    let mut stale = alerts(&["gen_tok_s < 1000"]);
    let s = snapshot(0, figures(Some(10.0)), None, Vec::new());
    let (events, _) = stale.judge(&s, false);
    assert!(events.is_empty(), "no new page: nothing judged");
    assert_eq!(stale.judge(&s, true).0.len(), 1);
}

/// Said once per rule, and only for an interval that has a window (the first interval
/// of a run has no rate yet, which is no news).
#[test]
fn a_figure_these_servers_do_not_show_is_said_once() {
    let mut a = alerts(&["slo_ttft < 0.95 for 1m", "gen_tok_s < 1"]);
    let mut first = figures(Some(5.0));
    first.window.span = None;
    let (_, notes) = a.judge(&snapshot(0, first, None, Vec::new()), true);
    assert!(notes.is_empty(), "{notes:?}");
    let mut all = Vec::new();
    for t in 1..4 {
        all.extend(
            a.judge(&snapshot(t, figures(Some(5.0)), None, Vec::new()), true)
                .1,
        );
    }
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(
        all[0].starts_with("alert slo_ttft < 0.95 for 1m: slo_ttft is not known for the totals"),
        "{}",
        all[0]
    );
}

/// With --by, the totals and each group have their own state; an event names its group.
#[test]
fn each_group_is_judged_apart() {
    let mut a = alerts(&["gen_tok_s < 1000 for 2s"]);
    let mut seen = Vec::new();
    for t in 0..6 {
        let slow = if t >= 1 { 400.0 } else { 1400.0 };
        let groups = vec![("a:8000", figures(Some(1400.0))), ("b:8000", figures(Some(slow)))];
        let s = snapshot(
            t,
            figures(Some(1400.0 + slow)),
            Some(("instance", groups)),
            Vec::new(),
        );
        for e in a.judge(&s, true).0 {
            seen.push((t, e.source.clone(), e.alert.unwrap().group));
        }
    }
    assert_eq!(
        seen,
        [(
            3,
            "instance=b:8000".to_string(),
            Some("instance=b:8000".to_string())
        )]
    );
    let fired = a.fired();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].group.as_deref(), Some("instance=b:8000"));
}

/// `scrape_errors` counts the URLs whose newest scrape failed, judged even when no page
/// came (that is when it matters); with `--by url`, per URL.
#[test]
fn scrape_errors_count_the_urls_that_failed() {
    use crate::figures::ServerKind;
    use crate::target::{Status, Target};
    let row = |url: &str, status: Status| {
        let mut r = ServerRow::of(&Target::new(url.into(), TimeDelta::minutes(1)));
        r.status = status;
        r
    };
    let ok = || Status::Ok(ServerKind(crate::engines::ENGINES[0]));
    let mut a = alerts(&["scrape_errors > 0 for 2s", "scrape_errors >= 2"]);
    let mut seen = Vec::new();
    for t in 0..5 {
        let b = match t {
            0 => Status::Waiting,
            1..=3 => Status::Failed("HTTP 404 Not Found".into()),
            _ => ok(),
        };
        let servers = vec![row("http://a/metrics", ok()), row("http://b/metrics", b)];
        let groups = vec![
            ("http://a/metrics", figures(None)),
            ("http://b/metrics", figures(None)),
        ];
        let s = snapshot(t, figures(None), Some(("url", groups)), servers);
        for e in a.judge(&s, false).0 {
            let facts = e.alert.unwrap();
            seen.push((t, e.kind, facts.rule, facts.group, facts.value));
        }
    }
    let rule = "scrape_errors > 0 for 2s".to_string();
    let b = Some("url=http://b/metrics".to_string());
    assert_eq!(
        seen,
        [
            (3, EventKind::AlertFiring, rule.clone(), None, 1.0),
            (3, EventKind::AlertFiring, rule.clone(), b.clone(), 1.0),
            (4, EventKind::AlertResolved, rule.clone(), None, 0.0),
            (4, EventKind::AlertResolved, rule, b, 0.0),
        ]
    );
}

#[test]
fn values_are_shown_in_their_units() {
    assert_eq!(value_text(Unit::Seconds, 0.5), "500ms");
    assert_eq!(value_text(Unit::Fraction, 0.931), "93.1%");
    assert_eq!(value_text(Unit::Count, 3.0), "3");
    assert_eq!(value_text(Unit::PerSecond, 812.25), "812.2");
    assert_eq!(value_text(Unit::Other("J"), 0.7281), "0.728 J");
}
