//! Plain mode's `!` lines and group labels: a fault's reason first and whole, a URL
//! decoded and cut in its middle, a restart's details kept, numbered groups' legends once.

use super::plain::{Plain, GOES_ON, MAX_WIDTH};
use super::Run;
use crate::events::{Event, EventKind};
use crate::figures::Figures;
use crate::snapshot::History;
use crate::snapshot::Snapshot;
use crate::target::{ServerRow, Target};

fn printed(urls: &[&str], show: impl FnOnce(&mut Plain<&mut Vec<u8>>)) -> Vec<String> {
    printed_with(false, urls, show)
}

/// [`printed`], with `--details` as given.
fn printed_with(details: bool, urls: &[&str], show: impl FnOnce(&mut Plain<&mut Vec<u8>>)) -> Vec<String> {
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
        earlier: &crate::events::NO_EARLIER_EVENTS,
    };
    let mut out = Vec::new();
    let mut plain = Plain::new(&mut out, false).details(details);
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
    let snapshot = |present: &[usize]| by_model(&present.iter().map(|&i| names[i]).collect::<Vec<_>>());
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

/// An error body that would retitle the terminal (OSC 0), clear it (`ESC[2J`) and rub out
/// what came before (backspaces).
const HOSTILE: &str =
    "HTTP 500: \u{1b}]0;pwned\u{7}\u{1b}[2Jall good\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}\u{8}";

/// What a terminal would act on, if a line holds any.
fn raw_controls(lines: &[String]) -> Vec<char> {
    lines
        .iter()
        .flat_map(|l| l.chars())
        .filter(|c| c.is_control())
        .collect()
}

/// A fault's line and the summary's "never answered" line show a hostile body's control
/// characters written out, and write none of them to the terminal.
#[test]
fn a_hostile_error_body_is_shown_escaped_in_events_and_the_summary() {
    let url = "http://gpu1:8000/metrics";
    let lines = printed(&[url], |p| {
        p.event_line(1.0, &event(EventKind::Fault, url, HOSTILE));
        let summary = crate::summary::Summary {
            never_answered: vec![(url.to_string(), HOSTILE.to_string())],
            ..Default::default()
        };
        p.summary_lines(&summary);
    });
    assert_eq!(raw_controls(&lines), Vec::<char>::new(), "{lines:#?}");
    let escaped = "\\x1b]0;pwned\\x07\\x1b[2Jall good\\x08\\x08";
    assert!(lines[0].contains(escaped), "{lines:#?}");
    let never = lines.iter().filter(|l| l.starts_with("never answered")).count();
    assert_eq!(never, 1, "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.contains(escaped) && !l.starts_with('!')),
        "{lines:#?}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= MAX_WIDTH), "{lines:#?}");
}

/// A label value holding a newline is one `--by` row, its newline shown as `\n`, not a
/// row split over three lines.
#[test]
fn a_label_value_with_a_newline_is_one_row() {
    let lines = printed(&[], |p| p.rows(&by_model(&["a\nb\nc", "d"])));
    assert_eq!(raw_controls(&lines), Vec::<char>::new(), "{lines:#?}");
    // The header, the totals, then one row per group.
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines[2].trim_start().starts_with("a\\nb\\nc"), "{lines:#?}");
}

/// An interval's snapshot by `model_name`, one group per name, no figures.
fn by_model(names: &[&str]) -> Snapshot {
    let at = chrono::DateTime::from_timestamp(0, 0).unwrap();
    Snapshot {
        verdict: crate::figures::Verdict::default(),
        elapsed: 1.0,
        at,
        window: crate::snapshot::WindowState {
            asked: chrono::TimeDelta::seconds(30),
            computed_at: at,
            newest_age_s: None,
            fresh_pages: 1,
        },
        figures: Figures::default(),
        servers: Vec::new(),
        groups: Some((
            "model_name".into(),
            names
                .iter()
                .map(|n| (n.to_string(), Figures::default()))
                .collect(),
        )),
        progress: None,
        on_screen: None,
    }
}

/// Names of CJK characters (two columns each) and with an accent written apart (none)
/// are rows aligned by columns: the figures after them began a column early or late.
#[test]
fn rows_of_wide_and_combining_names_stay_aligned() {
    let lines = printed(&[], |p| p.rows(&by_model(&["cafe\u{301}", "通义千问", "llama"])));
    // The header, the totals, then one row per group: each as wide as the totals' row.
    let totals = crate::text::columns(&lines[1]);
    assert_eq!(lines.len(), 5, "{lines:#?}");
    for row in &lines[2..] {
        assert_eq!(crate::text::columns(row), totals, "{lines:#?}");
    }
}

/// With more groups than `--max-groups`, the busiest are rows and the rest one summed
/// row that says how many it holds, explained once.
#[test]
fn groups_beyond_the_limit_are_one_summed_row() {
    let at = chrono::DateTime::from_timestamp(0, 0).unwrap();
    let groups: Vec<(String, Figures)> = (0..1_000)
        .map(|i| {
            let mut f = Figures::default();
            f.generation.window = Some(f64::from(i));
            (format!("m{i:04}"), f)
        })
        .collect();
    let on_screen = crate::top::on_screen(&groups, 3);
    let snapshot = Snapshot {
        verdict: crate::figures::Verdict::default(),
        elapsed: 1.0,
        at,
        window: crate::snapshot::WindowState {
            asked: chrono::TimeDelta::seconds(30),
            computed_at: at,
            newest_age_s: None,
            fresh_pages: 1,
        },
        figures: Figures::default(),
        servers: Vec::new(),
        groups: Some(("model_name".into(), groups)),
        progress: None,
        on_screen: Some(on_screen),
    };
    let lines = printed(&[], |p| {
        p.rows(&snapshot);
        p.rows(&snapshot);
    });
    let rows: Vec<&String> = lines.iter().filter(|l| !l.starts_with('!')).collect();
    // Per interval: the totals, m0997..m0999 and the others' row (the header once).
    assert_eq!(rows.len(), 1 + 2 * 5, "{lines:#?}");
    assert!(rows[2].trim_start().starts_with("m0997"), "{lines:#?}");
    assert!(rows[5].trim_start().starts_with("+997"), "{lines:#?}");
    // 0 + 1 + ... + 996 tok/s.
    assert!(rows[5].contains("496506"), "{lines:#?}");
    let said: Vec<&String> = lines.iter().filter(|l| l.starts_with("! +997")).collect();
    assert_eq!(said.len(), 1, "{lines:#?}");
    assert!(
        said[0].contains("997 other model_name values summed"),
        "{lines:#?}"
    );
}

/// A figure no server exposes reads `n/a` in the row and the lines under it (`--details`,
/// `--slo`), one exposed but not known yet `-`: a TGI server has no KV cache usage, TTFT,
/// prefill or decode time.
#[test]
fn what_no_server_exposes_reads_n_a_and_what_is_unknown_a_dash() {
    use crate::figures::slo::{Attainment, Latency, Objective};
    let mut snapshot = by_model(&[]);
    snapshot.groups = None;
    let f = &mut snapshot.figures;
    f.capacity.not_exposed = vec![
        "kv_cache_usage",
        "ttft_seconds",
        "phase_mean_seconds.prefill",
        "phase_mean_seconds.decode",
    ];
    f.phases.queue = Some(0.004);
    f.slo = [Latency::Ttft, Latency::E2e]
        .map(|latency| Attainment {
            objective: Objective {
                latency,
                seconds: 0.5,
            },
            attained: None,
            exact: true,
        })
        .to_vec();
    let lines = printed_with(true, &[], |p| p.rows(&snapshot));
    let header = lines.iter().position(|l| l.contains("kv%")).expect("a header");
    let cell = |line: &str, name: &str| {
        // The header's column ends where its cell ends (cells are right-aligned).
        let end = lines[header].find(name).unwrap() + name.len();
        line[..end].rsplit(' ').next().unwrap().to_string()
    };
    let row = &lines[header + 1];
    assert_eq!(cell(row, "kv%"), "n/a", "{lines:#?}");
    assert_eq!(cell(row, "ttft95"), "n/a", "{lines:#?}");
    assert_eq!(cell(row, "itl95"), "-", "{lines:#?}");
    let under = |label: &str| {
        lines
            .iter()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("a {label} line in {lines:#?}"))
            .clone()
    };
    assert!(
        under("slo").ends_with("ttft≤500ms n/a · e2e≤500ms -"),
        "{lines:#?}"
    );
    assert!(
        under("phases").ends_with("queue 4ms · prefill n/a · decode n/a · inference -"),
        "{lines:#?}"
    );
}
