//! OpenMetrics 2.0 conformance: the cases of `tests/data/openmetrics2/cases.txt` (the
//! specification's examples, Prometheus' and client_java's OM2 tests, and promrate's own,
//! origins in `tests/data/SOURCES.md`), each accepted or rejected as the file says; an
//! accepted page gives one sample per sample line, and each parses back from what `write`
//! renders.

use promrate::{Format, Parser, Sample};

use crate::data;

struct Case<'a> {
    name: &'a str,
    accept: bool,
    page: String,
}

fn cases(text: &str) -> Vec<Case<'_>> {
    let mut cases: Vec<Case<'_>> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("### case ") {
            let (name, verdict) = header.trim_end().rsplit_once(' ').expect("### case NAME VERDICT");
            assert!(matches!(verdict, "accept" | "reject"), "{name}: {verdict}");
            cases.push(Case {
                name,
                accept: verdict == "accept",
                page: String::new(),
            });
        } else if line.starts_with("### note ") || cases.is_empty() {
            continue;
        } else if let Some(case) = cases.last_mut() {
            case.page.push_str(line);
        }
    }
    cases
}

#[test]
fn every_case_accepted_or_rejected_as_expected() {
    let text = data::read(&data::dir().join("openmetrics2/cases.txt"));
    let cases = cases(&text);
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let parser = Parser::new(Format::OpenMetrics2);
    let mut disagreements = Vec::new();
    let (mut accepted, mut rejected, mut samples) = (0, 0, 0);
    for case in &cases {
        let results: Vec<_> = parser.parse(&case.page).collect();
        let first_error = results.iter().find_map(|r| r.as_ref().err());
        match (case.accept, first_error) {
            (true, None) => accepted += 1,
            (false, Some(_)) => rejected += 1,
            (expected, error) => {
                disagreements.push(format!("{}: expected {expected}, got {error:?}", case.name))
            }
        }
        if !case.accept || first_error.is_some() {
            continue;
        }
        // One sample per sample line, each rendered back by `write` to the same sample.
        let lines = case.page.lines().filter(|l| !l.starts_with('#')).count();
        let parsed: Vec<_> = results
            .iter()
            .filter_map(|r| r.as_ref().ok()?.as_sample())
            .collect();
        if parsed.len() != lines {
            disagreements.push(format!(
                "{}: {} samples for {lines} lines",
                case.name,
                parsed.len()
            ));
        }
        for sample in parsed {
            samples += 1;
            let mut line = String::new();
            sample.write_openmetrics2(&mut line).unwrap();
            let page = format!("{line}# EOF\n");
            let again = parser.parse(&page).next().unwrap();
            match again {
                Ok(entry) if entry.as_sample().is_some_and(|s| facts(s) == facts(sample)) => {}
                other => disagreements.push(format!("{}: {line:?} reads back as {other:?}", case.name)),
            }
        }
    }
    println!(
        "openmetrics 2.0 cases: {}/{} as expected ({accepted} accepted, {rejected} rejected; {samples} samples written back)",
        accepted + rejected,
        cases.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

/// Everything a sample says, floats by their bits, for comparing two readings of it.
pub fn facts(s: &Sample<'_>) -> String {
    let bits = |v: f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
    let mut out = format!("{:?}", s.name_unescaped());
    for (name, value) in s.labels().iter_unescaped() {
        out += &format!(" {name:?}={:?}", value.unescaped());
    }
    out += &format!(
        " v={} t={:?} st={:?}",
        bits(s.value()),
        s.timestamp_ms(),
        s.start_timestamp_ms()
    );
    if let Some(c) = s.composite() {
        out += &format!(" {:?} count={} sum={}", c.kind(), bits(c.count()), bits(c.sum()));
        for (a, b) in c
            .buckets()
            .into_iter()
            .flatten()
            .chain(c.quantiles().into_iter().flatten())
        {
            out += &format!(" {}:{}", bits(a), bits(b));
        }
        if let Some(n) = c.native() {
            out += &format!(
                " schema={} zt={} zc={}",
                n.schema(),
                bits(n.zero_threshold()),
                bits(n.zero_count())
            );
            out += &format!(
                " {:?} {:?}",
                n.negative_spans().collect::<Vec<_>>(),
                n.positive_spans().collect::<Vec<_>>()
            );
            for b in n.negative_buckets().chain(n.positive_buckets()) {
                out += &format!(" {}", bits(b));
            }
        }
    }
    for e in s.exemplars() {
        out += &format!(" # {:?} {} {:?}", e.labels(), bits(e.value()), e.timestamp_ms());
    }
    out
}
