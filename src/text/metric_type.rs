//! [`MetricType`]: the type a `# TYPE` line declares.

/// A metric family type, as declared by `# TYPE`.
///
/// # Example
/// ```
/// use promrate::MetricType;
/// assert_eq!(MetricType::from_name("gaugehistogram"), Some(MetricType::GaugeHistogram));
/// assert_eq!(MetricType::Counter.as_str(), "counter");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MetricType {
    /// Monotonic counter.
    Counter,
    /// Gauge.
    Gauge,
    /// Classic histogram (`_bucket`, `_sum`, `_count`).
    Histogram,
    /// OpenMetrics gauge histogram (`_bucket`, `_gsum`, `_gcount`).
    GaugeHistogram,
    /// Summary (quantiles, `_sum`, `_count`).
    Summary,
    /// OpenMetrics info (`_info`, value 1).
    Info,
    /// OpenMetrics state set (values 0 or 1).
    StateSet,
    /// `unknown` (OpenMetrics) or `untyped` (Prometheus text).
    Unknown,
}

impl MetricType {
    /// Parses a type word of either format (`untyped` and `unknown` both give `Unknown`).
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::MetricType::from_name("untyped"), Some(promrate::MetricType::Unknown));
    /// assert_eq!(promrate::MetricType::from_name("Counter"), None);
    /// ```
    pub fn from_name(word: &str) -> Option<MetricType> {
        Some(match word {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" => MetricType::Histogram,
            "gaugehistogram" => MetricType::GaugeHistogram,
            "summary" => MetricType::Summary,
            "info" => MetricType::Info,
            "stateset" => MetricType::StateSet,
            "unknown" | "untyped" => MetricType::Unknown,
            _ => return None,
        })
    }

    /// The OpenMetrics spelling of the type.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::MetricType::StateSet.as_str(), "stateset");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
            MetricType::GaugeHistogram => "gaugehistogram",
            MetricType::Summary => "summary",
            MetricType::Info => "info",
            MetricType::StateSet => "stateset",
            MetricType::Unknown => "unknown",
        }
    }
}
