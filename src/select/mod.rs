//! PromQL selectors (`name{label="v", other=~"re.*"}`) and their matching against borrowed
//! samples and tracked series.
//!
//! # For the next maintainer
//! `grammar.rs` parses PromQL's selector syntax with `nom` (strings in three quotes, Go
//! escapes, positions in characters for errors); `matcher.rs` compiles a matcher once
//! (anchored regexes, literal and alternation fast paths); this file decides what a
//! selector picks. What must change together:
//! - **What a selector picks** is one rule, [`Selector::matches_family`] (a histogram's or
//!   summary's name picks its `_bucket` with `le`, `_sum`, `_count`, `_created` too), and
//!   its twin for series held elsewhere, `matches_family_series`; the tracker's ingest, its
//!   `matching`, `sum_by` and every query use them. Change both, and `family_of`, together
//!   (`tests/it/query.rs`: `a_histogram_name_means_the_same_everywhere`).
//! - **Names with ':' and '_' alike** (`normalize_names`) go through `name_accepted` only.
//! - **`covers`** decides whether a tracker keeps every series a query asks about; it must
//!   stay conservative (`false` when unsure): a `true` it should not give is an answer that
//!   silently misses series.
//! - Parsing and `Display` round-trip (`tests.rs`: `a_printed_selector_parses_back_to_itself`,
//!   and the `parse_selector` fuzz target): a change to the grammar changes
//!   `write_promql_string` too. `Display` prints as Prometheus' printer
//!   (`promql/parser/printer.go`, `VectorSelector.String`): name outside, the rest sorted.

#[cfg(feature = "regex")]
mod go_regex;
mod grammar;
mod matcher;

use std::fmt;

use grammar::{write_promql_string, SelectorParser};
pub use matcher::{MatchOp, Matcher};

use crate::error::SelectorError;
use crate::text::names::names_equal;
use crate::text::Sample;

/// A parsed PromQL vector selector.
///
/// # Example
/// ```
/// use promrate::Selector;
/// let selector = Selector::parse(r#"vllm:generation_tokens_total{model_name=~"llama.*",engine!="1"}"#)?;
/// let page = "vllm:generation_tokens_total{engine=\"0\",model_name=\"llama-3\"} 10\n\
///             vllm:generation_tokens_total{engine=\"1\",model_name=\"llama-3\"} 20\n\
///             vllm:prompt_tokens_total{engine=\"0\",model_name=\"llama-3\"} 30\n";
/// let total: f64 = promrate::parse(page)
///     .filter_map(|e| e.ok()?.into_sample())
///     .filter(|s| selector.matches(s))
///     .map(|s| s.value())
///     .sum();
/// assert_eq!(total, 10.0);
/// # Ok::<(), promrate::SelectorError>(())
/// ```
#[derive(Clone)]
pub struct Selector {
    matchers: Vec<Matcher>,
    /// The metric name when one `__name__="..."` matcher fixes it.
    metric_name: Option<String>,
    normalize_names: bool,
}

impl fmt::Debug for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Selector")
            .field("matchers", &self.matchers)
            .field("normalize_names", &self.normalize_names)
            .finish()
    }
}

impl fmt::Display for Selector {
    /// Renders the selector back in PromQL syntax as Prometheus prints one: the metric
    /// name before the braces (`up{job="x"}`), the other matchers sorted and joined by
    /// commas. A name that PromQL would have to quote stays a `__name__` matcher
    /// (`{__name__="a.b"}`), which Prometheus 2 reads as well as 3, and so do names
    /// beside another `__name__` matcher (`{__name__!="b",__name__="a"}`).
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"{job="api", __name__="http_requests_total", code=~"5.."}"#)?;
    /// assert_eq!(s.to_string(), r#"http_requests_total{code=~"5..",job="api"}"#);
    /// let dotted = promrate::Selector::parse(r#"{"http.requests"}"#)?;
    /// assert_eq!(dotted.to_string(), r#"{__name__="http.requests"}"#);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A name before the braces must be the only `__name__` matcher: PromQL refuses
        // `a{__name__!="b"}` ("metric name must not be set twice") though it reads
        // `{__name__="a", __name__!="b"}`.
        let mut name_matchers = self.matchers.iter().filter(|m| m.label() == "__name__");
        let name = match (name_matchers.next(), name_matchers.next()) {
            (Some(_), None) => self.matchers.iter().position(|m| {
                m.label() == "__name__"
                    && m.op() == MatchOp::Equal
                    && crate::text::names::is_metric_name(m.value())
            }),
            _ => None,
        };
        let mut others: Vec<String> = Vec::with_capacity(self.matchers.len());
        for (i, m) in self.matchers.iter().enumerate() {
            if Some(i) == name {
                continue;
            }
            let mut text = String::new();
            if crate::text::names::is_label_name(m.label()) {
                text.push_str(m.label());
            } else {
                write_promql_string(&mut text, m.label())?;
            }
            text.push_str(m.op().as_str());
            write_promql_string(&mut text, m.value())?;
            others.push(text);
        }
        others.sort_unstable();
        if let Some(i) = name {
            f.write_str(self.matchers[i].value())?;
        }
        if name.is_none() || !others.is_empty() {
            write!(f, "{{{}}}", others.join(","))?;
        }
        Ok(())
    }
}

impl Selector {
    /// Parses a PromQL vector selector: an optional metric name, then optional
    /// `{matchers}`, as Prometheus' PromQL parser reads it (`#` comments included).
    /// Strings may use `"`, `'` or backticks with PromQL (Go) escapes; regexes are Go's
    /// RE2 syntax, matched as Prometheus matches them (`\d`, `\w`, `\s` and `\b` are
    /// ASCII; property names spelled exactly), anchored (`^(?s:re)$`) and compiled
    /// once, here (at most 128 MiB compiled, groups nested 1,000 deep). Not read: modifiers
    /// (`offset`, `@`) and label values that are no UTF-8 (`"\xff"`).
    ///
    /// # Errors
    /// [`SelectorError`] with the column and what was expected; also when no matcher
    /// rejects the empty string (PromQL's rule) or a regex is invalid.
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"{"http.requests", code=~'5..'}"#)?;
    /// assert_eq!(s.metric_name(), Some("http.requests"));
    /// assert!(promrate::Selector::parse(r#"{job=~".*"}"#).is_err());
    /// // Go's `\d` is ASCII: an Arabic-Indic digit is no digit, as in Prometheus.
    /// let digits = promrate::Selector::parse(r#"{code=~"\\d+"}"#)?;
    /// assert!(digits.matches_series("x", |_| Some("503")));
    /// assert!(!digits.matches_series("x", |_| Some("٥٠٣")));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        SelectorParser { whole: text }.parse()
    }

    /// A selector from matchers built with [`Matcher::new`].
    ///
    /// # Example
    /// ```
    /// use promrate::{Matcher, MatchOp, Selector};
    /// let s = Selector::from_matchers(vec![Matcher::new("__name__", MatchOp::Equal, "up")?]);
    /// assert_eq!(s.metric_name(), Some("up"));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn from_matchers(matchers: Vec<Matcher>) -> Selector {
        let mut names = matchers
            .iter()
            .filter(|m| m.label() == "__name__" && m.op() == MatchOp::Equal);
        let metric_name = match (names.next(), names.next()) {
            (Some(m), None) => Some(m.value().to_string()),
            _ => None,
        };
        Selector {
            matchers,
            metric_name,
            normalize_names: false,
        }
    }

    /// Treat ':' and '_' as equal in metric names given with `=` / `!=` (vLLM's
    /// OpenMetrics output writes `vllm:x` samples as `vllm_x`). Regex name matchers see
    /// the name as written.
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse("vllm:generation_tokens_total")?.normalize_names(true);
    /// let sample = promrate::parse("vllm_generation_tokens_total 5").next().unwrap().unwrap().into_sample().unwrap();
    /// assert!(s.matches(&sample));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn normalize_names(mut self, on: bool) -> Self {
        self.normalize_names = on;
        self
    }

    /// The metric name fixed by the selector, if exactly one `__name__` equality gives it.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Selector::parse(r#"{job="a"}"#)?.metric_name(), None);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn metric_name(&self) -> Option<&str> {
        self.metric_name.as_deref()
    }

    /// The matchers, the metric name first as a `__name__` matcher.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::Selector::parse(r#"up{a="b"}"#)?.matchers().len(), 2);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn matchers(&self) -> &[Matcher] {
        &self.matchers
    }

    /// Whether a sample satisfies every matcher; a missing label matches like an empty
    /// value. Compares unescaped values without allocating.
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"{path="/a\"b"}"#)?;
    /// let sample = promrate::parse(r#"req{path="/a\"b"} 1"#).next().unwrap().unwrap().into_sample().unwrap();
    /// assert!(s.matches(&sample));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn matches(&self, sample: &Sample<'_>) -> bool {
        // A name with escapes (quoted, rare) is compared unescaped, as labels are.
        self.matches_name(&sample.name_unescaped()) && self.matches_labels(sample)
    }

    /// Whether a sample is a series of a family this selector names: the selector matches
    /// it, or it is the `_bucket` (with an `le` label), `_sum`, `_count`, `_total` or
    /// `_created` series of a family `x` (a histogram, a summary, a counter as OpenMetrics
    /// names it) that the selector matches as if the sample were named `x` (its labels
    /// matched as usual). This is how a selector picks series everywhere in the crate: in
    /// [`Tracker::new`](crate::Tracker::new), its queries and its folds, as PromQL users
    /// name a classic histogram by its family name.
    ///
    /// It goes by names, as PromQL does: a gauge `x` beside an unrelated `x_count` would be
    /// picked with it.
    ///
    /// # Example
    /// ```
    /// let ttft = promrate::Selector::parse(r#"ttft_seconds{engine="0"}"#)?;
    /// let page = "ttft_seconds_bucket{engine=\"0\",le=\"0.1\"} 3\n\
    ///             ttft_seconds_count{engine=\"0\"} 3\n\
    ///             ttft_seconds_count{engine=\"1\"} 5\n\
    ///             ttft_seconds_total_bucket 1\n";
    /// let picked: Vec<bool> = promrate::parse(page)
    ///     .filter_map(|e| e.ok()?.into_sample())
    ///     .map(|s| ttft.matches_family(&s))
    ///     .collect();
    /// // Not engine 1; and a `_bucket` without `le` is not a bucket.
    /// assert_eq!(picked, [true, true, false, false]);
    /// assert!(!ttft.matches(&promrate::parse("ttft_seconds_count{engine=\"0\"} 3").next().unwrap()?.into_sample().unwrap()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn matches_family(&self, sample: &Sample<'_>) -> bool {
        if !self.matches_labels(sample) {
            return false;
        }
        let name = sample.name_unescaped();
        let name = name.as_ref();
        self.matches_name(name)
            || family_of(name, || sample.labels().has_name(b"le")).is_some_and(|base| self.matches_name(base))
    }

    /// [`Selector::matches_family`] for a series kept outside a page (a sample another
    /// program holds, a [`crate::TrackedSeries`]), given its name and a lookup of its
    /// (unescaped) label values, as [`Selector::matches_series`] is for
    /// [`Selector::matches`].
    ///
    /// # Example
    /// ```
    /// let ttft = promrate::Selector::parse(r#"ttft_seconds{engine="0"}"#)?;
    /// let labels = [("engine", "0"), ("le", "0.1")];
    /// let lookup = |name: &str| labels.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    /// assert!(ttft.matches_family_series("ttft_seconds_bucket", lookup));
    /// assert!(!ttft.matches_series("ttft_seconds_bucket", lookup));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn matches_family_series<'v>(&self, name: &str, label: impl Fn(&str) -> Option<&'v str>) -> bool {
        self.matches_family_series_normalized(name, label, self.normalize_names)
    }

    /// [`Selector::matches_family_series`], names compared as `normalize` says.
    pub(crate) fn matches_family_series_normalized<'v>(
        &self,
        name: &str,
        label: impl Fn(&str) -> Option<&'v str>,
        normalize: bool,
    ) -> bool {
        self.matches_label_values(&label)
            && (self.name_matches(name, normalize)
                || family_of(name, || label("le").is_some())
                    .is_some_and(|base| self.name_matches(base, normalize)))
    }

    /// Whether every series `other` picks (as [`Selector::matches_family`] picks) is one
    /// this selector picks too: each of this selector's matchers is one of `other`'s, or
    /// accepts the value `other` fixes with `=` (a name: also the family a histogram part
    /// belongs to). Conservative: `false` where it cannot tell.
    pub(crate) fn covers(&self, other: &Selector, normalize: bool) -> bool {
        let normalize = normalize || self.normalize_names || other.normalize_names;
        self.matchers.iter().all(|m| {
            if other.matchers.iter().any(|o| o.same_as(m)) {
                return true;
            }
            let fixed = other
                .matchers
                .iter()
                .find(|o| o.label() == m.label() && o.op() == MatchOp::Equal)
                .map(Matcher::value);
            match fixed {
                Some(name) if m.label() == "__name__" => {
                    name_accepted(m, name, normalize)
                        || family_of(name, || true).is_some_and(|base| name_accepted(m, base, normalize))
                }
                Some(value) => m.matches_value(value),
                None => false,
            }
        })
    }

    /// Whether metric names compare with ':' and '_' alike ([`Selector::normalize_names`]).
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse("vllm:x")?;
    /// assert!(!s.normalizes_names() && s.normalize_names(true).normalizes_names());
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn normalizes_names(&self) -> bool {
        self.normalize_names
    }

    /// Whether the metric-name matchers accept `name` (cheap pre-filter).
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"up{job="a"}"#)?;
    /// assert!(s.matches_name("up") && !s.matches_name("down"));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn matches_name(&self, name: &str) -> bool {
        self.name_matches(name, self.normalize_names)
    }

    fn name_matches(&self, name: &str, normalize: bool) -> bool {
        self.matchers
            .iter()
            .filter(|m| m.label() == "__name__")
            .all(|m| name_accepted(m, name, normalize))
    }

    /// Whether a series given by its name and a lookup of its (unescaped) label values
    /// matches, for series kept outside a page (such as [`crate::TrackedSeries`]).
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"up{job=~"a|b", env!="dev"}"#)?;
    /// let labels = [("job", "a")];
    /// let lookup = |name: &str| labels.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    /// assert!(s.matches_series("up", lookup));
    /// assert!(!s.matches_series("down", lookup));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn matches_series<'v>(&self, name: &str, label: impl Fn(&str) -> Option<&'v str>) -> bool {
        self.matches_series_normalized(name, label, self.normalize_names)
    }

    /// [`Selector::matches_series`], with names compared as `normalize` says.
    pub(crate) fn matches_series_normalized<'v>(
        &self,
        name: &str,
        label: impl Fn(&str) -> Option<&'v str>,
        normalize: bool,
    ) -> bool {
        self.name_matches(name, normalize) && self.matches_label_values(label)
    }

    /// This selector with its metric name (the `__name__` equality that
    /// [`Selector::metric_name`] reads) replaced by `name`.
    pub(crate) fn with_metric_name(&self, name: &str) -> Selector {
        let matchers = self
            .matchers
            .iter()
            .map(|m| {
                if m.label() == "__name__"
                    && m.op() == MatchOp::Equal
                    && Some(m.value()) == self.metric_name()
                {
                    Matcher::new("__name__", MatchOp::Equal, name).expect("an equality matcher")
                } else {
                    m.clone()
                }
            })
            .collect();
        Selector::from_matchers(matchers).normalize_names(self.normalize_names)
    }

    /// Whether the metric-name matchers accept `name`, compared as `normalize` says.
    pub(crate) fn name_matches_normalized(&self, name: &str, normalize: bool) -> bool {
        self.name_matches(name, normalize)
    }

    /// Whether the label matchers (all but `__name__`) accept a series' label values.
    pub(crate) fn matches_label_values<'v>(&self, label: impl Fn(&str) -> Option<&'v str>) -> bool {
        self.matchers
            .iter()
            .filter(|m| m.label() != "__name__")
            .all(|m| m.matches_value(label(m.label()).unwrap_or("")))
    }

    fn matches_labels(&self, sample: &Sample<'_>) -> bool {
        let labels = sample.labels();
        self.matchers
            .iter()
            .filter(|m| m.label() != "__name__")
            .all(|m| m.matches_label(labels.get(m.label())))
    }
}

/// The suffixes of a family's series after its name: a classic histogram's or summary's
/// parts, a counter's total (OpenMetrics names the family `x`, the series `x_total`), and
/// their created times.
pub(crate) const FAMILY_PARTS: [&str; 5] = ["_bucket", "_sum", "_count", "_total", "_created"];

/// The family a series named `name` is a part of (`x` for `x_bucket`, `x_sum`, `x_count`,
/// `x_total`, `x_created`), if its name says so; a `_bucket` only with an `le` label
/// (`has_le`).
pub(crate) fn family_of(name: &str, has_le: impl FnOnce() -> bool) -> Option<&str> {
    let (base, part) = FAMILY_PARTS
        .iter()
        .find_map(|part| Some((name.strip_suffix(part)?, *part)))?;
    (!base.is_empty() && (part != "_bucket" || has_le())).then_some(base)
}

/// Whether a `__name__` matcher accepts `name`, with ':' and '_' alike in `=` and `!=` when
/// `normalize`.
fn name_accepted(m: &Matcher, name: &str, normalize: bool) -> bool {
    if normalize && matches!(m.op(), MatchOp::Equal | MatchOp::NotEqual) {
        names_equal(name, &[m.value()], true) == (m.op() == MatchOp::Equal)
    } else {
        m.matches_value(name)
    }
}

#[cfg(test)]
mod tests;

#[cfg(all(test, feature = "regex"))]
mod regex_error_tests {
    /// An invalid regex is reported as the user wrote it, not in its anchored form.
    #[test]
    fn a_bad_regex_is_shown_as_written() {
        let err = super::Selector::parse(r#"up{job=~"("}"#).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("unclosed group"), "{message}");
        assert!(!message.contains("(?s:"), "{message}");
    }

    /// Patterns Prometheus takes that the crate's default limits refused (found by
    /// comparing with Prometheus' parser): a large class repeated 300 times (16 MiB
    /// compiled), groups nested 400 deep.
    #[test]
    fn what_prometheus_takes_fits_the_limits() {
        let repeated = super::Selector::parse(r#"m{l=~"\\pL{300}"}"#).unwrap();
        let labels = |value: &str| format!("m{{l=\"{value}\"}} 1\n");
        let page = labels(&"é".repeat(300));
        let sample = crate::parse(&page)
            .next()
            .unwrap()
            .unwrap()
            .into_sample()
            .unwrap();
        assert!(repeated.matches(&sample));
        let nested = format!("m{{l=~\"{}a{}\"}}", "(".repeat(400), ")".repeat(400));
        assert!(super::Selector::parse(&nested).is_ok());
        let too_deep = format!("m{{l=~\"{}a{}\"}}", "(".repeat(1100), ")".repeat(1100));
        assert!(super::Selector::parse(&too_deep).is_err());
    }
}
