//! A TSDB's samples as the pages the monitor reads: the samples of one interval's span,
//! the k-th new sample of each series on the k-th page, each with its own timestamp, as
//! a `/federate` page carries them. A series with no new sample in the span repeats its
//! newest from the lookback before it (as `/federate` repeats a series' last sample),
//! which the tracker counts as a repeat: it stays on the page, its instance is not taken
//! for gone, and nothing is counted twice.

use std::collections::HashSet;

use crate::tsdb::api::{FromSeries, Series};

/// A series ready to be written on pages: its line's start and its samples, oldest first.
#[derive(Debug, Clone)]
pub struct Written {
    /// `name{label="value",...}`.
    pub head: String,
    pub samples: Vec<(i64, f64)>,
    /// Whether the series has an `instance` label: a server's, not a recording rule's.
    pub of_instance: bool,
}

/// Leaves out of an answer the series without an `instance` label when others have one:
/// a recording rule stored under a server's name (`sum without (instance)`) would count
/// every server twice. An answer without any keeps them (a TSDB that drops the label: one
/// unnamed server). Returns how many were left out and the first one's line start.
pub fn servers_only(series: &mut Vec<Written>) -> (usize, Option<String>) {
    if series.iter().all(|s| s.of_instance) || !series.iter().any(|s| s.of_instance) {
        return (0, None);
    }
    let first = series.iter().find(|s| !s.of_instance).map(|s| s.head.clone());
    let before = series.len();
    series.retain(|s| s.of_instance);
    (before - series.len(), first)
}

/// Whether `name` can be written bare in the text format (else it is quoted).
fn is_plain_name(name: &str, colons: bool) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colons && c == ':'));
    first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colons && c == ':'))
}

/// A label value (or quoted name) with `\`, `"` and newlines escaped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `name{label="value",...}`; a name the classic format cannot write bare is quoted inside
/// the braces, as text format 1.0 writes it.
pub fn head(name: &str, labels: &[(String, String)]) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(labels.len() + 1);
    let bare = is_plain_name(name, true);
    if !bare {
        parts.push(quoted(name));
    }
    for (label, value) in labels {
        let label = if is_plain_name(label, false) {
            label.clone()
        } else {
            quoted(label)
        };
        parts.push(format!("{label}={}", quoted(value)));
    }
    match (bare, parts.is_empty()) {
        (true, true) => name.to_string(),
        (true, false) => format!("{name}{{{}}}", parts.join(",")),
        (false, _) => format!("{{{}}}", parts.join(",")),
    }
}

/// A value as the text format writes it.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value == f64::INFINITY {
        "+Inf".into()
    } else if value == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{value}")
    }
}

impl FromSeries for Written {
    fn from_series(s: Series) -> Self {
        Written {
            head: head(&s.name, &s.labels),
            samples: s.samples,
            of_instance: s.labels.iter().any(|(label, _)| label == "instance"),
        }
    }
}

/// The `instance` label's value in a line start as [`head`] writes it, with its quotes
/// (`"gpu1:8000"`): after `{instance=` or `,instance=` (a whole label, not the end of
/// another's name), up to its closing quote.
fn quoted_instance(head: &str) -> Option<&str> {
    let value = ["{instance=", ",instance="]
        .iter()
        .find_map(|label| head.find(label).map(|at| &head[at + label.len()..]))?;
    let bytes = value.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(&value[..=i]),
            _ => i += 1,
        }
    }
    None
}

/// The pages a span's parts make: the most new samples of a series, one for a repeat.
fn pages_of(parts: &[Option<Part>]) -> usize {
    parts
        .iter()
        .map(|part| match part {
            Some(Part::New { first, end }) => end - first,
            Some(Part::Repeat(_)) => 1,
            None => 0,
        })
        .max()
        .unwrap_or(0)
}

/// Written series sorted by line, so that each family's lines are together.
pub fn sorted(mut out: Vec<Written>) -> Vec<Written> {
    out.sort_unstable_by(|a, b| a.head.cmp(&b.head));
    out
}

/// The series of an answer written, sorted by line.
pub fn written(series: Vec<Series>) -> Vec<Written> {
    sorted(series.into_iter().map(Written::from_series).collect())
}

/// One series' part of a span: its new samples (`first..end`), or the one it repeats.
#[derive(Debug, Clone, Copy)]
enum Part {
    New { first: usize, end: usize },
    Repeat(usize),
}

/// The pages of one span `(lo, hi]` of a set of series, the newest sample of the
/// `lookback` before `lo` repeated by the series without a new one.
#[derive(Debug)]
pub struct Span {
    parts: Vec<Option<Part>>,
    pub pages: usize,
}

impl Span {
    pub fn of(series: &[Written], lo_ms: i64, hi_ms: i64, lookback_ms: i64) -> Span {
        let parts: Vec<Option<Part>> = series
            .iter()
            .map(|s| {
                let first = s.samples.partition_point(|&(t, _)| t <= lo_ms);
                let end = s.samples.partition_point(|&(t, _)| t <= hi_ms);
                if end > first {
                    Some(Part::New { first, end })
                } else {
                    let newest = first.checked_sub(1)?;
                    (s.samples[newest].0 > lo_ms - lookback_ms).then_some(Part::Repeat(newest))
                }
            })
            .collect();
        Span {
            pages: pages_of(&parts),
            parts,
        }
    }

    /// Whether some series repeats its newest sample from before the span.
    pub fn has_repeats(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Some(Part::Repeat(_))))
    }

    /// Leaves out the repeats of the series whose instance is not among `served`, those
    /// the TSDB still serves at the span's end: a target that stopped answering, whose
    /// series it marked stale, is gone from the pages at once, as `/federate` leaves it
    /// out, not after the lookback. A series without an instance keeps its repeat. A
    /// repeat's instance is read where [`head`] wrote it, without parsing or allocating
    /// (a repeat's line is written on the page anyway). Returns the instances left out,
    /// sorted, and the newest sample they had.
    pub fn drop_repeats_unless<'a>(
        &mut self,
        series: &[Written],
        served: impl IntoIterator<Item = &'a str>,
    ) -> (Vec<String>, Option<i64>) {
        let served: HashSet<String> = served.into_iter().map(quoted).collect();
        let (mut dropped, mut newest) = (Vec::new(), None);
        for (s, part) in series.iter().zip(self.parts.iter_mut()) {
            let Some(Part::Repeat(index)) = *part else {
                continue;
            };
            if let Some(instance) = quoted_instance(&s.head).filter(|i| !served.contains(*i)) {
                newest = newest.max(Some(s.samples[index].0));
                dropped.push(instance);
                *part = None;
            }
        }
        self.pages = pages_of(&self.parts);
        dropped.sort_unstable();
        dropped.dedup();
        // As the instance was named, its quotes off (an escape in it is shown as written).
        let dropped = dropped.iter().map(|q| q[1..q.len() - 1].to_string()).collect();
        (dropped, newest)
    }

    /// Page `k` of the span (from 0), and its newest new sample's time (none on a page of
    /// repeats alone).
    pub fn page(&self, series: &[Written], k: usize) -> (String, Option<i64>) {
        let mut text = String::new();
        let mut newest: Option<i64> = None;
        for (s, part) in series.iter().zip(&self.parts) {
            let index = match part {
                Some(Part::New { first, end }) => {
                    let index = (first + k).min(end - 1);
                    if first + k < *end {
                        newest = newest.max(Some(s.samples[index].0));
                    }
                    index
                }
                Some(Part::Repeat(index)) => *index,
                None => continue,
            };
            let (at, value) = s.samples[index];
            text.push_str(&s.head);
            text.push(' ');
            text.push_str(&number(value));
            text.push(' ');
            text.push_str(&at.to_string());
            text.push('\n');
        }
        (text, newest)
    }
}
