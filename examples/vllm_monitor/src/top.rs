//! The groups a screen shows (`--by`): the top [`DEFAULT_MAX_GROUPS`] (`--max-groups`) by
//! generation tokens/s, in name order, and the rest summed into one row that says how many
//! it holds ("+ 199,950 others"). `--json` and `--export csv` have every group.
//!
//! For the next maintainer: the cut is one pass over the groups (a selection, not a sort
//! of all of them), so an interval of 200,000 groups costs what their figures cost. Only
//! figures that add up are summed into the others' row (rates, counts, running,
//! waiting); quantiles, means and ratios of a sum of groups would need their series and
//! are left unknown ("-").

use std::cmp::Ordering;

use crate::figures::{Figures, Rate};

/// Groups shown on screen unless `--max-groups` says otherwise.
pub const DEFAULT_MAX_GROUPS: usize = 50;

/// The groups beyond the top ones, summed.
#[derive(Debug, Clone)]
pub struct Others {
    /// How many groups the row holds.
    pub count: usize,
    pub figures: Figures,
}

impl Others {
    /// "+ 199,950 others".
    pub fn label(&self) -> String {
        format!("+ {} others", thousands(self.count))
    }

    /// The shortest form that still says how many: "+199,950".
    pub fn short_label(&self) -> String {
        format!("+{}", thousands(self.count))
    }
}

/// Which groups of a snapshot a screen shows: indices into its groups (name order) and
/// the others' row.
#[derive(Debug, Clone, Default)]
pub struct OnScreen {
    pub rows: Vec<usize>,
    pub others: Option<Others>,
}

/// `n` with a comma between thousands: 199,950.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Higher generation tokens/s first; a group without a rate after every group with one.
fn by_generation(a: &Figures, b: &Figures) -> Ordering {
    match (a.generation.window, b.generation.window) {
        (Some(a), Some(b)) => b.total_cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// The top `max` of `groups` by generation tokens/s (ties to the first in name order),
/// kept in name order, and the others summed: linear in the number of groups.
pub fn on_screen(groups: &[(String, Figures)], max: usize) -> OnScreen {
    if groups.len() <= max {
        return OnScreen {
            rows: (0..groups.len()).collect(),
            others: None,
        };
    }
    let (top, rest) = select(groups.len(), max, |a, b| {
        by_generation(&groups[a].1, &groups[b].1).then(a.cmp(&b))
    });
    let others = Others {
        count: rest.len(),
        figures: sum(rest.iter().map(|&i| &groups[i].1)),
    };
    OnScreen {
        rows: top,
        others: Some(others),
    }
}

/// The first `max` of `0..n` as `rank` orders them, in index order, and the rest: a
/// selection, linear in `n` (a sort would be `n log n`, a scan per group `n²`).
fn select(n: usize, max: usize, mut rank: impl FnMut(usize, usize) -> Ordering) -> (Vec<usize>, Vec<usize>) {
    let mut order: Vec<usize> = (0..n).collect();
    if max > 0 && max < n {
        order.select_nth_unstable_by(max - 1, |a, b| rank(*a, *b));
    }
    let rest = order.split_off(max.min(n));
    order.sort_unstable();
    (order, rest)
}

/// `a + b` where either is known.
pub(crate) fn add(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// The figures of `rows` that add up, summed; the others unknown.
pub fn sum<'f>(rows: impl Iterator<Item = &'f Figures>) -> Figures {
    let mut s = Figures::default();
    let add_rate = |to: &mut Rate, r: &Rate| {
        to.window = add(to.window, r.window);
        to.ewma = add(to.ewma, r.ewma);
        to.promql = add(to.promql, r.promql);
    };
    for f in rows {
        add_rate(&mut s.generation, &f.generation);
        add_rate(&mut s.prompt, &f.prompt);
        s.prompt_parts.computed = add(s.prompt_parts.computed, f.prompt_parts.computed);
        s.prompt_parts.cached = add(s.prompt_parts.cached, f.prompt_parts.cached);
        s.requests.finished = add(s.requests.finished, f.requests.finished);
        s.requests.finished_in_window = add(s.requests.finished_in_window, f.requests.finished_in_window);
        s.in_flight.running = add(s.in_flight.running, f.in_flight.running);
        s.in_flight.waiting = add(s.in_flight.waiting, f.in_flight.waiting);
        s.in_flight.running_mean = add(s.in_flight.running_mean, f.in_flight.running_mean);
        s.since_start.finished = add(s.since_start.finished, f.since_start.finished);
        s.since_start.generated = add(s.since_start.generated, f.since_start.generated);
        s.tokens_at_request_end |= f.tokens_at_request_end;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, rate: Option<f64>) -> (String, Figures) {
        let figures = Figures {
            generation: Rate {
                window: rate,
                ..Rate::default()
            },
            in_flight: crate::figures::InFlight {
                running: Some(1.0),
                ..Default::default()
            },
            ..Figures::default()
        };
        (name.to_string(), figures)
    }

    /// The busiest groups are shown in name order; the rest become one row that sums them
    /// and says how many it holds.
    #[test]
    fn the_busiest_groups_are_shown_and_the_rest_summed() {
        let groups: Vec<(String, Figures)> = (0..10)
            .map(|i| group(&format!("m{i}"), Some(f64::from(i) * 10.0)))
            .chain([group("quiet", None)])
            .collect();
        let shown = on_screen(&groups, 3);
        let names: Vec<&str> = shown.rows.iter().map(|&i| groups[i].0.as_str()).collect();
        assert_eq!(names, ["m7", "m8", "m9"]);
        let others = shown.others.unwrap();
        assert_eq!(others.count, 8);
        assert_eq!(others.label(), "+ 8 others");
        // 0 + 10 + ... + 60, and the quiet group's running request counted too.
        assert_eq!(others.figures.generation.window, Some(210.0));
        assert_eq!(others.figures.in_flight.running, Some(8.0));
        assert_eq!(others.figures.in_flight.kv_usage, None);
    }

    /// Up to the limit every group is shown and there is no others' row.
    #[test]
    fn few_groups_are_all_shown() {
        let groups = vec![group("a", Some(1.0)), group("b", None)];
        let shown = on_screen(&groups, 2);
        assert_eq!(shown.rows, [0, 1]);
        assert!(shown.others.is_none());
        assert_eq!(on_screen(&groups, 0).others.unwrap().count, 2);
    }

    /// Choosing the rows of 200,000 groups costs a few comparisons per group (counted, not
    /// timed): no group is compared with every other.
    #[test]
    fn choosing_the_rows_is_linear_in_the_groups() {
        for n in [20_000, 200_000] {
            let mut comparisons = 0_u64;
            // Rates in a scrambled order.
            let rate = |i: usize| (i * 7919) % n;
            let (top, rest) = select(n, 50, |a, b| {
                comparisons += 1;
                rate(b).cmp(&rate(a))
            });
            assert_eq!(top.len() + rest.len(), n);
            assert!(top.iter().all(|&i| rate(i) >= n - 50));
            assert!(
                comparisons < 10 * n as u64,
                "{comparisons} comparisons for {n} groups"
            );
        }
    }

    #[test]
    fn counts_read_with_thousands_separated() {
        assert_eq!(thousands(199_950), "199,950");
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
