//! The queries of one interval: each figure is one indexed query per tracker, summed over
//! the sources and split by group in the same pass.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use hashbrown::HashTable;
use std::sync::Arc;

use promrate::histogram::{self, Bucket};
use promrate::TrackedSeries;

use chrono::DateTime;

use promrate::{fold, Coverage, Estimator, GroupAnswer, NoValue, Shortened, WindowRule};

use super::{named, selector, NoWindow, Quantiles, Source, Span};
use crate::engines::Metric;

/// A series' figure, given the source it belongs to.
pub(super) type PerSeries<'f> = &'f dyn Fn(&TrackedSeries, &Source<'_>) -> Option<f64>;

/// The groups of one query, numbered as they are first seen: splits hold their groups by
/// number, so assembling a group's figures is array indexing, and a group's name is stored
/// once (shared with the trackers' series).
///
/// A tracker stores a label value once for all its series and every answer shares it, so a
/// name seen before is found by its address first (a hash of a number, where hashing the
/// text cost a fifth of an interval of 200,000 groups), by its text the first time an
/// address is seen (another tracker's copy of the same name is the same group). Each name
/// found by its address is held here, so that its address cannot be reused for another
/// text while the query lasts, whoever made it.
#[derive(Debug, Default)]
pub(super) struct GroupIds {
    pub(super) ids: HashMap<Arc<str>, usize>,
    pub(super) names: Vec<Arc<str>>,
    /// Each name seen (by the address of its text) and its group.
    by_address: HashTable<(Arc<str>, usize)>,
}

/// A table hash of an address (Fibonacci hashing: addresses are aligned, their low bits
/// alike).
fn address_hash(address: usize) -> u64 {
    (address as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl GroupIds {
    pub(super) fn id(&mut self, name: &Arc<str>) -> usize {
        let address = name.as_ptr() as usize;
        let hash = address_hash(address);
        let at = |e: &(Arc<str>, usize)| e.0.as_ptr() as usize;
        if let Some((_, id)) = self.by_address.find(hash, |e| at(e) == address) {
            return *id;
        }
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = self.names.len();
                self.ids.insert(Arc::clone(name), id);
                self.names.push(Arc::clone(name));
                id
            }
        };
        self.by_address
            .insert_unique(hash, (Arc::clone(name), id), |e| address_hash(at(e)));
        id
    }

    /// The number of a group named by a borrowed string: stored (and allocated) only the
    /// first time it is seen.
    pub(super) fn id_of(&mut self, name: &str) -> usize {
        match self.ids.get(name) {
            Some(&id) => id,
            None => self.id(&Arc::from(name)),
        }
    }
}

/// The sources (by index) and groups a figure had a value for ([`Query::figure_rated`]),
/// and those it refused as no counter (two processes answering in turn, or two drops).
#[derive(Debug, Clone, Default)]
pub(super) struct Rated {
    with_value: std::collections::HashSet<(usize, Option<usize>)>,
    no_counter: std::collections::HashSet<(usize, Option<usize>)>,
}

impl Rated {
    /// How many sources (a URL, or one group of its series) were refused as no counter:
    /// over everything (`None`) or in group `g`.
    pub(super) fn not_counters(&self, g: Option<usize>) -> usize {
        match g {
            None => self.no_counter.len(),
            Some(g) => self.no_counter.iter().filter(|(_, id)| *id == Some(g)).count(),
        }
    }
}

/// Which sources and groups the second figure of [`Query::figure_of`] sums.
#[derive(Clone, Copy)]
enum Among<'r> {
    /// None (no second figure).
    Nothing,
    /// Those another figure had a value for.
    Rated(&'r Rated),
    /// All but those another figure refused as no counter.
    Counters(&'r Rated),
}

impl Among<'_> {
    fn contains(self, key: (usize, Option<usize>)) -> bool {
        match self {
            Among::Nothing => false,
            Among::Rated(rated) => rated.with_value.contains(&key),
            Among::Counters(rated) => !rated.no_counter.contains(&key),
        }
    }
}

/// One figure over all sources and, with `--by`, per group (by number, see [`GroupIds`]): a
/// sum (or other aggregate) and the number of series it rests on.
#[derive(Debug, Clone, Default)]
pub(super) struct Split {
    pub(super) total: Option<(f64, usize)>,
    pub(super) groups: Vec<Option<(f64, usize)>>,
}

impl Split {
    pub(super) fn add(&mut self, group: Option<usize>, value: f64, series: usize) {
        let total = self.total.get_or_insert((0.0, 0));
        total.0 += value;
        total.1 += series;
        if let Some(group) = group {
            if self.groups.len() <= group {
                self.groups.resize(group + 1, None);
            }
            let entry = self.groups[group].get_or_insert((0.0, 0));
            entry.0 += value;
            entry.1 += series;
        }
    }

    /// The value over all sources (`None`) or in one group.
    pub(super) fn get(&self, group: Option<usize>) -> Option<f64> {
        self.pair(group).map(|(v, _)| v)
    }

    fn pair(&self, group: Option<usize>) -> Option<(f64, usize)> {
        match group {
            None => self.total,
            Some(g) => self.groups.get(g).copied().flatten(),
        }
    }

    /// The mean per series.
    pub(super) fn mean(&self, group: Option<usize>) -> Option<f64> {
        let (sum, n) = self.pair(group)?;
        (n > 0).then(|| sum / n as f64)
    }
}

/// A figure per value of a label (reasons, states) over all sources and per group (by
/// number), kept sparse: a page whose every series has a value and a group of its own costs
/// its series, not values × groups.
#[derive(Debug, Clone, Default)]
pub(super) struct ByValue {
    total: BTreeMap<String, f64>,
    groups: HashMap<usize, BTreeMap<String, f64>>,
}

impl ByValue {
    fn add(&mut self, group: Option<usize>, value: &str, figure: f64) {
        let add = |values: &mut BTreeMap<String, f64>| match values.get_mut(value) {
            Some(sum) => *sum += figure,
            None => {
                values.insert(value.to_string(), figure);
            }
        };
        add(&mut self.total);
        if let Some(group) = group {
            add(self.groups.entry(group).or_default());
        }
    }

    /// Each value's figure over everything (`None`) or in one group, in value order.
    pub(super) fn get(&self, group: Option<usize>) -> Vec<(String, f64)> {
        let values = match group {
            None => Some(&self.total),
            Some(g) => self.groups.get(&g),
        };
        values
            .into_iter()
            .flatten()
            .map(|(value, figure)| (value.clone(), *figure))
            .collect()
    }
}

/// The span of the window figures over all sources and per group (by number): from the
/// oldest start to the newest end, the longest span of one series, and the library's
/// reason it is shorter than the window (the first series' that has one); or, where no
/// window could be measured yet, the library's reason why not.
#[derive(Debug, Clone, Default)]
pub(super) struct Spans {
    total: Covered,
    groups: Vec<Covered>,
}

/// What one group's window figures cover, folded over its sources.
#[derive(Debug, Clone, Copy, Default)]
struct Covered {
    /// Oldest start, newest end, longest span of one series (milliseconds).
    span: Option<(i64, i64, i64)>,
    shortened: Option<Shortened>,
    no_window: Option<NoWindow>,
}

impl Spans {
    fn slot(&mut self, group: Option<usize>) -> [Option<&mut Covered>; 2] {
        let group = group.map(|g| {
            if self.groups.len() <= g {
                self.groups.resize(g + 1, Covered::default());
            }
            &mut self.groups[g]
        });
        [Some(&mut self.total), group]
    }

    /// Folds in what one group's points cover (the oldest start, the newest end, the
    /// longest span of one series, why it is short).
    fn add(&mut self, group: Option<usize>, covered: &Coverage) {
        let (start_ms, end_ms) = (covered.start.timestamp_millis(), covered.end.timestamp_millis());
        let longest_ms = covered.span.num_milliseconds();
        for slot in self.slot(group).into_iter().flatten() {
            let (start, end, longest) = slot.span.get_or_insert((start_ms, end_ms, 0));
            *start = (*start).min(start_ms);
            *end = (*end).max(end_ms);
            *longest = (*longest).max(longest_ms);
            slot.shortened = slot.shortened.or(covered.shortened);
        }
    }

    /// Notes why a group has no window yet, as the library says it.
    fn refused(&mut self, group: Option<usize>, why: &NoValue) {
        let no_window = match why {
            NoValue::OnePointSinceGap { .. } => NoWindow::OnePageSinceGap,
            NoValue::TooFewScrapes { .. } | NoValue::TooFewPoints { .. } => NoWindow::OnePage,
            _ => return,
        };
        for slot in self.slot(group).into_iter().flatten() {
            slot.no_window = slot.no_window.or(Some(no_window));
        }
    }

    fn covered(&self, group: Option<usize>) -> Covered {
        match group {
            None => self.total,
            Some(g) => self.groups.get(g).copied().unwrap_or_default(),
        }
    }

    /// The span over everything (`None`) or of one group.
    pub(super) fn get(&self, group: Option<usize>) -> Option<Span> {
        let covered = self.covered(group);
        let (start, end, longest) = covered.span?;
        Some(Span {
            start: DateTime::from_timestamp_millis(start)?,
            end: DateTime::from_timestamp_millis(end)?,
            seconds: longest as f64 / 1000.0,
            shortened: covered.shortened,
        })
    }

    /// Why there is no window over everything (`None`) or for one group, if there is none.
    pub(super) fn no_window(&self, group: Option<usize>) -> Option<NoWindow> {
        let covered = self.covered(group);
        covered.span.is_none().then_some(covered.no_window).flatten()
    }
}

/// Buckets of one histogram over all sources and per group (by number).
#[derive(Debug, Clone, Default)]
pub(super) struct Buckets {
    total: Vec<Bucket>,
    groups: Vec<Vec<Bucket>>,
}

impl Buckets {
    /// The buckets over everything (`None`) or of one group (none if it has none).
    pub(super) fn of(&self, group: Option<usize>) -> &[Bucket] {
        match group {
            None => &self.total,
            Some(g) => self.groups.get(g).map_or(&[], Vec::as_slice),
        }
    }

    pub(super) fn quantiles(&self, group: Option<usize>) -> Quantiles {
        let buckets = self.of(group);
        // Buckets that are not cumulative give no quantile (PromQL's repair would read
        // them as noise and answer anyway).
        if buckets.is_empty() || super::slo::cumulative(buckets).is_none() {
            return Quantiles::default();
        }
        let q = |q: f64| histogram::quantile(q, buckets).filter(|v| v.is_finite());
        Quantiles {
            p50: q(0.5),
            p95: q(0.95),
            p99: q(0.99),
        }
    }
}

/// The queries of one interval: over `sources`, grouped by `by` (a label, or `url` for one
/// group per source) when asked.
pub(super) struct Query<'q> {
    pub(super) sources: &'q [Source<'q>],
    by: Option<&'q str>,
    pub(super) groups: RefCell<GroupIds>,
}

impl<'q> Query<'q> {
    pub(super) fn new(sources: &'q [Source<'q>], by: Option<&'q str>) -> Self {
        Query {
            sources,
            by,
            groups: RefCell::default(),
        }
    }

    /// The label to group by inside each tracker (`url` groups by source instead).
    fn label(&self) -> Option<&str> {
        self.by.filter(|l| *l != "url")
    }

    /// The group of a tracker's group with these labels (the label's value; "" is left to
    /// the total only), or of the source's URL.
    fn group_of(&self, source: &Source<'_>, labels: &[(Arc<str>, Arc<str>)]) -> Option<usize> {
        match self.by? {
            "url" => Some(self.groups.borrow_mut().id_of(source.url)),
            _ => {
                let name = &labels.first()?.1;
                (!name.is_empty()).then(|| self.groups.borrow_mut().id(name))
            }
        }
    }

    /// `sum by (by) (f(name))` over every source, `name` being the first of `names` the
    /// source has (servers of different kinds name a figure differently): one indexed
    /// query per source.
    pub(super) fn sum(&self, names: &[Metric], f: PerSeries<'_>) -> Split {
        let by: Vec<&str> = self.label().into_iter().collect();
        let mut split = Split::default();
        for source in self.sources {
            let Some(metric) = first_present(source, names) else {
                continue;
            };
            let groups = kept(fold::sum_by(
                source.tracker,
                &named(metric),
                &by,
                source.admitted(f),
            ));
            for group in groups {
                let value = folded(&group) * metric.scale;
                split.add(self.group_of(source, &group.labels), value, group.series);
            }
        }
        split
    }

    /// [`Query::figure`] of the series whose `label` has one value (vLLM's prompt tokens
    /// from one `source`).
    pub(super) fn figure_where(
        &self,
        names: &[Metric],
        label: (&str, &str),
        estimator: Estimator,
        w: WindowRule,
    ) -> Split {
        let mut split = Split::default();
        for source in self.sources {
            let Some(metric) = first_present(source, names) else {
                continue;
            };
            let mut matchers = named(metric).matchers().to_vec();
            matchers.push(
                promrate::Matcher::new(label.0, promrate::MatchOp::Equal, label.1)
                    .expect("an equality matcher"),
            );
            let query =
                ask(&promrate::Selector::from_matchers(matchers), estimator, w, source).by(self.label());
            for group in evaluated(source, &query) {
                if let Ok(value) = group.value {
                    split.add(
                        self.group_of(source, &group.labels),
                        value * metric.scale,
                        group.series,
                    );
                }
            }
        }
        split
    }

    /// `sum by (by, label) (estimator(name))` per value of `label` (reasons, states), the
    /// series without it left out: one query per source, grouped by both labels, however
    /// many values there are (a query per value cost values × series: quadratic on a page
    /// that makes up a value per series).
    pub(super) fn figure_by_value(
        &self,
        names: &[Metric],
        label: &str,
        estimator: Estimator,
        w: WindowRule,
    ) -> ByValue {
        let mut by_value = ByValue::default();
        for source in self.sources {
            let Some(metric) = first_present(source, names) else {
                continue;
            };
            // The `--by` label first: `group_of` reads it there.
            let by = self.label().into_iter().chain([label]);
            let query = ask(&named(metric), estimator, w, source).by(by);
            for group in evaluated(source, &query) {
                let (Ok(figure), Some(value)) = (&group.value, group.label(label).filter(|v| !v.is_empty()))
                else {
                    continue;
                };
                let id = self.group_of(source, &group.labels);
                by_value.add(id, value, figure * metric.scale);
            }
        }
        by_value
    }

    /// `sum by (by) (estimator(name[w]))` over every source, `name` being the first of
    /// `names` the source has, through the tracker's front door (`Tracker::evaluate`: the
    /// newest page's series, the window rule's start, slack and gap): one query per source.
    pub(super) fn figure(&self, names: &[Metric], estimator: Estimator, w: WindowRule) -> Split {
        self.figure_of(names, estimator, w, None, Among::Nothing).0
    }

    /// [`Query::figure`] with what its points cover, over everything and per group (the
    /// headline figure's: every window figure of a source is measured between the same
    /// scrapes), and the sources and groups it has a value for.
    pub(super) fn figure_rated(
        &self,
        names: &[Metric],
        estimator: Estimator,
        w: WindowRule,
    ) -> (Split, Spans, Rated) {
        let mut rated = Rated::default();
        let (split, spans, _) = self.figure_of(names, estimator, w, Some(&mut rated), Among::Nothing);
        (split, spans, rated)
    }

    /// [`Query::figure`], and the same over the sources and groups in `among` only: a
    /// figure to divide another by (running requests under the tokens they generate),
    /// without the sources the other has no value for (a server joining, or not rated).
    /// One evaluation for both.
    pub(super) fn figure_and_among(
        &self,
        names: &[Metric],
        estimator: Estimator,
        w: WindowRule,
        among: &Rated,
    ) -> (Split, Split) {
        let (all, _, within) = self.figure_of(names, estimator, w, None, Among::Rated(among));
        (all, within)
    }

    /// [`Query::figure`] without the sources and groups `rated` found to be no counter (two
    /// processes answering in turn): PromQL's rate over them, as Prometheus computes it,
    /// reads every switch as a reset and climbs without bound.
    pub(super) fn figure_of_counters(
        &self,
        names: &[Metric],
        estimator: Estimator,
        w: WindowRule,
        rated: &Rated,
    ) -> Split {
        self.figure_of(names, estimator, w, None, Among::Counters(rated))
            .2
    }

    /// [`Query::figure_rated`]; the sources and groups with a value (or refused as no
    /// counter) into `rated`, when asked; and the figure over those `among` names.
    fn figure_of(
        &self,
        names: &[Metric],
        estimator: Estimator,
        w: WindowRule,
        mut rated: Option<&mut Rated>,
        among: Among<'_>,
    ) -> (Split, Spans, Split) {
        let (mut split, mut spans, mut within) = (Split::default(), Spans::default(), Split::default());
        for (index, source) in self.sources.iter().enumerate() {
            if estimator == Estimator::TotalIncrease {
                self.add_retired(source, names, &mut split);
            }
            let Some(metric) = first_counted(source, names, estimator) else {
                continue;
            };
            let query = ask(&named(metric), estimator, w, source).by(self.label());
            for group in evaluated(source, &query) {
                let id = self.group_of(source, &group.labels);
                let value = match group.value {
                    Ok(value) => value * metric.scale,
                    Err(why) => {
                        if let (Some(rated), NoValue::ErraticCounter { .. }) = (rated.as_deref_mut(), &why) {
                            rated.no_counter.insert((index, id));
                        }
                        spans.refused(id, &why);
                        continue;
                    }
                };
                split.add(id, value, group.series);
                if let Some(rated) = rated.as_deref_mut() {
                    rated.with_value.insert((index, id));
                }
                if among.contains((index, id)) {
                    within.add(id, value, group.series);
                }
                if let Some(covered) = &group.coverage {
                    spans.add(id, covered);
                }
            }
        }
        (split, spans, within)
    }

    /// What the counters of `names` that `source`'s tracker dropped had counted, in the
    /// totals since the start (a server gone from a fleet, an engine scaled down): those
    /// never go down. Not for a metric that requires a label (`Metric::only`).
    fn add_retired(&self, source: &Source<'_>, names: &[Metric], split: &mut Split) {
        let Some(retired) = source.retired else {
            return;
        };
        for metric in names.iter().filter(|m| m.only.is_none()) {
            for (value, total) in retired.of(metric.name) {
                let group = match self.by {
                    Some("url") => Some(self.groups.borrow_mut().id_of(source.url)),
                    Some(_) if !value.is_empty() => {
                        Some(self.groups.borrow_mut().id(&std::sync::Arc::from(value)))
                    }
                    _ => None,
                };
                split.add(group, total * metric.scale, 0);
            }
        }
    }

    /// Whether any source has series of any of `names`.
    pub(super) fn present(&self, names: &[Metric]) -> bool {
        self.sources.iter().any(|s| first_present(s, names).is_some())
    }

    /// Whether any source has series of any of `names`, or still holds some that earlier
    /// pages had: a count since the start of them.
    pub(super) fn counted(&self, names: &[Metric]) -> bool {
        self.sources
            .iter()
            .any(|s| first_counted(s, names, Estimator::TotalIncrease).is_some())
    }

    /// The buckets of `histogram_quantile(q, sum by (le, by) (estimator(<name>_bucket)))`
    /// over the first histogram of `names` each source has.
    pub(super) fn buckets(&self, names: &[Metric], estimator: Estimator, w: WindowRule) -> Buckets {
        let mut all = Buckets::default();
        for source in self.sources {
            let Some(metric) = first_present_part(source, names, "_bucket", estimator) else {
                continue;
            };
            let query = ask(&named(metric), estimator, w, source)
                .by(self.label())
                .buckets();
            for group in evaluated(source, &query) {
                let (labels, mut buckets) = (group.labels, group.buckets);
                // Bounds in the figure's unit (seconds from milliseconds).
                for bucket in &mut buckets {
                    bucket.upper_bound *= metric.scale;
                }
                all.total.extend(buckets.iter().copied());
                if let Some(group) = self.group_of(source, &labels) {
                    if all.groups.len() <= group {
                        all.groups.resize_with(group + 1, Vec::new);
                    }
                    all.groups[group].extend(buckets);
                }
            }
        }
        all
    }

    /// The `_sum` and `_count` splits of the first histogram of `names` each source has
    /// (their ratio is the mean observation), each part's figure with `estimator`.
    pub(super) fn histogram_parts(
        &self,
        names: &[Metric],
        estimator: Estimator,
        w: WindowRule,
    ) -> (Split, Split) {
        let (mut sums, mut counts) = (Split::default(), Split::default());
        for source in self.sources {
            // A mean needs the observations' real sum.
            let Some(metric) = first_present_part(source, names, "_count", estimator).filter(|m| m.exact_sum)
            else {
                continue;
            };
            let part = |suffix: &str| selector(&format!("{}{suffix}", metric.name), metric.only);
            // Observations in the figure's unit; counts are counts.
            for (split, suffix, scale) in [(&mut sums, "_sum", metric.scale), (&mut counts, "_count", 1.0)] {
                let query = ask(&part(suffix), estimator, w, source).by(self.label());
                for group in evaluated(source, &query) {
                    if let Ok(value) = group.value {
                        split.add(self.group_of(source, &group.labels), value * scale, group.series);
                    }
                }
            }
        }
        (sums, counts)
    }
}

/// The query of `estimator` over `selector` at `source`'s newest page, with the window rule
/// `w` (its window, slack and gap).
pub(super) fn ask(
    selector: &promrate::Selector,
    estimator: Estimator,
    w: WindowRule,
    source: &Source<'_>,
) -> promrate::Query {
    let query = promrate::Query::new(selector, estimator);
    match estimator {
        // Running figures and newest values read each series' newest point (a federated
        // page's timestamps can be after the time it was read at); the EWMA's time
        // constant is the tracker's (the window or --ewma-tau).
        Estimator::Ewma | Estimator::Last => query,
        // Since the start: a series missing from the newest page still counted what it
        // did until it is dropped (then its count is kept apart: `Query::add_retired`).
        Estimator::TotalIncrease => query.scope(promrate::SeriesScope::UntilStale),
        // PromQL's estimators as the operator's Prometheus computes them: without
        // `use-start-timestamps` (off by default through 3.14), from the values alone.
        // With start times, a counter whose `_created` is later than its first tokens
        // (a simulated or faulty exporter) would count them twice.
        _ => query.at(source.at).window_rule(w).start_timestamps(false),
    }
}

/// The first metric of `names` that `source` has series for on its newest page.
pub(super) fn first_present<'n>(source: &Source<'_>, names: &'n [Metric]) -> Option<&'n Metric> {
    names
        .iter()
        .find(|metric| source.series(&named(metric)).next().is_some())
}

/// [`first_present`] for a figure of `estimator`: a count since the start also reads a
/// metric that only earlier pages had (an exporter that left a family out of a few pages
/// still counted what it did until its series are dropped).
fn first_counted<'n>(source: &Source<'_>, names: &'n [Metric], estimator: Estimator) -> Option<&'n Metric> {
    first_of(source, names, estimator, named)
}

/// The first histogram of `names` whose `suffix` series (`_bucket`, `_count`) `source`
/// has on its newest page (or, for a count since the start, still holds:
/// [`first_counted`]).
fn first_present_part<'n>(
    source: &Source<'_>,
    names: &'n [Metric],
    suffix: &str,
    estimator: Estimator,
) -> Option<&'n Metric> {
    first_of(source, names, estimator, |metric| {
        selector(&format!("{}{suffix}", metric.name), metric.only)
    })
}

/// The first of `names` whose series (`selector_of` it) are on `source`'s newest page;
/// for a count since the start, else the first whose series the tracker still holds.
fn first_of<'n>(
    source: &Source<'_>,
    names: &'n [Metric],
    estimator: Estimator,
    selector_of: impl Fn(&Metric) -> promrate::Selector,
) -> Option<&'n Metric> {
    let present = names
        .iter()
        .find(|metric| source.series(&selector_of(metric)).next().is_some());
    if present.is_some() || estimator != Estimator::TotalIncrease {
        return present;
    }
    names.iter().find(|metric| source.holds(&selector_of(metric)))
}

/// The monitor's trackers keep every series (`Tracker::new([])`): no query of theirs is
/// refused as one about series they do not track.
fn kept(groups: Result<Vec<GroupAnswer>, promrate::QueryError>) -> Vec<GroupAnswer> {
    groups.unwrap_or_default()
}

/// The groups of `query` at `source`. The monitor's trackers keep every series, and its
/// queries are well formed: none is refused.
fn evaluated(source: &Source<'_>, query: &promrate::Query) -> Vec<GroupAnswer> {
    source
        .tracker
        .evaluate(query)
        .map(|a| a.groups)
        .unwrap_or_default()
}

/// A fold's group always has a value (`promrate::fold`).
fn folded(group: &GroupAnswer) -> f64 {
    group.value.as_ref().ok().copied().unwrap_or(0.0)
}

pub(super) fn ratio(parts: &(Split, Split), group: Option<usize>) -> Option<f64> {
    let count = parts.1.get(group)?;
    let total = parts.0.get(group)?;
    (count > 0.0).then(|| total / count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets that are not cumulative (each its own count) give no quantile, where
    /// PromQL's repair answers one; cumulative ones give PromQL's.
    #[test]
    fn buckets_that_are_not_cumulative_give_no_quantile() {
        let of = |pairs: &[(f64, f64)]| Buckets {
            total: pairs.iter().map(|&(le, c)| Bucket::new(le, c)).collect(),
            groups: Vec::new(),
        };
        let own = of(&[(0.1, 800.0), (0.5, 170.0), (1.0, 25.0), (f64::INFINITY, 5.0)]);
        assert_eq!(own.quantiles(None).p50, None);
        let fine = of(&[(0.1, 800.0), (0.5, 970.0), (1.0, 995.0), (f64::INFINITY, 1000.0)]);
        assert_eq!(fine.quantiles(None).p50, histogram::quantile(0.5, &fine.total));
        assert!(fine.quantiles(None).p50.is_some());
    }

    /// A name is one group whichever copy of its text names it; a copy seen before is
    /// found by its address; a name made and dropped cannot lend its address to another.
    #[test]
    fn a_name_is_one_group_whatever_copy_names_it() {
        let mut ids = GroupIds::default();
        let a: Arc<str> = Arc::from("gpu1");
        let b: Arc<str> = Arc::from("gpu1");
        let c: Arc<str> = Arc::from("gpu2");
        assert_eq!((ids.id(&a), ids.id(&b), ids.id(&c), ids.id(&a)), (0, 0, 1, 0));
        assert_eq!(ids.id_of("gpu2"), 1);
        for i in 0..1_000 {
            let made: Arc<str> = Arc::from(format!("m{i}"));
            assert_eq!(ids.id(&made), 2 + i);
        }
        assert_eq!(ids.names.len(), 1_002);
    }
}
