//! vllm_monitor as a user meets it: its command line, piped plain output, and the live
//! dashboard in a real pseudo-terminal, read back through a terminal emulator.

use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

use vllm_monitor::simulator::Simulation;

use crate::monitor::monitor_binary;
use crate::recorded::{Grid, Recording, Source, ORIGIN_US};

/// Long enough for a child process to do what a test waits for however loaded the machine
/// is: a bound that fails a hung test instead of hanging, never a measure of speed.
const PATIENCE: Duration = Duration::from_secs(60);

/// A recording of the built-in simulator's page (its wave, a restart `restart_s` in) every
/// `interval` for `scrapes` scrapes, with the header's `window`.
fn simulated(name: &str, restart_s: f64, interval: Duration, scrapes: u64, window: Duration) -> Recording {
    let sim = Simulation::new(Some(restart_s)).started_at(ORIGIN_US as f64 / 1e6);
    let grid = Grid::new(interval, scrapes).window(window);
    let sources = [Source::new("http://127.0.0.1:8000/metrics", |t| sim.render_at(t))];
    Recording::make(name, grid, &sources)
}

#[test]
fn help_lists_every_option_and_bad_arguments_exit_2() {
    let help = Command::new(monitor_binary()).arg("--help").output().unwrap();
    assert!(help.status.success(), "{:?}", help.status);
    let text = String::from_utf8(help.stdout).unwrap();
    for option in [
        "--url",
        "--federate",
        "--interval",
        "--window",
        "--duration",
        "--timeout",
        "--by",
        "--target-requests",
        "--json",
        "--plain",
        "--plot",
        "--simulate-restart-after",
        "--serve",
        "--simulate",
        "--discover-ports",
        "--ca-cert",
        "--insecure",
        "--bearer-token-file",
        "--header",
        "--ewma-tau",
        "--record",
        "--replay",
        "--speed",
        "--export",
        "--help",
        "--version",
    ] {
        assert!(text.contains(option), "{option} missing from --help:\n{text}");
    }
    assert!(
        text.contains("[default: 2s;") && text.contains("[default: 30s;"),
        "{text}"
    );
    let version = Command::new(monitor_binary()).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8(version.stdout).unwrap().trim(),
        format!("vllm_monitor {}", env!("CARGO_PKG_VERSION"))
    );
    for bad in [
        &["--interval", "soon"][..],
        &["--interval", "0s"],
        &["--interval", "50ms"],
        &["--bogus"],
        &["--json", "--plain"],
    ] {
        let out = Command::new(monitor_binary()).args(bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("error:"), "{bad:?}");
    }
}

/// Piped, the monitor prints plain lines of at most 120 columns with a header every 20
/// (here of a replay: 7 s of the simulator every 250 ms, restarting 3 s in).
#[test]
fn piped_output_is_plain_lines_of_at_most_120_columns() {
    let ms = Duration::from_millis;
    let recording = simulated("piped.jsonl", 3.0, ms(250), 29, ms(2000));
    let out = Command::new(monitor_binary())
        .arg("--replay")
        .arg(recording.path())
        .args(["--duration", "7s", "--target-requests", "2000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let too_wide: Vec<&&str> = lines.iter().filter(|l| l.chars().count() > 120).collect();
    assert!(too_wide.is_empty(), "{too_wide:?}");
    assert!(!text.contains('\x1b'), "no escape sequences when piped");
    let headers: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains("gen/s")).collect();
    assert!(headers.len() >= 2, "{text}");
    // A header, then 20 lines: the next comes before the first interval after them.
    for pair in headers.windows(2) {
        assert!(
            (21..=22).contains(&(pair[1] - pair[0])),
            "a header, then 20 lines:\n{text}"
        );
    }
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("! ") && l.contains(" restart "))
            .count(),
        1,
        "{text}"
    );
    assert!(lines.last().unwrap().starts_with("summary:"), "{text}");
}

/// A terminal that says it has 0 columns and 0 rows (a pseudo-terminal whose size nobody
/// set) gets plain lines, not a dashboard drawn into nothing.
#[test]
fn a_terminal_without_a_size_gets_plain_lines() {
    let ms = Duration::from_millis;
    let recording = simulated("sizeless.jsonl", 3.0, ms(250), 17, ms(2000));
    let pty = native_pty_system()
        .openpty(PtySize {
            rows: 0,
            cols: 0,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("a pseudo-terminal");
    let mut command = CommandBuilder::new(monitor_binary());
    command.arg("--replay");
    command.arg(recording.path());
    command.args(["--duration", "4s"]);
    command.env("TERM", "xterm-256color");
    let mut child = pty.slave.spawn_command(command).expect("monitor starts");
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let drain = std::thread::spawn(move || {
        let mut raw = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        raw
    });
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the monitor did not end its 4 s replay");
        }
        std::thread::sleep(ms(50));
    };
    drop(pty.master);
    let text = String::from_utf8_lossy(&drain.join().unwrap()).into_owned();
    assert!(status.success(), "{status:?}\n{text}");
    assert!(!text.contains("\x1b[?1049h"), "no alternate screen:\n{text}");
    assert!(text.contains("gen/s"), "the plain header:\n{text}");
    assert!(text.lines().any(|l| l.starts_with("summary:")), "{text}");
}

/// The monitor running in a real pseudo-terminal, its output read back through a terminal
/// emulator (and kept raw) by a thread that drains the pty.
pub struct InPty {
    screen: Arc<Mutex<(vt100::Parser, Vec<u8>)>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    drain: std::thread::JoinHandle<()>,
}

impl InPty {
    pub fn start(rows: u16, cols: u16, args: &[&str]) -> InPty {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut command = CommandBuilder::new(monitor_binary());
        command.args(args);
        command.env("TERM", "xterm-256color");
        let child = pty.slave.spawn_command(command).expect("monitor starts");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let parser = vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0);
        let screen = Arc::new(Mutex::new((parser, Vec::new())));
        let drain = {
            let screen = Arc::clone(&screen);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut s = screen.lock().unwrap();
                    s.0.process(&buf[..n]);
                    s.1.extend_from_slice(&buf[..n]);
                }
            })
        };
        InPty {
            screen,
            child,
            master: pty.master,
            drain,
        }
    }

    /// The screen as text, now.
    pub fn contents(&self) -> String {
        self.screen.lock().unwrap().0.screen().contents()
    }

    /// The screen once `ready` holds of it, polled; the screen as it is after [`PATIENCE`]
    /// otherwise (the caller's assertions then say what is missing).
    pub fn wait_for(&self, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let shown = self.contents();
            if ready(&shown) || Instant::now() > deadline {
                return shown;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether the emulated terminal is on the alternate screen (the dashboard holds it).
    pub fn on_alternate_screen(&self) -> bool {
        self.screen.lock().unwrap().0.screen().alternate_screen()
    }

    /// Types `keys`, waits ([`PATIENCE`] at most) for the monitor to exit; its status,
    /// whether the emulated terminal is back on the normal screen, and everything it wrote.
    pub fn press_and_wait(self, keys: &[u8]) -> (portable_pty::ExitStatus, bool, String) {
        let mut writer = self.master.take_writer().unwrap();
        writer.write_all(keys).unwrap();
        writer.flush().unwrap();
        self.wait_to_end(&format!("{keys:?}"), Some(writer))
    }

    /// Sends the monitor `signal` (as `kill -SIGNAL` does), then as
    /// [`InPty::press_and_wait`].
    pub fn signal_and_wait(self, signal: &str) -> (portable_pty::ExitStatus, bool, String) {
        let pid = self.child.process_id().expect("the monitor is running");
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{signal} {pid}");
        self.wait_to_end(&format!("SIG{signal}"), None)
    }

    /// Waits ([`PATIENCE`] at most) for the monitor to exit after `what`; the terminal's
    /// `writer` goes only then (dropping it writes an end of input).
    fn wait_to_end(
        mut self,
        what: &str,
        writer: Option<Box<dyn Write + Send>>,
    ) -> (portable_pty::ExitStatus, bool, String) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the monitor did not quit on {what}; screen:\n{}", self.contents());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        drop(writer);
        drop(self.master);
        let _ = self.drain.join();
        let (parser, raw) = &*self.screen.lock().unwrap();
        (
            status,
            !parser.screen().alternate_screen(),
            String::from_utf8_lossy(raw).into_owned(),
        )
    }
}

/// The headline's rate on the dashboard's screen, if it shows one.
fn headline(shown: &str) -> Option<f64> {
    let line = shown
        .lines()
        .find(|r| r.contains(" tok/s") && !r.contains("per req"))?;
    line.trim_start_matches('│')
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The simulator restarting 5 s in, replayed at twice its speed (4 min of it: the
/// dashboard stays up until q): once the restart is in the event log, the screen shows
/// the rate, its sparkline, the KV cache and the progress, and q restores the terminal.
#[test]
fn dashboard_in_a_pseudo_terminal_shows_the_run_and_quits_on_q() {
    let recording = simulated(
        "dashboard.jsonl.zst",
        5.0,
        Duration::from_millis(500),
        481,
        Duration::from_secs(4),
    );
    let run = InPty::start(
        30,
        100,
        &[
            "--replay",
            recording.path().to_str().unwrap(),
            "--speed",
            "2",
            "--target-requests",
            "25000",
        ],
    );
    let restarted = |r: &str| r.contains(" restart ") && r.contains("server restarted");
    let shown = run.wait_for(|shown| shown.lines().any(restarted) && headline(shown).is_some());
    let (status, restored, raw) = run.press_and_wait(b"q");
    assert!(status.success(), "{status:?}");

    let rows: Vec<&str> = shown.lines().collect();
    assert!(rows.len() <= 30 && rows.iter().all(|r| r.chars().count() <= 100));
    // Every window of the replay, across the restart too, is between 1000 and 2100 tok/s.
    let value = headline(&shown).unwrap_or_else(|| panic!("no headline with a number:\n{shown}"));
    assert!((1000.0..2100.0).contains(&value), "{value}:\n{shown}");
    assert!(
        shown.chars().any(|c| "▁▂▃▄▅▆▇█".contains(c)),
        "no sparkline:\n{shown}"
    );
    assert!(
        shown.contains("KV cache") && shown.contains('%'),
        "no KV gauge:\n{shown}"
    );
    // At 100x30 the progress takes one line, so that the log holds the restart's message.
    assert!(
        shown.contains("/25000 requests") && shown.contains("count them from 0"),
        "no progress line, or the restart's message cut:\n{shown}"
    );
    assert!(
        rows.iter().any(|r| restarted(r)),
        "no restart in the event log:\n{shown}"
    );
    // Back on the normal screen: the terminal restored and the summary printed.
    assert!(restored, "left in the alternate screen");
    assert!(raw.contains("summary:"), "no summary after q");
    assert!(raw.contains("\x1b[?1049l"), "alternate screen not left");
    println!("dashboard at 100x30 once the restart is shown:\n{shown}");
}

/// `--plot`: the run's generation rate with the restart marked and a line per group (of a
/// replay: 4 s of the simulator every 500 ms, restarting 2 s in).
#[test]
fn plot_marks_the_restart_and_draws_a_line_per_group() {
    let recording = simulated(
        "plot.jsonl",
        2.0,
        Duration::from_millis(500),
        9,
        Duration::from_secs(30),
    );
    let path = std::env::temp_dir().join(format!("promrate-plot-{}.svg", std::process::id()));
    let out = Command::new(monitor_binary())
        .arg("--replay")
        .arg(recording.path())
        .args(["--plain", "--duration", "4s", "--by", "engine", "--plot"])
        .arg(&path)
        .output()
        .unwrap();
    let svg = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "{:?}", out.status);
    for legend in ["restart", "total, window rate", "total, EWMA", "engine=0"] {
        assert!(
            svg.contains(&format!(">{legend}<")) || svg.contains(legend),
            "{legend} missing from the plot"
        );
    }
    // Lines: the restart marker, the two totals and the group.
    assert!(svg.matches("<polyline").count() >= 4, "{svg}");
}

/// Ctrl-C (raw mode: a key, not a signal) and Esc end the dashboard like `q`.
#[test]
fn ctrl_c_and_esc_in_the_dashboard_quit_cleanly() {
    for key in [&b"\x03"[..], b"\x1b"] {
        let run = InPty::start(
            24,
            80,
            &["--simulate", "--interval", "500ms", "--duration", "60s"],
        );
        // Once the dashboard shows a rate, it holds the terminal in raw mode (where Ctrl-C is
        // a key) and has read pages (so the run succeeded).
        let shown = run.wait_for(|shown| run.on_alternate_screen() && headline(shown).is_some());
        assert!(
            run.on_alternate_screen() && headline(&shown).is_some(),
            "{key:?}: no dashboard with a rate:\n{shown}"
        );
        let (status, restored, raw) = run.press_and_wait(key);
        assert!(status.success(), "{key:?}: {status:?}");
        assert!(
            restored && raw.contains("summary:"),
            "{key:?}: terminal not restored or no summary"
        );
    }
}

/// SIGTERM (`kill`, `docker stop`, systemd, `timeout`) and SIGHUP (a closed terminal) end
/// the dashboard like `q`: they left the alternate screen held, the cursor hidden and the
/// terminal without echo, and no summary.
#[test]
fn sigterm_and_sighup_in_the_dashboard_quit_cleanly() {
    for signal in ["TERM", "HUP"] {
        let run = InPty::start(
            24,
            80,
            &["--simulate", "--interval", "500ms", "--duration", "60s"],
        );
        let shown = run.wait_for(|shown| run.on_alternate_screen() && headline(shown).is_some());
        assert!(run.on_alternate_screen(), "SIG{signal}: no dashboard:\n{shown}");
        let (status, restored, raw) = run.signal_and_wait(signal);
        assert!(status.success(), "SIG{signal}: {status:?}");
        assert!(restored, "SIG{signal}: still on the alternate screen");
        assert!(raw.contains("\x1b[?25h"), "SIG{signal}: the cursor stays hidden");
        assert!(raw.contains("summary:"), "SIG{signal}: no summary");
    }
}

/// A server whose error body would retitle the terminal (OSC 0), clear it and rub out
/// words: in a real terminal the dashboard shows the body with those characters written
/// out, and neither it nor the summary after it sends them (the title sequence never
/// reaches the terminal).
#[test]
fn a_hostile_error_body_reaches_the_terminal_escaped() {
    let body = "\u{1b}]0;pwned\u{7}\u{1b}[2Jall good\u{8}\u{8}\u{8}\u{8}";
    let url = crate::monitor::serve(crate::monitor::reply("500 Internal Server Error", body, None));
    let run = InPty::start(30, 120, &["--url", &url, "--interval", "500ms"]);
    let shown = run.wait_for(|shown| shown.contains("pwned"));
    let (status, restored, raw) = run.press_and_wait(b"q");
    assert!(restored, "left in the alternate screen");
    assert!(
        shown.contains("\\x1b]0;pwned\\x07\\x1b[2Jall good\\x08"),
        "{shown}"
    );
    assert!(
        !raw.contains("\u{1b}]0;"),
        "the title sequence reached the terminal: {raw:?}"
    );
    assert!(!raw.contains('\u{8}'), "backspaces reached the terminal: {raw:?}");
    // The summary, printed once the terminal is given back.
    let summary = raw.split("never answered: ").nth(1).unwrap_or_default();
    assert!(summary.contains("\\x1b]0;pwned\\x07\\x1b[2J"), "{raw:?}");
    // No scrape ever answered: exit status 1.
    assert_eq!(status.exit_code(), 1, "{status:?}");
}
