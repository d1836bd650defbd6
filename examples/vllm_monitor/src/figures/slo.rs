//! Latency objectives (`--slo ttft=500ms,itl=50ms,e2e=30s`) and their attainment: the
//! share of requests within an objective, `increase(x_bucket{le="OBJECTIVE"}) /
//! increase(x_count)` over the window, as vLLM's Grafana dashboards compute it. Exact when
//! the objective is a bucket bound; else interpolated linearly between the two bounds
//! around it, as `histogram_quantile` interpolates a rank, and said to be.

use std::time::Duration;

use promrate::histogram::Bucket;

/// The latency an objective bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Latency {
    Ttft,
    Itl,
    E2e,
}

impl Latency {
    /// The name `--slo` takes and JSON writes.
    pub fn key(self) -> &'static str {
        match self {
            Latency::Ttft => "ttft",
            Latency::Itl => "itl",
            Latency::E2e => "e2e",
        }
    }

    /// Its quantiles' name in JSON (and in `capacity.not_exposed`).
    pub fn json_name(self) -> &'static str {
        match self {
            Latency::Ttft => "ttft_seconds",
            Latency::Itl => "inter_token_latency_seconds",
            Latency::E2e => "e2e_latency_seconds",
        }
    }

    pub const ALL: [Latency; 3] = [Latency::Ttft, Latency::Itl, Latency::E2e];
}

/// One objective: a request meets it when its latency is at most `seconds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objective {
    pub latency: Latency,
    pub seconds: f64,
}

/// The objectives of `--slo`, as parsed ([`parse_objectives`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Objectives(pub Vec<Objective>);

/// The share of requests within an objective over a span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attainment {
    pub objective: Objective,
    /// From 0 to 1; `None` when no request finished (or started, for TTFT) in the span.
    pub attained: Option<f64>,
    /// The objective is a bucket bound of the histogram (else: interpolated).
    pub exact: bool,
}

/// The objectives of `--slo`: `NAME=DURATION` pairs separated by commas, each latency at
/// most once, in the order ttft, itl, e2e. A duration is humantime's (`500ms`, `1m30s`) or
/// a number of seconds (`0.5`). A mistake is said with its column (from 1) in `text`.
pub fn parse_objectives(text: &str) -> Result<Vec<Objective>, String> {
    let mut objectives: Vec<Objective> = Vec::new();
    let mut column = 1;
    for part in text.split(',') {
        let at = column;
        column += part.chars().count() + 1;
        let trimmed = part.trim();
        let lead = part.chars().take_while(|c| c.is_whitespace()).count();
        let Some((name, value)) = trimmed.split_once('=') else {
            return Err(format!(
                "column {}: {trimmed:?} is not NAME=DURATION (e.g. ttft=500ms)",
                at + lead
            ));
        };
        let latency = Latency::ALL
            .into_iter()
            .find(|l| l.key().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| format!("column {}: {:?} is not ttft, itl or e2e", at + lead, name.trim()))?;
        if value.contains(['=', ';', ' ']) && value.trim().contains(['=', ';', ' ']) {
            return Err(format!(
                "column {value_at_guess}: {:?} holds more than one objective: separate them with ',' (ttft=500ms,itl=50ms)",
                value.trim(),
                value_at_guess = at + lead + name.chars().count() + 1
            ));
        }
        let value_at = at + lead + name.chars().count() + 1;
        let seconds = seconds(value.trim())
            .map_err(|why| format!("column {value_at}: {:?} is not a duration ({why})", value.trim()))?;
        if objectives.iter().any(|o| o.latency == latency) {
            return Err(format!("column {}: {} is given twice", at + lead, latency.key()));
        }
        objectives.push(Objective { latency, seconds });
    }
    objectives.sort_by_key(|o| o.latency);
    Ok(objectives)
}

/// Seconds from `500ms`, `30s`, `1m30s` or `0.5`; positive and finite.
fn seconds(text: &str) -> Result<f64, String> {
    let seconds = match text.parse::<f64>() {
        Ok(v) => v,
        // One division of whole nanoseconds: `50ms` is the double nearest 0.05, as the
        // `le="0.05"` of a page is, so the two compare equal.
        Err(_) => duration_seconds(humantime::parse_duration(text).map_err(|e| duration_mistake(&e))?),
    };
    if seconds.is_finite() && seconds > 0.0 {
        Ok(seconds)
    } else {
        Err("it must be above 0, e.g. 500ms, 30s or 0.5".into())
    }
}

/// What is wrong with a duration, in words (humantime's messages count from 0 and list
/// units no objective needs).
fn duration_mistake(e: &humantime::DurationError) -> String {
    use humantime::DurationError as E;
    match e {
        E::UnknownUnit { unit, .. } if unit.is_empty() => "a number needs a unit: 500ms, 30s, 1m".into(),
        E::UnknownUnit { unit, .. } => format!("unknown unit {unit:?}: ms, s or m"),
        _ => "expected a number and a unit: 500ms, 30s, 1m, or seconds alone (0.5)".into(),
    }
}

fn duration_seconds(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// Whether a bucket bound is the objective: equal as floats, or within one part in 10^9
/// (bounds written as `15.330000000000002` are float noise of `15.33`).
fn same_bound(bound: f64, objective: f64) -> bool {
    bound == objective || (bound - objective).abs() <= 1e-9 * objective.abs()
}

/// `buckets` in order of their bounds, equal bounds summed (as `sum by (le)` does), and
/// counts that fall from one bound to the next raised to the count before, as PromQL
/// repairs them (increases of buckets read moments apart, rounded counts). `None` when
/// they fall by more than a tenth of the observations: that is no rounding or timing but
/// buckets that are not cumulative (an exporter's mistake), and any share or quantile
/// read from them would be made up.
pub fn cumulative(buckets: &[Bucket]) -> Option<Vec<Bucket>> {
    let mut sorted = buckets.to_vec();
    sorted.sort_by(|a, b| a.upper_bound.total_cmp(&b.upper_bound));
    let mut merged: Vec<Bucket> = Vec::with_capacity(sorted.len());
    for b in sorted {
        match merged.last_mut() {
            Some(last) if last.upper_bound == b.upper_bound => last.count += b.count,
            _ => merged.push(b),
        }
    }
    let (mut highest, mut fell) = (f64::NEG_INFINITY, 0.0_f64);
    for b in &mut merged {
        fell = fell.max(highest - b.count);
        highest = highest.max(b.count);
        b.count = highest;
    }
    let total = merged.last().map_or(0.0, |b| b.count);
    (fell <= 0.1 * total).then_some(merged)
}

/// The share of the observations in `buckets` (cumulative, any order, equal bounds summed
/// as `sum by (le)` does) at or below `objective`, and whether that is exact (`objective`
/// is a bound). Between two bounds it is interpolated linearly; above the highest finite
/// bound it is the share at that bound (a lower limit, not exact). `None` without a `+Inf`
/// bucket or without observations.
pub fn attainment(buckets: &[Bucket], objective: f64) -> Option<(f64, bool)> {
    let merged = cumulative(buckets)?;
    let last = merged.last()?;
    let total = last.count;
    if last.upper_bound != f64::INFINITY || total.is_nan() || total <= 0.0 {
        return None;
    }
    if let Some(b) = merged.iter().find(|b| same_bound(b.upper_bound, objective)) {
        return Some((b.count / total, true));
    }
    let above = merged.partition_point(|b| b.upper_bound < objective);
    if above == merged.len() - 1 {
        // Beyond the highest finite bound: how many are within it is not known.
        let below = above.checked_sub(1).map_or(0.0, |i| merged[i].count);
        return Some((below / total, false));
    }
    let (low, low_count) = match above.checked_sub(1) {
        Some(i) => (merged[i].upper_bound, merged[i].count),
        None => (0.0_f64.min(merged[0].upper_bound), 0.0),
    };
    let high = merged[above];
    let within = low_count + (high.count - low_count) * (objective - low) / (high.upper_bound - low);
    Some((within / total, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(pairs: &[(f64, f64)]) -> Vec<Bucket> {
        pairs.iter().map(|&(le, c)| Bucket::new(le, c)).collect()
    }

    /// Buckets that are not cumulative (each its own count, an exporter's mistake) give no
    /// share, where repairing them as noise read 100% within any objective; a fall of a
    /// few requests in a thousand (rounded counts) is repaired.
    #[test]
    fn buckets_that_are_not_cumulative_give_no_share() {
        let own_counts = buckets(&[(0.25, 800.0), (0.5, 170.0), (1.0, 25.0), (f64::INFINITY, 5.0)]);
        assert_eq!(attainment(&own_counts, 0.5), None);
        assert!(cumulative(&own_counts).is_none());
        let read_apart = buckets(&[(0.25, 800.0), (0.5, 970.0), (1.0, 967.0), (f64::INFINITY, 1000.0)]);
        assert_eq!(attainment(&read_apart, 0.5), Some((0.97, true)));
    }

    /// 970 of 1000 requests at or under 0.5 s: exactly 0.97 when 0.5 is a bound, whichever
    /// way the objective was written (`500ms`, `0.5`, `0.50`).
    #[test]
    fn at_a_bound_the_share_is_exact() {
        let h = buckets(&[(0.25, 800.0), (0.5, 970.0), (1.0, 995.0), (f64::INFINITY, 1000.0)]);
        for text in ["ttft=500ms", "ttft=0.5", "ttft=0.50"] {
            let o = parse_objectives(text).unwrap()[0];
            assert_eq!(attainment(&h, o.seconds), Some((0.97, true)), "{text}");
        }
        // A bound written with float noise is still the bound.
        let noisy = buckets(&[(15.330000000000002, 3.0), (f64::INFINITY, 4.0)]);
        assert_eq!(attainment(&noisy, 15.33), Some((0.75, true)));
    }

    /// Between two bounds, as `histogram_quantile` interpolates: 0.75 s is halfway from
    /// 0.5 (970) to 1.0 (995), so 982.5 of 1000; below the first bound from 0; beyond the
    /// last finite bound, the share at it and not exact.
    #[test]
    fn between_bounds_it_is_interpolated() {
        let h = buckets(&[(1.0, 995.0), (0.5, 970.0), (f64::INFINITY, 1000.0), (0.25, 800.0)]);
        let (share, exact) = attainment(&h, 0.75).unwrap();
        assert!(!exact);
        assert!((share - 0.9825).abs() < 1e-15, "{share}");
        let (share, exact) = attainment(&h, 0.1).unwrap();
        assert!(!exact && (share - 0.8 * 0.1 / 0.25).abs() < 1e-15, "{share}");
        assert_eq!(attainment(&h, 30.0), Some((0.995, false)));
        // No requests, or no +Inf bucket: no share.
        assert_eq!(
            attainment(&buckets(&[(0.5, 0.0), (f64::INFINITY, 0.0)]), 0.5),
            None
        );
        assert_eq!(attainment(&buckets(&[(0.5, 3.0)]), 0.5), None);
    }

    /// Two servers' buckets sum by bound (as `sum by (le)`), and a count that falls from
    /// one bound to the next is repaired before the share is read.
    #[test]
    fn servers_sum_by_bound_and_counts_are_repaired() {
        let h = buckets(&[
            (0.5, 90.0),
            (f64::INFINITY, 100.0),
            (0.5, 180.0),
            (f64::INFINITY, 200.0),
        ]);
        assert_eq!(attainment(&h, 0.5), Some((0.9, true)));
        let jittered = buckets(&[(0.5, 50.0), (1.0, 49.0), (f64::INFINITY, 100.0)]);
        assert_eq!(attainment(&jittered, 1.0), Some((0.5, true)));
    }

    #[test]
    fn objectives_parse_and_mistakes_say_where() {
        let o = parse_objectives("e2e=30s, ttft=500ms,itl=0.05").unwrap();
        let got: Vec<(&str, f64)> = o.iter().map(|o| (o.latency.key(), o.seconds)).collect();
        assert_eq!(got, [("ttft", 0.5), ("itl", 0.05), ("e2e", 30.0)]);
        assert_eq!(parse_objectives("itl=25ms").unwrap()[0].seconds, 0.025);
        for (text, says) in [
            ("ttft=500ms,itl=5x", "column 16: \"5x\" is not a duration"),
            (
                "ttft=500ms,tpot=50ms",
                "column 12: \"tpot\" is not ttft, itl or e2e",
            ),
            ("ttft", "column 1: \"ttft\" is not NAME=DURATION"),
            ("ttft=1s,ttft=2s", "column 9: ttft is given twice"),
            ("e2e=0s", "column 5: \"0s\" is not a duration (it must be above 0"),
            ("", "column 1: \"\" is not NAME=DURATION"),
        ] {
            let err = parse_objectives(text).unwrap_err();
            assert!(err.starts_with(says), "{text}: {err}");
        }
    }
}
