//! `--json`: one object per interval, per event and for the summary, each with its
//! `"schema"` ([`SCHEMA`]; the rows' fields are `figures/row.rs`'s).

use std::io::Write;

use serde_json::{json, Value};

use super::{Output, Run};
use crate::events::Event;
pub use crate::figures::row::{attainments, figures, SCHEMA};
use crate::figures::{Figures, Verdict};
use crate::snapshot::Snapshot;
use crate::summary::Summary;
use crate::text::visible::json_safe;

/// One interval: time, per-URL status, the figures, groups and progress.
pub fn interval(s: &Snapshot) -> Value {
    let mut row = frame(s);
    if let (Some((label, groups)), Some(slot)) = (&s.groups, row.get_mut("groups")) {
        *slot = groups.iter().map(|(value, g)| group(label, value, g)).collect();
    }
    row
}

/// A group's object: its figures and its value of the `--by` label.
fn group(label: &str, value: &str, g: &Figures) -> Value {
    let mut v = figures(g, &Verdict::default());
    if let Value::Object(m) = &mut v {
        m.insert(label.to_string(), json!(value));
    }
    v
}

/// Where an interval's groups go in [`frame`]'s text: the key appears once, at the top
/// level (a string holding it has its quotes escaped).
const GROUPS_SLOT: &str = "\"groups\":[]";

/// [`interval`] with an empty `groups` where the groups go (with `--by`).
fn frame(s: &Snapshot) -> Value {
    let urls: Vec<Value> = s
        .servers
        .iter()
        .map(|t| {
            json!({
                "url": t.url,
                "status": t.status.to_string(),
                "state": t.status.word(),
                "ok": t.status.is_ok(),
                "server": t.status.kind().map(|k| k.as_str()),
                "errors": t.errors,
                "skipped_pages": t.skipped,
                "format": t.format.map(format_word),
                "at_ms": t.last_ok.map(|at| at.timestamp_millis()),
                "scrape_s": t.scrape_s,
                "instances": t.instances.iter().filter(|(name, _)| !name.is_empty()).map(|(name, i)| json!({
                    "instance": name, "stale": i.stale,
                    "last_restart": i.last_restart.map(|at| at.to_rfc3339()),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut row = json!({
        "schema": SCHEMA,
        "t": s.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "at_ms": s.at.timestamp_millis(),
        "elapsed_s": s.elapsed,
        "window": {
            "asked_s": s.window.asked.as_seconds_f64(),
            "span_s": s.figures.window.span.map(|x| x.seconds),
            "start": s.figures.window.span.map(|x| stamp(x.start)),
            "end": s.figures.window.span.map(|x| stamp(x.end)),
            "shortened": s.figures.window.shortened,
            "computed_at": stamp(s.window.computed_at),
            "newest_age_s": s.window.newest_age_s,
            "fresh_pages": s.window.fresh_pages,
        },
        "urls": urls,
    });
    if let (Value::Object(row), Value::Object(fields)) = (&mut row, figures(&s.figures, &s.verdict)) {
        row.extend(fields);
        if s.groups.is_some() {
            row.insert("groups".into(), Value::Array(Vec::new()));
        }
        if let Some(p) = &s.progress {
            row.insert(
                "progress".into(),
                json!({
                    "target": p.target, "finished": p.finished, "eta_s": p.eta_requests_s,
                    "eta_requests_s": p.eta_requests_s, "eta_tokens_s": p.eta_tokens_s,
                }),
            );
        }
    }
    row
}

/// A time as every object writes it.
fn stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// An announced event. Restarts keep the first releases' `"event": "restart"` and `url`;
/// an alert's has its rule, value and group instead of a URL.
pub fn event(e: &Event) -> Value {
    if let Some(a) = &e.alert {
        return json!({
            "schema": SCHEMA,
            "event": e.kind.as_str(),
            "t": stamp(e.at),
            "elapsed_s": a.elapsed_s,
            "rule": a.rule,
            "figure": a.figure,
            "value": a.value,
            "threshold": a.threshold,
            "group": a.group,
            "held_s": a.held_s,
            "source": e.source,
            "message": e.message,
        });
    }
    json!({
        "schema": SCHEMA,
        "event": e.kind.as_str(),
        "t": e.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "url": e.source,
        "source": e.source,
        "message": e.message,
    })
}

/// The first object: what is monitored, how it was chosen, and the run's warnings
/// (`"event": "start"`, new in schema 1's second release; it has no `urls` field, so
/// readers that take objects with `urls` as intervals are not misled).
pub fn start(run: &Run<'_>, notes: &[String]) -> Value {
    json!({
        "schema": SCHEMA,
        "event": "start",
        "t": stamp(run.started),
        "setup": run.setup,
        "monitoring": run.servers.iter().map(|t| t.url.as_str()).collect::<Vec<_>>(),
        "notes": notes,
        "warnings": run.warnings,
    })
}

/// The last object; `slo` (attainment since the first scrape) only with `--slo`.
pub fn summary(s: &Summary, warnings: &[String]) -> Value {
    let mut v = json!({
        "schema": SCHEMA,
        "event": "summary",
        "elapsed_s": s.elapsed_s,
        "generated_tokens": s.generated_tokens,
        "finished_requests": s.finished_requests,
        "mean_generation_tokens_per_s": s.mean_generation_rate,
        "energy_kwh": s.energy_kwh,
        "gpu_cost": s.gpu_cost,
        "restarts_announced": s.restarts,
        "alerts": s.alerts.iter().map(|f| json!({
            "rule": f.rule, "group": f.group, "fired": f.times, "firing_s": f.firing_s,
            "firing_at_end": f.at_end,
        })).collect::<Vec<_>>(),
        "scrape_errors": s.scrape_errors,
        "skipped_pages": s.skipped_pages,
        "skipped_intervals": s.skipped_intervals,
        "not_rated": s.not_rated,
        "never_answered": s.never_answered.iter().map(|(url, reason)| json!({
            "url": url, "reason": reason,
        })).collect::<Vec<_>>(),
        "warnings": warnings,
    });
    if let (false, Value::Object(m)) = (s.slo.is_empty(), &mut v) {
        m.insert("slo".into(), attainments(&s.slo));
    }
    v
}

/// `--json`: one object a line on `out`.
pub struct Json<W: Write> {
    out: W,
    closed: bool,
}

impl<W: Write> Json<W> {
    pub fn new(out: W) -> Self {
        Json { out, closed: false }
    }

    fn emit(&mut self, value: &Value) {
        let line = value.to_string();
        self.closed |= writeln!(self.out, "{}", json_safe(&line))
            .and_then(|()| self.out.flush())
            .is_err();
    }

    /// [`interval`]'s line written a group at a time: a run of 200,000 groups holds one
    /// group's object at once, not a tree of all of them (over a gigabyte).
    fn write_interval(&mut self, s: &Snapshot) -> std::io::Result<()> {
        let whole = |out: &mut W| {
            let line = interval(s).to_string();
            writeln!(out, "{}", json_safe(&line)).and_then(|()| out.flush())
        };
        let Some((label, groups)) = &s.groups else {
            return whole(&mut self.out);
        };
        let text = frame(s).to_string();
        let text = json_safe(&text);
        let Some((head, tail)) = text.split_once(GROUPS_SLOT) else {
            return whole(&mut self.out);
        };
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut self.out);
        w.write_all(head.as_bytes())?;
        w.write_all(b"\"groups\":[")?;
        for (i, (value, g)) in groups.iter().enumerate() {
            if i > 0 {
                w.write_all(b",")?;
            }
            let one = group(label, value, g).to_string();
            w.write_all(json_safe(&one).as_bytes())?;
        }
        w.write_all(b"]")?;
        w.write_all(tail.as_bytes())?;
        w.write_all(b"\n")?;
        w.flush()
    }
}

impl<W: Write> Output for Json<W> {
    fn start(&mut self, run: &Run<'_>, notes: &[String]) {
        self.emit(&start(run, notes));
    }

    fn event(&mut self, _run: &Run<'_>, _elapsed: f64, e: &Event) {
        self.emit(&event(e));
    }

    fn interval(&mut self, _run: &Run<'_>, snapshot: &Snapshot) {
        self.closed |= self.write_interval(snapshot).is_err();
    }

    /// Remarks are for people; the JSON reader has the same facts as fields.
    fn note(&mut self, _text: &str) {}

    fn summary(&mut self, run: &Run<'_>, s: &Summary) {
        self.emit(&summary(s, run.warnings));
    }

    fn closed(&self) -> bool {
        self.closed
    }
}

/// The format a URL's newest page was read in, for `urls[].format`: `text` (0.0.4 and
/// 1.0.0), `openmetrics` (1.0) or `openmetrics-2.0`.
fn format_word(format: promrate::Format) -> &'static str {
    match format {
        promrate::Format::OpenMetrics => "openmetrics",
        promrate::Format::OpenMetrics2 => "openmetrics-2.0",
        _ => "text",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::WindowState;

    /// The interval written a group at a time is byte for byte the object [`interval`]
    /// makes, a label value that spells the groups' key included.
    #[test]
    fn groups_written_one_at_a_time_are_the_whole_object() {
        let at = chrono::DateTime::from_timestamp(0, 0).unwrap();
        let mut f = Figures::default();
        f.generation.window = Some(12.5);
        let snapshot = Snapshot {
            verdict: crate::figures::Verdict::default(),
            elapsed: 1.0,
            at,
            window: WindowState {
                asked: chrono::TimeDelta::seconds(30),
                computed_at: at,
                newest_age_s: None,
                fresh_pages: 1,
            },
            figures: f.clone(),
            servers: Vec::new(),
            groups: Some((
                "model_name".into(),
                vec![
                    ("a".into(), f.clone()),
                    ("\"groups\":[]".into(), f.clone()),
                    ("c\n\u{1b}".into(), f),
                ],
            )),
            progress: Some(crate::snapshot::Progress {
                target: 10,
                finished: 1.0,
                eta_requests_s: None,
                eta_tokens_s: None,
            }),
            on_screen: None,
        };
        let mut json = Json::new(Vec::new());
        json.write_interval(&snapshot).unwrap();
        let written = String::from_utf8(json.out).unwrap();
        assert_eq!(written, format!("{}\n", interval(&snapshot)));
        let back: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(back["groups"].as_array().unwrap().len(), 3);
        assert_eq!(back["groups"][2]["model_name"], "c\n\u{1b}");
        assert!(back["progress"].is_object());
    }
}
