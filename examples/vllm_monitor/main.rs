//! vllm_monitor: live throughput of vLLM (and SGLang, TGI) servers from their /metrics.
//!
//! ```text
//! vllm_monitor [--url URL]... [--interval 2s] [--window 30s] [--duration D] [--by LABEL]
//!              [--target-requests N] [--json] [--plot FILE.svg] [--timeout D]
//! vllm_monitor --serve ADDR          # only run the simulated vLLM server
//! ```
//! Without `--url` it starts a simulated vLLM 0.33 server on 127.0.0.1 (a free port) and
//! monitors it for 20 s; the simulated server restarts halfway.
//!
//! Every interval it prints generation and prompt tokens/s (exact over the window and
//! EWMA), finished requests/s, running/waiting, KV-cache usage, prefix-cache hit rate,
//! speculative-decoding acceptance and TTFT / inter-token latency percentiles, summed over
//! engines and URLs. Restarts (counter resets, changed `_created` or
//! `process_start_time_seconds`) are announced; faults of one URL are shown on its line
//! and never stop the others.
//!
//! Exit status: 0 when the run ended (duration reached or Ctrl-C) after at least one
//! successful scrape; 1 when no scrape ever succeeded; 2 for bad arguments or when the
//! simulated server could not start.

#[path = "../common/mod.rs"]
mod common;
mod figures;
mod simulator;

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use figures::{Figures, ServerKind, Source};
use promrate::{Format, Parser, Tracker};
use serde_json::{json, Value};

const USAGE: &str =
    "usage: vllm_monitor [--url URL]... [--interval 2s] [--window 30s] [--duration D] [--by LABEL] \
[--target-requests N] [--json] [--plot FILE.svg] [--timeout D] | vllm_monitor --serve ADDR";

struct Args {
    urls: Vec<String>,
    interval: Duration,
    window: Duration,
    duration: Option<Duration>,
    by: Option<String>,
    target_requests: Option<u64>,
    json: bool,
    plot: Option<String>,
    timeout: Option<Duration>,
    serve: Option<String>,
}

/// `500ms`, `2s`, `5m`, `1h`, or plain seconds (`2.5`).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let value: f64 = number.parse().map_err(|_| format!("invalid duration '{text}'"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("invalid duration unit in '{text}' (use ms, s, m or h)")),
    };
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!("duration must be positive: '{text}'"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        urls: Vec::new(),
        interval: Duration::from_secs(2),
        window: Duration::from_secs(30),
        duration: None,
        by: None,
        target_requests: None,
        json: false,
        plot: None,
        timeout: None,
        serve: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--url" => args.urls.push(value("--url")?),
            "--interval" => args.interval = parse_duration(&value("--interval")?)?,
            "--window" => args.window = parse_duration(&value("--window")?)?,
            "--duration" => args.duration = Some(parse_duration(&value("--duration")?)?),
            "--timeout" => args.timeout = Some(parse_duration(&value("--timeout")?)?),
            "--by" => args.by = Some(value("--by")?),
            "--target-requests" => {
                let n = value("--target-requests")?;
                args.target_requests = Some(
                    n.parse()
                        .map_err(|_| format!("invalid --target-requests '{n}'"))?,
                );
            }
            "--json" => args.json = true,
            "--plot" => args.plot = Some(value("--plot")?),
            "--serve" => args.serve = Some(value("--serve")?),
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument '{other}'\n{USAGE}")),
        }
    }
    Ok(args)
}

/// What one scrape of one URL produced.
struct Scrape {
    url: usize,
    at: DateTime<Utc>,
    result: Result<common::Page, String>,
}

/// Scrapes `url` every `interval` on its own thread, so a slow server never delays others.
fn spawn_scraper(
    index: usize,
    url: String,
    interval: Duration,
    timeout: Duration,
    tx: mpsc::Sender<Scrape>,
    stop: Arc<AtomicBool>,
) {
    std::thread::spawn(move || {
        let agent = common::agent(timeout);
        let mut next = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            let result = common::fetch(&agent, &url);
            let scrape = Scrape {
                url: index,
                at: Utc::now(),
                result,
            };
            if tx.send(scrape).is_err() {
                return;
            }
            next += interval;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
    });
}

/// Per-URL state in the monitor.
struct Target {
    url: String,
    tracker: Tracker,
    since: Option<DateTime<Utc>>,
    last_ok: Option<DateTime<Utc>>,
    status: String,
    /// The format of the last page (servers may ignore our Accept header).
    format: Option<Format>,
    kind: Option<ServerKind>,
    process_start: Option<f64>,
    errors: u64,
    /// Successful scrapes so far, and the one that last showed a restart: resets seen in
    /// the scrape right after it belong to the same restart (series that reappear late).
    scrapes: u64,
    restart_scrape: Option<u64>,
}

impl Target {
    fn new(url: String) -> Self {
        Target {
            url,
            tracker: new_tracker(Format::PrometheusText),
            since: None,
            last_ok: None,
            status: "waiting for first scrape".into(),
            format: None,
            kind: None,
            process_start: None,
            errors: 0,
            scrapes: 0,
            restart_scrape: None,
        }
    }
}

fn new_tracker(format: Format) -> Tracker {
    // Lenient: unknown escapes kept as written, as the Prometheus server reads them.
    let mut tracker = Tracker::new([]);
    tracker
        .normalize_names(true)
        .parser(Parser::new(format).strict(false))
        .retention(TimeDelta::minutes(15));
    tracker
}

/// One announced event (restart, fault) for the text and JSON outputs.
struct Event {
    url: String,
    message: String,
}

/// Ingests one scrape; returns events worth announcing.
fn ingest(target: &mut Target, scrape: Scrape) -> Vec<Event> {
    let mut events = Vec::new();
    let page = match scrape.result {
        Ok(page) => page,
        Err(message) => {
            target.errors += 1;
            target.status = message;
            return events;
        }
    };
    target.format = Some(page.format);
    if page.format == Format::OpenMetrics {
        // The server ignored our Accept header; read what it sent.
        target
            .tracker
            .parser(Parser::new(Format::OpenMetrics).strict(false));
    }
    let report = match target.tracker.ingest(&page.body, scrape.at) {
        Ok(report) => report,
        Err(e) => {
            target.status = format!("scrape refused: {e}");
            return events;
        }
    };
    target.kind = ServerKind::detect(&target.tracker);
    target.status = match (&report.first_error, target.kind) {
        (Some(e), _) => {
            target.errors += 1;
            format!(
                "{} bad line(s), first at {}:{}: {}",
                report.bad_lines, e.line, e.column, e.kind
            )
        }
        (None, None) => {
            target.errors += 1;
            "no vLLM, SGLang or TGI metrics on this page".into()
        }
        (None, Some(kind)) => format!("ok ({})", kind.as_str()),
    };
    if target.kind.is_none() {
        return events;
    }
    target.since.get_or_insert(scrape.at);
    target.last_ok = Some(scrape.at);
    target.scrapes += 1;
    let start = target
        .tracker
        .get("process_start_time_seconds", &[])
        .and_then(|s| s.last_value());
    if let (Some(before), Some(now)) = (target.process_start, start) {
        if before != now {
            events.push(Event {
                url: target.url.clone(),
                message: format!("server restarted (process_start_time_seconds {before:.0} -> {now:.0})"),
            });
        }
    }
    target.process_start = start.or(target.process_start);
    let continues_restart = target.restart_scrape.is_some_and(|n| n + 1 == target.scrapes);
    if !report.resets.is_empty() || !events.is_empty() {
        target.restart_scrape = Some(target.scrapes);
    }
    let already_announced = continues_restart && events.is_empty();
    if !report.resets.is_empty() && !already_announced {
        let by_created = report
            .resets
            .iter()
            .filter(|r| r.cause == promrate::ResetCause::CreatedChanged)
            .count();
        let counters = format!(
            "{} counter series reset ({by_created} seen only by a changed _created time); rates count them from 0",
            report.resets.len()
        );
        match events.first_mut() {
            Some(event) => event.message = format!("{}; {counters}", event.message),
            None => events.push(Event {
                url: target.url.clone(),
                message: format!("restart detected: {counters}"),
            }),
        }
    }
    events
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn fmt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:.0}ms", v * 1000.0))
}

fn text_line(f: &Figures) -> String {
    let reasons: Vec<String> = f
        .finished_by_reason
        .iter()
        .filter(|(_, rate)| *rate > 0.0)
        .map(|(reason, rate)| format!("{reason} {rate:.2}"))
        .collect();
    let reasons = if reasons.is_empty() {
        String::new()
    } else {
        format!(" ({})", reasons.join(", "))
    };
    let mut line = format!(
        "gen {} tok/s (ewma {})  prompt {} tok/s (computed {}, cached {})  req/s {}{reasons}  run {} wait {}  kv {}",
        fmt_opt(f.generation.window, 1),
        fmt_opt(f.generation.ewma, 1),
        fmt_opt(f.prompt.window, 1),
        fmt_opt(f.prompt_computed, 1),
        fmt_opt(f.prompt_cached, 1),
        fmt_opt(f.finished, 2),
        fmt_opt(f.running, 0),
        fmt_opt(f.waiting, 0),
        f.kv_usage
            .map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0)),
    );
    if let Some(rate) = f.prefix_hit_rate {
        line += &format!("  prefix-hit {:.1}%", rate * 100.0);
    }
    if let Some(spec) = f.spec_decode {
        line += &format!(
            "  spec accept {} len {}",
            spec.acceptance_rate
                .map_or_else(|| "-".into(), |r| format!("{:.1}%", r * 100.0)),
            fmt_opt(spec.mean_acceptance_length, 2)
        );
    }
    line += &format!(
        "  ttft p50/p95 {}/{}  itl p50/p95 {}/{}",
        fmt_ms(f.ttft.p50),
        fmt_ms(f.ttft.p95),
        fmt_ms(f.itl.p50),
        fmt_ms(f.itl.p95)
    );
    line
}

fn rate_json(r: &figures::Rate) -> Value {
    json!({ "window": r.window, "ewma": r.ewma, "promql_rate": r.promql })
}

fn figures_json(f: &Figures) -> Value {
    let by_reason: serde_json::Map<String, Value> = f
        .finished_by_reason
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    json!({
        "generation_tokens_per_s": rate_json(&f.generation),
        "prompt_tokens_per_s": {
            "window": f.prompt.window, "ewma": f.prompt.ewma, "promql_rate": f.prompt.promql,
            "computed": f.prompt_computed, "cached": f.prompt_cached,
        },
        "requests_finished_per_s": { "total": f.finished, "by_reason": by_reason },
        "running": f.running,
        "waiting": f.waiting,
        "kv_cache_usage": f.kv_usage,
        "prefix_cache_hit_rate": f.prefix_hit_rate,
        "spec_decode": f.spec_decode.map(|s| json!({
            "acceptance_rate": s.acceptance_rate, "mean_acceptance_length": s.mean_acceptance_length,
        })),
        "ttft_seconds": { "p50": f.ttft.p50, "p95": f.ttft.p95 },
        "inter_token_latency_seconds": { "p50": f.itl.p50, "p95": f.itl.p95 },
        "generated_tokens_since_start": f.generated_since_start,
        "finished_requests_since_start": f.finished_since_start,
    })
}

fn write_plot(path: &str, points: &[(f64, Option<f64>, Option<f64>)]) -> Result<(), String> {
    use plotters::prelude::*;
    let max_t = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let max_y = points
        .iter()
        .flat_map(|p| [p.1, p.2])
        .flatten()
        .fold(1.0, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .caption("generation tokens/s", ("sans-serif", 20))
        .build_cartesian_2d(0.0..max_t, 0.0..max_y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("tokens/s")
        .draw()
        .map_err(|e| e.to_string())?;
    let window: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.0, p.1?))).collect();
    let ewma: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.0, p.2?))).collect();
    chart
        .draw_series(LineSeries::new(window, &BLUE))
        .map_err(|e| e.to_string())?
        .label("window rate")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(LineSeries::new(ewma, &RED))
        .map_err(|e| e.to_string())?
        .label("EWMA")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    if let Some(addr) = &args.serve {
        let simulation = Arc::new(simulator::Simulation::new(Some(300.0)));
        return match simulator::serve(addr, simulation) {
            Ok(bound) => {
                eprintln!(
                    "serving {} at http://{bound}/metrics (Ctrl-C to stop)",
                    simulator::describe(Some(300.0))
                );
                loop {
                    std::thread::park();
                }
            }
            Err(e) => {
                eprintln!("vllm_monitor: {e}");
                ExitCode::from(2)
            }
        };
    }
    run(args)
}

fn run(mut args: Args) -> ExitCode {
    let mut simulated = false;
    if args.urls.is_empty() {
        let restart_after = 10.0;
        let simulation = Arc::new(simulator::Simulation::new(Some(restart_after)));
        match simulator::serve("127.0.0.1:0", simulation) {
            Ok(bound) => {
                args.urls.push(format!("http://{bound}/metrics"));
                args.duration.get_or_insert(Duration::from_secs(20));
                simulated = true;
                if !args.json {
                    println!(
                        "no --url given: monitoring a {}",
                        simulator::describe(Some(restart_after))
                    );
                }
            }
            Err(e) => {
                eprintln!("vllm_monitor: cannot start the simulated server: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        // Without a handler (e.g. one already installed) Ctrl-C simply ends the process.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let window = TimeDelta::from_std(args.window).unwrap_or(TimeDelta::seconds(30));
    let timeout = args.timeout.unwrap_or_else(|| {
        args.interval
            .max(Duration::from_secs(1))
            .min(Duration::from_secs(10))
    });
    let (tx, rx) = mpsc::channel();
    let mut targets: Vec<Target> = args.urls.iter().cloned().map(Target::new).collect();
    for (i, url) in args.urls.iter().enumerate() {
        spawn_scraper(
            i,
            url.clone(),
            args.interval,
            timeout,
            tx.clone(),
            Arc::clone(&stop),
        );
    }
    drop(tx);
    if !args.json {
        println!(
            "monitoring {} URL(s) every {:?}, rates over {:?}{}",
            targets.len(),
            args.interval,
            args.window,
            if simulated { " (built-in simulator)" } else { "" }
        );
    }
    let progress = args.target_requests.filter(|_| !args.json).map(|n| {
        let bar = indicatif::ProgressBar::new(n);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} requests, ETA {msg}")
                .expect("a valid template"),
        );
        bar
    });
    let started = Instant::now();
    // Report a little after each scrape round starts, so the round's answers are in.
    let settle = (args.interval / 4).min(Duration::from_millis(500));
    let mut next_tick = started + args.interval + settle;
    let mut plot_points = Vec::new();
    let mut restarts = 0u64;
    let mut last_figures = Figures::default();
    let stdout = std::io::stdout();
    loop {
        let now = Instant::now();
        if stop.load(Ordering::SeqCst)
            || args
                .duration
                .is_some_and(|d| now.duration_since(started) >= d + settle)
        {
            break;
        }
        let mut events = Vec::new();
        match rx.recv_timeout(next_tick.saturating_duration_since(now)) {
            Ok(scrape) => {
                let target = &mut targets[scrape.url];
                events.extend(ingest(target, scrape));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        for event in &events {
            restarts += 1;
            if args.json {
                let _ = writeln!(
                    stdout.lock(),
                    "{}",
                    json!({ "event": "restart", "url": event.url, "message": event.message })
                );
            } else {
                let line = format!("  ! {}: {}", event.url, event.message);
                match &progress {
                    Some(bar) => bar.suspend(|| println!("{line}")),
                    None => println!("{line}"),
                }
            }
        }
        if Instant::now() < next_tick {
            continue;
        }
        next_tick += args.interval;
        let elapsed = (started.elapsed() - settle).as_secs_f64();
        // Servers whose data is older than two intervals are left out of the sums.
        let fresh =
            Utc::now() - TimeDelta::from_std(args.interval * 2 + timeout).unwrap_or(TimeDelta::seconds(10));
        let sources: Vec<Source<'_>> = targets
            .iter()
            .filter(|t| t.last_ok.is_some_and(|at| at >= fresh))
            .map(|t| Source {
                tracker: &t.tracker,
                at: t.last_ok.unwrap_or_else(Utc::now),
                since: t.since.unwrap_or_else(Utc::now),
                url: &t.url,
                only: None,
            })
            .collect();
        let f = Figures::compute(&sources, window);
        let groups = args
            .by
            .as_deref()
            .map(|label| figures::grouped(&sources, label, window));
        plot_points.push((elapsed, f.generation.window, f.generation.ewma));
        let eta = match (args.target_requests, f.finished_since_start, f.finished) {
            (Some(target), Some(done), Some(rate)) if rate > 0.0 => {
                Some(((target as f64 - done).max(0.0)) / rate)
            }
            _ => None,
        };
        if args.json {
            let mut row = json!({
                "t": Utc::now().to_rfc3339(),
                "elapsed_s": elapsed,
                "urls": targets.iter().map(|t| json!({
                    "url": t.url, "status": t.status, "ok": t.status.starts_with("ok"),
                    "server": t.kind.map(ServerKind::as_str), "errors": t.errors,
                    "format": t.format.map(|f| if f == Format::OpenMetrics { "openmetrics" } else { "text" }),
                })).collect::<Vec<_>>(),
            });
            let fields = figures_json(&f);
            if let (Value::Object(row), Value::Object(fields)) = (&mut row, fields) {
                row.extend(fields);
                if let Some(groups) = &groups {
                    let by = args.by.clone().unwrap_or_default();
                    row.insert(
                        "groups".into(),
                        groups
                            .iter()
                            .map(|(value, g)| {
                                let mut v = figures_json(g);
                                if let Value::Object(m) = &mut v {
                                    m.insert(by.clone(), json!(value));
                                }
                                v
                            })
                            .collect::<Vec<_>>()
                            .into(),
                    );
                }
                if let Some(target) = args.target_requests {
                    row.insert(
                        "progress".into(),
                        json!({ "target": target, "finished": f.finished_since_start, "eta_s": eta }),
                    );
                }
            }
            let _ = writeln!(stdout.lock(), "{row}");
        } else {
            let mut report = format!("{elapsed:6.1}s  {}", text_line(&f));
            for t in targets
                .iter()
                .filter(|t| targets.len() > 1 || !t.status.starts_with("ok"))
            {
                report += &format!("\n    {}: {}", t.url, t.status);
            }
            if let Some(groups) = &groups {
                for (value, g) in groups {
                    let label = args.by.as_deref().unwrap_or("");
                    report += &format!("\n         {label}={value}: {}", text_line(g));
                }
            }
            // Lines printed above a live progress bar must go through it, or they tear it.
            match &progress {
                Some(bar) => bar.suspend(|| println!("{report}")),
                None => println!("{report}"),
            }
            if let Some(bar) = &progress {
                bar.set_position(f.finished_since_start.unwrap_or(0.0) as u64);
                bar.set_message(eta.map_or_else(|| "?".into(), |s| format!("{s:.0}s")));
            }
        }
        last_figures = f;
    }
    stop.store(true, Ordering::SeqCst);
    if let Some(bar) = &progress {
        bar.finish();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let succeeded = targets.iter().any(|t| t.since.is_some());
    let summary = json!({
        "event": "summary",
        "elapsed_s": elapsed,
        "generated_tokens": last_figures.generated_since_start,
        "finished_requests": last_figures.finished_since_start,
        "mean_generation_tokens_per_s": last_figures.generated_since_start.map(|g| g / elapsed),
        "restarts_announced": restarts,
        "scrape_errors": targets.iter().map(|t| t.errors).sum::<u64>(),
    });
    if args.json {
        let _ = writeln!(stdout.lock(), "{summary}");
    } else {
        println!(
            "summary: {:.0} s, {} tokens generated ({} tok/s mean), {} requests finished, {} restart(s) announced, {} scrape error(s)",
            elapsed,
            fmt_opt(last_figures.generated_since_start, 0),
            fmt_opt(last_figures.generated_since_start.map(|g| g / elapsed), 1),
            fmt_opt(last_figures.finished_since_start, 0),
            restarts,
            targets.iter().map(|t| t.errors).sum::<u64>()
        );
    }
    if let Some(path) = &args.plot {
        match write_plot(path, &plot_points) {
            Ok(()) if !args.json => println!("plot written to {path}"),
            Ok(()) => {}
            Err(e) => eprintln!("vllm_monitor: cannot write {path}: {e}"),
        }
    }
    if succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
