//! Label matchers: `=`, `!=`, `=~`, `!~`, with regexes fully anchored and fast paths for
//! the common pattern shapes.

use std::fmt;

use crate::error::{SelectorError, SelectorErrorKind};
use crate::text::LabelValue;

/// How a matcher compares, as in PromQL.
///
/// # Example
/// ```
/// use promrate::{MatchOp, Selector};
/// let s = Selector::parse(r#"up{job!~"test.*"}"#)?;
/// assert_eq!(s.matchers()[1].op(), MatchOp::RegexNotMatch);
/// # Ok::<(), promrate::SelectorError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchOp {
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `=~` (fully anchored)
    RegexMatch,
    /// `!~` (fully anchored)
    RegexNotMatch,
}

impl MatchOp {
    /// The operator as written in PromQL.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::MatchOp::RegexMatch.as_str(), "=~");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            MatchOp::Equal => "=",
            MatchOp::NotEqual => "!=",
            MatchOp::RegexMatch => "=~",
            MatchOp::RegexNotMatch => "!~",
        }
    }
}

/// The compiled form of a regex matcher: fast paths first, the regex engine last.
#[derive(Clone)]
#[cfg_attr(not(feature = "regex"), allow(dead_code))]
enum Pattern {
    /// A pattern without metacharacters: plain equality.
    Literal(String),
    /// `a|b|c` of plain literals: membership.
    Alternatives(Vec<String>),
    /// `.*`: matches everything.
    Any,
    /// `.+`: matches every non-empty value.
    NonEmpty,
    #[cfg(feature = "regex")]
    Regex(regex::Regex),
}

impl Pattern {
    #[cfg(not(feature = "regex"))]
    fn compile(_source: &str) -> Result<Pattern, SelectorErrorKind> {
        Err(SelectorErrorKind::RegexUnsupported)
    }

    #[cfg(feature = "regex")]
    fn compile(source: &str) -> Result<Pattern, SelectorErrorKind> {
        // Validate with the real engine even where a fast path answers, so an invalid
        // pattern is an error at parse time whatever its shape.
        // The user's pattern alone first, so that an error shows what they wrote, not the
        // anchored form.
        // Go's syntax, as Prometheus reads it, in the crate's (`go_regex.rs`).
        let translated = super::go_regex::translate(source).map_err(|refused| {
            SelectorErrorKind::InvalidRegex(format!(
                "{} (at character {} of the pattern)",
                refused.reason, refused.at
            ))
        })?;
        let build = |pattern: &str| {
            regex::RegexBuilder::new(pattern)
                .size_limit(REGEX_SIZE_LIMIT)
                .nest_limit(REGEX_NEST_LIMIT)
                .build()
                .map_err(|e| SelectorErrorKind::InvalidRegex(one_line(source, &e)))
        };
        build(&translated)?;
        let compiled = build(&format!("^(?s:{translated})$"))?;
        let is_plain = |s: &str| !s.contains(|c: char| "\\.+*?()|[]{}^$".contains(c));
        if source == ".*" {
            return Ok(Pattern::Any);
        }
        if source == ".+" {
            return Ok(Pattern::NonEmpty);
        }
        if is_plain(source) {
            return Ok(Pattern::Literal(source.to_string()));
        }
        let parts: Vec<&str> = source.split('|').collect();
        if parts.len() > 1 && parts.iter().all(|p| is_plain(p)) {
            return Ok(Pattern::Alternatives(
                parts.into_iter().map(str::to_string).collect(),
            ));
        }
        Ok(Pattern::Regex(compiled))
    }

    fn is_match(&self, value: &str) -> bool {
        match self {
            Pattern::Literal(l) => value == l,
            Pattern::Alternatives(alts) => alts.iter().any(|a| a == value),
            Pattern::Any => true,
            Pattern::NonEmpty => !value.is_empty(),
            #[cfg(feature = "regex")]
            Pattern::Regex(re) => re.is_match(value),
        }
    }
}

/// One label matcher: `label op "value"`.
///
/// # Example
/// ```
/// let s = promrate::Selector::parse(r#"up{job="api"}"#)?;
/// let m = &s.matchers()[1];
/// assert_eq!((m.label(), m.op().as_str(), m.value()), ("job", "=", "api"));
/// # Ok::<(), promrate::SelectorError>(())
/// ```
#[derive(Clone)]
pub struct Matcher {
    label: String,
    op: MatchOp,
    value: String,
    pattern: Option<Pattern>,
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{:?}", self.label, self.op.as_str(), self.value)
    }
}

impl Matcher {
    /// A matcher from its parts; regex patterns are anchored and compiled here.
    ///
    /// # Errors
    /// An invalid regex, or a regex operator without the `regex` feature.
    ///
    /// # Example
    /// ```
    /// use promrate::{Matcher, MatchOp};
    /// let m = Matcher::new("code", MatchOp::RegexMatch, "5..")?;
    /// assert!(m.matches_value("503") && !m.matches_value("5031"));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn new(label: &str, op: MatchOp, value: &str) -> Result<Matcher, SelectorError> {
        let pattern = match op {
            MatchOp::RegexMatch | MatchOp::RegexNotMatch => {
                Some(Pattern::compile(value).map_err(|kind| SelectorError { column: 1, kind })?)
            }
            _ => None,
        };
        Ok(Matcher {
            label: label.to_string(),
            op,
            value: value.to_string(),
            pattern,
        })
    }

    /// Whether both are the same matcher (label, operator and value).
    pub(crate) fn same_as(&self, other: &Matcher) -> bool {
        self.label == other.label && self.op == other.op && self.value == other.value
    }

    /// The label name (`__name__` for the metric name).
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse("up")?;
    /// assert_eq!(s.matchers()[0].label(), "__name__");
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The operator.
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"up{a!="b"}"#)?;
    /// assert_eq!(s.matchers()[1].op(), promrate::MatchOp::NotEqual);
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn op(&self) -> MatchOp {
        self.op
    }

    /// The value or pattern, unescaped.
    ///
    /// # Example
    /// ```
    /// let s = promrate::Selector::parse(r#"{a="x\ty"}"#)?;
    /// assert_eq!(s.matchers()[0].value(), "x\ty");
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether a label value (unescaped; `""` for a missing label) satisfies this matcher.
    ///
    /// # Example
    /// ```
    /// let m = promrate::Matcher::new("a", promrate::MatchOp::NotEqual, "")?;
    /// assert!(m.matches_value("x") && !m.matches_value(""));
    /// # Ok::<(), promrate::SelectorError>(())
    /// ```
    pub fn matches_value(&self, value: &str) -> bool {
        match (&self.op, &self.pattern) {
            (MatchOp::Equal, _) => value == self.value,
            (MatchOp::NotEqual, _) => value != self.value,
            (MatchOp::RegexMatch, Some(p)) => p.is_match(value),
            (MatchOp::RegexNotMatch, Some(p)) => !p.is_match(value),
            (_, None) => false,
        }
    }

    /// Whether this matcher accepts the empty string (a missing label).
    pub(super) fn matches_empty(&self) -> bool {
        self.matches_value("")
    }

    /// Matches a still-escaped label value without allocating for values up to 512 bytes.
    pub(super) fn matches_label(&self, value: Option<LabelValue<'_>>) -> bool {
        let Some(value) = value else {
            return self.matches_empty();
        };
        match self.op {
            MatchOp::Equal => value == self.value.as_str(),
            MatchOp::NotEqual => value != self.value.as_str(),
            _ => {
                let raw = value.raw();
                if !raw.contains('\\') {
                    return self.matches_value(raw);
                }
                let mut buf = [0u8; 512];
                let mut len = 0;
                for b in value.unescaped_bytes() {
                    if len == buf.len() {
                        return self.matches_value(&value.unescaped());
                    }
                    buf[len] = b;
                    len += 1;
                }
                match std::str::from_utf8(&buf[..len]) {
                    Ok(s) => self.matches_value(s),
                    Err(_) => self.matches_value(&value.unescaped()),
                }
            }
        }
    }
}

/// The most memory a selector's regex may compile to (128 MiB): Go compiles a character
/// class to one instruction, the `regex` crate to an automaton of its UTF-8 bytes, so the
/// patterns Prometheus takes (`\pL{1000}`, 1,000 copies of a class at most) need up to
/// tens of MiB here; the crate's default of 10 MiB refused them.
#[cfg(feature = "regex")]
const REGEX_SIZE_LIMIT: usize = 128 << 20;

/// How deeply a selector's regex may nest groups and repetitions: Go's limit (the crate's
/// default is 250).
#[cfg(feature = "regex")]
const REGEX_NEST_LIMIT: u32 = 1000;

/// A pattern's error in one line, for logs: the reason and the character of the pattern it
/// is at, from the regex crate's own parser; `error` as it is for anything else (a pattern
/// over the size limit).
#[cfg(feature = "regex")]
fn one_line(source: &str, error: &regex::Error) -> String {
    let at = |reason: &dyn std::fmt::Display, span: &regex_syntax::ast::Span| {
        format!("{reason} (at character {} of the pattern)", span.start.column)
    };
    match regex_syntax::Parser::new().parse(source) {
        Err(regex_syntax::Error::Parse(e)) => at(e.kind(), e.span()),
        Err(regex_syntax::Error::Translate(e)) => at(e.kind(), e.span()),
        // Over a size limit, or refused only as written for the crate: its last line.
        _ => error
            .to_string()
            .lines()
            .last()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_string(),
    }
}
