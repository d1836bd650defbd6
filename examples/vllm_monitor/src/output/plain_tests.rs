//! Plain mode's `!` lines and group labels: a fault's reason first and whole, a URL
//! decoded and cut in its middle, a restart's details kept, numbered groups' legends once.

use super::plain::{Plain, GOES_ON, MAX_WIDTH};
use super::Run;
use crate::figures::Figures;
use crate::interval::History;
use crate::interval::Snapshot;
use crate::target::{Event, EventKind};
use crate::target::{ServerRow, Target};

fn printed(urls: &[&str], show: impl FnOnce(&mut Plain<&mut Vec<u8>>)) -> Vec<String> {
    let servers: Vec<ServerRow> = urls
        .iter()
        .map(|u| ServerRow::of(&Target::new(u.to_string(), chrono::TimeDelta::minutes(1))))
        .collect();
    let history = History::default();
    let run = Run {
        started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        setup: "every 2s",
        interval: chrono::TimeDelta::seconds(2),
        ewma_tau: chrono::TimeDelta::seconds(30),
        warnings: &[],
        snapshot: None,
        history: &history,
        servers: &servers,
        events: &[],
    };
    let mut out = Vec::new();
    let mut plain = Plain::new(&mut out, false);
    plain.preamble(&run, &[]);
    show(&mut plain);
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn event(kind: EventKind, source: &str, message: &str) -> Event {
    Event {
        kind,
        at: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        source: source.into(),
        message: message.into(),
        alert: None,
    }
}

/// A `--federate` fault: the reason first and whole, then the URL decoded and cut in
/// its middle; every line within 120 columns.
#[test]
fn a_fault_line_starts_with_its_reason_and_shows_the_url_decoded() {
    let url = crate::args::federate_url("http://prometheus.example:9090");
    assert!(url.contains("%7B"), "{url}");
    let reason = "HTTP 404 Not Found: 404 page not found";
    let lines = printed(&[&url], |p| {
        p.event_line(12.0, &event(EventKind::Fault, &url, reason))
    });
    assert!(lines.iter().all(|l| l.chars().count() <= MAX_WIDTH), "{lines:#?}");
    assert!(
        lines[0].starts_with(&format!("! 12.0s fault {reason} · ")),
        "{lines:#?}"
    );
    let shown = lines.join(" ");
    assert!(
        lines[0].contains("http://prometheus.example:9090/federate?match[]="),
        "{lines:#?}"
    );
    assert!(shown.contains('…') && !shown.contains("%7B"), "{lines:#?}");
    // A reason too long for one line goes on to the next, whole.
    let long = format!(
        "never answered yet: {}",
        "TLS: the server's certificate is signed by an unknown CA (--ca-cert FILE trusts a private one)"
    );
    let lines = printed(&[&url], |p| {
        p.event_line(0.0, &event(EventKind::Fault, &url, &long))
    });
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&lines.join(" ")).contains(&words(&long)), "{lines:#?}");
    assert!(lines.len() >= 2 && lines[1].starts_with(GOES_ON), "{lines:#?}");
    assert!(lines.iter().all(|l| l.chars().count() <= MAX_WIDTH), "{lines:#?}");
}

/// A restart's details are kept (a second line), not cut at 120 columns.
#[test]
fn a_restart_line_keeps_its_details() {
    let url = "http://127.0.0.1:37767/metrics";
    let message = "server restarted (process started 21:02:53 UTC, was 20:02:43 UTC); 141 counter series reset (3 seen only by _created); rates count them from 0";
    let lines = printed(&[url], |p| {
        p.event_line(10.0, &event(EventKind::Restart, url, message))
    });
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].starts_with(&format!("! 10.0s restart {url}: server restarted")),
        "{lines:#?}"
    );
    assert!(lines[1].ends_with("rates count them from 0"), "{lines:#?}");
    assert!(lines.iter().all(|l| l.chars().count() <= MAX_WIDTH), "{lines:#?}");
}

/// Groups whose names collide when cut are numbered once for the run: a group keeps
/// its number when others come and go, and its legend line is printed once.
#[test]
fn numbered_groups_keep_their_number_and_their_legend_is_printed_once() {
    let names = [
        "x/aaaaaaaaaaaa1bbbbbbbbbbbb/y",
        "x/aaaaaaaaaaaa2bbbbbbbbbbbb/y",
        "x/aaaaaaaaaaaa3bbbbbbbbbbbb/y",
    ];
    let at = chrono::DateTime::from_timestamp(0, 0).unwrap();
    let snapshot = |present: &[usize]| Snapshot {
        elapsed: 1.0,
        at,
        window: crate::interval::WindowState {
            asked: chrono::TimeDelta::seconds(30),
            computed_at: at,
            newest_age_s: None,
            fresh_pages: 1,
        },
        figures: Figures::default(),
        servers: Vec::new(),
        groups: Some((
            "model_name".into(),
            present
                .iter()
                .map(|&i| (names[i].to_string(), Figures::default()))
                .collect(),
        )),
        progress: None,
        on_screen: None,
    };
    let lines = printed(&[], |p| {
        p.rows(&snapshot(&[0, 1]));
        p.rows(&snapshot(&[1, 2]));
        p.rows(&snapshot(&[0, 1, 2]));
    });
    let legend: Vec<&String> = lines.iter().filter(|l| l.starts_with("! model_name #")).collect();
    assert_eq!(
        legend,
        [
            &format!("! model_name #1 is {}", names[0]),
            &format!("! model_name #2 is {}", names[1]),
            &format!("! model_name #3 is {}", names[2]),
        ],
        "{lines:#?}"
    );
    let labels: Vec<&str> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(labels, ["#1", "#2", "#2", "#3", "#1", "#2", "#3"], "{lines:#?}");
}
