//! The monitor's run: an [`App`] owns every piece of its state (targets, history, events,
//! the last snapshot, the output), takes in pages as they arrive, computes an interval on
//! each tick and hands everything to one [`Output`], whichever it is.

use crate::gpus::GpuSettings;
use crate::signals::Signals;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};

use crate::args::Args;
use crate::discover;
use crate::engines::DCGM;
use crate::figures::ServerKind;
use crate::http::{Access, Endpoint, Trust};
use crate::interval::{History, Snapshot};
use crate::output::dashboard::Dashboard;
use crate::output::json::Json;
use crate::output::plain::Plain;
use crate::output::{plot, Output, Run};
use crate::scrape::{self, Mailbox, Message, Scraper};
use crate::simulator;
use crate::summary::Summary;
use crate::target::{Event, EventKind, Target};

/// What to monitor, and how it was chosen.
struct Plan {
    urls: Vec<String>,
    /// Appended to the setup line: " · built-in simulator" and the like.
    setup: String,
    notes: Vec<String>,
    /// The run's length when the user gave none (the simulator's demo: 20 s).
    default_duration: Option<Duration>,
}

/// The URLs given, else the servers found on this machine, else the simulator.
fn plan(args: &Args, access: &Access) -> Result<Plan, String> {
    let urls = args.urls();
    if !urls.is_empty() {
        return Ok(Plan {
            urls,
            setup: String::new(),
            notes: Vec::new(),
            default_duration: None,
        });
    }
    let ports = &args.discover_ports.0;
    let why = if args.simulate.is_some() {
        "--simulate given".to_string()
    } else {
        let mut found = discover::find(ports, access);
        // A GPU exporter alone is not a server to monitor.
        if found.iter().all(|f| f.kind == ServerKind(&DCGM)) {
            found.clear();
        }
        if !found.is_empty() {
            let names: Vec<String> = found
                .iter()
                .map(|f| format!("{} ({})", f.url, f.kind.as_str()))
                .collect();
            return Ok(Plan {
                urls: found.into_iter().map(|f| f.url).collect(),
                setup: " · found on this machine".into(),
                notes: vec![format!("no --url given: found {}", names.join(", "))],
                default_duration: None,
            });
        }
        // Short: with the whole default port list, the line stays within 120 columns.
        format!(
            "no --url, and no server on 127.0.0.1 port(s) {}",
            discover::describe(ports)
        )
    };
    let restart_after = args.simulate_restart_after.as_secs_f64();
    let simulation = Arc::new(simulator::Simulation::new(Some(restart_after)).with_wave(args.simulate_wave));
    let engine = args.simulate.unwrap_or(crate::engines::ENGINES[0]);
    let bound = simulator::serve("127.0.0.1:0", Arc::clone(&simulation), engine)
        .map_err(|e| format!("cannot start the simulated server: {e}"))?;
    // Two lines: each within plain mode's 120 columns.
    let mut notes = vec![
        format!("{why}: monitoring the built-in simulator"),
        simulator::describe(engine, Some(restart_after), args.simulate_wave),
    ];
    let mut urls = vec![format!("http://{bound}/metrics")];
    if args.simulate_gpus {
        let dcgm = &crate::engines::DCGM;
        let gpus = simulator::serve("127.0.0.1:0", simulation, dcgm)
            .map_err(|e| format!("cannot start the simulated DCGM exporter: {e}"))?;
        urls.push(format!("http://{gpus}/metrics"));
        notes.push(simulator::describe(dcgm, None, args.simulate_wave));
    }
    Ok(Plan {
        urls,
        setup: " · built-in simulator".into(),
        notes,
        default_duration: Some(Duration::from_secs(20)),
    })
}

/// The timing of a run.
struct Clock {
    interval: Duration,
    window: TimeDelta,
    timeout: Duration,
    /// A report comes a little after each scrape round starts, so the round's answers are in.
    settle: Duration,
    duration: Option<Duration>,
    started: Instant,
    next_tick: Instant,
}

/// What the outputs show: everything the run has seen.
struct Seen {
    setup: String,
    warnings: Vec<String>,
    targets: Vec<Target>,
    history: History,
    events: Vec<(f64, Event)>,
    last: Option<Snapshot>,
}

impl Seen {
    /// The run as the outputs see it.
    fn view(&self) -> Run<'_> {
        Run {
            setup: &self.setup,
            warnings: &self.warnings,
            snapshot: self.last.as_ref(),
            history: &self.history,
            targets: &self.targets,
            events: &self.events,
        }
    }
}

impl Clock {
    /// The timing `args` ask for, starting now.
    fn new(args: &Args, default_duration: Option<Duration>) -> Clock {
        let timeout = args.timeout.unwrap_or_else(|| {
            args.interval
                .max(Duration::from_secs(1))
                .min(Duration::from_secs(10))
        });
        let started = Instant::now();
        let settle = (args.interval / 4).min(Duration::from_millis(500));
        Clock {
            interval: args.interval,
            window: TimeDelta::from_std(args.window).unwrap_or(TimeDelta::seconds(30)),
            timeout,
            settle,
            duration: args.duration.or(default_duration),
            started,
            next_tick: started + args.interval + settle,
        }
    }
}

/// One run of the monitor.
pub struct App {
    clock: Clock,
    by: Option<String>,
    target_requests: Option<u64>,
    gpu_settings: GpuSettings,
    signals: Signals,
    plot: Option<String>,
    seen: Seen,
    mailbox: Arc<Mailbox>,
    messages: mpsc::Receiver<Message>,
    stop: Arc<AtomicBool>,
    output: Box<dyn Output>,
}

impl App {
    /// Chooses what to monitor, starts a scraping thread per URL and takes the output;
    /// an error is for the user (a bad file, a simulator that cannot start).
    pub fn start(args: Args) -> Result<App, String> {
        let access = Access::new(
            args.ca_cert.as_deref(),
            args.insecure,
            args.bearer_token_file.as_deref(),
            &args.header,
        )?;
        let plan = plan(&args, &access)?;
        let clock = Clock::new(&args, plan.default_duration);
        let timeout = clock.timeout;
        let endpoints: Vec<Endpoint> = plan.urls.iter().map(|u| Endpoint::new(u)).collect();
        // The window's points and one interval more; totals since the start need none.
        let retention = clock.window + TimeDelta::from_std(args.interval).unwrap_or(TimeDelta::seconds(2));
        let targets = endpoints
            .iter()
            .map(|e| Target::new(e.shown.clone(), retention))
            .collect();
        let (tx, messages) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mailbox = Arc::new(Mailbox::new(endpoints.len()));
        let max_page_bytes = args.max_page_mib.saturating_mul(1 << 20);
        for (index, endpoint) in endpoints.into_iter().enumerate() {
            let scraper = Scraper {
                index,
                endpoint,
                client: access.client(timeout, max_page_bytes),
                interval: args.interval,
            };
            scrape::spawn(scraper, Arc::clone(&mailbox), tx.clone(), Arc::clone(&stop));
        }
        let output = choose_output(&args, &tx, &stop);
        // Without a handler (e.g. one already installed) Ctrl-C simply ends the process.
        let quit = tx.clone();
        let _ = ctrlc::set_handler(move || {
            let _ = quit.send(Message::Quit);
        });
        let setup = format!(
            "every {} · window {}{}",
            humantime::format_duration(args.interval),
            humantime::format_duration(args.window),
            plan.setup
        );
        let mut notes = plan.notes;
        notes.push(format!("monitoring {} URL(s), {setup}", plan.urls.len()));
        let mut app = App {
            clock,
            by: args.group_label(),
            target_requests: args.target_requests,
            signals: Signals::default(),
            gpu_settings: GpuSettings {
                gpus: args.gpus,
                gpu_hour_price: args.gpu_hour_price,
            },
            plot: args.plot.clone(),
            seen: Seen {
                setup,
                warnings: warnings(&access),
                targets,
                history: History::default(),
                events: Vec::new(),
                last: None,
            },
            mailbox,
            messages,
            stop,
            output,
        };
        app.output.start(&app.seen.view(), &notes);
        Ok(app)
    }

    /// Runs until `--duration`, q, Ctrl-C or a closed stdout; then the summary and the plot.
    pub fn run(mut self) -> ExitCode {
        let mut failure = None;
        while !self.output.closed() && !self.is_over() {
            let wait = self.clock.next_tick.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(wait) {
                Ok(Message::Scraped(url)) => self.take_page(url),
                Ok(Message::Redraw) => self.output.resized(),
                Ok(Message::Quit) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() >= self.clock.next_tick {
                self.tick();
            }
            if let Err(e) = self.output.refresh(&self.seen.view()) {
                failure = Some(e);
                break;
            }
        }
        self.stop.store(true, Ordering::SeqCst);
        self.finish(failure)
    }

    fn is_over(&self) -> bool {
        let c = &self.clock;
        c.duration.is_some_and(|d| c.started.elapsed() >= d + c.settle)
    }

    /// Reads the newest page of URL `url` and announces what it shows.
    fn take_page(&mut self, url: usize) {
        let Some((scrape, skipped)) = self.mailbox.take(url) else {
            return;
        };
        let seen = &mut self.seen;
        let target = &mut seen.targets[url];
        if skipped > 0 && target.skipped == 0 {
            self.output.note(&format!(
                "{}: pages arrive faster than they are read; the newest is read, the others skipped (counted in the summary)",
                target.url
            ));
        }
        target.skipped += skipped;
        let announced = target.ingest_page(scrape.at, &scrape.result);
        if let Some(kind) = target.status.kind().filter(|k| k.0.tokens_at_request_end) {
            if !target.noted_request_end {
                target.noted_request_end = true;
                // A window shorter than a request would show a sawtooth, not the throughput.
                let note = format!(
                    "{} counts tokens when a request ends: tok/s is over --window, no EWMA ({})",
                    kind.0.title, target.url
                );
                self.output.note(&note);
            }
        }
        if let Ok(page) = scrape.result {
            self.mailbox.recycle(url, page.body);
        }
        for event in announced {
            let elapsed = self.since(event.at);
            if event.kind == EventKind::Restart {
                self.seen.history.restarts.push(elapsed);
            }
            self.announce(elapsed, event);
        }
    }

    /// Keeps `event` (at `elapsed` seconds) and shows it.
    fn announce(&mut self, elapsed: f64, event: Event) {
        self.seen.events.push((elapsed, event));
        let (elapsed, event) = self.seen.events.last().expect("just pushed");
        self.output.event(&self.seen.view(), *elapsed, event);
    }

    /// Seconds since the start at which something at `at` happened.
    fn since(&self, at: chrono::DateTime<Utc>) -> f64 {
        ((at - Utc::now()).as_seconds_f64() + self.clock.started.elapsed().as_secs_f64()).max(0.0)
    }

    /// One interval: the figures over the fresh URLs, shown.
    fn tick(&mut self) {
        let c = &mut self.clock;
        c.next_tick += c.interval;
        // Servers whose data is older than two intervals are left out of the sums.
        let fresh =
            Utc::now() - TimeDelta::from_std(c.interval * 2 + c.timeout).unwrap_or(TimeDelta::seconds(10));
        let elapsed = (c.started.elapsed().saturating_sub(c.settle)).as_secs_f64();
        let mut snapshot = Snapshot::compute(
            &self.seen.targets,
            c.window,
            fresh,
            self.by.as_deref(),
            self.target_requests,
            elapsed,
        )
        .with_gpu_settings(&self.gpu_settings);
        for event in self.signals.judge(&mut snapshot.figures, snapshot.at) {
            self.announce(elapsed, event);
        }
        self.seen.history.push(&snapshot);
        self.seen.last = Some(snapshot);
        let run = self.seen.view();
        let snapshot = run.snapshot.expect("just set");
        self.output.interval(&run, snapshot);
    }

    /// The summary, the plot, and the exit status.
    fn finish(mut self, failure: Option<String>) -> ExitCode {
        let summary = Summary::new(&self.seen.view(), self.clock.started.elapsed().as_secs_f64());
        self.output.summary(&self.seen.view(), &summary);
        if let Some(path) = &self.plot {
            match plot::write(path, &self.seen.history) {
                Ok(()) => self.output.note(&format!("plot written to {path}")),
                Err(e) => eprintln!("vllm_monitor: cannot write {path}: {e}"),
            }
        }
        if let Some(e) = failure {
            eprintln!("vllm_monitor: {e}");
            return ExitCode::from(1);
        }
        if summary.any_answer(self.seen.targets.len()) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }
}

/// A dashboard on a terminal, plain lines when piped or asked for, or JSON.
fn choose_output(args: &Args, tx: &mpsc::Sender<Message>, stop: &Arc<AtomicBool>) -> Box<dyn Output> {
    let progress = args.target_requests.is_some();
    if args.json {
        Box::new(Json::new(std::io::stdout()))
    } else if args.plain || !std::io::stdout().is_terminal() {
        Box::new(Plain::new(std::io::stdout(), progress))
    } else {
        // Raw mode: keys (q, Esc, Ctrl-C) come from a thread reading the terminal.
        let dashboard = Dashboard::new(progress);
        scrape::spawn_keys(tx.clone(), Arc::clone(stop));
        Box::new(dashboard)
    }
}

/// What every output must say about how the servers are reached.
fn warnings(access: &Access) -> Vec<String> {
    match access.trust {
        Trust::Nobody => vec!["TLS certificates are not checked (--insecure)".to_string()],
        _ => Vec::new(),
    }
}
