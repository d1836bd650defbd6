//! Errors of the text layer: a line that does not parse or breaks a format rule.

use thiserror::Error;

/// A line of exposition text that could not be parsed or that breaks a format rule.
///
/// `line` and `column` are 1-based; `column` counts characters (not bytes) from the start
/// of the line, pointing at the first character that is wrong.
///
/// # Example
/// ```
/// let err = promrate::parse("a{b\"c\"} 1\n").next().unwrap().unwrap_err();
/// assert_eq!((err.line, err.column), (1, 4));
/// assert_eq!(err.to_string(), "line 1, column 4: expected '=' after label name");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {kind}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// What went wrong on a line. New kinds may be added in minor releases.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The parser expected a specific token here.
    #[error("expected {0}")]
    Expected(&'static str),
    /// A metric name is empty or contains a character outside `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    #[error("invalid metric name")]
    InvalidMetricName,
    /// A label name is empty or contains a character outside `[a-zA-Z_][a-zA-Z0-9_]*`.
    #[error("invalid label name")]
    InvalidLabelName,
    /// A quoted string (label value, quoted name) has no closing quote on its line.
    #[error("unterminated quoted string")]
    UnterminatedString,
    /// A backslash escape other than `\\`, `\"` or `\n`.
    #[error("invalid escape sequence '\\{0}'")]
    InvalidEscape(char),
    /// No longer returned: quoted names may hold escapes (text 1.0.0, OpenMetrics), kept
    /// raw and resolved by `Sample::name_unescaped` and `Labels::iter_unescaped`. Kept so
    /// that code matching on it still compiles.
    #[error("escape sequences are not supported in quoted names")]
    EscapeInQuotedName,
    /// The same label name appears twice in one label set.
    #[error("duplicate label name '{0}'")]
    DuplicateLabel(String),
    /// The sample value is not a valid float.
    #[error("invalid sample value '{0}'")]
    InvalidValue(String),
    /// The timestamp is not valid for the format (integer milliseconds in Prometheus text,
    /// finite float seconds in OpenMetrics).
    #[error("invalid timestamp '{0}'")]
    InvalidTimestamp(String),
    /// An exemplar's value is not a valid float.
    #[error("invalid exemplar value '{0}'")]
    InvalidExemplarValue(String),
    /// An exemplar's timestamp is not valid (finite float seconds).
    #[error("invalid exemplar timestamp '{0}'")]
    InvalidExemplarTimestamp(String),
    /// A `# TYPE` line names a type the format does not know.
    #[error("invalid metric type '{0}'")]
    InvalidType(String),
    /// Unexpected characters after the end of what a line may hold.
    #[error("unexpected text after {0}")]
    TrailingText(&'static str),
    /// The line is longer than [`Parser::max_line_len`](crate::Parser::max_line_len).
    #[error("line of {length} bytes, over the limit of {limit}")]
    LineTooLong {
        /// The configured limit.
        limit: usize,
        /// The line's length in bytes.
        length: usize,
    },
    /// A sample has more labels than [`Parser::label_limit`](crate::Parser::label_limit)
    /// (Prometheus' `label_limit`); reported at the first label over the limit.
    #[error("{labels} labels, over the label_limit of {limit}")]
    LabelLimit {
        /// The configured limit.
        limit: usize,
        /// How many labels the sample has.
        labels: usize,
    },
    /// A label name is longer than
    /// [`Parser::label_name_length_limit`](crate::Parser::label_name_length_limit).
    #[error("label name of {length} bytes, over the label_name_length_limit of {limit}")]
    LabelNameLengthLimit {
        /// The configured limit.
        limit: usize,
        /// The name's length in bytes.
        length: usize,
    },
    /// A label value (unescaped) is longer than
    /// [`Parser::label_value_length_limit`](crate::Parser::label_value_length_limit).
    #[error("label value of {length} bytes, over the label_value_length_limit of {limit}")]
    LabelValueLengthLimit {
        /// The configured limit.
        limit: usize,
        /// The unescaped value's length in bytes.
        length: usize,
    },
    /// The page holds more samples than [`Parser::sample_limit`](crate::Parser::sample_limit)
    /// (Prometheus' `sample_limit`); reported at the first sample over the limit, after
    /// which the page yields nothing more.
    #[error("{samples} samples, over the sample_limit of {limit}")]
    SampleLimit {
        /// The configured limit.
        limit: usize,
        /// How many samples the page holds.
        samples: usize,
    },
    /// The page is larger than [`Parser::body_size_limit`](crate::Parser::body_size_limit)
    /// (Prometheus' `body_size_limit`); reported at line 1, column 1, and nothing is read.
    #[error("page of {size} bytes, over the body_size_limit of {limit}")]
    BodySizeLimit {
        /// The configured limit.
        limit: usize,
        /// The page's size in bytes.
        size: usize,
    },
    /// A line of a page read in chunks ([`Tracker::ingest_chunks`](crate::Tracker::ingest_chunks))
    /// is not UTF-8; the column is that of its first invalid byte.
    #[error("not UTF-8")]
    InvalidUtf8,
    /// OpenMetrics forbids blank lines.
    #[error("blank line (not allowed in OpenMetrics)")]
    BlankLine,
    /// A carriage return ends the line (a Windows line ending): both formats end lines with
    /// `\n` alone, and Prometheus refuses the page. A lenient text parser
    /// ([`Parser::strict`](crate::Parser::strict)`(false)`) reads such lines without it.
    #[error("a carriage return ends the line (lines end with '\\n' alone; `Parser::strict(false)` reads text pages written with Windows line endings)")]
    CarriageReturn,
    /// OpenMetrics input must end with `# EOF`.
    #[error("missing '# EOF' at end of input")]
    MissingEof,
    /// Nothing may follow `# EOF` (but one final newline).
    #[error("text after '# EOF'")]
    TextAfterEof,
    /// An OpenMetrics 2.0 composite value (`{count:..,sum:..,bucket:[..]}`) breaks the
    /// ABNF or a rule on its fields; the column points at the field.
    #[error("composite value: {0}")]
    Composite(CompositeRule),
    /// An OpenMetrics 2.0 start timestamp (`st@<seconds>`) that is not a finite number, or
    /// one given twice or before the sample's timestamp.
    #[error("invalid start timestamp '{0}'")]
    InvalidStartTimestamp(String),
    /// An OpenMetrics rule about families, metadata, groups or values was broken.
    #[error("metric family '{family}': {rule}")]
    Family {
        /// The family name the rule applies to.
        family: String,
        /// The rule that was broken.
        rule: FamilyRule,
    },
}

/// An OpenMetrics rule about families, metadata, label groups or values, as
/// [`ParseErrorKind::Family`] reports it. The message is its `Display`.
///
/// # Example
/// ```
/// use promrate::{error::FamilyRule, Format, error::ParseErrorKind, Parser};
/// let page = "# TYPE h histogram\nh_bucket{le=\"1\"} 1\n# EOF\n";
/// let err = Parser::new(Format::OpenMetrics).parse(page).find_map(Result::err).unwrap();
/// assert!(matches!(err.kind, ParseErrorKind::Family { rule: FamilyRule::InfBucketMissing, .. }));
/// assert_eq!(FamilyRule::InfBucketMissing.to_string(), "the +Inf bucket is missing");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum FamilyRule {
    #[error("the +Inf bucket is missing")]
    /// The +Inf bucket is missing.
    InfBucketMissing,
    #[error("the count does not match the +Inf bucket")]
    /// The count does not match the +Inf bucket.
    CountDoesNotMatchInfBucket,
    #[error("_count must be present if _sum is present")]
    /// _count must be present if _sum is present.
    SumWithoutCount,
    #[error("_gcount must be present if _gsum is present")]
    /// _gcount must be present if _gsum is present.
    GsumWithoutGcount,
    #[error("_sum must be present if _count is present")]
    /// _sum must be present if _count is present.
    CountWithoutSum,
    #[error("_sum is not allowed with negative buckets")]
    /// _sum is not allowed with negative buckets.
    SumWithNegativeBuckets,
    #[error("a negative _gsum needs negative buckets")]
    /// A negative _gsum needs negative buckets.
    NegativeGsumWithoutNegativeBuckets,
    #[error("buckets are out of order")]
    /// Buckets are out of order.
    BucketsOutOfOrder,
    #[error("bucket values decrease")]
    /// Bucket values decrease.
    BucketValuesDecrease,
    #[error("metadata is repeated")]
    /// Metadata is repeated.
    MetadataRepeated,
    #[error("metadata must come before the family's samples")]
    /// Metadata must come before the family's samples.
    MetadataAfterSamples,
    #[error(
        "the family repeats or clashes with an earlier family: its name was taken before this line \
         (prometheus_client's pages with ':' in metric names do this, vLLM's among them: \
         `Parser::strict(false)`, or `Tracker::vllm_preset`, reads such pages line by line)"
    )]
    /// The family repeats or clashes with an earlier family: reported at the line that
    /// opens it again (or, where only its type's names clash, at the line that closes it).
    NameClash,
    #[error("the metric name must end with '_' and the unit")]
    /// The metric name must end with '_' and the unit.
    NameLacksUnitSuffix,
    #[error("info and stateset families cannot have a unit")]
    /// Info and stateset families cannot have a unit.
    UnitNotAllowed,
    #[error("a bucket needs a valid 'le' label (+Inf spelled '+Inf')")]
    /// A bucket needs a valid 'le' label (+Inf spelled '+Inf').
    InvalidBucketBound,
    #[error("a label group is split by another group")]
    /// A label group is split by another group.
    GroupSplit,
    #[error("a stateset sample needs a label named after the family")]
    /// A stateset sample needs a label named after the family.
    StateSetLabelMissing,
    #[error("bucket values must be integers")]
    /// Bucket values must be integers.
    NonIntegerBucket,
    #[error("count values must be integers")]
    /// Count values must be integers.
    NonIntegerCount,
    #[error("counter-like values cannot be NaN")]
    /// Counter-like values cannot be NaN.
    NanCounterValue,
    #[error("counter-like values cannot be negative")]
    /// Counter-like values cannot be negative.
    NegativeCounterValue,
    #[error("info values must be 1")]
    /// Info values must be 1.
    InfoValueNotOne,
    #[error("quantile values cannot be negative")]
    /// Quantile values cannot be negative.
    NegativeQuantileValue,
    #[error("samples of one group must all have timestamps or none")]
    /// Samples of one group must all have timestamps or none.
    MixedTimestamps,
    #[error("timestamps went backwards within a group")]
    /// Timestamps went backwards within a group.
    TimestampsBackwards,
    #[error("a metric's samples need increasing timestamps: this one repeats it without any")]
    /// OpenMetrics 2.0: a second sample of one metric (the same label set, one line each)
    /// without timestamps ("its Samples MUST have monotonically increasing Timestamps").
    RepeatedWithoutTimestamps,
    #[error("a state's samples must be together: this state came earlier, before another")]
    /// OpenMetrics 2.0: each state is a Metric, whose samples are one run ("Metrics MUST
    /// NOT be interleaved").
    StateSplit,
    #[error("stateset values must be 0 or 1")]
    /// Stateset values must be 0 or 1.
    StateSetValueNotBoolean,
    #[error("a summary quantile needs a 'quantile' label between 0 and 1")]
    /// A summary quantile needs a 'quantile' label between 0 and 1.
    InvalidQuantileLabel,
    #[error("only counter totals and histogram buckets can have exemplars")]
    /// Only counter totals and histogram buckets can have exemplars.
    ExemplarNotAllowed,
    #[error("histograms and summaries take a composite value in OpenMetrics 2.0")]
    /// OpenMetrics 2.0: a histogram, gauge histogram or summary sample needs a composite
    /// value.
    CompositeValueRequired,
    #[error("only histograms, gauge histograms, summaries and unknown metrics take a composite value")]
    /// OpenMetrics 2.0: counters, gauges, state sets and info take a number.
    NumberValueRequired,
    #[error("the composite value is not of the family's type")]
    /// OpenMetrics 2.0: a histogram's value with `gcount`, a summary's with buckets, ...
    CompositeKindMismatch,
    #[error("an info family's name must end in _info")]
    /// OpenMetrics 2.0: an info family's name must end in `_info`.
    InfoNameLacksSuffix,
    #[error("a histogram with classic buckets may not have an 'le' label")]
    /// OpenMetrics 2.0: a histogram's labels may not include `le`.
    LeLabelNotAllowed,
    #[error("a summary may not have a 'quantile' label")]
    /// OpenMetrics 2.0: a summary's labels may not include `quantile`.
    QuantileLabelNotAllowed,
}

/// A rule on an OpenMetrics 2.0 composite value, as [`ParseErrorKind::Composite`] reports
/// it. The message is its `Display`.
///
/// # Example
/// ```
/// use promrate::{error::CompositeRule, Format, error::ParseErrorKind, Parser};
/// let page = "# TYPE h histogram\nh {count:3,sum:1,bucket:[1:2]}\n# EOF\n";
/// let err = Parser::new(Format::OpenMetrics2).parse(page).find_map(Result::err).unwrap();
/// assert_eq!(err.kind, ParseErrorKind::Composite(CompositeRule::InfBucketMissing));
/// assert_eq!((err.line, err.column), (2, 25));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[non_exhaustive]
pub enum CompositeRule {
    /// The ABNF expected a field or token here.
    #[error("expected {0}")]
    Expected(&'static str),
    /// A count or bucket value that is negative or NaN.
    #[error("counts may not be negative or NaN")]
    NegativeCount,
    /// A summary's count must be an integer.
    #[error("a summary's count must be an integer")]
    NonIntegerCount,
    /// A summary's sum may not be negative or NaN.
    #[error("a summary's sum may not be negative or NaN")]
    InvalidSummarySum,
    /// Classic buckets need a last `+Inf` bucket.
    #[error("the +Inf bucket is missing")]
    InfBucketMissing,
    /// The count differs from the `+Inf` bucket's value.
    #[error("the count does not match the +Inf bucket")]
    CountDoesNotMatchInfBucket,
    /// Bucket bounds must be unique and increasing.
    #[error("bucket bounds must increase")]
    BucketsOutOfOrder,
    /// Cumulative bucket values may not decrease.
    #[error("bucket values may not decrease")]
    BucketValuesDecrease,
    /// A native histogram's schema must be between -4 and 8.
    #[error("the schema must be between -4 and 8")]
    SchemaOutOfRange,
    /// A native histogram's zero threshold must be a finite number, not negative.
    #[error("the zero threshold must be finite and not negative")]
    NegativeZeroThreshold,
    /// A native histogram's count must equal the sum of its zero and other buckets (more
    /// only by NaN observations, which make the sum NaN). Checked where every value is a
    /// whole number: sums of fractions differ by rounding alone.
    #[error("the count does not match the sum of the native buckets")]
    CountDoesNotMatchBuckets,
    /// A native bucket above the overflow bucket of its schema (the one past the largest
    /// finite float).
    #[error("a native bucket lies beyond the overflow bucket of its schema")]
    BucketBeyondOverflow,
    /// The spans' lengths must add up to the number of buckets.
    #[error("the spans do not add up to the buckets")]
    SpansDoNotMatchBuckets,
    /// Quantiles must be between 0 and 1.
    #[error("quantiles must be between 0 and 1")]
    QuantileOutOfRange,
    /// Quantiles must be unique and increasing.
    #[error("quantiles must increase")]
    QuantilesOutOfOrder,
    /// A quantile's value may not be negative.
    #[error("quantile values may not be negative")]
    NegativeQuantileValue,
}

impl ParseErrorKind {
    /// Whether this is one of the limits a caller opts into ([`Parser::sample_limit`](crate::Parser::sample_limit)
    /// and the others), rather than a fault of the page.
    ///
    /// # Example
    /// ```
    /// let err = promrate::Parser::default().label_limit(0).parse("a{b=\"c\"} 1").next().unwrap().unwrap_err();
    /// assert!(err.kind.is_limit());
    /// let err = promrate::parse("a{b=} 1").next().unwrap().unwrap_err();
    /// assert!(!err.kind.is_limit());
    /// ```
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            ParseErrorKind::LineTooLong { .. }
                | ParseErrorKind::LabelLimit { .. }
                | ParseErrorKind::LabelNameLengthLimit { .. }
                | ParseErrorKind::LabelValueLengthLimit { .. }
                | ParseErrorKind::SampleLimit { .. }
                | ParseErrorKind::BodySizeLimit { .. }
        )
    }
}

impl ParseError {
    pub(crate) fn new(line: usize, column: usize, kind: ParseErrorKind) -> Self {
        ParseError { line, column, kind }
    }
}
