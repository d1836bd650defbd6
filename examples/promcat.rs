//! promcat: print the samples of a /metrics page as a table or as JSON lines.
//!
//! ```text
//! promcat [FILE|URL|-] [--selector SEL] [--openmetrics[=2.0]] [--json] [--timeout 10s]
//! ```
//! `--selector` takes a PromQL selector (`vllm:generation_tokens_total{engine="0"}`);
//! ':' and '_' compare equal in metric names. Bad lines go to stderr as `line:column: message`. Exit status: 0 all lines good,
//! 1 some line was bad, 2 the input could not be read (or the arguments were wrong).

mod common;

use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use promrate::{Format, Parser, Sample};

/// Print the samples of a Prometheus or OpenMetrics page as text or JSON lines.
///
/// Bad lines go to stderr as `line:column: message`. Exit status: 0 when every line was
/// good, 1 when some line was bad, 2 when the input could not be read or the arguments
/// were wrong.
#[derive(Debug, clap::Parser)]
#[command(name = "promcat", version, about, long_about)]
struct Args {
    /// A file, an http:// URL, or - for standard input.
    #[arg(default_value = "-", value_name = "FILE|URL|-")]
    source: String,

    /// Only samples matching this PromQL selector, e.g.
    /// 'vllm:generation_tokens_total{engine="0"}' (':' and '_' compare equal in names).
    #[arg(long, value_name = "SELECTOR")]
    selector: Option<String>,

    /// Read the page as OpenMetrics 1.0 (`--openmetrics`) or 2.0 (`--openmetrics=2.0`)
    /// whatever its Content-Type or file says; a URL is asked for that format.
    #[arg(long, value_name = "VERSION", num_args = 0..=1, require_equals = true,
          default_missing_value = "1.0", value_parser = ["1.0", "2.0"])]
    openmetrics: Option<String>,

    /// One JSON object per sample: name, labels, value, timestamp_ms, start_timestamp_ms
    /// (OpenMetrics 2.0's `st@`), and an OpenMetrics 2.0 histogram's or summary's
    /// `composite` (count, sum, buckets or quantiles as [bound, value] pairs).
    #[arg(long)]
    json: bool,

    /// Give up on a URL after this long (500ms, 10s).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    timeout: Duration,
}

fn json_value(v: f64) -> serde_json::Value {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        v.into()
    }
}

/// An OpenMetrics 2.0 histogram's or summary's value: its kind, count, sum and classic
/// buckets or quantiles as `[bound, value]` pairs (a native histogram's buckets are left
/// to `promrate::text::NativeHistogram`).
fn json_composite(value: &promrate::text::CompositeValue<'_>) -> serde_json::Value {
    let pairs = |pairs: Option<promrate::text::CompositePairs<'_>>| -> Option<Vec<serde_json::Value>> {
        pairs.map(|p| {
            p.map(|(bound, v)| serde_json::json!([json_value(bound), json_value(v)]))
                .collect()
        })
    };
    serde_json::json!({
        "kind": format!("{:?}", value.kind()).to_lowercase(),
        "count": json_value(value.count()),
        "sum": json_value(value.sum()),
        "buckets": pairs(value.buckets()),
        "quantiles": pairs(value.quantiles()),
    })
}

fn write_sample(out: &mut impl Write, sample: &Sample<'_>, json: bool) -> std::io::Result<()> {
    if json {
        let labels: serde_json::Map<String, serde_json::Value> = sample
            .labels()
            .iter()
            .map(|(k, v)| (k.to_string(), v.unescaped().into_owned().into()))
            .collect();
        let mut row = serde_json::json!({
            "name": sample.name(),
            "labels": labels,
            "value": json_value(sample.value()),
            "timestamp_ms": sample.timestamp_ms(),
            "start_timestamp_ms": sample.start_timestamp_ms(),
        });
        if let Some(composite) = sample.composite() {
            row["composite"] = json_composite(&composite);
        }
        writeln!(out, "{row}")
    } else if sample.composite().is_some() || sample.start_timestamp_ms().is_some() {
        // What the text format cannot say (a one-line histogram, `st@`): the 2.0 line.
        let mut line = String::new();
        sample
            .write_openmetrics2(&mut line)
            .expect("writing to a String cannot fail");
        out.write_all(line.as_bytes())
    } else {
        let mut line = String::new();
        promrate::text::write::sample(
            &mut line,
            sample.name(),
            &sample
                .labels()
                .iter()
                .map(|(k, v)| (k, v.unescaped()))
                .collect::<Vec<_>>(),
            sample.value(),
            sample.timestamp_ms(),
        )
        .expect("writing to a String cannot fail");
        out.write_all(line.as_bytes())
    }
}

fn main() -> ExitCode {
    let args = <Args as clap::Parser>::parse();
    let selector = match args
        .selector
        .as_deref()
        .map(promrate::Selector::parse)
        .transpose()
    {
        Ok(selector) => selector.map(|s| s.normalize_names(true)),
        Err(e) => {
            eprintln!("promcat: --selector: {e}");
            return ExitCode::from(2);
        }
    };
    // `--openmetrics` reads the page in that format, and asks a server for it.
    let asked = match args.openmetrics.as_deref() {
        Some("2.0") => Some(Format::OpenMetrics2),
        Some(_) => Some(Format::OpenMetrics),
        None => None,
    };
    let agent = common::agent(args.timeout);
    let page = match common::read_source(&args.source, &agent, common::accept_for(asked)) {
        Ok(page) => page,
        Err(message) => {
            eprintln!("promcat: {message}");
            return ExitCode::from(2);
        }
    };
    let format = asked.unwrap_or(page.format);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad_lines = 0;
    for entry in Parser::new(format).parse(&page.body) {
        match entry {
            Ok(promrate::Entry::Sample(sample)) => {
                if selector.as_ref().is_some_and(|s| !s.matches(&sample)) {
                    continue;
                }
                if write_sample(&mut out, &sample, args.json).is_err() {
                    // stdout closed (e.g. piped into `head`): stop quietly.
                    return ExitCode::SUCCESS;
                }
            }
            Ok(_) => {}
            Err(e) => {
                bad_lines += 1;
                eprintln!("{}:{}: {}", e.line, e.column, e.kind);
            }
        }
    }
    let _ = out.flush();
    if bad_lines > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
