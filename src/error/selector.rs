//! Errors of the selector layer: a PromQL selector that does not parse or compile.

use std::fmt;

use thiserror::Error;

/// A PromQL selector that could not be parsed or compiled.
///
/// Its `Debug` form starts with the message, so that `?` in a `main` returning `Result`
/// (which prints `Debug`) says what went wrong.
///
/// # Example
/// ```
/// let err = promrate::Selector::parse("up{job=}").unwrap_err();
/// assert_eq!(err.column, 8);
/// assert!(format!("{err:?}").starts_with(&err.to_string()));
/// ```
#[derive(Clone, PartialEq, Eq, Error)]
#[error("column {column}: {kind}")]
pub struct SelectorError {
    /// 1-based column (characters) in the selector text.
    pub column: usize,
    /// What went wrong.
    pub kind: SelectorErrorKind,
}

impl fmt::Debug for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{self} (SelectorError {{ column: {}, kind: {:?} }})",
            self.column, self.kind
        )
    }
}

/// What went wrong in a selector. New kinds may be added in minor releases.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SelectorErrorKind {
    /// The parser expected a specific token here.
    #[error("expected {0}")]
    Expected(&'static str),
    /// A string literal has no closing quote.
    #[error("unterminated string")]
    UnterminatedString,
    /// An escape sequence PromQL does not know.
    #[error("invalid escape sequence in string")]
    InvalidEscape,
    /// PromQL requires a metric name or a matcher that does not match the empty string.
    #[error("vector selector must contain at least one non-empty matcher")]
    EmptyMatchers,
    /// A metric name before the braces and a `__name__` matcher (any operator) or a quoted
    /// name inside them, which Prometheus 3 refuses; inside the braces alone any number of
    /// them may stand (`{"bar", __name__="baz"}` is valid and matches nothing).
    #[error("metric name given twice")]
    DuplicateName,
    /// A regular expression did not compile.
    #[error("invalid regular expression: {0}")]
    InvalidRegex(String),
    /// `=~` or `!~` was used but the crate was built without the `regex` feature.
    #[error("regex matchers need the `regex` feature")]
    RegexUnsupported,
    /// Text after the closing brace.
    #[error("unexpected text after selector")]
    TrailingText,
    /// A quoted metric name before the braces (`"my.metric"{job="x"}`): PromQL takes a
    /// quoted name only inside them, as Prometheus 3 writes it.
    #[error("a quoted metric name stands inside the braces: {{\"{0}\", ...}}")]
    QuotedNameOutsideBraces(String),
    /// A bare metric name that PromQL reads as a keyword (`on`, `bool`, `ignoring`,
    /// `group_left`, `group_right`, `atan2`) or a number (`inf`, `nan`), in any case, as
    /// Prometheus refuses it; quoted (`{"on"}`) it is a name.
    #[error("`{0}` is a PromQL keyword or number, not a metric name: quote it ({{\"{0}\"}})")]
    KeywordAsName(String),
    /// A range (`x[5m]`): promrate selects series, and the window is the query's to ask.
    #[error(
        "a range selector: promrate selects series (write the selector without `[...]`) and takes the \
         window where you ask for the rate: `Query::new(&selector, Estimator::Rate).window(..)`"
    )]
    RangeSelector,
    /// A function or an aggregation (`rate(x[5m])`, `sum(...)`): PromQL queries are not
    /// selectors; promrate computes the rates and sums itself.
    #[error(
        "`{0}(...)` is a PromQL query, not a selector: promrate selects series (e.g. `x_total{{job=\"a\"}}`) \
         and computes rate, increase, irate and sums by label itself: \
         `tracker.evaluate(&Query::new(&selector, Estimator::Rate).window(..).by([..]))`"
    )]
    Function(String),
}
