//! A sample that owns its text, for callers that keep samples after the page is gone.

use std::fmt;

use chrono::{DateTime, Utc};

use super::escaping::Escaping;
use super::sample::Sample;

/// A sample with its name and labels copied out of the page ([`Sample::to_owned`]): what a
/// function returns when the page it parsed is its own. Label values are unescaped, in
/// input order.
///
/// # Example
/// ```
/// fn read(page: String) -> Vec<promrate::text::OwnedSample> {
///     promrate::parse(&page).filter_map(|e| Some(e.ok()?.into_sample()?.to_owned())).collect()
/// }
/// let samples = read("up{job=\"a\\\"b\"} 1\n".to_string());
/// assert_eq!((samples[0].name(), samples[0].label("job")), ("up", Some("a\"b")));
/// assert_eq!(samples[0].to_string(), "up{job=\"a\\\"b\"} 1.0");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedSample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
    timestamp_ms: Option<i64>,
}

impl OwnedSample {
    /// The metric name.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("up 1").next().unwrap()?.into_sample().unwrap().to_owned();
    /// assert_eq!(s.name(), "up");
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The labels as `(name, unescaped value)`, in input order.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("up{b=\"2\",a=\"1\"} 1").next().unwrap()?.into_sample().unwrap().to_owned();
    /// assert_eq!(s.labels().collect::<Vec<_>>(), [("b", "2"), ("a", "1")]);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn labels(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// One label's unescaped value.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("up{a=\"1\"} 1").next().unwrap()?.into_sample().unwrap().to_owned();
    /// assert_eq!((s.label("a"), s.label("b")), (Some("1"), None));
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("up 2.5").next().unwrap()?.into_sample().unwrap().to_owned();
    /// assert_eq!(s.value(), 2.5);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The exposed timestamp in milliseconds, if any.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("up 1 1700000000000").next().unwrap()?.into_sample().unwrap().to_owned();
    /// assert_eq!(s.timestamp_ms(), Some(1_700_000_000_000));
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp_ms
    }

    /// This sample with its metric name and label names escaped by `scheme` as an
    /// exposition escapes them for a scraper that asked for it ([`Escaping::apply`]: only
    /// the names the legacy characters cannot spell); values are kept.
    ///
    /// # Example
    /// ```
    /// use promrate::text::Escaping;
    /// let s = promrate::parse("{\"http.requests\",\"service.name\"=\"a.b\",code=\"200\"} 1")
    ///     .next().unwrap()?.into_sample().unwrap().to_owned();
    /// let escaped = s.escaped(Escaping::Underscores);
    /// assert_eq!(escaped.to_string(), "http_requests{service_name=\"a.b\",code=\"200\"} 1.0");
    /// assert_eq!(s.escaped(Escaping::Values).name(), "U__http_2e_requests");
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn escaped(&self, scheme: Escaping) -> OwnedSample {
        OwnedSample {
            name: scheme.apply(&self.name).into_owned(),
            labels: self
                .labels
                .iter()
                .map(|(k, v)| (scheme.apply(k).into_owned(), v.clone()))
                .collect(),
            value: self.value,
            timestamp_ms: self.timestamp_ms,
        }
    }

    /// The exposed timestamp, if any.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("up 1 1700000000000").next().unwrap()?.into_sample().unwrap().to_owned();
    /// assert_eq!(s.timestamp().unwrap().timestamp(), 1_700_000_000);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn timestamp(&self) -> Option<DateTime<Utc>> {
        DateTime::from_timestamp_millis(self.timestamp_ms?)
    }
}

impl From<Sample<'_>> for OwnedSample {
    fn from(sample: Sample<'_>) -> Self {
        OwnedSample {
            name: sample.name_unescaped().into_owned(),
            labels: sample
                .labels()
                .iter_unescaped()
                .map(|(k, v)| (k.into_owned(), v.unescaped().into_owned()))
                .collect(),
            value: sample.value(),
            timestamp_ms: sample.timestamp_ms(),
        }
    }
}

impl fmt::Display for OwnedSample {
    /// As [`Sample`]'s `Display`: a Prometheus text line that parses back to this sample.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::write::sample_text(f, &self.name, self.labels(), self.value, self.timestamp_ms)
    }
}
