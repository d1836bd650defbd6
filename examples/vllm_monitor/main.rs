//! vllm_monitor: live throughput of vLLM (and SGLang, TGI) servers from their /metrics,
//! directly or through a Prometheus or VictoriaMetrics federation.
//!
//! ```text
//! vllm_monitor [--url URL]... [--federate BASE_URL] [--interval 2s] [--window 30s]
//!              [--duration D] [--by LABEL] [--target-requests N] [--json | --plain]
//!              [--plot FILE.svg] [--timeout D]
//! vllm_monitor --serve ADDR          # only run the simulated vLLM server
//! ```
//! Without `--url` it starts a simulated vLLM 0.33 server on 127.0.0.1 (a free port) and
//! monitors it for 20 s; the simulated server restarts halfway. `--help` says the rest.
//!
//! On a terminal it draws a dashboard (`q`, Esc or Ctrl-C quit); piped or with `--plain`
//! it prints one line per interval; `--json` prints one object per interval and event.
//! Every figure comes from promrate trackers: exact window rates, EWMA and PromQL
//! `rate()`, surviving restarts (counter resets, changed `_created` or
//! `process_start_time_seconds`), which are announced per server.
//!
//! Files: `args.rs` (the CLI), `scrape.rs` (one thread per URL), `target.rs` (a URL's
//! tracker, status and events), `figures.rs` (the figures of one set of trackers),
//! `interval.rs` (one interval's snapshot and the run's history), `render/` (dashboard,
//! plain, JSON, plot), `simulator.rs`.

mod args;
#[path = "../common/mod.rs"]
mod common;
mod figures;
mod interval;
mod render;
mod scrape;
mod simulator;
mod target;

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use clap::Parser as _;

use args::Args;
use interval::{History, Snapshot};
use render::plain::Plain;
use scrape::Message;
use target::{EventKind, Target};

/// How intervals are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Dashboard,
    Plain,
    Json,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(addr) = &args.serve {
        return match args.fleet {
            Some(instances) => serve_fleet(addr, instances, args.fleet_template.as_deref()),
            None => serve(addr),
        };
    }
    run(args)
}

/// Serves the `/federate` page of a fleet of simulated servers until stopped.
fn serve_fleet(addr: &str, instances: usize, template: Option<&str>) -> ExitCode {
    let template = match template {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("vllm_monitor: {path}: {e}");
                return ExitCode::from(2);
            }
        },
        None => simulator::Simulation::new(None).render_at(0.0),
    };
    let fleet = common::fleet::Fleet::new(&template, instances, Utc::now().timestamp_millis());
    let series = fleet.series();
    let generation = fleet.total_rate("vllm:generation_tokens_total");
    match simulator::serve_page(addr, move || fleet.page(Utc::now().timestamp_millis())) {
        Ok(bound) => {
            eprintln!(
                "serving {instances} simulated vLLM servers ({series} series, {generation:.1} generation tok/s in all) \
                 at http://{bound}/federate (Ctrl-C to stop)"
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("vllm_monitor: {e}");
            ExitCode::from(2)
        }
    }
}

fn serve(addr: &str) -> ExitCode {
    let restart_after = Some(300.0);
    let simulation = Arc::new(simulator::Simulation::new(restart_after));
    match simulator::serve(addr, simulation) {
        Ok(bound) => {
            eprintln!(
                "serving a {} at http://{bound}/metrics (Ctrl-C to stop)",
                simulator::describe(restart_after)
            );
            loop {
                std::thread::park();
            }
        }
        Err(e) => {
            eprintln!("vllm_monitor: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(mut args: Args) -> ExitCode {
    let mode = if args.json {
        Mode::Json
    } else if args.plain || !std::io::stdout().is_terminal() {
        Mode::Plain
    } else {
        Mode::Dashboard
    };
    let mut urls = args.urls();
    let mut setup = format!(
        "every {} · window {}",
        humantime::format_duration(args.interval),
        humantime::format_duration(args.window)
    );
    let mut notes = Vec::new();
    if urls.is_empty() {
        let restart_after = args.simulate_restart_after.as_secs_f64();
        let simulation = Arc::new(simulator::Simulation::new(Some(restart_after)));
        match simulator::serve("127.0.0.1:0", simulation) {
            Ok(bound) => {
                urls.push(format!("http://{bound}/metrics"));
                args.duration.get_or_insert(Duration::from_secs(20));
                setup += " · built-in simulator";
                notes.push(format!(
                    "no --url given: monitoring a {}",
                    simulator::describe(Some(restart_after))
                ));
            }
            Err(e) => {
                eprintln!("vllm_monitor: cannot start the simulated server: {e}");
                return ExitCode::from(2);
            }
        }
    }
    notes.push(format!("monitoring {} URL(s), {setup}", urls.len()));
    let by = args.group_label();
    let window = TimeDelta::from_std(args.window).unwrap_or(TimeDelta::seconds(30));
    let timeout = args.timeout.unwrap_or_else(|| {
        args.interval
            .max(Duration::from_secs(1))
            .min(Duration::from_secs(10))
    });

    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    {
        let tx = tx.clone();
        // Without a handler (e.g. one already installed) Ctrl-C simply ends the process.
        let _ = ctrlc::set_handler(move || {
            let _ = tx.send(Message::Quit);
        });
    }
    // The window's points and one interval more; totals since the start need none.
    let retention = window + TimeDelta::from_std(args.interval).unwrap_or(TimeDelta::seconds(2));
    let mut targets: Vec<Target> = urls.iter().map(|u| Target::new(u.clone(), retention)).collect();
    let mailbox = Arc::new(scrape::Mailbox::new(urls.len()));
    for (i, url) in urls.iter().enumerate() {
        let schedule = scrape::Schedule {
            interval: args.interval,
            timeout,
            max_page_bytes: args.max_page_mib.saturating_mul(1 << 20),
        };
        scrape::spawn(
            i,
            url.clone(),
            schedule,
            Arc::clone(&mailbox),
            tx.clone(),
            Arc::clone(&stop),
        );
    }

    let mut terminal = None;
    let mut plain = Plain::new(std::io::stdout(), args.target_requests.is_some());
    match mode {
        Mode::Dashboard => {
            // Raw mode and the alternate screen, restored on exit and by a panic hook.
            terminal = Some(ratatui::init());
            scrape::spawn_keys(tx.clone(), Arc::clone(&stop));
        }
        Mode::Plain => notes.iter().for_each(|n| plain.note(n)),
        Mode::Json => {}
    }
    drop(tx);

    let started = Instant::now();
    // Report a little after each scrape round starts, so the round's answers are in.
    let settle = (args.interval / 4).min(Duration::from_millis(500));
    let mut next_tick = started + args.interval + settle;
    let mut history = History::default();
    let mut events = Vec::new();
    let mut last: Option<Snapshot> = None;
    let mut closed = false;
    let since =
        |at: chrono::DateTime<Utc>| (at - Utc::now()).as_seconds_f64() + started.elapsed().as_secs_f64();
    loop {
        let now = Instant::now();
        if args
            .duration
            .is_some_and(|d| now.duration_since(started) >= d + settle)
        {
            break;
        }
        let mut redraw = false;
        if closed || plain.closed() {
            // stdout went away (piped into `head`): nothing more to say.
            break;
        }
        match rx.recv_timeout(next_tick.saturating_duration_since(now)) {
            Ok(Message::Scraped(url)) => {
                let Some((scrape, skipped)) = mailbox.take(url) else {
                    continue;
                };
                if skipped > 0 && targets[url].skipped == 0 && mode == Mode::Plain {
                    plain.note(&format!(
                        "{}: pages arrive faster than they are read; the newest is read, the others skipped (counted in the summary)",
                        targets[url].url
                    ));
                }
                targets[url].skipped += skipped;
                let announced = targets[url].ingest_page(scrape.at, &scrape.result);
                if let Ok(page) = scrape.result {
                    mailbox.recycle(url, page.body);
                }
                for event in announced {
                    let elapsed = since(event.at).max(0.0);
                    if event.kind == EventKind::Restart {
                        history.restarts.push(elapsed);
                    }
                    match mode {
                        Mode::Json => closed |= !emit(render::json::event(&event)),
                        Mode::Plain => plain.event(elapsed, &event),
                        Mode::Dashboard => redraw = true,
                    }
                    events.push((elapsed, event));
                }
            }
            Ok(Message::Redraw) => redraw = true,
            Ok(Message::Quit) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if Instant::now() >= next_tick {
            next_tick += args.interval;
            // Servers whose data is older than two intervals are left out of the sums.
            let fresh = Utc::now()
                - TimeDelta::from_std(args.interval * 2 + timeout).unwrap_or(TimeDelta::seconds(10));
            let elapsed = (started.elapsed() - settle).as_secs_f64();
            let snapshot = Snapshot::compute(
                &targets,
                window,
                fresh,
                by.as_deref(),
                args.target_requests,
                elapsed,
            );
            history.push(&snapshot);
            match mode {
                Mode::Json => closed |= !emit(render::json::interval(&snapshot, &targets)),
                Mode::Plain => plain.interval(&snapshot),
                Mode::Dashboard => redraw = true,
            }
            last = Some(snapshot);
        }
        if let (true, Some(terminal)) = (redraw, terminal.as_mut()) {
            let view = render::dashboard::View {
                setup: &setup,
                snapshot: last.as_ref(),
                history: &history,
                targets: &targets,
                events: &events,
            };
            if let Err(e) = terminal.draw(|frame| render::dashboard::draw(frame, &view)) {
                stop.store(true, Ordering::SeqCst);
                ratatui::restore();
                eprintln!("vllm_monitor: cannot draw: {e}");
                return ExitCode::from(1);
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    if terminal.take().is_some() {
        ratatui::restore();
        notes.iter().for_each(|n| plain.note(n));
        for (elapsed, e) in &events {
            plain.event(*elapsed, e);
        }
    }
    finish(
        &args,
        mode,
        &targets,
        last.as_ref(),
        &history,
        &events,
        started,
        &mut plain,
    )
}

/// Writes one line to stdout; false once stdout is closed (a reader such as `head` left).
fn emit(line: impl std::fmt::Display) -> bool {
    use std::io::Write as _;
    writeln!(std::io::stdout().lock(), "{line}").is_ok()
}

/// The summary, the plot, and the exit status.
#[allow(clippy::too_many_arguments)]
fn finish(
    args: &Args,
    mode: Mode,
    targets: &[Target],
    last: Option<&Snapshot>,
    history: &History,
    events: &[(f64, target::Event)],
    started: Instant,
    plain: &mut Plain<std::io::Stdout>,
) -> ExitCode {
    let elapsed = started.elapsed().as_secs_f64();
    let empty = figures::Figures::default();
    let f = last.map_or(&empty, |s| &s.figures);
    let restarts = events
        .iter()
        .filter(|(_, e)| e.kind == EventKind::Restart)
        .count();
    let errors: u64 = targets.iter().map(|t| t.errors).sum();
    let skipped: u64 = targets.iter().map(|t| t.skipped).sum();
    // The tokens since the start were counted between the first scrape and the last
    // interval's: the mean is over that span, not over the whole run.
    let first_scrape = targets.iter().filter_map(|t| t.since).min();
    let span_s = last
        .zip(first_scrape)
        .map(|(s, first)| (s.at - first).as_seconds_f64())
        .filter(|span| *span > 0.0);
    let mean_rate = f.generated_since_start.zip(span_s).map(|(g, span)| g / span);
    if mode == Mode::Json {
        let summary = serde_json::json!({
            "schema": render::json::SCHEMA,
            "event": "summary",
            "elapsed_s": elapsed,
            "generated_tokens": f.generated_since_start,
            "finished_requests": f.finished_since_start,
            "mean_generation_tokens_per_s": mean_rate,
            "restarts_announced": restarts,
            "scrape_errors": errors,
            "skipped_pages": skipped,
        });
        emit(summary);
    } else {
        // Skipped pages only when there were some: the line stays within 120 columns.
        let skipped = if skipped > 0 {
            format!(" · {skipped} page(s) skipped")
        } else {
            String::new()
        };
        plain.summary(&format!(
            "summary: {:.0} s · {} tokens ({} tok/s) · {} requests · {restarts} restart(s) · \
             {errors} scrape error(s){skipped}",
            elapsed,
            render::num(f.generated_since_start, 0, 12),
            render::num(mean_rate, 1, 12),
            render::num(f.finished_since_start, 0, 12),
        ));
    }
    if let Some(path) = &args.plot {
        match render::plot::write(path, history) {
            Ok(()) if mode != Mode::Json => plain.note(&format!("plot written to {path}")),
            Ok(()) => {}
            Err(e) => eprintln!("vllm_monitor: cannot write {path}: {e}"),
        }
    }
    if targets.iter().any(|t| t.since.is_some()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
