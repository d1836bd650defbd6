//! `--export csv`: the intervals as CSV, one line per interval (`group` empty) and one per
//! group, for spreadsheets and DuckDB. The columns are the row's time and window, then the
//! `--json` figures flattened with dots (`generation_tokens_per_s.window`), fixed by the
//! schema rather than by the first row, so a figure that appears later still has its
//! column; fields whose keys depend on the run (reasons, engines), the per-URL list and
//! the progress stay in `--json`.

use std::collections::BTreeSet;
use std::io::Write;

use serde_json::Value;

use super::json;
use super::{Output, Run};
use crate::events::{Event, EventKind};
use crate::figures::row;
use crate::figures::{Figures, Verdict};
use crate::snapshot::Snapshot;
use crate::summary::Summary;
use crate::text::visible::visible;

/// The row's own columns, before the figures': its time, what its window covers, and the
/// `--alert` rules firing on the line's totals or group after that interval.
const ROW: [&str; 13] = [
    "t",
    "at_ms",
    "elapsed_s",
    "group",
    "window.asked_s",
    "window.span_s",
    "window.start",
    "window.end",
    "window.shortened",
    "window.computed_at",
    "window.newest_age_s",
    "window.fresh_pages",
    "alerts_firing",
];

/// The flattened figure columns, in the JSON's order: from figures with every optional
/// part present, so that each of their fields has a column.
fn columns() -> Vec<String> {
    use crate::figures::slo::{Attainment, Latency, Objective};
    // Every objective `--slo` can give: a run without one leaves their cells empty.
    let slo = Latency::ALL.map(|latency| Attainment {
        objective: Objective {
            latency,
            seconds: 1.0,
        },
        attained: None,
        exact: false,
    });
    let template = Figures {
        spec_decode: Some(crate::figures::SpecDecode::default()),
        gpus: Some(crate::gpus::Gpus::default()),
        prompt_parts: crate::figures::PromptParts {
            sources: Some(crate::figures::PromptSources::default()),
            ..Default::default()
        },
        slo: slo.to_vec(),
        ..Figures::default()
    };
    let mut out = Vec::new();
    flatten_keys("", &row::figures(&template, &Verdict::default()), &mut out);
    out
}

fn flatten_keys(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten_keys(&format!("{prefix}{k}."), v, out);
            }
        }
        // An empty object's keys depend on the run (reasons, engines): left to --json.
        Value::Object(_) => {}
        _ => out.push(prefix.trim_end_matches('.').to_string()),
    }
}

/// The value at a dotted path.
fn at<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// A cell's text: numbers and words as they are, an object (a GPU model list) as JSON, an
/// unknown figure empty. Quoting is the `csv` writer's.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// CSV on `out`; the header first.
pub struct Csv<W: Write> {
    out: csv::Writer<W>,
    columns: Vec<String>,
    /// The rules firing now, by their group (`None`: the totals), from the alert events,
    /// which come before their interval's line.
    firing: BTreeSet<(Option<String>, String)>,
    closed: bool,
    /// Cells pass through [`visible`]: CSV has no escapes, and a server's text must not
    /// act on the terminal it is printed to (piped or redirected, the text is exact).
    on_terminal: bool,
}

impl<W: Write> Csv<W> {
    pub fn new(out: W) -> Self {
        Csv {
            out: csv::Writer::from_writer(out),
            columns: columns(),
            firing: BTreeSet::new(),
            closed: false,
            on_terminal: false,
        }
    }

    /// Whether `out` is a terminal: then a server's control and reordering characters
    /// are written out (`\x1b`), as the plain lines write them.
    pub fn on_terminal(mut self, on_terminal: bool) -> Self {
        self.on_terminal = on_terminal;
        self
    }

    /// One record, flushed: a reader of a pipe sees each interval as it comes.
    fn line(&mut self, cells: &[String]) {
        let written = if self.on_terminal {
            self.out
                .write_record(cells.iter().map(|c| visible(c).into_owned()))
        } else {
            self.out.write_record(cells)
        };
        self.closed |= written.is_err() || self.out.flush().is_err();
    }

    fn row(&mut self, row: &Value, group: &str, figures: &Value) {
        let scope = (!group.is_empty()).then(|| group.to_string());
        let firing = self.firing.iter().filter(|(g, _)| *g == scope).count();
        let group = Value::String(group.to_string());
        let mut cells: Vec<String> = ROW
            .iter()
            .map(|c| match *c {
                "group" => cell(Some(&group)),
                "alerts_firing" => firing.to_string(),
                c => cell(at(row, c)),
            })
            .collect();
        cells.extend(self.columns.iter().map(|c| cell(at(figures, c))));
        self.line(&cells);
    }
}

impl<W: Write> Output for Csv<W> {
    fn start(&mut self, _run: &Run<'_>, _notes: &[String]) {
        let header: Vec<String> = ROW
            .iter()
            .map(|c| c.to_string())
            .chain(self.columns.clone())
            .collect();
        self.line(&header);
    }

    /// Events are in `--json`; CSV holds the intervals, and counts the alerts firing.
    fn event(&mut self, _run: &Run<'_>, _elapsed: f64, event: &Event) {
        if let Some(a) = &event.alert {
            let key = (a.group.clone(), a.rule.clone());
            match event.kind {
                EventKind::AlertFiring => self.firing.insert(key),
                _ => self.firing.remove(&key),
            };
        }
    }

    fn interval(&mut self, _run: &Run<'_>, snapshot: &Snapshot) {
        let row = json::interval(snapshot);
        self.row(&row, "", &row);
        if let Some((label, groups)) = &snapshot.groups {
            for (value, figures) in groups {
                let group = format!("{label}={value}");
                self.row(&row, &group, &row::figures(figures, &Verdict::default()));
            }
        }
    }

    fn note(&mut self, _text: &str) {}

    fn summary(&mut self, _run: &Run<'_>, _summary: &Summary) {}

    fn closed(&self) -> bool {
        self.closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_the_json_fields_flattened_and_cells_are_quoted_when_needed() {
        let columns = columns();
        assert!(
            columns.contains(&"generation_tokens_per_s.window".to_string()),
            "{columns:?}"
        );
        assert!(columns.contains(&"ttft_seconds.p95".to_string()));
        // A total that leaves an erratic server out says so in its own column.
        assert!(columns.contains(&"not_rated".to_string()), "{columns:?}");
        assert!(!columns
            .iter()
            .any(|c| c.starts_with("requests_finished_per_s.by_reason")));
        assert_eq!(cell(Some(&serde_json::json!(1.5))), "1.5");
        assert_eq!(cell(None), "");
        let mut out = Csv::new(Vec::new());
        out.line(&[
            "a,b".to_string(),
            "say \"hi\"".to_string(),
            cell(Some(&serde_json::json!(["x", "y"]))),
        ]);
        let text = String::from_utf8(out.out.into_inner().unwrap()).unwrap();
        assert_eq!(text, "\"a,b\",\"say \"\"hi\"\"\",\"[\"\"x\"\",\"\"y\"\"]\"\n");
    }

    /// Piped, a server's text is written exactly; on a terminal, what would act on it is
    /// written out.
    #[test]
    fn on_a_terminal_a_servers_control_characters_are_written_out() {
        let name = "m\u{1b}]0;pwned\u{7}\u{202e}".to_string();
        let mut piped = Csv::new(Vec::new());
        piped.line(std::slice::from_ref(&name));
        let piped = String::from_utf8(piped.out.into_inner().unwrap()).unwrap();
        assert_eq!(piped, format!("{name}\n"));
        let mut shown = Csv::new(Vec::new()).on_terminal(true);
        shown.line(&[name]);
        let shown = String::from_utf8(shown.out.into_inner().unwrap()).unwrap();
        assert_eq!(shown, "m\\x1b]0;pwned\\x07\\u{202e}\n");
    }
}
