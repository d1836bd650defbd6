//! PromQL vector selectors (`name{label="v", other=~"re.*"}`) and their label matchers,
//! matched against borrowed samples without allocating.

use std::fmt::{self, Write as _};

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::multispace0;
use nom::combinator::{map, recognize};
use nom::sequence::pair;
use nom::{IResult, Parser as _};

use crate::error::{SelectorError, SelectorErrorKind};
use crate::text::{names_equal, LabelValue, Sample};

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
        let compiled = regex::Regex::new(&format!("^(?s:{source})$"))
            .map_err(|e| SelectorErrorKind::InvalidRegex(e.to_string()))?;
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
    fn matches_empty(&self) -> bool {
        self.matches_value("")
    }

    /// Matches a still-escaped label value without allocating for values up to 512 bytes.
    fn matches_label(&self, value: Option<LabelValue<'_>>) -> bool {
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
    /// Renders the selector back in PromQL syntax (always with braces and `__name__`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, m) in self.matchers.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            if crate::text::is_label_name(&m.label) {
                f.write_str(&m.label)?;
            } else {
                write_promql_string(f, &m.label)?;
            }
            f.write_str(m.op.as_str())?;
            write_promql_string(f, &m.value)?;
        }
        f.write_str("}")
    }
}

/// Writes a double-quoted PromQL string literal that [`Selector::parse`] reads back.
fn write_promql_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(f, "\\x{:02x}", c as u32)?,
            c if c.is_control() => write!(f, "\\u{:04x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_str("\"")
}

type In<'a> = &'a str;

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn metric_name(i: In<'_>) -> IResult<In<'_>, &str> {
    recognize(pair(take_while1(is_name_start), take_while(is_name_char))).parse(i)
}

fn label_name(i: In<'_>) -> IResult<In<'_>, &str> {
    recognize(pair(
        take_while1(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(i)
}

fn match_op(i: In<'_>) -> IResult<In<'_>, MatchOp> {
    alt((
        map(tag("=~"), |_| MatchOp::RegexMatch),
        map(tag("!~"), |_| MatchOp::RegexNotMatch),
        map(tag("!="), |_| MatchOp::NotEqual),
        map(tag("="), |_| MatchOp::Equal),
    ))
    .parse(i)
}

/// Parses a PromQL string literal (`"..."`, `'...'` with Go escapes, or a raw backtick
/// string) at the start of `i`. Errors carry the offset within `i`.
fn string_literal(i: &str) -> Result<(&str, String), (usize, SelectorErrorKind)> {
    let quote = match i.chars().next() {
        Some(q @ ('"' | '\'' | '`')) => q,
        _ => return Err((0, SelectorErrorKind::Expected("a quoted string"))),
    };
    let body = &i[1..];
    if quote == '`' {
        let end = body.find('`').ok_or((0, SelectorErrorKind::UnterminatedString))?;
        return Ok((&body[end + 1..], body[..end].to_string()));
    }
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            c if c == quote => return Ok((&body[at + 1..], out)),
            '\n' => return Err((0, SelectorErrorKind::UnterminatedString)),
            '\\' => {
                let (_, e) = chars.next().ok_or((0, SelectorErrorKind::UnterminatedString))?;
                let simple = match e {
                    'a' => Some('\x07'),
                    'b' => Some('\x08'),
                    'f' => Some('\x0c'),
                    'n' => Some('\n'),
                    'r' => Some('\r'),
                    't' => Some('\t'),
                    'v' => Some('\x0b'),
                    '\\' => Some('\\'),
                    q if q == quote => Some(q),
                    _ => None,
                };
                if let Some(s) = simple {
                    out.push(s);
                    continue;
                }
                let (digits, radix) = match e {
                    'x' => (2, 16),
                    'u' => (4, 16),
                    'U' => (8, 16),
                    '0'..='7' => (2, 8),
                    _ => return Err((1 + at, SelectorErrorKind::InvalidEscape)),
                };
                let mut code = if radix == 8 { e.to_digit(8).unwrap_or(0) } else { 0 };
                for _ in 0..digits {
                    let (_, d) = chars.next().ok_or((1 + at, SelectorErrorKind::InvalidEscape))?;
                    let d = d
                        .to_digit(radix)
                        .ok_or((1 + at, SelectorErrorKind::InvalidEscape))?;
                    code = code * radix + d;
                }
                // \x and octal escapes are bytes in Go; only ASCII ones make valid UTF-8 alone.
                let c = match e {
                    'x' | '0'..='7' if code > 0x7f => None,
                    _ => char::from_u32(code),
                };
                out.push(c.ok_or((1 + at, SelectorErrorKind::InvalidEscape))?);
            }
            c => out.push(c),
        }
    }
    Err((0, SelectorErrorKind::UnterminatedString))
}

/// Parser state: the whole selector, for turning remaining input into columns.
struct SelectorParser<'a> {
    whole: &'a str,
}

impl<'a> SelectorParser<'a> {
    fn error(&self, rest: &str, kind: SelectorErrorKind) -> SelectorError {
        let offset = self.whole.len() - rest.len();
        SelectorError {
            column: self.whole[..offset].chars().count() + 1,
            kind,
        }
    }

    fn blank(rest: &'a str) -> &'a str {
        multispace0::<_, nom::error::Error<&str>>(rest).map_or(rest, |(r, _)| r)
    }

    fn string(&self, rest: &'a str) -> Result<(&'a str, String), SelectorError> {
        string_literal(rest).map_err(|(at, kind)| self.error(&rest[at.min(rest.len())..], kind))
    }

    fn parse(&self) -> Result<Selector, SelectorError> {
        let mut rest = Self::blank(self.whole);
        let mut matchers = Vec::new();
        let mut name_set = false;
        if let Ok((r, name)) = metric_name(rest) {
            matchers.push(Matcher::new("__name__", MatchOp::Equal, name)?);
            name_set = true;
            rest = Self::blank(r);
        }
        if let Some(r) = rest.strip_prefix('{') {
            rest = Self::blank(r);
            loop {
                if let Some(r) = rest.strip_prefix('}') {
                    rest = r;
                    break;
                }
                let item_start = rest;
                // A label name, quoted label name, or a quoted metric name (Prometheus 3).
                let (r, label, quoted) = if rest.starts_with(['"', '\'', '`']) {
                    let (r, s) = self.string(rest)?;
                    (r, s, true)
                } else {
                    let (r, l) = label_name(rest)
                        .map_err(|_| self.error(rest, SelectorErrorKind::Expected("a label name or '}'")))?;
                    (r, l.to_string(), false)
                };
                rest = Self::blank(r);
                if quoted && (rest.starts_with(',') || rest.starts_with('}')) {
                    if name_set {
                        return Err(self.error(item_start, SelectorErrorKind::DuplicateName));
                    }
                    matchers.push(Matcher::new("__name__", MatchOp::Equal, &label)?);
                    name_set = true;
                } else {
                    let (r, op) = match_op(rest).map_err(|_| {
                        self.error(rest, SelectorErrorKind::Expected("'=', '!=', '=~' or '!~'"))
                    })?;
                    rest = Self::blank(r);
                    let value_start = rest;
                    let (r, value) = self.string(rest)?;
                    rest = Self::blank(r);
                    if label == "__name__" && op == MatchOp::Equal && name_set {
                        return Err(self.error(item_start, SelectorErrorKind::DuplicateName));
                    }
                    let matcher =
                        Matcher::new(&label, op, &value).map_err(|e| self.error(value_start, e.kind))?;
                    matchers.push(matcher);
                }
                if let Some(r) = rest.strip_prefix(',') {
                    rest = Self::blank(r);
                } else if !rest.starts_with('}') {
                    return Err(self.error(rest, SelectorErrorKind::Expected("',' or '}'")));
                }
            }
            rest = Self::blank(rest);
        } else if !name_set {
            return Err(self.error(rest, SelectorErrorKind::Expected("a metric name or '{'")));
        }
        if !rest.is_empty() {
            return Err(self.error(rest, SelectorErrorKind::TrailingText));
        }
        if matchers.iter().all(Matcher::matches_empty) {
            return Err(SelectorError {
                column: 1,
                kind: SelectorErrorKind::EmptyMatchers,
            });
        }
        Ok(Selector::from_matchers(matchers))
    }
}

impl Selector {
    /// Parses a PromQL vector selector: an optional metric name, then optional
    /// `{matchers}`. Strings may use `"`, `'` or backticks with PromQL (Go) escapes;
    /// regexes are anchored (`^(?s:re)$`) and compiled once, here.
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
            .filter(|m| m.label == "__name__" && m.op == MatchOp::Equal);
        let metric_name = match (names.next(), names.next()) {
            (Some(m), None) => Some(m.value.clone()),
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
        self.matches_name(sample.name()) && self.matches_labels(sample)
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
        self.matchers.iter().filter(|m| m.label == "__name__").all(|m| {
            if normalize && matches!(m.op, MatchOp::Equal | MatchOp::NotEqual) {
                names_equal(name, &[&m.value], true) == (m.op == MatchOp::Equal)
            } else {
                m.matches_value(name)
            }
        })
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
        self.name_matches(name, normalize)
            && self
                .matchers
                .iter()
                .filter(|m| m.label != "__name__")
                .all(|m| m.matches_value(label(&m.label).unwrap_or("")))
    }

    fn matches_labels(&self, sample: &Sample<'_>) -> bool {
        let labels = sample.labels();
        self.matchers
            .iter()
            .filter(|m| m.label != "__name__")
            .all(|m| m.matches_label(labels.get(&m.label)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "regex")]
    fn sample(line: &str) -> Sample<'_> {
        crate::parse(line).next().unwrap().unwrap().into_sample().unwrap()
    }

    #[test]
    #[cfg(feature = "regex")]
    fn matching_table() {
        let line = r#"vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B",path="a\"b\\c"} 1"#;
        let s = sample(line);
        let cases = [
            ("vllm:generation_tokens_total", true),
            ("vllm_generation_tokens_total", false),
            (r#"{__name__="vllm:generation_tokens_total"}"#, true),
            (r#"{__name__=~"vllm:.*_total"}"#, true),
            (r#"{__name__!~"vllm:.*", engine="0"}"#, false),
            (r#"vllm:generation_tokens_total{engine="0"}"#, true),
            (r#"vllm:generation_tokens_total{engine!="0"}"#, false),
            (r#"{engine=~"0|1"}"#, true),
            (r#"{engine=~"1|2"}"#, false),
            (r#"{model_name=~"meta-llama/.*"}"#, true),
            (r#"{model_name=~"llama.*"}"#, false),
            (r#"{model_name=~"(?i)META-llama/.*"}"#, true),
            (r#"{engine="0", model_name!~"x.*"}"#, true),
            (r#"{path="a\"b\\c"}"#, true),
            (r#"{path='a"b\\c'}"#, true),
            (r#"{path=~`a"b\\c`}"#, true),
            (r#"{path=~'a"b.c'}"#, true),
            (r#"{engine="0", missing=""}"#, true),
            (r#"{engine="0", missing!=""}"#, false),
            (r#"{engine="0", missing=~"x|"}"#, true),
            (r#"  vllm:generation_tokens_total  {  engine = "0" , }  "#, true),
            (r#"{engine=~"0\n"}"#, false),
        ];
        for (text, want) in cases {
            let selector = Selector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(selector.matches(&s), want, "{text}");
        }
        let normalized = Selector::parse("vllm_generation_tokens_total")
            .unwrap()
            .normalize_names(true);
        assert!(normalized.matches(&s));
    }

    #[test]
    fn string_escapes() {
        let cases = [
            (r#""a\tb""#, "a\tb"),
            (r#""\x41\u00e9\U0001F600\101""#, "Aé😀A"),
            (r#"'it\'s'"#, "it's"),
            (r#"`raw\n`"#, "raw\\n"),
        ];
        for (lit, want) in cases {
            assert_eq!(string_literal(lit).unwrap().1, want, "{lit}");
        }
    }

    #[test]
    fn errors_with_columns() {
        let cases: &[(&str, usize, SelectorErrorKind)] = &[
            ("up{job=}", 8, SelectorErrorKind::Expected("a quoted string")),
            (r#"up{job="x"#, 8, SelectorErrorKind::UnterminatedString),
            (
                r#"up{job~"x"}"#,
                7,
                SelectorErrorKind::Expected("'=', '!=', '=~' or '!~'"),
            ),
            (
                r#"up{job="x" a="b"}"#,
                12,
                SelectorErrorKind::Expected("',' or '}'"),
            ),
            (r#"{job=""}"#, 1, SelectorErrorKind::EmptyMatchers),
            (r#"{job=~".*"}"#, 1, SelectorErrorKind::EmptyMatchers),
            (r#"up{__name__="x"}"#, 4, SelectorErrorKind::DuplicateName),
            (r#"up{"x"}"#, 4, SelectorErrorKind::DuplicateName),
            (r#"up{a="\q"}"#, 7, SelectorErrorKind::InvalidEscape),
            ("up x", 4, SelectorErrorKind::TrailingText),
            ("", 1, SelectorErrorKind::Expected("a metric name or '{'")),
            (
                "{1a=\"x\"}",
                2,
                SelectorErrorKind::Expected("a label name or '}'"),
            ),
        ];
        for (text, column, kind) in cases {
            if !cfg!(feature = "regex") && text.contains("=~") {
                continue;
            }
            let err = Selector::parse(text).unwrap_err();
            assert_eq!((err.column, &err.kind), (*column, kind), "{text}");
        }
        let err = Selector::parse(r#"{a=~"("}"#).unwrap_err();
        #[cfg(feature = "regex")]
        assert!(
            matches!(err.kind, SelectorErrorKind::InvalidRegex(_)) && err.column == 5,
            "{err}"
        );
        #[cfg(not(feature = "regex"))]
        assert_eq!(err.kind, SelectorErrorKind::RegexUnsupported);
    }

    #[test]
    #[cfg(feature = "regex")]
    fn fast_paths_agree_with_anchored_semantics() {
        let m = Matcher::new("a", MatchOp::RegexMatch, "foo").unwrap();
        assert!(m.matches_value("foo") && !m.matches_value("foobar") && !m.matches_value("xfoo"));
        let m = Matcher::new("a", MatchOp::RegexMatch, "a|b").unwrap();
        assert!(m.matches_value("a") && m.matches_value("b") && !m.matches_value("ab"));
        let m = Matcher::new("a", MatchOp::RegexMatch, ".+").unwrap();
        assert!(m.matches_value("\n") && !m.matches_value(""));
    }
}
