//! promcat: print the samples of a /metrics page as a table or as JSON lines.
//!
//! ```text
//! promcat [FILE|URL|-] [--selector SEL] [--openmetrics] [--json]
//! ```
//! `--selector` takes a PromQL selector (`vllm:generation_tokens_total{engine="0"}`);
//! ':' and '_' compare equal in metric names. Bad lines go to stderr as `line:column: message`. Exit status: 0 all lines good,
//! 1 some line was bad, 2 the input could not be read (or the arguments were wrong).

mod common;

use std::io::{BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use promrate::{Format, Parser, Sample};

struct Args {
    source: String,
    selector: Option<String>,
    openmetrics: bool,
    json: bool,
}

const USAGE: &str = "usage: promcat [FILE|URL|-] [--selector SEL] [--openmetrics] [--json]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        source: "-".into(),
        selector: None,
        openmetrics: false,
        json: false,
    };
    let mut source = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--selector" => args.selector = Some(it.next().ok_or("--selector needs a value")?),
            "--openmetrics" => args.openmetrics = true,
            "--json" => args.json = true,
            "-h" | "--help" => return Err(USAGE.into()),
            other if other.starts_with("--") => return Err(format!("unknown option {other}\n{USAGE}")),
            other if source.is_none() => source = Some(other.to_string()),
            other => return Err(format!("unexpected argument {other}\n{USAGE}")),
        }
    }
    if let Some(source) = source {
        args.source = source;
    }
    Ok(args)
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

fn write_sample(out: &mut impl Write, sample: &Sample<'_>, json: bool) -> std::io::Result<()> {
    if json {
        let labels: serde_json::Map<String, serde_json::Value> = sample
            .labels()
            .iter()
            .map(|(k, v)| (k.to_string(), v.unescaped().into_owned().into()))
            .collect();
        let row = serde_json::json!({
            "name": sample.name(),
            "labels": labels,
            "value": json_value(sample.value()),
            "timestamp_ms": sample.timestamp_ms(),
        });
        writeln!(out, "{row}")
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
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
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
    let agent = common::agent(Duration::from_secs(10));
    let page = match common::read_source(&args.source, &agent) {
        Ok(page) => page,
        Err(message) => {
            eprintln!("promcat: {message}");
            return ExitCode::from(2);
        }
    };
    let format = if args.openmetrics {
        Format::OpenMetrics
    } else {
        page.format
    };
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
