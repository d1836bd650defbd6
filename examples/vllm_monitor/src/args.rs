//! Command-line arguments, and URLs made acceptable to an HTTP client as a user types them.

use crate::alerts::Rule;
use crate::engines::{Engine, DCGM, ENGINES};
use crate::figures::slo::{parse_objectives, Objectives};
use crate::recording::{RunSettings, MIN_INTERVAL};
use std::time::Duration;

use clap::Parser;

/// Live throughput of LLM inference servers (vLLM, SGLang, TGI, llama.cpp, TensorRT-LLM,
/// LMDeploy, Dynamo, Ray Serve LLM) from their Prometheus metrics: exact rates that
/// survive restarts, the figures an operator works out by hand, GPUs, energy and cost per
/// token from a DCGM exporter, and a terminal dashboard.
///
/// Without --url or --federate it looks for a server on this machine's usual ports
/// (--discover-ports) and monitors what answers; when none does, or with --simulate, it
/// monitors a built-in simulated vLLM server for 20 s.
/// The most intervals a past span may have (`--from`, `--to`, `--interval`): a row each;
/// a year at a second is 31.5 M rows of mostly nothing.
pub const MAX_SPAN_INTERVALS: f64 = 100_000.0;

#[derive(Debug, Parser)]
#[command(name = "vllm_monitor", version, about, long_about, after_help = AFTER_HELP)]
pub struct Args {
    /// A server's metrics URL, e.g. http://localhost:8000/metrics (repeat for several).
    /// Typed as is: '{', '}', '"', '=', '~' and the like in the query are percent-encoded
    /// for you, so a /federate?match[]={job="vllm"} URL works unquoted. A URL's
    /// user:password@ is sent as basic auth and shown as user:***@. [default: what answers
    /// on --discover-ports, else the built-in simulator]
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,

    /// Read a whole fleet through Prometheus or VictoriaMetrics at BASE_URL (e.g.
    /// http://localhost:9090): asks its /federate for the families of the servers above
    /// and DCGM's only, and shows figures per instance (implies --by instance).
    /// [default: none]
    #[arg(long, value_name = "BASE_URL")]
    pub federate: Option<String>,

    /// Read the servers' samples from a TSDB's Prometheus HTTP API at BASE_URL
    /// (Prometheus, VictoriaMetrics, Thanos, Mimir: e.g. http://localhost:9090, or
    /// http://vm:8428, or a Mimir's http://mimir/prometheus): raw samples of the same
    /// families as --federate, through /api/v1/query, with figures per instance from the
    /// samples' own timestamps. Live every interval, or the span of --from/--to.
    /// [default: none]
    #[arg(long, value_name = "BASE_URL", conflicts_with_all = ["url", "federate", "replay"])]
    pub prometheus: Option<String>,

    /// With --prometheus: replay the span from TIME (RFC 3339 such as
    /// 2026-12-01T22:00:00Z, or relative to now: -2h, -30m, now) through the same figures,
    /// as fast as the TSDB answers. [default: live]
    #[arg(long, value_name = "TIME", requires = "prometheus", allow_hyphen_values = true,
          value_parser = crate::when::parse_time)]
    pub from: Option<crate::when::When>,

    /// With --from: the span's end (as --from). [default: now]
    #[arg(long, value_name = "TIME", requires = "from", allow_hyphen_values = true,
          value_parser = crate::when::parse_time)]
    pub to: Option<crate::when::When>,

    /// With --prometheus: how far before its interval each read also looks. A series
    /// whose newest sample is that recent stays in the figures (as /federate repeats it),
    /// and a sample the TSDB stored late is still read. At least the TSDB's scrape
    /// interval.
    #[arg(long, value_name = "DURATION", default_value = "30s", requires = "prometheus",
          value_parser = humantime::parse_duration)]
    pub lookback: Duration,

    /// Trust only the CA certificates of this PEM file (a private CA) instead of the
    /// system's roots. [default: the system's roots]
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<String>,

    /// Do not check TLS certificates at all (every output then says so).
    #[arg(long, conflicts_with = "ca_cert")]
    pub insecure: bool,

    /// Send `Authorization: Bearer <token>` with the token read from FILE (as a
    /// Prometheus scrape config's bearer_token_file). Basic auth: user:password@ in the URL.
    #[arg(long, value_name = "FILE")]
    pub bearer_token_file: Option<String>,

    /// Send this header with every scrape, e.g. 'X-Scope-OrgID: team-a' (repeatable); it
    /// replaces the monitor's own of that name (Accept, Accept-Encoding, User-Agent).
    /// Values are never printed.
    #[arg(long, value_name = "'NAME: VALUE'")]
    pub header: Vec<String>,

    /// Monitor the built-in simulator playing SERVER (vllm, sglang, tgi, llamacpp, trtllm,
    /// lmdeploy, dynamo or ray), even if a server answers on this machine; with --serve,
    /// the server to play (or dcgm, a GPU exporter).
    /// [default: vllm, only when no --url is given and none answers]
    #[arg(long, value_name = "SERVER", num_args = 0..=1, default_missing_value = "vllm",
          value_parser = parse_engine, conflicts_with_all = ["url", "federate", "prometheus"])]
    pub simulate: Option<&'static Engine>,

    /// With the built-in simulator: also a simulated NVIDIA DCGM exporter of its 2 GPUs
    /// (power following the load, energy its integral), for the GPU figures.
    #[arg(long, conflicts_with_all = ["url", "federate"])]
    pub simulate_gpus: bool,

    /// Without --url: the ports of 127.0.0.1 probed for a server with inference metrics
    /// (vLLM, TensorRT-LLM and Dynamo 8000-8015, SGLang 30000, TGI and llama.cpp 8080,
    /// LMDeploy 23333), and for a DCGM exporter of its GPUs (9400), read beside a server.
    #[arg(long, value_name = "PORTS", default_value = "8000-8015,30000,8080,23333,9400", value_parser = parse_ports)]
    pub discover_ports: Ports,

    /// Time between scrapes (500ms, 2s, 1m30s; at least 100ms). [default: 2s; with
    /// --replay, the recording's]
    #[arg(long, value_parser = parse_interval)]
    pub interval: Option<Duration>,

    /// Rates and means are over this window, rounded to a whole number of intervals so
    /// that scrape jitter never moves its start; after a gap a window starts at the
    /// first page since, and says so. [default: 30s; with --replay, the recording's; for
    /// the simulator's 20 s demo, 10s]
    #[arg(long, value_parser = humantime::parse_duration)]
    pub window: Option<Duration>,

    /// The EWMA's time constant: a step in the rate shows 63% after it, 95% after three.
    /// [default: the window]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub ewma_tau: Option<Duration>,

    /// Write every scrape read to FILE as it happens (URL, start and end time, status,
    /// content type, body or error), one JSON object a line after a header; `.gz` and
    /// `.zst` compress. [default: none]
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<String>,

    /// Run on a recording instead of live servers, on a virtual clock: a file of
    /// --record, or one JSON object per scrape from any scraper (`url`, `start`, `end`,
    /// `status`, `content_type`, `body` or `error`), plain, .gz or .zst.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "federate", "simulate", "serve"])]
    pub replay: Option<String>,

    /// With --replay: N times real time (1 replays at the speed it was recorded).
    /// [default: as fast as possible]
    #[arg(long, value_name = "N", requires = "replay", value_parser = parse_speed)]
    pub speed: Option<f64>,

    /// Write the intervals as CSV instead (one line per interval and per group, the
    /// columns of --json flattened), for spreadsheets and DuckDB.
    #[arg(long, value_name = "FORMAT", value_parser = ["csv"], conflicts_with_all = ["json", "plain"])]
    pub export: Option<String>,

    /// Stop after this long [default: run until q or Ctrl-C; 20s with the simulator].
    #[arg(long, value_parser = humantime::parse_duration)]
    pub duration: Option<Duration>,

    /// Give up on a scrape after waiting this long for the server, its body included: a
    /// server that sends its headers and then drips the page in is "body too slow: N
    /// bytes in T". Reading a large page that came is not waiting: --max-page-mib bounds
    /// it [default: the interval, within 1s..10s].
    #[arg(long, value_parser = humantime::parse_duration)]
    pub timeout: Option<Duration>,

    /// Also show figures per value of this label (instance, model_name, engine; "url"
    /// groups by server). [default: none, totals only]
    #[arg(long, value_name = "LABEL")]
    pub by: Option<String>,

    /// With --by: the groups the dashboard and plain lines show, the busiest by
    /// generation tokens/s; the rest are summed into one row ("+ 199,950 others").
    /// --json and --export csv have every group.
    #[arg(long, value_name = "N", default_value_t = crate::top::DEFAULT_MAX_GROUPS)]
    pub max_groups: usize,

    /// Requests the run will send in all: shows progress and two ETAs (from the
    /// finished-request rate, and from tokens: remaining requests × mean tokens per
    /// request ÷ generation tokens/s). [default: none, no progress]
    #[arg(long, value_name = "N")]
    pub target_requests: Option<u64>,

    /// Latency objectives, e.g. ttft=500ms,itl=50ms,e2e=30s (any of them): the share of
    /// requests within each, per window, per group and over the run. Exact where an
    /// objective is a bucket bound of the server's histogram, else interpolated between the
    /// bounds around it (and marked so). [default: none]
    #[arg(long, value_name = "OBJECTIVES", value_parser = parse_slo)]
    pub slo: Option<Objectives>,

    /// GPUs behind the servers, for tokens/s per GPU when no DCGM exporter is given as a
    /// --url (with one, its GPUs are counted). [default: none]
    #[arg(long, value_name = "N")]
    pub gpus: Option<u32>,

    /// What one GPU hour costs (any currency): adds the cost per million generated tokens,
    /// price × GPUs ÷ 3600 ÷ tokens/s × 10^6, and the run's cost to the summary.
    #[arg(long, value_name = "PRICE")]
    pub gpu_hour_price: Option<f64>,

    /// One JSON object per interval, per event and for the summary (schema 2).
    /// [default: a dashboard on a terminal, plain lines otherwise]
    #[arg(long, conflicts_with = "plain")]
    pub json: bool,

    /// One line per interval, at most 120 columns, even on a terminal (the default when
    /// stdout is not a terminal). [default: off]
    #[arg(long)]
    pub plain: bool,

    /// With plain lines: each interval's time per phase, prompt tokens by source and
    /// capacity on lines under its row (every figure is in --json). [default: off]
    #[arg(long)]
    pub details: bool,

    /// Write generation tokens/s over the run to this SVG file at the end (restarts
    /// marked; with --by, a line per group). [default: none]
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<String>,

    /// Alert when a figure crosses a threshold for a while, e.g. 'gen_tok_s < 1000 for
    /// 30s' (repeatable; --help lists the figures). [default: none]
    #[arg(long, value_name = "RULE", value_parser = crate::alerts::parse_rule,
          long_help = crate::alerts::long_help())]
    pub alert: Vec<Rule>,

    /// With --alert: exit with status 3 if a rule fired during the run (even one that
    /// resolved since), so that cron and CI can use a run of --duration as a check.
    #[arg(long, requires = "alert")]
    pub exit_on_alert: bool,

    /// With the built-in simulator: restart the simulated server after this long.
    /// [default: 15s; with --serve, 300s]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub simulate_restart_after: Option<Duration>,

    /// With the built-in simulator: how far the running requests swing around their mean
    /// over its 16 s wave, as a fraction (0 for a steady run at exactly 1,600 tok/s).
    #[arg(long, value_name = "FRACTION", default_value_t = crate::simulator::WAVE, value_parser = parse_fraction)]
    pub simulate_wave: f64,

    /// The largest page read, in MiB (a `/federate` page of 10,000 vLLM servers is about
    /// 600 MiB); a larger one is a scrape error that says so, refused before reading when
    /// its Content-Length says so, else as soon as the limit is passed. A replayed
    /// recording's lines may be twice as long, and 1 MiB (a page written as JSON); a longer
    /// one is skipped, said.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    pub max_page_mib: u64,

    /// The most series one URL may bring: a page that would take it past is refused whole
    /// (an event says so) and the other URLs go on. The default holds a Prometheus
    /// `/federate` page of 10,000 vLLM servers (about 3.93 million series); each series
    /// costs a few hundred bytes while it is tracked.
    #[arg(long, value_name = "N", default_value_t = 5_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_series: u64,

    /// Only run the simulated server at ADDR (e.g. 127.0.0.1:8000) until Ctrl-C: vLLM, or the
    /// server --simulate names.
    /// [default: none]
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["url", "federate", "prometheus"])]
    pub serve: Option<String>,

    /// With --serve: the format the simulated server answers in: text (the text format
    /// 0.0.4 whatever is asked), openmetrics-2.0 (whatever is asked: `st@` start times,
    /// histograms as composite values), or negotiate (OpenMetrics 2.0 when the Accept
    /// header asks for version=2.0.0 at least as much as for text, else text 0.0.4).
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        default_value = "text",
        requires = "serve",
        conflicts_with = "fleet"
    )]
    pub serve_as: crate::simulator::ServeAs,

    /// With --serve: serve a Prometheus `/federate` page of N simulated vLLM servers
    /// instead (every family untyped, every sample timestamped, counters at known rates),
    /// to try --federate at fleet scale.
    #[arg(long, value_name = "N", requires = "serve")]
    pub fleet: Option<usize>,

    /// With --fleet: the vLLM page each simulated server repeats (default: the simulated
    /// server's own page).
    #[arg(long, value_name = "FILE", requires = "fleet")]
    pub fleet_template: Option<String>,
}

/// Ports to probe, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ports(pub Vec<u16>);

/// A fraction from 0 to 1.
/// Scrape intervals under 100 ms ([`MIN_INTERVAL`]) would measure the server's rendering
/// more than its throughput (and 0 would spin).
fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if d < MIN_INTERVAL {
        return Err(format!(
            "{text} is under 100ms: too short an interval to scrape a server"
        ));
    }
    Ok(d)
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{text} is not a speed above 0 (e.g. 1, 10, 0.5)")),
    }
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("{text:?}: {e}"))?;
    (0.0..=1.0)
        .contains(&value)
        .then_some(value)
        .ok_or_else(|| format!("{text} is not between 0 and 1"))
}

/// `--slo`: the mistake's column is counted from the start of the value.
fn parse_slo(text: &str) -> Result<Objectives, String> {
    parse_objectives(text).map(Objectives)
}

/// A server the simulator plays, by its catalogue name.
fn parse_engine(text: &str) -> Result<&'static Engine, String> {
    Engine::named(text).ok_or_else(|| {
        let known: Vec<&str> = ENGINES.iter().map(|e| e.kind).collect();
        format!(
            "{text:?} is not a server the simulator plays ({})",
            known.join(", ")
        )
    })
}

/// `8000-8015,30000` as a list of ports.
fn parse_ports(text: &str) -> Result<Ports, String> {
    let mut ports = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let port = |p: &str| p.trim().parse::<u16>().map_err(|e| format!("{p:?}: {e}"));
        match part.split_once('-') {
            Some((first, last)) => {
                let (first, last) = (port(first)?, port(last)?);
                if first > last {
                    return Err(format!("{part:?}: the range runs backwards"));
                }
                ports.extend(first..=last);
            }
            None => ports.push(port(part)?),
        }
    }
    Ok(Ports(ports))
}

const AFTER_HELP: &str = "\
Keys in the dashboard: q, Esc or Ctrl-C quit and print the summary.
Exit status: 0 after at least one successful scrape; 1 when none succeeded; 2 for bad
arguments or when the simulated server could not start; 3 with --exit-on-alert when an
--alert rule fired.";

/// The families `--federate` asks for: every catalogued server's and the DCGM exporter's,
/// by their prefixes, `:` also as `_` (a Prometheus that scraped OpenMetrics, or escaped
/// names, stores `vllm_x` for `vllm:x`).
pub fn federate_match() -> String {
    let prefixes: Vec<&str> = ENGINES
        .iter()
        .copied()
        .chain([&DCGM])
        .flat_map(|e| e.prefixes.iter().copied())
        .collect();
    // `vllm:` is also written `vllm_` (OpenMetrics renames it): one `vllm[:_]` takes both.
    let colon_stems: Vec<&str> = prefixes.iter().filter_map(|p| p.strip_suffix(':')).collect();
    let mut alternatives: Vec<String> = prefixes
        .iter()
        .filter(|p| {
            !p.strip_suffix('_')
                .is_some_and(|stem| colon_stems.contains(&stem))
        })
        .map(|p| match p.strip_suffix(':') {
            Some(stem) => format!("{stem}[:_].+"),
            None => format!("{p}.+"),
        })
        .collect();
    alternatives.sort();
    alternatives.dedup();
    format!(r#"{{__name__=~"{}"}}"#, alternatives.join("|"))
}

impl Args {
    /// The URLs to scrape: `--url` as given (encoded), then the `--federate` URL; one
    /// without a scheme gets `http://` (each such URL is named in the notes).
    pub fn urls(&self) -> (Vec<String>, Vec<String>) {
        let mut notes = Vec::new();
        let mut with_scheme = |u: &str| {
            let u = without_fragment(u);
            if u.contains("://") {
                u.to_string()
            } else {
                notes.push(format!("{u} has no scheme: read as http://{u}"));
                format!("http://{u}")
            }
        };
        let mut urls: Vec<String> = self.url.iter().map(|u| encode_url(&with_scheme(u))).collect();
        if let Some(base) = &self.federate {
            urls.push(federate_url(&with_scheme(base)));
        }
        // The same URL twice is one server: scraped twice, its tokens counted twice.
        let mut seen = std::collections::HashSet::new();
        urls.retain(|url| {
            let first = seen.insert(url.clone());
            if !first {
                notes.push(format!("{url} is given twice: read once"));
            }
            first
        });
        (urls, notes)
    }

    /// The scrape interval asked, or the default (2 s).
    pub fn interval_or_default(&self) -> Duration {
        self.interval.unwrap_or(Duration::from_secs(2))
    }

    /// The window asked, or the default (30 s).
    pub fn window_or_default(&self) -> Duration {
        self.window.unwrap_or(Duration::from_secs(30))
    }

    /// What clap cannot check alone: options that need or exclude one another by their
    /// values. The error is for the user, as clap's are.
    pub fn check(&self) -> Result<(), String> {
        self.check_span(chrono::Utc::now())?;
        if self.speed.is_some() && self.replay.is_none() {
            return Err("--speed paces a replay: it needs --replay FILE".into());
        }
        // A rule on an objective's share can only fire when that objective is asked.
        let objectives: Vec<&str> = self
            .slo
            .iter()
            .flat_map(|o| o.0.iter().map(|o| o.latency.key()))
            .collect();
        for rule in &self.alert {
            if let Some(latency) = rule.figure.name.strip_prefix("slo_") {
                if !objectives.contains(&latency) {
                    return Err(format!(
                        "--alert '{rule}' reads the share within the {latency} objective: give it with --slo {latency}=DURATION"
                    ));
                }
            }
        }
        if self.details && (self.json || self.export.is_some()) {
            return Err(
                "--details adds lines to plain output: --json and --export carry every figure already".into(),
            );
        }
        Ok(())
    }

    /// `--from` and `--to` at `now`: a span of a TSDB's past, in order, and one a run can
    /// go through. (clap lets `--from` pass beside `--url`: `--prometheus`, which it needs,
    /// conflicts with `--url`.)
    pub fn check_span(&self, now: chrono::DateTime<chrono::Utc>) -> Result<(), String> {
        let Some(from) = self.from else {
            return Ok(());
        };
        if self.prometheus.is_none() {
            return Err(
                "--from replays a span from a TSDB: it needs --prometheus BASE_URL (--url and --federate watch live)"
                    .into(),
            );
        }
        let time = |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let from = from.resolve(now);
        let to = self.to.map_or(now, |to| to.resolve(now));
        // A second's slack: `now` is read twice.
        let slack = chrono::TimeDelta::seconds(1);
        if self.to.is_none() && from > now + slack {
            return Err(format!(
                "--from ({}) is after now ({}): a span of a TSDB's past begins before now (-2h, or RFC 3339)",
                time(from),
                time(now)
            ));
        }
        if to <= from {
            return Err(format!(
                "--to ({}) is not after --from ({})",
                time(to),
                time(from)
            ));
        }
        if to > now + slack {
            return Err(format!(
                "--to ({}) is after now ({}): the TSDB has no samples yet there; leave --to out to end the span now, or --from too to watch live",
                time(to),
                time(now)
            ));
        }
        let intervals = (to - from).to_std().unwrap_or_default().as_secs_f64()
            / self.interval_or_default().as_secs_f64().max(1e-3);
        if intervals > MAX_SPAN_INTERVALS {
            return Err(format!(
                "--from {} to {} is {intervals:.0} intervals of {}: give a longer --interval (each row covers one), or a shorter span",
                time(from),
                time(to),
                humantime::format_duration(self.interval_or_default())
            ));
        }
        Ok(())
    }

    /// The settings a run is recorded with (`--record`), as a replay reads them again.
    pub fn run_settings(&self) -> RunSettings {
        RunSettings {
            slo: self.slo.as_ref().map(|o| {
                let each: Vec<String> =
                    o.0.iter()
                        .map(|o| format!("{}={}", o.latency.key(), o.seconds))
                        .collect();
                each.join(",")
            }),
            alerts: self.alert.iter().map(ToString::to_string).collect(),
            exit_on_alert: self.exit_on_alert,
            by: self.group_label(),
        }
    }

    /// A recording's settings (`--replay`) where this command line does not give them
    /// again: a flag given overrides the recording's (`--window` likewise, read with the
    /// recording's interval in `app.rs`). Returns what was taken, for the
    /// notes; an error names the recorded setting that no longer reads.
    pub fn adopt(&mut self, recorded: &RunSettings) -> Result<Vec<String>, String> {
        let mut taken = Vec::new();
        if let (None, Some(slo)) = (&self.slo, &recorded.slo) {
            let objectives =
                parse_objectives(slo).map_err(|e| format!("the recording's --slo {slo}: {e}"))?;
            self.slo = Some(Objectives(objectives));
            taken.push(format!("--slo {slo}"));
        }
        // The rules and whether they set the exit status go together: rules given again
        // come with the replay's own --exit-on-alert.
        if self.alert.is_empty() && !recorded.alerts.is_empty() {
            for text in &recorded.alerts {
                let rule = crate::alerts::parse_rule(text)
                    .map_err(|e| format!("the recording's --alert '{text}': {e}"))?;
                self.alert.push(rule);
                taken.push(format!("--alert '{text}'"));
            }
            if recorded.exit_on_alert && !self.exit_on_alert {
                self.exit_on_alert = true;
                taken.push("--exit-on-alert".into());
            }
        }
        if let (None, Some(by)) = (&self.by, &recorded.by) {
            self.by = Some(by.clone());
            taken.push(format!("--by {by}"));
        }
        Ok(taken)
    }

    /// The label to group by: `--by`, else `instance` when reading a federation.
    pub fn group_label(&self) -> Option<String> {
        self.by.clone().or_else(|| {
            (self.federate.is_some() || self.prometheus.is_some()).then(|| "instance".to_string())
        })
    }
}

/// The URL without its `#fragment`: a fragment names a part of a document for the browser
/// and is never sent (RFC 9110 4.2.4; curl and Go's client leave it out). Sent, it became
/// part of the path, or of the query's last value once encoded (`%23`).
pub fn without_fragment(url: &str) -> &str {
    url.split_once('#').map_or(url, |(url, _)| url)
}

/// The `/federate` URL of a Prometheus or VictoriaMetrics at `base` (typed with its
/// `/federate` too, as one copies it from a browser, it is the same base).
pub fn federate_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/federate").unwrap_or(base);
    encode_url(&format!("{base}/federate?match[]={}", federate_match()))
}

/// Percent-encodes what a user may type in a URL's query but an HTTP client refuses
/// (`{`, `}`, `"`, `[`, `]`, spaces, ...), and what the server would misread (`=` and
/// `~` inside a value, `+`, which form decoding turns into a space). `%XX` escapes
/// already there are kept, so encoding twice changes nothing.
pub fn encode_url(url: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
    // Everything outside RFC 3986's unreserved set and the few sub-delimiters that are
    // harmless in a PromQL selector.
    const KEY: &AsciiSet = &CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'<')
        .add(b'>')
        .add(b'[')
        .add(b']')
        .add(b'\\')
        .add(b'^')
        .add(b'`')
        .add(b'{')
        .add(b'|')
        .add(b'}')
        .add(b'+');
    const VALUE: &AsciiSet = &KEY.add(b'=').add(b'~').add(b'&');
    let Some((head, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) => format!(
                "{}={}",
                utf8_percent_encode(key, KEY),
                utf8_percent_encode(value, VALUE)
            ),
            None => utf8_percent_encode(pair, KEY).to_string(),
        })
        .collect();
    format!("{head}?{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--federate` takes the base URL, or the `/federate` URL itself.
    #[test]
    fn a_federate_base_typed_with_its_path_is_the_same_base() {
        assert_eq!(
            federate_url("http://p:9090/federate"),
            federate_url("http://p:9090")
        );
        assert_eq!(
            federate_url("http://p:9090/federate/"),
            federate_url("http://p:9090/")
        );
        assert!(federate_url("http://p:9090").starts_with("http://p:9090/federate?match"));
    }

    /// A URL's `#fragment` is not sent: not in the path, nor in the query's last value.
    #[test]
    fn a_fragment_is_left_out_of_the_request() {
        let urls = |argv: &[&str]| {
            let mut all = vec!["vllm_monitor"];
            all.extend(argv);
            Args::try_parse_from(all).unwrap().urls().0
        };
        assert_eq!(
            urls(&["--url", "http://h:8000/metrics#top"]),
            ["http://h:8000/metrics"]
        );
        assert_eq!(
            urls(&["--url", "h:8000/metrics?name[]=x#top"]),
            ["http://h:8000/metrics?name%5B%5D=x"]
        );
        // The same server with and without a fragment is one server.
        assert_eq!(
            urls(&[
                "--url",
                "http://h:8000/metrics",
                "--url",
                "http://h:8000/metrics#a"
            ]),
            ["http://h:8000/metrics"]
        );
        assert!(urls(&["--federate", "http://p:9090#x"])[0].starts_with("http://p:9090/federate?match"));
    }

    /// A span is one of a TSDB's past, in order, of a number of rows a run can go through;
    /// each mistake is said with the times it read, in RFC 3339.
    #[test]
    fn a_span_is_checked_before_the_run() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-06T04:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let check = |extra: &[&str]| {
            let mut argv = vec!["vllm_monitor", "--prometheus", "http://tsdb:9090"];
            argv.extend(extra);
            Args::try_parse_from(argv).unwrap().check_span(now)
        };
        assert_eq!(check(&["--from", "-2h"]), Ok(()));
        assert_eq!(check(&["--from", "-1h", "--to", "-30m"]), Ok(()));
        assert_eq!(
            check(&["--from", "-1m", "--to", "-5m"]),
            Err("--to (2026-12-06T03:55:00Z) is not after --from (2026-12-06T03:59:00Z)".into())
        );
        let future = check(&["--from", "-1m", "--to", "2026-12-06T04:10:00Z"]).unwrap_err();
        assert!(
            future.starts_with("--to (2026-12-06T04:10:00Z) is after now"),
            "{future}"
        );
        let ahead = check(&["--from", "2026-12-07T00:00:00Z"]).unwrap_err();
        assert!(
            ahead.starts_with("--from (2026-12-07T00:00:00Z) is after now"),
            "{ahead}"
        );
        let long = check(&["--from", "-365d", "--interval", "1s"]).unwrap_err();
        assert!(long.contains("31536000 intervals of 1s"), "{long}");
        assert_eq!(check(&["--from", "-365d", "--interval", "1h"]), Ok(()));
        // Beside --url (clap lets it pass: --prometheus conflicts with --url).
        let live = Args::try_parse_from([
            "vllm_monitor",
            "--url",
            "http://gpu1:8000/metrics",
            "--from",
            "-1m",
        ])
        .unwrap()
        .check_span(now)
        .unwrap_err();
        assert!(
            live.starts_with("--from replays a span from a TSDB: it needs --prometheus"),
            "{live}"
        );
    }

    #[test]
    fn a_url_without_a_scheme_is_read_as_http_and_said() {
        let args = Args::try_parse_from([
            "vllm_monitor",
            "--url",
            "localhost:8000/metrics",
            "--url",
            "https://gpu1:8000/metrics",
            "--federate",
            "prometheus:9090",
        ])
        .unwrap();
        let (urls, notes) = args.urls();
        assert_eq!(urls[0], "http://localhost:8000/metrics");
        assert_eq!(urls[1], "https://gpu1:8000/metrics");
        assert!(
            urls[2].starts_with("http://prometheus:9090/federate?match"),
            "{}",
            urls[2]
        );
        assert_eq!(
            notes,
            [
                "localhost:8000/metrics has no scheme: read as http://localhost:8000/metrics",
                "prometheus:9090 has no scheme: read as http://prometheus:9090",
            ]
        );
        // The same server twice was counted twice (2,000 tok/s of 1,000).
        let twice = Args::try_parse_from([
            "vllm_monitor",
            "--url",
            "gpu1:8000/metrics",
            "--url",
            "http://gpu1:8000/metrics",
        ])
        .unwrap();
        let (urls, notes) = twice.urls();
        assert_eq!(urls, ["http://gpu1:8000/metrics"]);
        assert_eq!(notes[1], "http://gpu1:8000/metrics is given twice: read once");
        for short in ["0s", "99ms"] {
            let err = Args::try_parse_from(["vllm_monitor", "--interval", short]).unwrap_err();
            assert!(err.to_string().contains("under 100ms"), "{err}");
        }
    }

    #[test]
    fn a_federate_url_as_typed_is_encoded_once() {
        let typed = r#"http://127.0.0.1:9090/federate?match[]={job="vllm",x=~"a.+"}"#;
        let encoded = encode_url(typed);
        assert_eq!(
            encoded,
            "http://127.0.0.1:9090/federate?match%5B%5D=%7Bjob%3D%22vllm%22,x%3D%7E%22a.%2B%22%7D"
        );
        assert_eq!(encode_url(&encoded), encoded, "encoding is idempotent");
        // The HTTP client takes it.
        assert!(encoded.parse::<ureq::http::Uri>().is_ok());
        assert!(typed.parse::<ureq::http::Uri>().is_err());
        // Plain URLs and several parameters are left readable.
        assert_eq!(encode_url("http://h:8000/metrics"), "http://h:8000/metrics");
        assert_eq!(encode_url("http://h/q?a=1&b=2"), "http://h/q?a=1&b=2");
    }

    #[test]
    fn federate_asks_for_the_inference_families_only() {
        let matcher = federate_match();
        // Each server once, `:` or `_` alike; the GPUs too.
        for family in [
            "vllm[:_].+",
            "sglang[:_].+",
            "tgi_.+",
            "llamacpp[:_].+",
            "trtllm_.+",
            "ray_vllm_.+",
            "DCGM_FI_.+",
        ] {
            assert_eq!(matcher.matches(family).count(), 1, "{family} in {matcher}");
        }
        // No family twice: `vllm_` is inside `vllm[:_]`.
        for redundant in ["vllm_.+", "sglang_.+", "lmdeploy_.+", "llamacpp_.+"] {
            assert!(
                !matcher.contains(&format!("|{redundant}")) && !matcher.contains(&format!("\"{redundant}")),
                "{matcher}"
            );
        }
        let url = federate_url("http://prom:9090/");
        assert!(
            url.starts_with("http://prom:9090/federate?match%5B%5D=%7B__name__%3D%7E%22"),
            "{url}"
        );
        assert!(url.contains("vllm"), "{url}");
        assert!(url.parse::<ureq::http::Uri>().is_ok());
    }

    #[test]
    fn arguments_parse_and_help_lists_every_option() {
        use clap::CommandFactory;
        Args::command().debug_assert();
        let args = Args::try_parse_from([
            "vllm_monitor",
            "--interval",
            "1m30s",
            "--federate",
            "http://p:9090",
        ])
        .expect("valid arguments");
        assert_eq!(args.interval, Some(Duration::from_secs(90)));
        assert_eq!(args.group_label().as_deref(), Some("instance"));
        assert_eq!(
            args.discover_ports.0.len(),
            20,
            "8000-8015, SGLang, TGI, LMDeploy, DCGM"
        );
        assert_eq!(parse_ports("9, 7-8").unwrap(), Ports(vec![9, 7, 8]));
        assert!(parse_ports("8-7").is_err() && parse_ports("x").is_err());
        let bad = Args::try_parse_from(["vllm_monitor", "--interval", "fast"]).unwrap_err();
        assert_eq!(bad.exit_code(), 2);
        let help = Args::command().render_long_help().to_string();
        // Every server the simulator plays is named where --simulate is explained.
        let simulate = &help[help.find("--simulate [").unwrap()..];
        let simulate = &simulate[..simulate.find("\n\n").unwrap_or(simulate.len())];
        for engine in crate::engines::ENGINES {
            assert!(
                simulate.contains(engine.kind),
                "{} missing from --simulate's help",
                engine.kind
            );
        }
        for option in Args::command().get_arguments() {
            if let Some(long) = option.get_long() {
                assert!(
                    help.contains(&format!("--{long}")),
                    "--{long} missing from --help"
                );
            }
        }
    }
}
