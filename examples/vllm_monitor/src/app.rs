//! The monitor's run: a driver feeding the [`Pipeline`] and handing what it computes to
//! one [`Output`]. Live, scraping threads deliver pages and the wall clock says when an
//! interval is due; on `--replay`, a recording delivers the same pages and a virtual clock
//! jumps from one to the next. `--record` keeps what a live run read, in order, with the
//! interval it was read in, so that its replay computes the same intervals.

use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use crate::args::Args;
use crate::clock::{delta, LiveClock, Schedule};
use crate::gpus::GpuSettings;
use crate::http::{Access, Endpoint};
use crate::output::csv::Csv;
use crate::output::dashboard::Dashboard;
use crate::output::json::Json;
use crate::output::plain::Plain;
use crate::output::{plot, Output};
use crate::pipeline::{window_of, Pipeline, Said, Settings};
use crate::plan::{plan, warnings};
use crate::recording::{self, Background, Header, Writer};
use crate::replay::{self, Numbering, Recording};
use crate::scrape::read_page;
use crate::scrape::{self, Lending, Lent, Mailbox, Message, Scrape, Scraper, Waiting};
use crate::text;
use crate::text::visible::visible;

/// Where the scrapes come from.
enum Input {
    Live {
        clock: LiveClock,
        mailbox: Arc<Mailbox>,
        /// Each URL's worker, to lend its target to.
        workers: Vec<Lending>,
    },
    Replay {
        file: String,
        numbering: Numbering,
        /// Whether each scrape says when it was read (`tick`), as this monitor's do.
        ours: bool,
        speed: Option<f64>,
        /// The longest line read (`--max-page-mib`'s pages, written as JSON).
        max_line: u64,
    },
    /// `--prometheus`: a TSDB read interval by interval, live or a past span.
    Tsdb(Box<crate::tsdb::Reader>),
}

/// One run of the monitor.
pub struct App {
    pipeline: Pipeline,
    input: Input,
    urls: Vec<String>,
    messages: mpsc::Receiver<Message>,
    stop: Arc<AtomicBool>,
    output: Box<dyn Output>,
    /// `--record`: the file, and its writer behind the main loop.
    recorder: Option<(String, Background)>,
    plot: Option<String>,
    /// `--exit-on-alert`: a rule that fired makes the exit status 3.
    exit_on_alert: bool,
}

/// The figures' settings from the arguments, for a scrape interval of `interval` and a
/// window asked of `window`; with a note when the window had to be rounded.
fn settings(args: &Args, interval: Duration, window: Duration) -> (Settings, Option<String>) {
    let timeout = args
        .timeout
        .unwrap_or_else(|| interval.clamp(Duration::from_secs(1), Duration::from_secs(10)));
    let used = window_of(delta(window), delta(interval));
    let note = (used != delta(window)).then(|| {
        format!(
            "the window ({}) is not a whole number of {} intervals: it is {}",
            text::setting(window),
            text::setting(interval),
            text::setting(used.to_std().unwrap_or_default()),
        )
    });
    let settings = Settings {
        window: used,
        interval: delta(interval),
        timeout: delta(timeout),
        ewma_tau: args.ewma_tau.map_or(used, delta),
        by: args.group_label(),
        max_groups: args.max_groups,
        target_requests: args.target_requests,
        gpu: GpuSettings {
            gpus: args.gpus,
            gpu_hour_price: args.gpu_hour_price,
        },
        slo: args.slo.clone().map(|o| o.0).unwrap_or_default(),
        max_series: usize::try_from(args.max_series).unwrap_or(usize::MAX),
        points_every: None,
    };
    (settings, note)
}

/// "every 2s · window 30s · EWMA 30s" and what the run is.
fn setup_line(s: &Settings, what: &str) -> String {
    let d = |t: TimeDelta| text::setting(t.to_std().unwrap_or_default());
    format!(
        "every {} · window {} · EWMA {}{what}",
        d(s.interval),
        d(s.window),
        d(s.ewma_tau)
    )
}

/// The writer of `--record FILE`, its header written: the run's start, interval, window
/// and URLs, and what a replay needs to read the run again as it was.
fn start_recording(
    path: &str,
    args: &Args,
    pipeline: &Pipeline,
    urls: &[String],
) -> Result<Background, String> {
    let s = pipeline.settings();
    let schedule = pipeline.schedule();
    let mut extra = serde_json::Map::new();
    if let Some(last) = schedule.last {
        extra.insert("duration_s".into(), (schedule.elapsed(last)).into());
    }
    extra.insert(
        "recorded_by".into(),
        format!("vllm_monitor {}", env!("CARGO_PKG_VERSION")).into(),
    );
    args.run_settings().write_into(&mut extra);
    let header = Header {
        started: schedule.started,
        interval: s.interval.to_std().unwrap_or_default(),
        window: s.window.to_std().unwrap_or_else(|_| args.window_or_default()),
        urls: urls.to_vec(),
        extra,
    };
    let writer = Writer::create(Path::new(path), &header).map_err(|e| format!("{path}: {e}"))?;
    Ok(Background::start(writer))
}

/// Why a run could not start, with its exit status (README, "Exit status"): 2 for what
/// was asked (arguments, a simulator that cannot start), 1 for a recording that cannot be
/// read or holds no scrape.
#[derive(Debug)]
pub struct StartError {
    pub message: String,
    pub status: u8,
}

impl From<String> for StartError {
    fn from(message: String) -> StartError {
        StartError { message, status: 2 }
    }
}

impl From<&str> for StartError {
    fn from(message: &str) -> StartError {
        message.to_string().into()
    }
}

impl App {
    /// Chooses what to monitor (or the recording to replay), starts what reads it and
    /// takes the output; an error is for the user (a bad file, a simulator that cannot
    /// start).
    pub fn start(mut args: Args) -> Result<App, StartError> {
        // A recording that cannot be read is the run's failure, not the arguments'.
        let recording = match &args.replay {
            Some(file) => {
                let max_line = recording::max_line_for(args.max_page_mib.saturating_mul(1 << 20));
                Some(
                    replay::survey(Path::new(file), max_line)
                        .map_err(|message| StartError { message, status: 1 })?,
                )
            }
            None => None,
        };
        // The recorded run's --slo, --alert and --by, unless given again.
        let adopted = match &recording {
            Some(recording) => args.adopt(&recording.settings)?,
            None => Vec::new(),
        };
        args.check()?;
        let (tx, messages) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let (mut pipeline, input, urls, mut notes) = match (&args.replay, recording) {
            (Some(file), Some(recording)) => Self::replay_input(&args, file, recording),
            _ => match &args.prometheus {
                Some(base) => Self::tsdb_input(&args, base, &stop)?,
                None => Self::live_input(&args, &tx, &stop)?,
            },
        };
        if !adopted.is_empty() {
            notes.push(format!("as recorded: {}", adopted.join(" · ")));
        }
        if !args.alert.is_empty() {
            let rules: Vec<String> = args.alert.iter().map(ToString::to_string).collect();
            notes.push(format!("alert rules: {}", rules.join(" · ")));
            pipeline.alert_on(args.alert.clone());
        }
        let (output, why_plain) = choose_output(&args, &tx, &stop);
        notes.extend(why_plain);
        // Ctrl-C, SIGTERM and SIGHUP end the run as `q` does: the summary, and the
        // terminal given back. Without a handler (one already installed) they simply end
        // the process.
        let quit = tx.clone();
        let stopping = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || {
            // Set here too: a request to a TSDB that never answers, waited for on the main
            // loop, gives up on it.
            stopping.store(true, Ordering::SeqCst);
            let _ = quit.send(Message::Quit);
        });
        let recorder = match &args.record {
            Some(path) => {
                notes.push(format!("recording every scrape to {path}"));
                Some((path.clone(), start_recording(path, &args, &pipeline, &urls)?))
            }
            None => None,
        };
        notes.push(format!(
            "monitoring {}, {}",
            named_urls(&urls),
            pipeline.view().setup
        ));
        let mut app = App {
            pipeline,
            input,
            urls,
            messages,
            stop,
            output,
            recorder,
            plot: args.plot.clone(),
            exit_on_alert: args.exit_on_alert,
        };
        app.output.start(&app.pipeline.view(), &notes);
        Ok(app)
    }

    /// Live: the plan's URLs, a scraping thread each.
    fn live_input(
        args: &Args,
        tx: &mpsc::Sender<Message>,
        stop: &Arc<AtomicBool>,
    ) -> Result<(Pipeline, Input, Vec<String>, Vec<String>), String> {
        let access = Access::new(
            args.ca_cert.as_deref(),
            args.insecure,
            args.bearer_token_file.as_deref(),
            &args.header,
        )?;
        let plan = plan(args, &access)?;
        access.one_authorization(plan.urls.iter().map(String::as_str))?;
        let interval = args.interval_or_default();
        let window = args
            .window
            .or(plan.default_window)
            .unwrap_or_else(|| args.window_or_default());
        let (settings, rounded) = settings(args, interval, window);
        let clock = LiveClock::start();
        let schedule = Schedule::new(clock.now(), interval, args.duration.or(plan.default_duration));
        let endpoints: Vec<Endpoint> = plan.urls.iter().map(|u| Endpoint::new(u)).collect();
        let urls: Vec<String> = endpoints.iter().map(|e| e.shown.clone()).collect();
        let mailbox = Arc::new(Mailbox::new(endpoints.len()));
        let timeout = settings.timeout.to_std().unwrap_or(Duration::from_secs(10));
        let max_page_bytes = args.max_page_mib.saturating_mul(1 << 20);
        let mut workers = Vec::with_capacity(endpoints.len());
        for (index, endpoint) in endpoints.into_iter().enumerate() {
            let scraper = Scraper {
                index,
                endpoint,
                client: access.client(timeout, max_page_bytes),
                schedule,
                record: args.record.is_some(),
            };
            workers.push(scrape::spawn(
                scraper,
                clock,
                Arc::clone(&mailbox),
                tx.clone(),
                Arc::clone(stop),
            ));
        }
        let mut notes = plan.notes;
        notes.extend(rounded);
        let pipeline = Pipeline::new(
            settings.clone(),
            schedule,
            &urls,
            setup_line(&settings, &plan.setup),
            warnings(&access),
        );
        Ok((
            pipeline,
            Input::Live {
                clock,
                mailbox,
                workers,
            },
            urls,
            notes,
        ))
    }

    /// `--prometheus`: the TSDB's instance groups as the URLs, its span as the schedule.
    fn tsdb_input(
        args: &Args,
        base: &str,
        stop: &Arc<AtomicBool>,
    ) -> Result<(Pipeline, Input, Vec<String>, Vec<String>), StartError> {
        let access = Access::new(
            args.ca_cert.as_deref(),
            args.insecure,
            args.bearer_token_file.as_deref(),
            &args.header,
        )?;
        let base = crate::args::without_fragment(base);
        let base = match base.contains("://") {
            true => base.to_string(),
            false => format!("http://{base}"),
        };
        access.one_authorization([base.as_str()])?;
        let (mut settings, rounded) = settings(args, args.interval_or_default(), args.window_or_default());
        // A query over many series takes longer than a scrape: the API's own deadline rules.
        let timeout = args.timeout.unwrap_or(Duration::from_secs(60));
        let client = access.client(timeout, args.max_page_mib.saturating_mul(1 << 20));
        let started = crate::tsdb::start(args, &base, client, Arc::clone(stop))
            .map_err(|message| StartError { message, status: 1 })?;
        let mut notes = started.notes;
        notes.extend(rounded);
        // Series get a point each time the TSDB scraped, not each interval.
        settings.points_every = started.points_every;
        let pipeline = Pipeline::new(
            settings.clone(),
            started.schedule,
            &started.urls,
            setup_line(&settings, &started.what),
            warnings(&access),
        );
        let input = Input::Tsdb(Box::new(started.reader));
        Ok((pipeline, input, started.urls, notes))
    }

    /// Replay: the recording's URLs and run, the user's window if given.
    fn replay_input(
        args: &Args,
        file: &str,
        recording: Recording,
    ) -> (Pipeline, Input, Vec<String>, Vec<String>) {
        let interval = args.interval.unwrap_or(recording.interval);
        let window = args
            .window
            .or(recording.window)
            .unwrap_or(Duration::from_secs(30));
        let (settings, rounded) = settings(args, interval, window);
        let schedule = Schedule::new(recording.started, interval, args.duration.or(recording.duration));
        let what = format!(" · replay of {file} ({})", recording.what);
        let mut notes = vec![format!(
            "replaying {} scraped from {} URL(s), {}",
            file,
            recording.urls.len(),
            match args.speed {
                Some(n) => format!("at {n}x the recorded speed"),
                None => "as fast as possible".into(),
            }
        )];
        notes.extend(rounded);
        let pipeline = Pipeline::new(
            settings.clone(),
            schedule,
            &recording.urls,
            setup_line(&settings, &what),
            Vec::new(),
        );
        let input = Input::Replay {
            file: file.to_string(),
            numbering: Numbering::new(&recording.urls),
            // Placed by their ticks only when the intervals are the recording's.
            ours: recording.ours && args.interval.is_none_or(|i| i == recording.interval),
            speed: args.speed,
            max_line: recording::max_line_for(args.max_page_mib.saturating_mul(1 << 20)),
        };
        (pipeline, input, recording.urls, notes)
    }

    /// Runs until `--duration`, q, Ctrl-C, a closed stdout or the recording's end; then
    /// the summary and the plot.
    pub fn run(mut self) -> ExitCode {
        let failure = match std::mem::replace(
            &mut self.input,
            Input::Replay {
                file: String::new(),
                numbering: Numbering::new(&[]),
                ours: false,
                speed: None,
                max_line: 0,
            },
        ) {
            Input::Live {
                clock,
                mailbox,
                workers,
            } => self.run_live(clock, &mailbox, &workers),
            Input::Replay {
                file,
                numbering,
                ours,
                speed,
                max_line,
            } => self.run_replay(&file, &numbering, ours, speed, max_line),
            Input::Tsdb(mut reader) => self.run_tsdb(&mut reader),
        };
        self.stop.store(true, Ordering::SeqCst);
        let (code, pipeline) = self.finish(failure);
        // The process ends with the run: freeing trackers of millions of series one by one
        // would hold the exit for seconds, and the workers may hold theirs still.
        std::mem::forget(pipeline);
        code
    }

    fn run_live(&mut self, clock: LiveClock, mailbox: &Mailbox, workers: &[Lending]) -> Option<String> {
        while !self.output.closed() && !self.pipeline.is_over() {
            let due = self.pipeline.next_tick_at();
            let flow = match self.messages.recv_timeout(clock.until(due)) {
                Ok(message) => self.live_message(message, clock, mailbox, workers),
                Err(mpsc::RecvTimeoutError::Disconnected) => Flow::Stop,
                Err(mpsc::RecvTimeoutError::Timeout) => Flow::Go,
            };
            if flow == Flow::Stop {
                break;
            }
            if clock.now() >= due {
                if self.await_reads(clock, mailbox, workers, due) == Flow::Stop {
                    break;
                }
                // Fallen behind by more than an interval: the newest interval due is
                // computed, those before it skipped (counted), so that the run ends on time.
                let now = clock.now();
                let schedule = *self.pipeline.schedule();
                while schedule.tick_at(self.pipeline.ticks() + 2) <= now
                    && !schedule.is_over(self.pipeline.ticks() + 2)
                {
                    self.pipeline.skip_tick();
                }
                if let Err(e) = self.tick() {
                    return Some(e);
                }
            } else if let Err(e) = self.output.refresh(&self.pipeline.view()) {
                return Some(e);
            }
        }
        None
    }

    /// Handles one message of a live run: a page is recorded and its URL's target lent to
    /// its worker to read it into; a target read into comes back with what it announces.
    fn live_message(
        &mut self,
        message: Message,
        clock: LiveClock,
        mailbox: &Mailbox,
        workers: &[Lending],
    ) -> Flow {
        match message {
            Message::Scraped(url) => {
                let Some(Waiting {
                    scrape,
                    skipped,
                    size,
                }) = mailbox.take(url)
                else {
                    let _ = workers[url].send(None);
                    return Flow::Go;
                };
                let Some(target) = self.pipeline.lend(url, clock.now(), size) else {
                    let _ = workers[url].send(None);
                    return Flow::Go;
                };
                let lent = Lent {
                    target,
                    scrape,
                    skipped,
                };
                // A worker that is gone cannot read: the page is read here.
                if let Err(mpsc::SendError(Some(Lent {
                    mut target,
                    scrape,
                    skipped,
                }))) = workers[url].send(Some(lent))
                {
                    let read = read_page(&mut target, &scrape, skipped);
                    let said = self.pipeline.read(target, read);
                    self.show(said);
                }
            }
            Message::Read(returned) => {
                let (target, read, scrape) = *returned;
                let said = self.pipeline.read(target, read);
                // Recorded as read now, after the intervals computed so far, as a replay
                // reads it.
                if let Some(scrape) = scrape {
                    self.record(&scrape);
                }
                self.show(said);
            }
            Message::Redraw => self.output.resized(),
            Message::Quit => return Flow::Stop,
        }
        Flow::Go
    }

    /// Waits for the pages being read as long as the interval due at `due` waits for
    /// them ([`Pipeline::awaited_until`]).
    fn await_reads(
        &mut self,
        clock: LiveClock,
        mailbox: &Mailbox,
        workers: &[Lending],
        due: DateTime<Utc>,
    ) -> Flow {
        while let Some(until) = self.pipeline.awaited_until(due) {
            match self.messages.recv_timeout(clock.until(until)) {
                Ok(message) => {
                    if self.live_message(message, clock, mailbox, workers) == Flow::Stop {
                        return Flow::Stop;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Flow::Stop,
            }
        }
        Flow::Go
    }

    fn run_replay(
        &mut self,
        file: &str,
        numbering: &Numbering,
        ours: bool,
        speed: Option<f64>,
        max_line: u64,
    ) -> Option<String> {
        let mut scrapes = match recording::open_within(Path::new(file), max_line) {
            Ok(s) => s,
            Err(e) => return Some(format!("{file}: {e}")),
        };
        let schedule = *self.pipeline.schedule();
        let far = replay::far(self.pipeline.settings().interval.to_std().unwrap_or_default());
        let mut last_end: Option<DateTime<Utc>> = None;
        // The interval the newest page was read after.
        let mut last_read = 0;
        let pace = Pace::new(speed, schedule.started);
        let mut checked = replay::Checked::new(replay::numbered(&mut scrapes), far, ours.then_some(schedule));
        for item in checked.by_ref() {
            // A recording of bad lines alone is read to its end otherwise.
            if self.quit_asked() {
                return None;
            }
            let (line, recorded) = match item {
                Ok(r) => r,
                Err(e) => {
                    // A warning event, not a note, so that `--json` says it too.
                    let said = self.pipeline.warn(file, format!("{e} (skipped)"));
                    self.show(vec![said]);
                    continue;
                }
            };
            // This monitor's recordings say after how many intervals each page was read;
            // other scrapers' pages are read when they arrived, at their end.
            let read_after = match (ours, recorded.tick) {
                (true, Some(tick)) => tick,
                _ => schedule.due_by(recorded.end).max(self.pipeline.ticks()),
            };
            let Some(scrape) = numbering.scrape(recorded) else {
                continue;
            };
            let before = format!("before line {line}");
            if let Some(failure) = self.replay_until(read_after, last_end, &before, file, &pace) {
                return failure;
            }
            if self.pipeline.is_over() {
                break;
            }
            last_end = Some(last_end.map_or(scrape.end, |e| e.max(scrape.end)));
            last_read = last_read.max(read_after);
            // Shown when it arrived (not before the interval it was read after).
            let shown_at = scrape.end.max(schedule.tick_at(self.pipeline.ticks()));
            if self.wait(&pace, shown_at) {
                return None;
            }
            self.read(&scrape, 0);
        }
        drop(checked);
        // The intervals after the last page: as many as the recorded run computed (its last
        // line says), else one interval past the last page, within --duration.
        let end = last_end.map(|e| e + self.pipeline.settings().interval);
        let mut until = end.map_or(0, |e| schedule.due_by(e));
        if let (true, Some(ticks)) = (ours, scrapes.ticks()) {
            let beyond = ticks.saturating_sub(last_read) as f64 * schedule.interval.as_seconds_f64();
            if beyond > far.as_seconds_f64() {
                // A count far beyond the last page's is no run's: the run is read as cut short.
                let line = scrapes.ticks_line().unwrap_or_default();
                let message = format!(
                    "line {line}: \"ticks\" ({ticks}) is far beyond the interval of the last page ({last_read}) (skipped)"
                );
                let said = self.pipeline.warn(file, message);
                self.show(vec![said]);
            } else {
                until = ticks;
            }
        }
        self.replay_until(until, last_end, "after the last page", file, &pace)
            .unwrap_or_default()
    }

    /// Computes the intervals of a replay until `until` of them are; `Some` to stop (with
    /// the failure, if any). Once the newest page (at `last_end`, none yet: the run's
    /// start) is out of the figures, the intervals that read no page repeat one empty row:
    /// those up to the last are skipped, as a live run that fell behind skips them
    /// (counted in the summary), and said once (`where` the stretch ends), so that a pause
    /// in a recording costs the same whether it lasts a minute or a year.
    fn replay_until(
        &mut self,
        until: u64,
        last_end: Option<DateTime<Utc>>,
        r#where: &str,
        file: &str,
        pace: &Pace,
    ) -> Option<Option<String>> {
        let schedule = *self.pipeline.schedule();
        let quiet = last_end.unwrap_or(schedule.started) + self.pipeline.quiet_after();
        while self.pipeline.ticks() < until && !self.pipeline.is_over() {
            let ticks = self.pipeline.ticks();
            // The last interval of the stretch is computed: it shows the empty row at its end.
            let mut last = until - 1;
            if let Some(run_last) = schedule.last {
                last = last.min(run_last.saturating_sub(1));
            }
            if self.pipeline.next_tick_at() > quiet && last > ticks {
                // Said where the stretch begins, and waited through at the replay's pace
                // before it is skipped: a replay stopped meanwhile ends where it was.
                let since = last_end.unwrap_or(schedule.started);
                let message = format!(
                    "{where}: no page for {}: the {} intervals with nothing new to show are skipped",
                    text::duration(Some((schedule.tick_at(until) - since).as_seconds_f64())),
                    last - ticks,
                );
                let said = self.pipeline.warn(file, message);
                self.show(vec![said]);
                if self.wait(pace, schedule.tick_at(last)) {
                    return Some(None);
                }
                self.pipeline.skip_ticks(last - ticks);
                continue;
            }
            if let Some(stop) = self.replay_tick(pace) {
                return Some(stop);
            }
        }
        None
    }

    /// `--prometheus`: the reader's pages and intervals in its order, waiting when it says.
    fn run_tsdb(&mut self, reader: &mut crate::tsdb::Reader) -> Option<String> {
        use crate::tsdb::Step;
        while !self.output.closed() && !self.pipeline.is_over() {
            let schedule = *self.pipeline.schedule();
            match reader.next_step(&schedule, self.pipeline.ticks()) {
                Step::Wait(wait) => match self.messages.recv_timeout(wait) {
                    Ok(Message::Quit) | Err(mpsc::RecvTimeoutError::Disconnected) => return None,
                    Ok(Message::Redraw) => self.output.resized(),
                    Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                },
                Step::Page(scrape) => {
                    for (group, note) in reader.take_notes() {
                        let said = self.pipeline.warn_of(group, scrape.start, note);
                        self.show(vec![said]);
                    }
                    self.read(&scrape, 0);
                }
                Step::Tick => {
                    if let Err(e) = self.tick() {
                        return Some(e);
                    }
                    if self.quit_asked() {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// One interval of a replay, paced ([`App::tick`] as a live run's, once the keys are
    /// read); `Some` to stop (with the failure, if any).
    fn replay_tick(&mut self, pace: &Pace) -> Option<Option<String>> {
        if self.wait(pace, self.pipeline.next_tick_at()) || self.quit_asked() {
            return Some(None);
        }
        if let Err(e) = self.tick() {
            return Some(Some(e));
        }
        self.output.closed().then_some(None)
    }

    /// Waits until virtual time `at` is due at the replay's pace, reading the keys and
    /// signals meanwhile (a pause of hours at `--speed 1` is waited through, not slept
    /// through); true when asked to quit.
    fn wait(&mut self, pace: &Pace, at: DateTime<Utc>) -> bool {
        while let Some(wait) = pace.until(at) {
            match self.messages.recv_timeout(wait) {
                Ok(Message::Quit) => return true,
                Ok(Message::Redraw) => self.output.resized(),
                Ok(Message::Scraped(_) | Message::Read(_)) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => return false,
                // No handler could be set: nothing can ask to quit.
                Err(mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(wait),
            }
        }
        false
    }

    /// Whether q, Ctrl-C or a signal asked the run to end (a resize is handled).
    fn quit_asked(&mut self) -> bool {
        while let Ok(message) = self.messages.try_recv() {
            match message {
                Message::Quit => return true,
                Message::Redraw => self.output.resized(),
                Message::Scraped(_) | Message::Read(_) => {}
            }
        }
        false
    }

    /// Reads a scrape here: recorded (with the intervals computed before it), then ingested.
    fn read(&mut self, scrape: &Scrape, skipped: u64) {
        self.record(scrape);
        let said = self.pipeline.ingest(scrape, skipped);
        self.show(said);
    }

    /// Records a scrape with the intervals computed before it is read.
    fn record(&mut self, scrape: &Scrape) {
        if let Some((path, writer)) = &mut self.recorder {
            let url = &self.urls[scrape.url];
            if let Err(e) = writer.write(replay::recorded(scrape, url, self.pipeline.ticks())) {
                self.output
                    .note(&format!("cannot record to {path}: {e}; recording stopped"));
                self.recorder = None;
            }
        }
    }

    /// One interval, live or replayed: computed, its events and figures shown, the output
    /// refreshed; an error when the output cannot be (the terminal went away).
    fn tick(&mut self) -> Result<(), String> {
        let said = self.pipeline.tick();
        self.show(said);
        let run = self.pipeline.view();
        if let Some(snapshot) = run.snapshot {
            self.output.interval(&run, snapshot);
        }
        self.output.refresh(&self.pipeline.view())
    }

    fn show(&mut self, said: Vec<Said>) {
        for s in said {
            match s {
                Said::Note(text) => self.output.note(&text),
                Said::Event(number) => {
                    if let Some((elapsed, event)) = self.pipeline.event(number) {
                        self.output.event(&self.pipeline.view(), *elapsed, event);
                    }
                }
            }
        }
    }

    /// The summary, the plot, and the exit status; with the pipeline, which the caller
    /// leaves to the process's end.
    fn finish(mut self, failure: Option<String>) -> (ExitCode, Pipeline) {
        let code = self.exit_code(failure);
        (code, self.pipeline)
    }

    /// The summary, the plot, and the exit status.
    fn exit_code(&mut self, failure: Option<String>) -> ExitCode {
        let summary = self.pipeline.summary();
        self.output.summary(&self.pipeline.view(), &summary);
        if let Some((path, writer)) = self.recorder.take() {
            if let Err(e) = writer.finish(Some(self.pipeline.ticks())) {
                eprintln!("vllm_monitor: cannot finish {path}: {e}");
            }
        }
        if let Some(path) = &self.plot {
            let started = self.pipeline.schedule().started;
            match plot::write(path, self.pipeline.view().history, started) {
                Ok(()) => self.output.note(&format!("plot written to {path}")),
                Err(e) => eprintln!("vllm_monitor: cannot write {path}: {e}"),
            }
        }
        if let Some(e) = failure {
            eprintln!("vllm_monitor: {e}");
            return ExitCode::from(1);
        }
        // Before "no answer": `scrape_errors > 0` fires on exactly that.
        if self.exit_on_alert && !summary.alerts.is_empty() {
            // Said on stderr too: a cron job reading only the status, or CSV on stdout.
            let rules: Vec<String> = summary
                .alerts
                .iter()
                .map(|a| match &a.group {
                    Some(group) => format!("{} ({group})", a.rule),
                    None => a.rule.clone(),
                })
                .collect();
            // A group is a server's label value: shown, not obeyed, like every line for
            // people.
            eprintln!(
                "vllm_monitor: exit status 3: alert rule(s) fired: {}",
                visible(&rules.join(" · "))
            );
            return ExitCode::from(3);
        }
        if summary.any_answer(self.urls.len()) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    }
}

/// Whether the run goes on after a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// A replay's pace: virtual time shown `speed` times faster than real time from the
/// recorded run's start, or as fast as possible.
struct Pace {
    speed: Option<f64>,
    /// The recorded run's start and the real moment the replay began.
    origin: (DateTime<Utc>, std::time::Instant),
}

impl Pace {
    fn new(speed: Option<f64>, started: DateTime<Utc>) -> Pace {
        Pace {
            speed,
            origin: (started, std::time::Instant::now()),
        }
    }

    /// How long until virtual time `at` is due; None when it is (or at any speed).
    fn until(&self, at: DateTime<Utc>) -> Option<Duration> {
        let speed = self.speed?;
        let (virtual_origin, real_origin) = self.origin;
        // Saturating: a time years away is waited for until a signal ends the wait.
        let due = Duration::try_from_secs_f64((at - virtual_origin).as_seconds_f64().max(0.0) / speed)
            .unwrap_or(Duration::MAX);
        due.checked_sub(real_origin.elapsed())
            .filter(|wait| !wait.is_zero())
    }
}

/// Whether the terminal tells a size with room in it: one that says 0 columns or rows (a
/// pseudo-terminal whose size nobody set) would show a dashboard drawn into nothing.
fn has_room() -> bool {
    matches!(ratatui::crossterm::terminal::size(), Ok((columns, rows)) if columns > 0 && rows > 0)
}

/// A dashboard on a terminal, plain lines when piped or asked for (or when the terminal
/// has no size, which a note then says), JSON or CSV.
fn choose_output(
    args: &Args,
    tx: &mpsc::Sender<Message>,
    stop: &Arc<AtomicBool>,
) -> (Box<dyn Output>, Option<String>) {
    let progress = args.target_requests.is_some();
    let plain = || Box::new(Plain::new(std::io::stdout(), progress).details(args.details));
    if args.export.is_some() {
        let on_terminal = std::io::stdout().is_terminal();
        (
            Box::new(Csv::new(std::io::stdout()).on_terminal(on_terminal)),
            None,
        )
    } else if args.json {
        (Box::new(Json::new(std::io::stdout())), None)
    } else if args.plain || !std::io::stdout().is_terminal() {
        (plain(), None)
    } else if !has_room() {
        let why = "the terminal says it has no size (0 columns or rows): plain lines instead of \
                   the dashboard (give it one: stty rows 30 cols 100)";
        (plain(), Some(why.to_string()))
    } else {
        (
            Box::new(Dashboard::new(progress, tx.clone(), Arc::clone(stop))),
            None,
        )
    }
}

/// The URLs a run reads, as its first note names them: each of a few (passwords hidden),
/// else how many.
fn named_urls(urls: &[String]) -> String {
    match urls.len() {
        0 => "no URL".to_string(),
        1..=3 => urls
            .iter()
            // As one reads it: a `/federate` query decoded (the full URL is in `--json`).
            .map(|url| crate::output::labels::readable_url(&crate::http::Endpoint::new(url).shown))
            .collect::<Vec<_>>()
            .join(", "),
        n => format!("{n} URLs"),
    }
}

#[cfg(test)]
mod tests {
    use super::named_urls;

    /// The first note names the URLs read (a password hidden), or counts many.
    #[test]
    fn the_first_note_names_the_urls() {
        let urls = |list: &[&str]| named_urls(&list.iter().map(|u| u.to_string()).collect::<Vec<_>>());
        assert_eq!(urls(&["http://h:8000/metrics"]), "http://h:8000/metrics");
        assert_eq!(
            urls(&["https://ops:s3cret@h/metrics", "http://g/metrics"]),
            "https://ops:***@h/metrics, http://g/metrics"
        );
        assert_eq!(urls(&["http://a", "http://b", "http://c", "http://d"]), "4 URLs");
        let federate = crate::args::federate_url("http://prom:9090");
        assert!(federate.contains("%7B"), "{federate}");
        assert!(
            urls(&[federate.as_str()]).contains("match[]={__name__=~"),
            "{}",
            urls(&[federate.as_str()])
        );
    }
}
