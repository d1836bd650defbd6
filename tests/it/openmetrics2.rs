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

mod round_trip {
    //! parse(write(x)) == x for OpenMetrics 2.0 samples: a sample described here is
    //! rendered by a naive reference renderer, parsed, compared with the description;
    //! then rendered by `Sample::write_openmetrics2`, parsed again, compared again.

    use proptest::prelude::*;

    use promrate::{Format, Parser, Sample};

    /// Names with every character that needs escaping in a quoted name.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => "[a-zA-Z_][a-zA-Z0-9_]{0,12}",
            1 => "[a-z]{1,4}[.\"\\\\\né☃ -][a-z]{0,4}",
        ]
    }

    fn escaped(s: &str) -> String {
        s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
    }

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            any::<f64>(),
            (0u32..1000).prop_map(f64::from)
        ]
    }

    fn count() -> impl Strategy<Value = f64> {
        prop_oneof![(0u32..10_000).prop_map(f64::from), (0.0f64..1e6)]
    }

    #[derive(Debug, Clone)]
    enum Value {
        Number(f64),
        /// count, sum, classic buckets (bounds, cumulative counts), native histogram
        /// (schema, zero threshold, zero count, negative and positive spans and buckets).
        Histogram {
            gauge: bool,
            sum: f64,
            classic: Option<Vec<(f64, f64)>>,
            native: Option<Native>,
        },
        Summary {
            count: u32,
            sum: f64,
            quantiles: Vec<(f64, f64)>,
        },
    }

    /// A native histogram's spans (offset, length) with their buckets, one side.
    type Side = Vec<((i32, u32), Vec<f64>)>;
    /// Names and unescaped values.
    type LabelPairs = Vec<(String, String)>;

    #[derive(Debug, Clone)]
    struct Native {
        schema: i8,
        zero_threshold: f64,
        zero_count: f64,
        sides: [Side; 2],
    }

    fn classic() -> impl Strategy<Value = Vec<(f64, f64)>> {
        (
            prop::collection::btree_set(-1000i32..1000, 0..6),
            prop::collection::vec(count(), 7),
        )
            .prop_map(|(bounds, counts)| {
                let mut total = 0.0;
                let mut buckets: Vec<(f64, f64)> = bounds
                    .into_iter()
                    .zip(&counts)
                    .map(|(b, c)| {
                        total += c;
                        (f64::from(b) / 8.0, total)
                    })
                    .collect();
                buckets.push((f64::INFINITY, total + counts[6]));
                buckets
            })
    }

    fn side() -> impl Strategy<Value = Side> {
        prop::collection::vec(
            ((0i32..5), prop::collection::vec(count(), 1..4))
                .prop_map(|(offset, buckets)| ((offset, buckets.len() as u32), buckets)),
            0..3,
        )
        .prop_map(|mut spans| {
            if let Some(first) = spans.first_mut() {
                first.0 .0 -= 3; // only the first span may start below zero
            }
            spans
        })
    }

    fn native() -> impl Strategy<Value = Native> {
        (-4i8..=8, 0.0f64..1.0, count(), side(), side()).prop_map(
            |(schema, zero_threshold, zero_count, n, p)| Native {
                schema,
                zero_threshold,
                zero_count,
                sides: [n, p],
            },
        )
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            2 => number().prop_map(Value::Number),
            1 => (any::<bool>(), number(), prop::option::of(classic()), prop::option::of(native()))
                .prop_filter("buckets of one kind at least", |(_, _, c, n)| c.is_some() || n.is_some())
                .prop_map(|(gauge, sum, classic, native)| {
                    // One count for both kinds of buckets: the native buckets' total, which
                    // the classic `+Inf` bucket then holds (the lower ones cut to fit).
                    let classic = match (classic, &native) {
                        (Some(c), Some(n)) => {
                            let total = hist_count(&None, &Some(n.clone()));
                            let mut fitted: Vec<(f64, f64)> = c.into_iter().filter(|b| b.0.is_finite() && b.1 <= total).collect();
                            fitted.push((f64::INFINITY, total));
                            Some(fitted)
                        }
                        (c, _) => c,
                    };
                    Value::Histogram { gauge, sum, classic, native }
                }),
            1 => (0u32..1000, 0.0f64..1e9, prop::collection::btree_set(0u32..=100, 0..4), prop::collection::vec(0.0f64..1e3, 4))
                .prop_map(|(count, sum, qs, values)| Value::Summary {
                    count,
                    sum,
                    quantiles: qs.into_iter().map(|q| f64::from(q) / 100.0).zip(values).collect(),
                }),
        ]
    }

    #[derive(Debug, Clone)]
    struct Spec {
        name: String,
        labels: Vec<(String, String)>,
        value: Value,
        timestamp_ms: Option<i64>,
        start_ms: Option<i64>,
        exemplars: Vec<(LabelPairs, f64, i64)>,
    }

    fn ms() -> impl Strategy<Value = i64> {
        -10_000_000_000_000i64..10_000_000_000_000
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let labels = || prop::collection::btree_map(name(), "\\PC{0,4}|[\"\\\\\n]", 0..3);
        (
            name(),
            labels(),
            value(),
            prop::option::of(ms()),
            prop::option::of(ms()),
            prop::collection::vec((labels(), number(), ms()), 0..3),
        )
            .prop_map(|(name, labels, value, timestamp_ms, start_ms, exemplars)| Spec {
                name,
                labels: labels.into_iter().collect(),
                value,
                timestamp_ms,
                start_ms,
                exemplars: exemplars
                    .into_iter()
                    .map(|(l, v, t)| (l.into_iter().collect(), v, t))
                    .collect(),
            })
    }

    /// Exact decimal text for a float (Rust's shortest round trip, specials as OpenMetrics).
    fn num(v: f64) -> String {
        match v {
            v if v.is_nan() => "NaN".into(),
            f64::INFINITY => "+Inf".into(),
            f64::NEG_INFINITY => "-Inf".into(),
            v => format!("{v:?}"),
        }
    }

    /// Seconds that read back to `ms` as Prometheus reads them (the float product
    /// truncated): three decimals, or the next float for the few that fall short.
    fn seconds(ms: i64) -> String {
        promrate::text::write::Seconds(ms).to_string()
    }

    fn label_set(labels: &[(String, String)]) -> String {
        let terms: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("\"{}\"=\"{}\"", escaped(k), escaped(v)))
            .collect();
        terms.join(",")
    }

    /// The reference renderer: every name quoted, every field in the ABNF's order.
    fn render(s: &Spec) -> String {
        let mut line = format!("{{\"{}\"", escaped(&s.name));
        if !s.labels.is_empty() {
            line += &format!(",{}", label_set(&s.labels));
        }
        line += "} ";
        let list = |pairs: &[(f64, f64)]| {
            pairs
                .iter()
                .map(|(a, b)| format!("{}:{}", num(*a), num(*b)))
                .collect::<Vec<_>>()
                .join(",")
        };
        match &s.value {
            Value::Number(v) => line += &num(*v),
            Value::Summary {
                count,
                sum,
                quantiles,
            } => {
                line += &format!(
                    "{{count:{count},sum:{},quantile:[{}]}}",
                    num(*sum),
                    list(quantiles)
                )
            }
            Value::Histogram {
                gauge,
                sum,
                classic,
                native,
            } => {
                let g = if *gauge { "g" } else { "" };
                line += &format!(
                    "{{{g}count:{},{g}sum:{}",
                    num(hist_count(classic, native)),
                    num(*sum)
                );
                if let Some(n) = native {
                    line += &format!(
                        ",schema:{},zero_threshold:{},zero_count:{}",
                        n.schema,
                        num(n.zero_threshold),
                        num(n.zero_count)
                    );
                    for (side, spans) in ["negative", "positive"].iter().zip(&n.sides) {
                        if spans.is_empty() {
                            continue;
                        }
                        let offsets: Vec<String> =
                            spans.iter().map(|((o, l), _)| format!("{o}:{l}")).collect();
                        let counts: Vec<String> = spans
                            .iter()
                            .flat_map(|(_, b)| b.iter().map(|c| num(*c)))
                            .collect();
                        line += &format!(
                            ",{side}_spans:[{}],{side}_buckets:[{}]",
                            offsets.join(","),
                            counts.join(",")
                        );
                    }
                }
                if let Some(c) = classic {
                    line += &format!(",bucket:[{}]", list(c));
                }
                line += "}";
            }
        }
        if let Some(t) = s.timestamp_ms {
            line += &format!(" {}", seconds(t));
        }
        if let Some(t) = s.start_ms {
            line += &format!(" st@{}", seconds(t));
        }
        for (labels, v, t) in &s.exemplars {
            line += &format!(" # {{{}}} {} {}", label_set(labels), num(*v), seconds(*t));
        }
        line + "\n"
    }

    /// A histogram's count: its +Inf bucket, or (native only) the sum of its buckets.
    fn hist_count(classic: &Option<Vec<(f64, f64)>>, native: &Option<Native>) -> f64 {
        match (classic, native) {
            (Some(c), _) => c.last().map_or(0.0, |b| b.1),
            (None, Some(n)) => n.zero_count + n.sides.iter().flatten().flat_map(|(_, b)| b).sum::<f64>(),
            (None, None) => 0.0,
        }
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
    }

    fn check(got: &Sample<'_>, want: &Spec) -> Result<(), TestCaseError> {
        prop_assert_eq!(got.name_unescaped(), want.name.as_str());
        let labels: Vec<(String, String)> = got
            .labels()
            .iter_unescaped()
            .map(|(k, v)| (k.into_owned(), v.unescaped().into_owned()))
            .collect();
        prop_assert_eq!(&labels, &want.labels);
        prop_assert_eq!(got.timestamp_ms(), want.timestamp_ms);
        prop_assert_eq!(got.start_timestamp_ms(), want.start_ms);
        let exemplars: Vec<_> = got.exemplars().collect();
        prop_assert_eq!(exemplars.len(), want.exemplars.len());
        for (e, (labels, v, t)) in exemplars.iter().zip(&want.exemplars) {
            let got_labels: Vec<(String, String)> = e
                .labels()
                .iter_unescaped()
                .map(|(k, v)| (k.into_owned(), v.unescaped().into_owned()))
                .collect();
            prop_assert_eq!(&got_labels, labels);
            prop_assert!(same(e.value(), *v));
            prop_assert_eq!(e.timestamp_ms(), Some(*t));
        }
        match &want.value {
            Value::Number(v) => {
                prop_assert!(got.composite().is_none());
                prop_assert!(same(got.value(), *v));
            }
            Value::Summary {
                count,
                sum,
                quantiles,
            } => {
                let c = got.composite().unwrap();
                prop_assert!(same(c.count(), f64::from(*count)) && same(c.sum(), *sum));
                prop_assert_eq!(c.quantiles().unwrap().collect::<Vec<_>>(), quantiles.clone());
            }
            Value::Histogram {
                sum, classic, native, ..
            } => {
                let c = got.composite().unwrap();
                prop_assert!(same(c.count(), hist_count(classic, native)) && same(c.sum(), *sum));
                prop_assert_eq!(c.buckets().map(|b| b.collect::<Vec<_>>()), classic.clone());
                prop_assert_eq!(c.native().is_some(), native.is_some());
                if let (Some(g), Some(n)) = (c.native(), native) {
                    prop_assert_eq!(
                        (g.schema(), g.zero_threshold(), g.zero_count()),
                        (n.schema, n.zero_threshold, n.zero_count)
                    );
                    for (spans, buckets, side) in [
                        (
                            g.negative_spans().collect::<Vec<_>>(),
                            g.negative_buckets().collect::<Vec<_>>(),
                            &n.sides[0],
                        ),
                        (
                            g.positive_spans().collect::<Vec<_>>(),
                            g.positive_buckets().collect::<Vec<_>>(),
                            &n.sides[1],
                        ),
                    ] {
                        let want_spans: Vec<(i32, u32)> = side.iter().map(|(s, _)| *s).collect();
                        let got_spans: Vec<(i32, u32)> = spans.iter().map(|s| (s.offset, s.length)).collect();
                        prop_assert_eq!(got_spans, want_spans);
                        let want_buckets: Vec<f64> = side.iter().flat_map(|(_, b)| b.clone()).collect();
                        prop_assert_eq!(buckets, want_buckets);
                    }
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn parse_of_write_is_identity(spec in spec()) {
            // Lenient: a sample alone, without the `# TYPE` its value's rules depend on.
            let parser = Parser::new(Format::OpenMetrics2).strict(false);
            let page = render(&spec);
            let sample = parser.parse(&page).next().unwrap()
                .map_err(|e| TestCaseError::fail(format!("{e}: {page}")))?.into_sample().unwrap();
            check(&sample, &spec)?;
            let mut written = String::new();
            sample.write_openmetrics2(&mut written).unwrap();
            let again = parser.parse(&written).next().unwrap()
                .map_err(|e| TestCaseError::fail(format!("{e}: {written}")))?.into_sample().unwrap();
            check(&again, &spec)?;
        }
    }
}

/// A tracker reads an OpenMetrics 2.0 sample's `st@` as its series' start (like
/// `_created`): a restart that climbs past the old value before the next scrape is seen.
#[test]
fn a_tracker_takes_start_timestamps_as_created_times() {
    use chrono::{TimeDelta, TimeZone, Utc};
    use promrate::{series::ResetCause, Selector, Tracker};
    let mut tracker = Tracker::new(vec![Selector::parse("requests_total").unwrap()]);
    tracker.read_as(Format::OpenMetrics2);
    let t0 = Utc.timestamp_opt(1_700_000_000, 0).unwrap();
    let page = |value: u32, start: &str| {
        format!("# TYPE requests_total counter\nrequests_total {value} st@{start}\n# EOF\n")
    };
    tracker.ingest(&page(10, "1699999000.5"), t0).unwrap();
    tracker
        .ingest(&page(20, "1699999000.5"), t0 + TimeDelta::seconds(10))
        .unwrap();
    // Restarted, and already past 20: only the start time tells.
    let report = tracker
        .ingest(&page(30, "1700000015.0"), t0 + TimeDelta::seconds(20))
        .unwrap();
    let causes: Vec<ResetCause> = report.resets.iter().map(|r| r.cause).collect();
    assert_eq!(causes, [ResetCause::CreatedChanged]);
}

/// Found by the fuzz target `parse_openmetrics2`: a bucket count of -0 (not negative, so
/// valid) was written as `0` and read back with the other sign.
#[test]
fn a_negative_zero_count_is_written_back_with_its_sign() {
    let page = "h {count:1,sum:1,schema:0,zero_threshold:0,zero_count:-0,positive_spans:[0:2],positive_buckets:[-0,1],bucket:[-0:-0,+Inf:1]}\n# EOF\n";
    let parser = Parser::new(Format::OpenMetrics2);
    let sample = parser.parse(page).next().unwrap().unwrap().into_sample().unwrap();
    let mut line = String::new();
    sample.write_openmetrics2(&mut line).unwrap();
    line.push_str("# EOF\n");
    let again = parser
        .parse(&line)
        .next()
        .unwrap()
        .unwrap()
        .into_sample()
        .unwrap();
    assert_eq!(facts(&again), facts(&sample), "{line}");
}

mod label_groups {
    //! A family's label groups against a naive model: a sample splits its family exactly
    //! when its group (a set of labels, in any order, escaped or not, names quoted or not)
    //! differs from the sample before and equals an earlier one. The validator proves most
    //! groups distinct by their order, and hashes the rest; neither may miss a split or
    //! invent one.

    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use promrate::error::{FamilyRule, ParseErrorKind};
    use promrate::{Format, Parser};

    /// Values whose byte and number orders disagree, an escaped one, an empty one.
    const VALUES: [&str; 9] = ["1", "10", "2", "+Inf", "1.0", "a", "", r"b\\", "0.5"];

    /// One sample's labels as written: (name, value index, quoted name), first name wins.
    fn labels() -> impl Strategy<Value = Vec<(&'static str, usize, bool)>> {
        prop::collection::vec(
            (
                prop::sample::select(vec!["a", "b", "c"]),
                0..VALUES.len(),
                prop::bool::weighted(0.1),
            ),
            0..4,
        )
        .prop_map(|mut labels| {
            let mut seen = Vec::new();
            labels.retain(|(name, _, _)| {
                !seen.contains(name) && {
                    seen.push(*name);
                    true
                }
            });
            labels
        })
    }

    /// A family: a few groups, each written once or repeated, to make returns likely.
    fn family() -> impl Strategy<Value = Vec<Vec<(&'static str, usize, bool)>>> {
        (
            prop::collection::vec(labels(), 1..6),
            prop::collection::vec(0..6usize, 1..25),
        )
            .prop_map(|(groups, picks)| picks.iter().map(|&i| groups[i % groups.len()].clone()).collect())
    }

    /// A sample of the group `labels` at second `at` (a metric's samples on one page need
    /// increasing timestamps in 2.0, and a group may come again while it is current).
    fn line(labels: &[(&str, usize, bool)], at: usize) -> String {
        let terms: Vec<String> = labels
            .iter()
            .map(|&(name, value, quoted)| {
                let name = if quoted {
                    format!("\"{name}\"")
                } else {
                    name.to_string()
                };
                format!("{name}=\"{}\"", VALUES[value])
            })
            .collect();
        format!("g{{{}}} 1 {at}\n", terms.join(","))
    }

    /// The lines (1-based, on the page) where the model sees a split.
    fn model_splits(family: &[Vec<(&str, usize, bool)>]) -> Vec<usize> {
        let mut seen = Vec::new();
        let mut current: Option<BTreeMap<&str, usize>> = None;
        let mut splits = Vec::new();
        for (i, labels) in family.iter().enumerate() {
            let group: BTreeMap<&str, usize> = labels.iter().map(|&(n, v, _)| (n, v)).collect();
            if current.as_ref() == Some(&group) {
                continue;
            }
            if seen.contains(&group) {
                splits.push(i + 2);
                continue;
            }
            seen.push(group.clone());
            current = Some(group);
        }
        splits
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn splits_are_found_exactly(family in family()) {
            let mut page = String::from("# TYPE g gauge\n");
            for (at, labels) in family.iter().enumerate() {
                page += &line(labels, at);
            }
            page += "# EOF\n";
            for format in [Format::OpenMetrics2, Format::OpenMetrics] {
                let errors: Vec<(usize, ParseErrorKind)> = Parser::new(format)
                    .parse(&page)
                    .filter_map(Result::err)
                    .map(|e| (e.line, e.kind))
                    .collect();
                let splits: Vec<usize> = errors
                    .iter()
                    .map(|(line, kind)| match kind {
                        ParseErrorKind::Family { rule: FamilyRule::GroupSplit, .. } => Ok(*line),
                        _ => Err(format!("{kind:?} at line {line}")),
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| TestCaseError::fail(format!("{e}\n{page}")))?;
                prop_assert_eq!(&splits, &model_splits(&family), "{:?}\n{}", format, page);
            }
        }
    }
}

/// OpenMetrics 2.0's failure modes: a malformed exemplar is reported (a "MUST" broken is
/// an error with its line and column) but does not take its sample down: "failures
/// specific to exemplars should not cause the entire exposition to fail ... allowing the
/// valid metric data to be ingested". The error comes first, then the sample without its
/// exemplars; an error before the exemplars (or OpenMetrics 1.0, which says no such
/// thing) keeps the line refused whole.
#[test]
fn a_malformed_exemplar_is_reported_and_its_sample_kept() {
    use promrate::{error::ParseErrorKind, Tracker};
    let page = "# TYPE c counter\n\
                c_total{x=\" # \"} 1 # {id=\"a\"} 0.5\n\
                c_total{x=\"2\"} 2 1 # {id=\"b\"} 0.5 1# {id=\"c\"} 1 1\n\
                c_total{x=\"3\"} 3 st@x # {id=\"d\"} 1 1\n\
                c_total{x=\"4\"} 4 # {id=\"e\"} 0.5 1\n# EOF\n";
    for strict in [true, false] {
        let entries: Vec<String> = Parser::new(Format::OpenMetrics2)
            .strict(strict)
            .parse(page)
            .map(|e| match e {
                Ok(entry) => match entry.into_sample() {
                    Some(s) => format!(
                        "{:?}={} exemplars={}",
                        s.labels().get("x"),
                        s.value(),
                        s.exemplars().count()
                    ),
                    None => "metadata".to_string(),
                },
                Err(e) => format!("{}:{} {:?}", e.line, e.column, e.kind),
            })
            .collect();
        assert_eq!(
            entries,
            [
                "metadata",
                r#"2:34 Expected("an exemplar timestamp")"#,
                r#"Some(" # ")=1 exemplars=0"#,
                r#"3:35 InvalidExemplarTimestamp("1#")"#,
                r#"Some("2")=2 exemplars=0"#,
                r#"4:18 InvalidStartTimestamp("st@x")"#,
                r#"Some("4")=4 exemplars=1"#,
                "metadata",
            ],
            "strict {strict}"
        );
    }
    // OpenMetrics 1.0 refuses the line whole when strict, as before; read leniently, it
    // keeps the sample after the error, as Prometheus' parser keeps it (an exemplar over
    // 128 characters, a label twice, a bad value).
    let samples = |strict: bool, page: &str| {
        let entries: Vec<_> = Parser::new(Format::OpenMetrics)
            .strict(strict)
            .parse(page)
            .collect();
        let errors = entries.iter().filter(|e| e.is_err()).count();
        let samples = entries
            .iter()
            .filter(|e| e.as_ref().is_ok_and(|e| e.as_sample().is_some()));
        (errors, samples.count())
    };
    let long = "x".repeat(130);
    for exemplar in [
        "{id=\"a\"} 0.5 1 2".to_string(),
        format!("{{id=\"{long}\"}} 0.5"),
        "{id=\"a\",id=\"b\"} 0.5".to_string(),
        "{id=\"a\"} x".to_string(),
    ] {
        let v1 = format!("# TYPE c counter\nc_total 1 # {exemplar}\n# EOF\n");
        assert_eq!(samples(true, &v1), (1, 0), "{v1}");
        assert_eq!(samples(false, &v1), (1, 1), "{v1}");
    }
    // A tracker counts the line as bad and records its sample.
    let mut tracker = Tracker::new([]);
    tracker.read_as(Format::OpenMetrics2);
    let report = tracker
        .ingest(page, chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap())
        .unwrap();
    assert_eq!((report.samples, report.bad_lines), (3, 3));
    assert_eq!(
        report.first_error.map(|e| e.kind),
        Some(ParseErrorKind::Expected("an exemplar timestamp"))
    );
}

mod exemplar_failures {
    //! Whatever follows a sample's ` # `, its sample is read: with its exemplars when they
    //! are well formed, after the line's error when they are not.

    use proptest::prelude::*;

    use promrate::{Format, Parser};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn no_exemplar_takes_its_sample_down(
            value in 0u32..1_000_000,
            label in "[a-z ]{0,4}",
            tail in r##"[{}a-z="#0-9. \\,:-]{0,24}"##,
            strict in any::<bool>(),
        ) {
            let page = format!("# TYPE c counter\nc_total{{a=\"{label}\"}} {value} # {tail}\n# EOF\n");
            let entries: Vec<_> = Parser::new(Format::OpenMetrics2).strict(strict).parse(&page).collect();
            let samples: Vec<_> = entries
                .iter()
                .filter_map(|e| e.as_ref().ok()?.as_sample())
                .collect();
            prop_assert_eq!(samples.len(), 1, "{:?}", entries);
            prop_assert_eq!(samples[0].value(), f64::from(value));
            prop_assert!(samples[0].labels().get("a").is_some_and(|v| v == label.as_str()));
            // Exemplars kept only on a line without an error.
            let errors = entries.iter().filter(|e| e.is_err()).count();
            prop_assert!(errors == 0 || samples[0].exemplars().count() == 0, "{:?}", entries);
        }
    }
}

/// Errors name what is wrong (from an outside check against the 2.0 specification): the
/// state that came back, the metric name left empty, the fields a summary could take, the
/// exemplar's own value; and a `# UNIT` line is written back so that it reads again.
#[test]
fn errors_name_what_is_wrong() {
    use promrate::error::{CompositeRule, FamilyRule, ParseErrorKind};
    let first_error = |page: &str| {
        Parser::new(Format::OpenMetrics2)
            .parse(page)
            .find_map(Result::err)
            .map(|e| (e.line, e.column, e.kind))
    };
    let cases = [
        (
            "# TYPE s stateset\ns{s=\"a\"} 1\ns{s=\"b\"} 0\ns{s=\"a\"} 0\n# EOF\n",
            (
                4,
                1,
                ParseErrorKind::Family {
                    family: "s".into(),
                    rule: FamilyRule::StateSplit,
                },
            ),
        ),
        ("{\"\"} 1\n# EOF\n", (1, 2, ParseErrorKind::InvalidMetricName)),
        (
            "{\"\",a=\"b\"} 1\n# EOF\n",
            (1, 2, ParseErrorKind::InvalidMetricName),
        ),
        (
            "{\"a\",\"\"=\"b\"} 1\n# EOF\n",
            (1, 6, ParseErrorKind::InvalidLabelName),
        ),
        (
            "# TYPE s summary\ns {count:1,sum:1}\n# EOF\n",
            (
                2,
                17,
                ParseErrorKind::Composite(CompositeRule::Expected("bucket, quantile or schema")),
            ),
        ),
        (
            "# TYPE c counter\nc 1 # {} x 1\n# EOF\n",
            (2, 10, ParseErrorKind::InvalidExemplarValue("x".into())),
        ),
        (
            "# TYPE c counter\nc 1 # {} 1 x\n# EOF\n",
            (2, 12, ParseErrorKind::InvalidExemplarTimestamp("x".into())),
        ),
    ];
    for (page, want) in cases {
        assert_eq!(first_error(page), Some(want), "{page:?}");
    }
    for format in [Format::OpenMetrics, Format::OpenMetrics2] {
        let page = "# UNIT \"a.b_s\" s\n# UNIT \"b\\\"c_s\" s\n# EOF\n";
        let lines: Vec<String> = Parser::new(format)
            .parse(page)
            .map(|e| e.unwrap().to_string())
            .collect();
        assert_eq!(lines.join("\n") + "\n", page, "{format:?}");
    }
}
