//! Screens drawn on a TestBackend, as text rows.

use chrono::{DateTime, TimeDelta, Utc};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use ratatui::Terminal;

use super::draw;
use crate::events::Event;
use crate::simulator::tests::monitor;
use crate::simulator::Simulation;
use crate::snapshot::Run;
use crate::snapshot::{History, Snapshot};
use crate::target::{ServerRow, Target};

/// 20 s of the simulator (restart at 10 s), scraped every second, as a run shows it.
pub(super) struct Simulated {
    pub(super) servers: Vec<ServerRow>,
    pub(super) last: Snapshot,
    pub(super) history: History,
    pub(super) events: Vec<(f64, Event)>,
}

impl Simulated {
    fn new(by: Option<&str>) -> Simulated {
        let sim = Simulation::new(Some(10.0));
        let (target, snapshots, events) = monitor(&sim, 20, TimeDelta::seconds(8));
        let targets = [target];
        let mut history = History::default();
        let mut last = None;
        for (_, snapshot) in snapshots {
            let mut snapshot = snapshot;
            if let Some(label) = by {
                let sources: Vec<_> = targets
                    .iter()
                    .map(|t| crate::figures::Source {
                        tracker: &t.tracker,
                        at: t.last_ok.unwrap(),
                        url: &t.url,
                        retired: None,
                    })
                    .collect();
                let groups = crate::figures::grouped(&sources, label, TimeDelta::seconds(8));
                snapshot.groups = Some((label.to_string(), groups));
            }
            history.push(&snapshot);
            last = Some(snapshot);
        }
        history.restarts = events.iter().map(|(t, _)| *t).collect();
        Simulated {
            servers: targets.iter().map(ServerRow::of).collect(),
            last: last.unwrap(),
            history,
            events,
        }
    }

    pub(super) fn run(&self) -> Run<'_> {
        Run {
            interval: chrono::TimeDelta::seconds(1),
            ewma_tau: chrono::TimeDelta::seconds(8),
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s · window 8s · EWMA 8s · built-in simulator",
            warnings: &[],
            snapshot: Some(&self.last),
            history: &self.history,
            servers: &self.servers,
            events: &self.events,
            earlier: &crate::events::NO_EARLIER_EVENTS,
        }
    }
}

/// The screen after 20 s of the simulator (restart at 10 s), as text rows.
fn screen(width: u16, height: u16, by: Option<&str>) -> Vec<String> {
    rows_of(&Simulated::new(by).run(), width, height)
}

/// `run` drawn at `width` x `height`.
fn drawn(run: &Run<'_>, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| draw(frame, run)).unwrap();
    terminal.backend().buffer().clone()
}

/// `run` drawn at `width` x `height`, as text rows.
pub(super) fn rows_of(run: &Run<'_>, width: u16, height: u16) -> Vec<String> {
    let buffer = drawn(run, width, height);
    (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_string()).collect())
        .collect()
}

/// The colour `text` is drawn in (of its first character), where it is on the screen.
fn colour_of(buffer: &Buffer, text: &str) -> Option<Color> {
    let area = buffer.area;
    (0..area.height).find_map(|y| {
        let row: Vec<&str> = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        let first = text.chars().next()?.to_string();
        (0..row.len()).find_map(|x| {
            let here: String = row[x..].concat();
            (row[x] == first && here.starts_with(text)).then(|| buffer[(x as u16, y)].fg)
        })
    })
}

pub(super) fn has(rows: &[String], text: &str) -> bool {
    rows.iter().any(|r| r.contains(text))
}

const SPARK: &[char] = &['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// With a DCGM exporter among the URLs, the GPU panel fits the 100x30 layout beside every
/// other panel: GPUs and model, power, utilisation; tokens per GPU, joules per token and
/// the cost of a million tokens.
#[test]
fn the_gpu_panel_fits_the_designed_size() {
    use crate::gpus::GpuSettings;
    let sim = Simulation::new(None);
    let start =
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
    let mut targets = [
        crate::target::Target::new("sim".into(), TimeDelta::minutes(15)),
        crate::target::Target::new("dcgm".into(), TimeDelta::minutes(15)),
    ];
    let mut history = History::default();
    let mut last = None;
    for second in 0..=20i64 {
        let (t, at) = (second as f64, start + TimeDelta::seconds(second));
        crate::simulator::tests::scrape_with_gpus(&sim, &mut targets, t, at);
        let settings = GpuSettings {
            gpus: None,
            gpu_hour_price: Some(2.5),
        };
        let snapshot = Snapshot::at_with(&targets, TimeDelta::seconds(16), at, None, None, t, &settings);
        history.push(&snapshot);
        last = Some(snapshot);
    }
    let run = Run {
        interval: chrono::TimeDelta::seconds(1),
        ewma_tau: chrono::TimeDelta::seconds(8),
        started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        setup: "every 1s · window 16s",
        warnings: &[],
        snapshot: last.as_ref(),
        history: &history,
        servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
        events: &[],
        earlier: &crate::events::NO_EARLIER_EVENTS,
    };
    let rows = rows_of(&run, 100, 30);
    let text = rows.join("\n");
    for needle in [
        "GPUs",
        "2× NVIDIA H100 80GB HBM3",
        " W · util ",
        "tok/s per GPU",
        "J/token",
        "per M tokens",
        "KV cache",
        "Latency",
        "Servers",
        "ok (dcgm)",
    ] {
        assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
    }
}

#[test]
fn the_designed_size_shows_every_panel() {
    let rows = screen(100, 30, None);
    let text = rows.join("\n");
    for needle in [
        "Generation tokens/s",
        " tok/s",
        "EWMA",
        "rate()",
        "Requests",
        "steady",
        "Running / waiting",
        "KV cache",
        "prefix hit",
        "spec accept",
        "Latency",
        "TTFT",
        "ITL",
        "E2E",
        "Prompt",
        "ETA",
        "Servers",
        "ok (vllm)",
        "Events (1)",
        "restart ",
        // The restart's message to its end: the progress gives up its box for it.
        "count them from 0",
    ] {
        assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
    }
    assert!(text.chars().any(|c| SPARK.contains(&c)), "no sparkline:\n{text}");
    // The headline is the window rate, on the headline panel's first text row.
    let headline = rows.iter().find(|r| r.contains(" tok/s")).unwrap();
    let value: f64 = headline
        .trim_start_matches('│')
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((500.0..3000.0).contains(&value), "{headline}");
}

#[test]
fn a_federation_shows_a_line_and_a_row_per_instance() {
    use crate::target::tests::federation;
    let at = |s: i64| chrono::DateTime::from_timestamp(1_796_074_040 + s, 0).unwrap();
    let mut target = Target::new("http://prometheus:9090/federate".into(), TimeDelta::minutes(1));
    let mut events = Vec::new();
    for s in 0..3 {
        let without = (s == 2).then_some("127.0.0.1:39161");
        let new = target.ingest(at(s), Ok(federation(s, without)));
        events.extend(new.into_iter().map(|e| (s as f64, e)));
    }
    let targets = [target];
    let snapshot = Snapshot::at(
        &targets,
        TimeDelta::seconds(10),
        at(0),
        Some("instance"),
        None,
        2.0,
    );
    let history = History::default();
    let run = Run {
        interval: chrono::TimeDelta::seconds(1),
        ewma_tau: chrono::TimeDelta::seconds(8),
        started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        setup: "every 1s · window 10s",
        warnings: &[],
        snapshot: Some(&snapshot),
        history: &history,
        servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
        events: &events,
        earlier: &crate::events::NO_EARLIER_EVENTS,
    };
    let render = |height: u16| rows_of(&run, 100, height);
    // At 100x30 the stale instance comes first; taller, every instance has its line.
    let rows = render(30);
    let text = rows.join("\n");
    for needle in [
        "By instance",
        "instance 127.0.0.1:39161 stale",
        "stale     127.0.0.1:39161",
    ] {
        assert!(has(&rows, needle), "{needle:?} missing at 100x30:\n{text}");
    }
    // The stale instance has no row in the table: only the one on the page.
    let table_rows: Vec<&String> = rows
        .iter()
        .filter(|r| r.contains("127.0.0.1:") && !r.contains("instance ") && !r.contains("stale"))
        .collect();
    assert_eq!(table_rows.len(), 1, "{text}");
    assert!(table_rows[0].contains("127.0.0.1:43231"), "{text}");
    let tall = render(40);
    assert!(has(&tall, "instance 127.0.0.1:43231 ok"), "{}", tall.join("\n"));
}

#[test]
fn small_terminals_keep_the_headline_and_large_ones_grow_the_sparklines() {
    let small = screen(80, 24, None);
    let text = small.join("\n");
    for needle in ["Generation tokens/s", " tok/s", "KV cache", "Servers"] {
        assert!(has(&small, needle), "{needle:?} missing at 80x24:\n{text}");
    }
    let large = screen(200, 50, Some("engine"));
    let text = large.join("\n");
    for needle in ["By engine", "Events (1)", "restart ", "Progress"] {
        assert!(has(&large, needle), "{needle:?} missing at 200x50:\n{text}");
    }
    let spark_rows = |rows: &[String]| {
        rows.iter()
            .filter(|r| r.chars().any(|c| SPARK.contains(&c)))
            .count()
    };
    assert!(spark_rows(&large) > spark_rows(&screen(100, 30, None)), "{text}");
}

/// At 100x30 a restart's message is shown whole; one the events box cannot hold to its
/// end is cut with '…' where it stops (at a true 100x30 with a progress panel it lost
/// "count them from 0", with nothing said).
#[test]
fn an_event_message_is_whole_at_100x30_and_cut_with_an_ellipsis_below() {
    let sim = Simulation::new(Some(3.0));
    let (target, snapshots, events) = monitor(&sim, 5, TimeDelta::seconds(4));
    let message = &events[0].1.message;
    assert!(message.len() > 100, "a message longer than the box: {message}");
    let targets = [target];
    let history = History::default();
    let run = Run {
        interval: chrono::TimeDelta::seconds(1),
        ewma_tau: chrono::TimeDelta::seconds(8),
        started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        setup: "every 1s",
        warnings: &[],
        snapshot: snapshots.last().map(|(_, s)| s),
        history: &history,
        servers: &targets.iter().map(ServerRow::of).collect::<Vec<_>>(),
        events: &events,
        earlier: &crate::events::NO_EARLIER_EVENTS,
    };
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut = 0;
    for height in 24..=32 {
        let rows = rows_of(&run, 100, height);
        let Some(start) = rows.iter().position(|r| r.contains("Events (1)")) else {
            continue;
        };
        let end = start + 1 + rows[start + 1..].iter().position(|r| r.starts_with('└')).unwrap();
        let shown: Vec<&str> = rows[start + 1..end]
            .iter()
            .map(|r| r.trim_matches(|c: char| c == '│' || c.is_whitespace()))
            .collect();
        if words(&shown.join(" ")).contains(&words(message)) {
            assert!(!shown.concat().contains('…'), "{}", rows.join("\n"));
            continue;
        }
        assert!(height < 30, "{message:?} not shown whole:\n{}", rows.join("\n"));
        cut += 1;
        assert!(
            shown.last().is_some_and(|r| r.ends_with('…')),
            "{}",
            rows.join("\n")
        );
        let head: String = message.chars().take(20).collect();
        assert!(shown.concat().contains(&head), "{}", rows.join("\n"));
    }
    assert!(cut > 0, "some height cuts the message");
}

#[test]
fn warnings_head_the_title_line() {
    let history = History::default();
    let warnings = ["TLS certificates are not checked (--insecure)".to_string()];
    let run = Run {
        interval: chrono::TimeDelta::seconds(1),
        ewma_tau: chrono::TimeDelta::seconds(8),
        started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
        setup: "every 2s",
        warnings: &warnings,
        snapshot: None,
        history: &history,
        servers: &[],
        events: &[],
        earlier: &crate::events::NO_EARLIER_EVENTS,
    };
    let rows = rows_of(&run, 80, 24);
    assert!(rows[0].contains("not checked (--insecure)"), "{}", rows[0]);
}

/// The simulator scraped every second until `until` s, with its scrapes failing from 11 s
/// to 20 s (an outage): the URL's row, the snapshot at `until` over an 8 s window and the
/// events.
fn after_an_outage(until: i64) -> (Vec<ServerRow>, Snapshot, Vec<(f64, Event)>) {
    let sim = Simulation::new(None);
    let start = DateTime::<Utc>::from_timestamp_millis((sim.started_unix * 1000.0) as i64).unwrap();
    let mut target = Target::new("sim".into(), TimeDelta::minutes(15));
    let mut events = Vec::new();
    for second in 0..=until {
        let at = start + TimeDelta::seconds(second);
        let result = if (11..=20).contains(&second) {
            Err("connection refused".to_string())
        } else {
            Ok(crate::http::Page {
                body: sim.render_at(second as f64),
                format: promrate::Format::PrometheusText,
                content_type: None,
            })
        };
        let new = target.ingest(at, result);
        events.extend(new.into_iter().map(|e| (second as f64, e)));
    }
    let at = start + TimeDelta::seconds(until);
    let targets = [target];
    let snapshot = Snapshot::at(&targets, TimeDelta::seconds(8), at, None, None, until as f64);
    (targets.iter().map(ServerRow::of).collect(), snapshot, events)
}

/// The headline's title says what the window figures cover: the window asked normally,
/// and after an outage how much less and why, in a warning colour (the rates of the first
/// seconds back rest on a few pages only). The EWMA line says its time constant.
#[test]
fn the_headline_title_says_what_the_window_covers() {
    let simulated = Simulated::new(None);
    let buffer = drawn(&simulated.run(), 100, 30);
    let rows = rows_of(&simulated.run(), 100, 30);
    let text = rows.join("\n");
    assert!(has(&rows, "┌ Generation tokens/s · over 8s ─"), "{text}");
    assert!(has(&rows, "EWMA 8s"), "{text}");
    assert_ne!(colour_of(&buffer, "· over 8s"), Some(Color::Yellow), "{text}");

    let history = History::default();
    for (until, title) in [
        (21, " Generation tokens/s · one page since scrapes resumed "),
        (25, " Generation tokens/s · over 4.0s since scrapes resumed "),
    ] {
        let (servers, snapshot, events) = after_an_outage(until);
        let run = Run {
            interval: chrono::TimeDelta::seconds(1),
            ewma_tau: chrono::TimeDelta::seconds(8),
            started: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            setup: "every 1s · window 8s · EWMA 8s",
            warnings: &[],
            snapshot: Some(&snapshot),
            history: &history,
            servers: &servers,
            events: &events,
            earlier: &crate::events::NO_EARLIER_EVENTS,
        };
        for (width, height) in [(100, 30), (80, 24)] {
            let rows = rows_of(&run, width, height);
            let text = rows.join("\n");
            assert!(
                has(&rows, title),
                "{title:?} missing at {width}x{height}:\n{text}"
            );
            let buffer = drawn(&run, width, height);
            assert_eq!(
                colour_of(&buffer, "since scrapes resumed"),
                Some(Color::Yellow),
                "{text}"
            );
        }
    }
}

/// An interval without a new page (a scrape slower than the interval) repeats the previous
/// figures: the headline says what it waits for and how old the newest page is, the
/// load is "no new page", never "stalled", and the URL's line says its slow scrape; at
/// 80x24 as at 100x30.
#[test]
fn an_interval_without_a_new_page_says_it_waits_for_the_slow_scrape() {
    let mut simulated = Simulated::new(None);
    let waiting = "waiting for a page: the newest is 3.2 s old";
    for (width, height) in [(100, 30), (80, 24)] {
        let rows = rows_of(&simulated.run(), width, height);
        let text = rows.join("\n");
        assert!(
            !has(&rows, "waiting for a page") && !has(&rows, "slow scrape"),
            "{text}"
        );
    }
    simulated.last.window.fresh_pages = 0;
    simulated.last.window.newest_age_s = Some(3.2);
    // The stall judged before the slow scrape stays in the figures (signals.rs).
    simulated.last.verdict.stalled = true;
    for row in simulated.servers.iter_mut().chain(&mut simulated.last.servers) {
        row.scrape_s = Some(3.5);
    }
    for (width, height) in [(100, 30), (80, 24)] {
        let rows = rows_of(&simulated.run(), width, height);
        let text = rows.join("\n");
        for needle in [
            waiting,
            "no new page",
            "ok (vllm) · slow scrape 3.5s",
            "Generation tokens/s · over 8s",
        ] {
            assert!(
                has(&rows, needle),
                "{needle:?} missing at {width}x{height}:\n{text}"
            );
        }
        assert!(!text.to_lowercase().contains("stalled"), "{text}");
    }
    // A scrape within the interval is not slow.
    for row in &mut simulated.servers {
        row.scrape_s = Some(0.8);
    }
    assert!(!has(&rows_of(&simulated.run(), 100, 30), "slow scrape"));
}

/// An error body, an event and a `--by` label value that would retitle the terminal, clear
/// it and rub out words are shown with those characters written out: the servers' line,
/// the event log and the group's row say `\x1b]0;...`, and a value's newline is `\n` on
/// its one row (ratatui would otherwise drop them silently, and the row would lie).
#[test]
fn server_text_is_shown_with_its_control_characters_written_out() {
    let hostile = "HTTP 500: \u{1b}]0;pwned\u{7}\u{1b}[2Jok\u{8}\u{8}";
    let mut sim = Simulated::new(None);
    sim.servers[0].status = crate::target::Status::Failed(hostile.into());
    sim.events.push((
        20.0,
        Event {
            kind: crate::events::EventKind::Fault,
            at: Utc::now(),
            source: "gpu\u{1b}[2J1".into(),
            message: hostile.into(),
            alert: None,
        },
    ));
    let figures = sim.last.figures.clone();
    sim.last.groups = Some(("model_name".into(), vec![("llama\nmistral".into(), figures)]));
    let rows = rows_of(&sim.run(), 160, 40);
    let screen = rows.join("\n");
    assert!(has(&rows, "\\x1b]0;pwned\\x07\\x1b[2Jok\\x08\\x08"), "{screen}");
    assert!(has(&rows, "gpu\\x1b[2J1"), "{screen}");
    assert!(has(&rows, "llama\\nmistral"), "{screen}");
    assert!(
        !screen.contains("pwned\u{7}") && !has(&rows, "okmistral"),
        "{screen}"
    );
}

/// Over `--max-groups` groups, the table shows the busiest and one row summing the rest
/// that says how many it holds; its title counts every group when not all rows fit.
#[test]
fn groups_beyond_the_limit_are_one_row_that_says_how_many() {
    let mut sim = Simulated::new(None);
    let groups: Vec<(String, crate::figures::Figures)> = (0..200)
        .map(|i| {
            let mut f = sim.last.figures.clone();
            f.generation.window = Some(f64::from(i));
            (format!("model-{i:03}"), f)
        })
        .collect();
    sim.last.on_screen = Some(crate::top::on_screen(&groups, 5));
    sim.last.groups = Some(("model_name".into(), groups));
    let rows = rows_of(&sim.run(), 120, 50);
    let screen = rows.join("\n");
    assert!(has(&rows, "model-199") && has(&rows, "model-195"), "{screen}");
    assert!(!has(&rows, "model-194"), "{screen}");
    assert!(has(&rows, "+ 195 others"), "{screen}");
    // 0 + 1 + ... + 194 tok/s.
    assert!(has(&rows, "18915.0"), "{screen}");
    let short = rows_of(&sim.run(), 100, 30).join("\n");
    assert!(short.contains("of 200 shown"), "{short}");
}
