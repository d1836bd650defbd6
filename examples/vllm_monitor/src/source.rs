//! Where every figure is read from: one URL's tracker as of its newest page ([`Source`]),
//! a counter's window as the `--window` rule reaches back ([`measured`]), and the selector
//! of a metric ([`selector`]). Below both `figures/` and `gpus.rs`, which read the same
//! sources the same way.

use chrono::{DateTime, Utc};
use promrate::{series::WindowIncrease, MatchOp, Matcher, Selector, TrackedSeries, Tracker, WindowRule};

/// One URL's tracker and the time of its newest successful scrape.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub tracker: &'a Tracker,
    pub at: DateTime<Utc>,
    pub url: &'a str,
    /// What the counters the tracker dropped had counted: in the totals since the start.
    pub retired: Option<&'a crate::retired::RetiredTotals>,
}

impl Source<'_> {
    /// Whether a series counts: on the newest page (a vanished target's old points are
    /// never averaged in), the library's rule for its queries too.
    pub fn admits(&self, series: &TrackedSeries) -> bool {
        self.tracker.on_newest_page(series)
    }

    /// The series of `selector` this source admits. The monitor's trackers keep every
    /// series (`Tracker::new([])`), so no selector is refused as untracked.
    pub fn series<'s>(&'s self, selector: &'s Selector) -> impl Iterator<Item = &'s TrackedSeries> + 's {
        self.tracker
            .matching(selector)
            .into_iter()
            .flatten()
            .filter(|s| self.admits(s))
    }

    /// Whether the tracker still holds a series of `selector`, on the newest page or not
    /// (a counter left out of a few pages counts what it did until it is dropped).
    pub fn holds(&self, selector: &Selector) -> bool {
        self.tracker
            .matching(selector)
            .is_ok_and(|mut series| series.next().is_some())
    }
}

/// The window of a counter series of `source` as `rule` reaches back
/// ([`promrate::series::CounterSeries::window_increase`]): `window` before the newest page, its
/// start at the scrape nearest to that, never more than `slack` (one interval) before it,
/// never across a `gap` between two pages (an outage). After a gap the window starts at
/// the first page since, and says so by its span.
pub fn measured(rule: &WindowRule, series: &TrackedSeries, source: &Source<'_>) -> Option<WindowIncrease> {
    series.counter()?.window_increase(rule, source.at).ok()
}

/// The selector `{__name__="<name>"}` (names compared with ':' and '_' alike by the
/// tracker), with the label the metric requires.
pub fn selector(name: &str, only: Option<(&str, &str)>) -> Selector {
    let mut matchers = vec![Matcher::new("__name__", MatchOp::Equal, name).expect("an equality matcher")];
    if let Some((label, value)) = only {
        matchers.push(Matcher::new(label, MatchOp::Equal, value).expect("an equality matcher"));
    }
    Selector::from_matchers(matchers)
}
