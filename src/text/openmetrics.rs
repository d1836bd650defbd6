//! OpenMetrics rules that span lines: families, metadata placement, name clashes, label
//! groups, timestamps, per-type suffixes and values, histogram consistency.
//!
//! The rules are those of the OpenMetrics 1.0 specification as its reference parser
//! (Python `prometheus_client.openmetrics.parser`) and conformance suite apply them.
//! Memory grows with the number of families and label groups (a slice of the page or a
//! hash each, amortised: `label_groups.rs`, `reserved_names.rs`), never per sample.
//!
//! One file of about 550 lines, a third of them tests: the rules share one state machine
//! (the open family, its label group, its histogram), and splitting it would spread that
//! state across modules.

use super::composite::CompositeKind;
use super::entry::Entry;
use super::escape::{has_backslash, resolved_suffix, same_resolved};
use super::label_groups::{group_of, Groups, Placement};
use super::metric_type::MetricType;
use super::names::same_bytes;
use super::reserved_names::ReservedNames;
use super::sample::Sample;
use super::value::parse_float;
use crate::error::{FamilyRule, ParseErrorKind};

/// Why a line was refused: the line itself, or a family it closed.
#[derive(Debug)]
pub(crate) enum Rejection {
    /// The line breaks a rule; offset within the line.
    Line(usize, ParseErrorKind),
    /// The family this line closed breaks a rule; the line itself is fine.
    Earlier(ParseErrorKind),
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Validator<'page> {
    family: Option<Family<'page>>,
    /// Every sample name reserved by a closed family (`a`, `a_total`, ...).
    reserved: ReservedNames<'page>,
    /// The label groups of the current family.
    groups: Groups<'page>,
    eof: bool,
    /// A closed family's error waiting behind the current line's own error.
    deferred: Option<ParseErrorKind>,
    /// OpenMetrics 2.0: sample names equal their family's, composite values.
    version2: bool,
    /// OpenMetrics 2.0: the open family is named as the last sample of the fast path,
    /// and no other line came since.
    family_is_last_fast: bool,
}

#[derive(Debug, Clone)]
struct Family<'page> {
    name: &'page str,
    version2: bool,
    kind: MetricType,
    has_help: bool,
    has_type: bool,
    unit: Option<&'page str>,
    has_samples: bool,
    /// Its name was reserved when it opened, and the line that opened it was told: its
    /// close does not report the clash again.
    clash_reported: bool,
    /// Its name sorted after every name reserved when it opened: none of its names can be
    /// taken, and its close reserves them without comparing again.
    in_order: bool,
    /// The timestamp of the current label group's last sample, in milliseconds and the
    /// nanoseconds beyond them (two times in one millisecond are still in an order).
    timestamp: Option<(i64, i32)>,
    /// OpenMetrics 2.0 state sets: the full label set of the last sample. Timestamps
    /// increase per state (a Metric), groups stay contiguous per MetricGroup.
    state: u64,
    histogram: HistogramCheck,
}

/// Running consistency check of one histogram group (one label set and timestamp).
#[derive(Debug, Clone, Default)]
struct HistogramCheck {
    key: Option<(u64, Option<i64>)>,
    count: Option<f64>,
    last_le: Option<f64>,
    last_bucket_value: f64,
    negative_buckets: bool,
    has_sum: bool,
    has_gsum: bool,
    negative_gsum: bool,
}

fn family_error(name: &str, rule: FamilyRule) -> ParseErrorKind {
    ParseErrorKind::Family {
        family: name.to_string(),
        rule,
    }
}

fn suffixes(kind: MetricType, version2: bool) -> &'static [&'static str] {
    if version2 {
        // OpenMetrics 2.0: a sample's name is its family's.
        return &[""];
    }
    match kind {
        MetricType::Counter => &["_total", "_created"],
        MetricType::Summary => &["", "_count", "_sum", "_created"],
        MetricType::Histogram => &["_count", "_sum", "_bucket", "_created"],
        MetricType::GaugeHistogram => &["_gcount", "_gsum", "_bucket"],
        MetricType::Info => &["_info"],
        _ => &[""],
    }
}

fn is_whole(value: f64) -> bool {
    value.is_finite() && value.fract() == 0.0
}

impl<'page> Family<'page> {
    fn new(name: &'page str, version2: bool) -> Self {
        Family {
            name,
            version2,
            kind: MetricType::Unknown,
            has_help: false,
            has_type: false,
            unit: None,
            has_samples: false,
            clash_reported: false,
            in_order: false,
            timestamp: None,
            state: 0,
            histogram: HistogramCheck::default(),
        }
    }

    /// A family opening under `name` against the names closed families `reserved`: in order
    /// (nothing reserved can be its name or begin with it), or its name taken already
    /// (`clash_reported`: the line that opens it is told).
    #[inline(always)]
    fn opened(name: &'page str, version2: bool, reserved: &mut ReservedNames<'page>, escaped: bool) -> Self {
        let mut family = Family::new(name, version2);
        // A name with escapes may be another spelling of one reserved (`a\qb`, `a\\qb`):
        // the order of the texts proves nothing, its hash (of the name resolved) does.
        family.in_order = !escaped && reserved.after_all(name);
        family.clash_reported = !family.in_order && reserved.holds_hashed(name, "");
        family
    }

    /// Whether a sample of this name belongs to the family. Every sample asks, so the
    /// comparisons are word-wise, not `memcmp` calls.
    #[inline(always)]
    fn allows(&self, sample_name: &str) -> bool {
        let (name, family) = (sample_name.as_bytes(), self.name.as_bytes());
        if self.version2 {
            return same_bytes(name, family);
        }
        if name.len() < family.len() || !same_bytes(&name[..family.len()], family) {
            return false;
        }
        let suffix = &name[family.len()..];
        suffixes(self.kind, self.version2)
            .iter()
            .any(|s| s.len() == suffix.len() && (suffix.is_empty() || same_bytes(s.as_bytes(), suffix)))
    }

    /// The suffix of a sample of this family (`_total`, `_bucket`, ...; empty for the
    /// family's own name): what follows the family's text, or, for a name spelled
    /// otherwise ([`Family::allows_spelled_otherwise`]), the suffix it was allowed by.
    fn suffix_of<'a>(&self, sample: &Sample<'a>) -> &'a str {
        let name = sample.name();
        // Only a quoted name with escapes can be spelled otherwise: for the rest, `allows`
        // compared the family's text already.
        if !sample.name_may_be_escaped() {
            return name.get(self.name.len()..).unwrap_or("");
        }
        let suffixes = suffixes(self.kind, self.version2);
        match name.strip_prefix(self.name) {
            Some(rest) if suffixes.contains(&rest) => rest,
            // The suffix's letters are the name's own last bytes (no escape spells one).
            _ => resolved_suffix(name, self.name, suffixes)
                .and_then(|s| name.get(name.len() - s.len()..))
                .unwrap_or(""),
        }
    }

    /// [`Family::allows`] of a sample whose name is spelled otherwise: a quoted name with
    /// escapes (`"a\\qb"` is the family `"a\qb"`). A name that two texts spell has a
    /// backslash in both, so only a quoted sample name is looked at.
    #[inline(always)]
    fn allows_spelled_otherwise(&self, sample: &Sample<'_>) -> bool {
        sample.name_may_be_escaped()
            && if self.version2 {
                same_resolved(sample.name(), self.name)
            } else {
                resolved_suffix(sample.name(), self.name, suffixes(self.kind, false)).is_some()
            }
    }
}

impl HistogramCheck {
    fn close(&mut self) -> Result<(), FamilyRule> {
        if self.key.take().is_none() {
            return Ok(());
        }
        let rule = if self.last_le != Some(f64::INFINITY) {
            Some(FamilyRule::InfBucketMissing)
        } else if self.count.is_some_and(|c| c != self.last_bucket_value) {
            Some(FamilyRule::CountDoesNotMatchInfBucket)
        } else if self.has_sum && self.count.is_none() {
            Some(FamilyRule::SumWithoutCount)
        } else if self.has_gsum && self.count.is_none() {
            Some(FamilyRule::GsumWithoutGcount)
        } else if !(self.has_sum || self.has_gsum) && self.count.is_some() {
            Some(FamilyRule::CountWithoutSum)
        } else if self.negative_buckets && self.has_sum {
            Some(FamilyRule::SumWithNegativeBuckets)
        } else if !self.negative_buckets && self.negative_gsum {
            Some(FamilyRule::NegativeGsumWithoutNegativeBuckets)
        } else {
            None
        };
        rule.map_or(Ok(()), Err)
    }

    fn observe(
        &mut self,
        key: (u64, Option<i64>),
        suffix: &str,
        sample: &Sample<'_>,
        le: Option<f64>,
    ) -> Result<(), FamilyRule> {
        if self.key != Some(key) {
            self.close()?;
            *self = HistogramCheck {
                key: Some(key),
                ..HistogramCheck::default()
            };
        }
        match suffix {
            "_bucket" => {
                let le = le.unwrap_or(f64::NAN);
                if le < 0.0 {
                    self.negative_buckets = true;
                }
                if self.last_le.is_some_and(|last| le <= last) {
                    return Err(FamilyRule::BucketsOutOfOrder);
                }
                if sample.value() < self.last_bucket_value {
                    return Err(FamilyRule::BucketValuesDecrease);
                }
                self.last_le = Some(le);
                self.last_bucket_value = sample.value();
            }
            "_count" | "_gcount" => self.count = Some(sample.value()),
            "_sum" => self.has_sum = true,
            "_gsum" => {
                self.has_gsum = true;
                if sample.value() < 0.0 {
                    self.negative_gsum = true;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl<'page> Validator<'page> {
    /// A validator for OpenMetrics 1.0, or 2.0 when `version2`.
    pub(crate) fn new(version2: bool) -> Self {
        // Room for a page's usual families and a family's usual groups: growing from
        // empty cost more than the checks themselves.
        Validator {
            version2,
            // Node exporter's page has 1,200 families: growing the list cost more than
            // reserving it.
            reserved: ReservedNames::with_capacity(2048),
            groups: Groups::with_capacity(64),
            ..Validator::default()
        }
    }

    pub(crate) fn eof_seen(&self) -> bool {
        self.eof
    }

    /// Closes the current family at end of input (or `# EOF`). Idempotent.
    pub(crate) fn finish(&mut self) -> Result<(), ParseErrorKind> {
        self.family_is_last_fast = false;
        self.close_family()
    }

    #[inline]
    fn close_family(&mut self) -> Result<(), ParseErrorKind> {
        self.close_family_rule()
            .map_err(|(name, rule)| family_error(name, rule))
    }

    /// [`Validator::close_family`], its error as the family's name and the rule it broke
    /// (small: opening a family is as frequent as a sample on some pages).
    #[inline(always)]
    fn close_family_rule(&mut self) -> Result<(), (&'page str, FamilyRule)> {
        let Some(family) = self.family.as_mut() else {
            return Ok(());
        };
        self.groups.clear();
        // Read in place: a family is large enough for moving it out to be a `memcpy` call.
        let verdict = closing_verdict(family, &mut self.reserved).map_err(|rule| (family.name, rule));
        self.family = None;
        verdict
    }
}

/// The rules a family must keep once it is complete (its names are reserved here).
#[inline(always)]
fn closing_verdict<'page>(
    family: &mut Family<'page>,
    reserved: &mut ReservedNames<'page>,
) -> Result<(), FamilyRule> {
    let name = family.name;
    if reserved.reserve_known(name, suffixes(family.kind, family.version2), family.in_order)
        && !family.clash_reported
    {
        return Err(FamilyRule::NameClash);
    }
    // Metadata set a type or a unit: the rules about them.
    if family.kind != MetricType::Unknown || family.unit.is_some() {
        return typed_closing_verdict(family);
    }
    Ok(())
}

/// Info and state set families take no unit: refused at the metadata line that makes the
/// pair (as Prometheus' parsers refuse it), not at the family's end; the unit is then
/// forgotten, so the family's close does not refuse it again.
fn unit_allowed(family: &mut Family<'_>, name: &str) -> Result<(), Rejection> {
    let unit = family.unit.is_some_and(|u| !u.is_empty());
    if unit && matches!(family.kind, MetricType::Info | MetricType::StateSet) {
        family.unit = None;
        return Err(Rejection::Line(0, family_error(name, FamilyRule::UnitNotAllowed)));
    }
    Ok(())
}

/// [`closing_verdict`]'s rules on a family's type and unit.
#[inline(never)]
fn typed_closing_verdict(family: &mut Family<'_>) -> Result<(), FamilyRule> {
    let name = family.name;
    if let Some(unit) = family.unit.filter(|u| !u.is_empty()) {
        let matches = name.strip_suffix(unit).is_some_and(|rest| rest.ends_with('_'));
        // OpenMetrics 2.0 only recommends the unit suffix.
        if !matches && !family.version2 {
            return Err(FamilyRule::NameLacksUnitSuffix);
        }
        if matches!(family.kind, MetricType::Info | MetricType::StateSet) {
            return Err(FamilyRule::UnitNotAllowed);
        }
    }
    family.histogram.close()
}

impl<'page> Validator<'page> {
    /// Starts a family, closing the previous one; returns what was wrong with the closed
    /// family, if anything (the new family is open either way), and whether the new one's
    /// name was reserved already (a family that returns after another, or one named as an
    /// earlier family's sample).
    fn open_family(&mut self, name: &'page str, escaped: bool) -> (Option<ParseErrorKind>, bool) {
        let closed = self.close_family().err();
        let family = self
            .family
            .insert(Family::opened(name, self.version2, &mut self.reserved, escaped));
        (closed, family.clash_reported)
    }

    /// The verdict on the line that opened a family, refused if the family's name was
    /// reserved already (`clash`).
    fn unless_clash(&self, clash: bool, verdict: Result<(), Rejection>) -> Result<(), Rejection> {
        if clash {
            verdict.and(Err(self.broken(FamilyRule::NameClash)))
        } else {
            verdict
        }
    }

    /// A family error found while closing a family, to report after the current line's own
    /// error (both are reported; the iterator asks for it).
    pub(crate) fn take_deferred(&mut self) -> Option<ParseErrorKind> {
        self.deferred.take()
    }

    /// Combines the verdict on a line with an error about the family it closed.
    fn with_earlier(
        &mut self,
        earlier: Option<ParseErrorKind>,
        verdict: Result<(), Rejection>,
    ) -> Result<(), Rejection> {
        match (earlier, verdict) {
            (None, verdict) => verdict,
            (Some(kind), Ok(())) => Err(Rejection::Earlier(kind)),
            (Some(kind), Err(line)) => {
                self.deferred = Some(kind);
                Err(line)
            }
        }
    }

    /// The rules across lines on `entry`, read from `line`.
    pub(crate) fn check(&mut self, entry: &Entry<'page>, line: &str) -> Result<(), Rejection> {
        self.family_is_last_fast = false;
        match entry {
            Entry::Eof => {
                self.eof = true;
                self.close_family().map_err(Rejection::Earlier)
            }
            Entry::Help { name, .. } | Entry::Type { name, .. } | Entry::Unit { name, .. } => {
                self.metadata(entry, name, quoted_in(line, name))
            }
            Entry::Sample(sample) => self.sample(sample),
            Entry::Comment(_) => Err(Rejection::Line(
                0,
                ParseErrorKind::Expected("'# HELP', '# TYPE', '# UNIT' or '# EOF'"),
            )),
        }
    }

    /// The rules on a metadata line for the family `name` (`quoted` on the line).
    fn metadata(&mut self, entry: &Entry<'page>, name: &'page str, quoted: bool) -> Result<(), Rejection> {
        // Escapes can spell one name two ways, each with a backslash, each quoted.
        let (same, escaped) = match self.family.as_ref() {
            Some(f) if f.name == name => (true, false),
            open => {
                let escaped = quoted && has_backslash(name);
                (
                    escaped && open.is_some_and(|f| same_resolved(f.name, name)),
                    escaped,
                )
            }
        };
        if same && self.family.as_ref().is_some_and(|f| f.has_samples) {
            return Err(Rejection::Line(
                0,
                family_error(name, FamilyRule::MetadataAfterSamples),
            ));
        }
        let (earlier, clash) = if same {
            (None, false)
        } else {
            self.open_family(name, escaped)
        };
        let verdict = self.apply_metadata(entry, name);
        let verdict = self.unless_clash(clash, verdict);
        self.with_earlier(earlier, verdict)
    }

    fn apply_metadata(&mut self, entry: &Entry<'page>, name: &'page str) -> Result<(), Rejection> {
        let Some(family) = self.family.as_mut() else {
            return Ok(());
        };
        let repeated = |flag: &mut bool| {
            let was = *flag;
            *flag = true;
            if was {
                Err(Rejection::Line(
                    0,
                    family_error(name, FamilyRule::MetadataRepeated),
                ))
            } else {
                Ok(())
            }
        };
        match entry {
            Entry::Help { .. } => repeated(&mut family.has_help),
            Entry::Type { kind, .. } => {
                repeated(&mut family.has_type)?;
                family.kind = *kind;
                unit_allowed(family, name)?;
                // A 2.0 info family's name ends in `_info`: refused at the line that types
                // it (only a `# TYPE` line makes a family an info family).
                if family.version2 && *kind == MetricType::Info && !name.ends_with("_info") {
                    return Err(Rejection::Line(
                        0,
                        family_error(name, FamilyRule::InfoNameLacksSuffix),
                    ));
                }
                // The type names the family's samples: one an earlier family took is
                // refused here, not where the family closes.
                let taken = !family.version2
                    && !family.in_order
                    && !family.clash_reported
                    && suffixes(*kind, false)
                        .iter()
                        .any(|suffix| self.reserved.holds_hashed(name, suffix));
                if taken {
                    family.clash_reported = true;
                    return Err(Rejection::Line(0, family_error(name, FamilyRule::NameClash)));
                }
                Ok(())
            }
            Entry::Unit { unit, .. } => {
                let mut has_unit = family.unit.is_some();
                repeated(&mut has_unit)?;
                family.unit = Some(unit);
                unit_allowed(family, name)
            }
            _ => Ok(()),
        }
    }

    /// [`Validator::check`] of a sample read by the fast path, `repeated` if its name is
    /// that of the fast path's sample before it.
    #[inline(always)]
    pub(crate) fn fast_sample(&mut self, sample: &Sample<'page>, repeated: bool) -> Result<(), Rejection> {
        // In OpenMetrics 2.0 the open family is then this sample's: its name, compared
        // already, need not be compared again.
        let known = repeated && self.family_is_last_fast;
        self.family_is_last_fast = self.version2;
        self.sample_in(sample, known)
    }

    /// [`Validator::check`] of a sample.
    #[inline(always)]
    fn sample(&mut self, sample: &Sample<'page>) -> Result<(), Rejection> {
        self.sample_in(sample, false)
    }

    /// [`Validator::sample`], the sample `known` to be of the open family if there is one.
    #[inline(always)]
    fn sample_in(&mut self, sample: &Sample<'page>, known: bool) -> Result<(), Rejection> {
        // The common case, inline where the sample was read: a sample of the open
        // OpenMetrics 2.0 family. It returns the verdict as it is: moving it through
        // `with_earlier` cost a stall per sample.
        if let Some(family) = self
            .family
            .as_mut()
            .filter(|f| f.version2 && (known || f.allows(sample.name())))
        {
            return check_version2(family, &mut self.groups, sample).map_err(|rule| self.broken(rule));
        }
        self.sample_otherwise(sample)
    }

    /// [`Validator::sample`] of a sample that opens a family, or of OpenMetrics 1.0.
    #[inline(never)]
    fn sample_otherwise(&mut self, sample: &Sample<'page>) -> Result<(), Rejection> {
        if self.version2 {
            if let Some(family) = self
                .family
                .as_mut()
                .filter(|f| f.allows_spelled_otherwise(sample))
            {
                return check_version2(family, &mut self.groups, sample).map_err(|rule| self.broken(rule));
            }
            return self.opening_sample(sample);
        }
        if self
            .family
            .as_ref()
            .is_some_and(|f| f.allows(sample.name()) || f.allows_spelled_otherwise(sample))
        {
            return self.check_sample(sample).map_err(|rule| self.broken(rule));
        }
        let (earlier, clash) = self.open_family(sample.name(), sample.name_may_be_escaped());
        let verdict = self.check_sample(sample).map_err(|rule| self.broken(rule));
        let verdict = self.unless_clash(clash, verdict);
        self.with_earlier(earlier, verdict)
    }

    /// [`Validator::sample`] in OpenMetrics 2.0 of a sample that opens a family (its
    /// name is not the open family's): the open family closes, the sample's opens.
    #[inline(always)]
    fn opening_sample(&mut self, sample: &Sample<'page>) -> Result<(), Rejection> {
        let closed = self.close_family_rule();
        let family = self.family.insert(Family::opened(
            sample.name(),
            true,
            &mut self.reserved,
            sample.name_may_be_escaped(),
        ));
        let clash = family.clash_reported;
        // A family a sample opens has no metadata, so no type: of a number, only its label
        // group is kept (the first, so no rule on it can fire yet).
        let verdict = if sample.composite.is_none() {
            self.groups.first(sample.labels());
            family.timestamp = sample.fine_timestamp();
            family.has_samples = true;
            Ok(())
        } else {
            check_version2(family, &mut self.groups, sample)
        };
        let verdict = if clash {
            verdict.and(Err(FamilyRule::NameClash))
        } else {
            verdict
        };
        if let (Ok(()), Ok(())) = (closed, verdict) {
            return Ok(());
        }
        let earlier = closed.err().map(|(name, rule)| family_error(name, rule));
        let verdict = verdict.map_err(|rule| self.broken(rule));
        self.with_earlier(earlier, verdict)
    }

    /// The rejection of a sample that breaks `rule` of the open family.
    #[cold]
    fn broken(&self, rule: FamilyRule) -> Rejection {
        let name = self.family.as_ref().map_or("", |f| f.name);
        Rejection::Line(0, family_error(name, rule))
    }

    /// The rules a sample of the open family must keep (the sample is in the family). The
    /// rule it breaks, if any: small, so that the common verdict costs nothing to return.
    fn check_sample(&mut self, sample: &Sample<'page>) -> Result<(), FamilyRule> {
        let Some(family) = self.family.as_mut() else {
            return Ok(());
        };
        if family.version2 {
            return check_version2(family, &mut self.groups, sample);
        }
        let name = family.name;
        let kind = family.kind;
        let suffix = family.suffix_of(sample);
        let is_quantile = kind == MetricType::Summary && suffix.is_empty();
        let le = label_rules(kind, name, suffix, is_quantile, sample)?;
        // Label groups must be contiguous, and timestamps within a group must not go back.
        let skip = match kind {
            MetricType::Summary if is_quantile => Some("quantile"),
            MetricType::StateSet => Some(name),
            MetricType::Histogram | MetricType::GaugeHistogram if suffix == "_bucket" => Some("le"),
            _ => None,
        };
        group_and_timestamp(family, &mut self.groups, sample, skip, 0)?;
        // Histogram state is updated before the value rules so that one bad value does not
        // cascade into errors about the samples after it.
        let ts = sample.timestamp_ms();
        if matches!(kind, MetricType::Histogram | MetricType::GaugeHistogram) && !suffix.is_empty() {
            family
                .histogram
                .observe((self.groups.current_hash(), ts), suffix, sample, le)?;
        }
        value_rules(kind, suffix, is_quantile, sample)
    }
}

/// [`Validator::check_sample`] in OpenMetrics 2.0, where a sample's name is its family's:
/// no suffix, so no bucket, count or quantile sample to check across lines (a composite
/// value holds them, and its own rules are the line's), and no `label_rules` beyond what
/// [`version2_rules`] checks.
#[inline(always)]
fn check_version2<'page>(
    family: &mut Family<'page>,
    groups: &mut Groups<'page>,
    sample: &Sample<'page>,
) -> Result<(), FamilyRule> {
    let kind = family.kind;
    // The usual sample, a number of a gauge or an unknown family: no rule on its value
    // or labels, only its group and timestamp (the type known, for them as well).
    if sample.composite.is_none() && matches!(kind, MetricType::Gauge | MetricType::Unknown) {
        return group_and_timestamp(family, groups, sample, None, 0);
    }
    version2_rules(kind, family.name, sample)?;
    // A state set's group leaves out its state label; its states (whole label sets)
    // keep their own timestamps.
    let (skip, state) = if kind == MetricType::StateSet {
        (Some(family.name), group_of(sample.labels(), None))
    } else {
        (None, 0)
    };
    group_and_timestamp(family, groups, sample, skip, state)
}

/// Whether `name`, a part of `line`, is quoted there (only a quoted name holds escapes).
fn quoted_in(line: &str, name: &str) -> bool {
    let at = (name.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
    at.checked_sub(1).and_then(|before| line.as_bytes().get(before)) == Some(&b'"')
}

/// Places a sample's label group (without the label `skip`) in its family: groups must be
/// contiguous, and within a group (and `state`, a state set's full label set) timestamps
/// must all be there or all absent, and must not go back.
#[inline(always)]
fn group_and_timestamp<'page>(
    family: &mut Family<'page>,
    groups: &mut Groups<'page>,
    sample: &Sample<'page>,
    skip: Option<&str>,
    state: u64,
) -> Result<(), FamilyRule> {
    let kind = family.kind;
    let ts = sample.fine_timestamp();
    let same_state = std::mem::replace(&mut family.state, state) == state;
    // In 1.0 an info family's samples are one group whatever their labels, as the
    // reference parser reads them (its suite's `info_timestamps`); 2.0 makes every label
    // set a Metric of its own, of every type: unique, contiguous, its times increasing.
    let info_v1 = kind == MetricType::Info && !family.version2;
    match groups.place(sample.labels(), skip, info_v1) {
        Placement::Same if same_state => {
            if family.timestamp.is_some() != ts.is_some() {
                return Err(FamilyRule::MixedTimestamps);
            }
            // In 2.0 a line is a whole sample (no suffixes): a second one of the same
            // metric needs a later time, which two samples without one cannot have.
            if family.version2 && ts.is_none() {
                return Err(FamilyRule::RepeatedWithoutTimestamps);
            }
            if !info_v1 && family.timestamp > ts {
                return Err(FamilyRule::TimestampsBackwards);
            }
        }
        Placement::Split => return Err(FamilyRule::GroupSplit),
        // Another state of a 2.0 state set (`state` is 0 elsewhere): each is a Metric.
        Placement::Same if state != 0 => {
            if !groups.another_state(state) {
                return Err(FamilyRule::StateSplit);
            }
        }
        Placement::First | Placement::New if state != 0 => groups.first_state(state),
        Placement::First | Placement::Same | Placement::New => {}
    }
    family.timestamp = ts;
    family.has_samples = true;
    Ok(())
}

/// OpenMetrics 2.0's rules on one sample of a family of `kind` named `name`: which value
/// each type takes, the labels a histogram or summary may not have, the values of state
/// sets, info and counters.
#[inline(always)]
fn version2_rules(kind: MetricType, name: &str, sample: &Sample<'_>) -> Result<(), FamilyRule> {
    // A number where one is expected: a gauge or unknown sample keeps every rule already,
    // a counter has two on its value (the rest below are about composites and labels).
    if sample.composite.is_none() {
        match kind {
            MetricType::Gauge | MetricType::Unknown => return Ok(()),
            MetricType::Counter => return counter_value_rules(sample.value()),
            _ => {}
        }
    }
    composite_rules(kind, name, sample)
}

/// A counter's value: a number, not negative.
#[inline(always)]
fn counter_value_rules(value: f64) -> Result<(), FamilyRule> {
    if value.is_nan() {
        return Err(FamilyRule::NanCounterValue);
    }
    if value < 0.0 {
        return Err(FamilyRule::NegativeCounterValue);
    }
    Ok(())
}

/// [`version2_rules`] of the other types, and of a composite value.
#[inline(never)]
fn composite_rules(kind: MetricType, name: &str, sample: &Sample<'_>) -> Result<(), FamilyRule> {
    let composite = sample.composite();
    let wanted = match kind {
        MetricType::Histogram => Some(CompositeKind::Histogram),
        MetricType::GaugeHistogram => Some(CompositeKind::GaugeHistogram),
        MetricType::Summary => Some(CompositeKind::Summary),
        _ => None,
    };
    match (composite.map(|c| c.kind()), wanted) {
        (Some(_), None) if kind != MetricType::Unknown => return Err(FamilyRule::NumberValueRequired),
        (None, Some(_)) => return Err(FamilyRule::CompositeValueRequired),
        (Some(found), Some(wanted)) if found != wanted => return Err(FamilyRule::CompositeKindMismatch),
        _ => {}
    }
    let labels = sample.labels();
    // A composite value hardly ever has the label: it is looked for first.
    if labels.get("le").is_some() && composite.is_some_and(|c| c.buckets().is_some()) {
        return Err(FamilyRule::LeLabelNotAllowed);
    }
    if kind == MetricType::Summary && labels.get("quantile").is_some() {
        return Err(FamilyRule::QuantileLabelNotAllowed);
    }
    let value = sample.value();
    match kind {
        MetricType::StateSet if labels.get(name).is_none() => return Err(FamilyRule::StateSetLabelMissing),
        MetricType::StateSet if value != 0.0 && value != 1.0 => {
            return Err(FamilyRule::StateSetValueNotBoolean)
        }
        MetricType::Info if value != 1.0 => return Err(FamilyRule::InfoValueNotOne),
        MetricType::Counter => return counter_value_rules(value),
        _ => {}
    }
    // Exemplars: 2.0 names no type that may not have them (its summary text places them).
    Ok(())
}

/// The rules on a sample's labels in a family of `kind` named `name`: a state set's state
/// label, a bucket's `le` (returned, parsed) and whole count, a count's whole value, a
/// quantile's `quantile` label.
fn label_rules(
    kind: MetricType,
    name: &str,
    suffix: &str,
    is_quantile: bool,
    sample: &Sample<'_>,
) -> Result<Option<f64>, FamilyRule> {
    let labels = sample.labels();
    if kind == MetricType::StateSet && labels.get(name).is_none() {
        return Err(FamilyRule::StateSetLabelMissing);
    }
    let mut le = None;
    if suffix == "_bucket" {
        let bound = labels.get("le");
        let parsed = bound.and_then(|v| parse_float(v.raw())).filter(|b| !b.is_nan());
        let canonical = parsed.is_some_and(|b| b != f64::INFINITY || bound.is_some_and(|v| v == "+Inf"));
        if !canonical {
            return Err(FamilyRule::InvalidBucketBound);
        }
        le = parsed;
        if !is_whole(sample.value()) {
            return Err(FamilyRule::NonIntegerBucket);
        }
    }
    if matches!(suffix, "_count" | "_gcount") && !is_whole(sample.value()) {
        return Err(FamilyRule::NonIntegerCount);
    }
    if is_quantile {
        let q = labels.get("quantile").and_then(|v| parse_float(v.raw()));
        if !q.is_some_and(|q| (0.0..=1.0).contains(&q)) {
            return Err(FamilyRule::InvalidQuantileLabel);
        }
    }
    Ok(le)
}

/// The rules on a sample's value (and exemplar) in a family of `kind`.
fn value_rules(
    kind: MetricType,
    suffix: &str,
    is_quantile: bool,
    sample: &Sample<'_>,
) -> Result<(), FamilyRule> {
    let value = sample.value();
    if kind == MetricType::StateSet && value != 0.0 && value != 1.0 {
        return Err(FamilyRule::StateSetValueNotBoolean);
    }
    if kind == MetricType::Info && value != 1.0 {
        return Err(FamilyRule::InfoValueNotOne);
    }
    if is_quantile && value < 0.0 {
        return Err(FamilyRule::NegativeQuantileValue);
    }
    let counter_like = matches!(
        suffix,
        "_total" | "_sum" | "_count" | "_bucket" | "_gcount" | "_gsum"
    );
    if counter_like && value.is_nan() {
        return Err(FamilyRule::NanCounterValue);
    }
    if counter_like && suffix != "_gsum" && value < 0.0 {
        return Err(FamilyRule::NegativeCounterValue);
    }
    if !sample.exemplars.is_empty() {
        let allowed = matches!(kind, MetricType::Histogram | MetricType::GaugeHistogram)
            && suffix == "_bucket"
            || kind == MetricType::Counter && suffix == "_total";
        if !allowed {
            return Err(FamilyRule::ExemplarNotAllowed);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
