//! [`Entry`]: what one line of a page is.

use std::fmt;

use super::escape::unescape;
use super::help::HelpText;
use super::metric_type::MetricType;
use super::sample::Sample;

/// One line of an exposition page, as the parser yields it.
///
/// # Example
/// ```
/// use promrate::{Entry, MetricType};
/// let text = "# TYPE up gauge\nup 1\n";
/// let entries: Vec<Entry> = promrate::parse(text).collect::<Result<_, _>>()?;
/// assert!(matches!(entries[0], Entry::Type { name: "up", kind: MetricType::Gauge }));
/// assert_eq!(entries[1].as_sample().unwrap().value(), 1.0);
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Entry<'page> {
    /// A sample line.
    Sample(Sample<'page>),
    /// `# HELP name text`.
    Help {
        /// Family name.
        name: &'page str,
        /// Help text, still escaped.
        text: HelpText<'page>,
    },
    /// `# TYPE name kind`.
    Type {
        /// Family name.
        name: &'page str,
        /// Declared type.
        kind: MetricType,
    },
    /// `# UNIT name unit` (OpenMetrics).
    Unit {
        /// Family name.
        name: &'page str,
        /// Unit, e.g. `seconds`; may be empty.
        unit: &'page str,
    },
    /// Any other comment line (Prometheus text format), without the leading `#` and one
    /// following space.
    Comment(&'page str),
    /// `# EOF` (OpenMetrics).
    Eof,
}

impl<'page> Entry<'page> {
    /// The sample, if this entry is one.
    ///
    /// # Example
    /// ```
    /// let e = promrate::parse("a 1").next().unwrap()?;
    /// assert_eq!(e.as_sample().map(|s| s.name()), Some("a"));
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn as_sample(&self) -> Option<&Sample<'page>> {
        match self {
            Entry::Sample(sample) => Some(sample),
            _ => None,
        }
    }

    /// The sample, if this entry is one, by value.
    ///
    /// # Example
    /// ```
    /// let s = promrate::parse("a 1").next().unwrap()?.into_sample().unwrap();
    /// assert_eq!(s.value(), 1.0);
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn into_sample(self) -> Option<Sample<'page>> {
        match self {
            Entry::Sample(sample) => Some(sample),
            _ => None,
        }
    }
}

impl fmt::Display for Entry<'_> {
    /// The entry as a line (without the newline): a sample as [`Sample`]'s `Display`
    /// writes it, `# HELP`, `# TYPE`, a comment, and OpenMetrics' `# UNIT` and `# EOF`.
    ///
    /// # Example
    /// ```
    /// let page = "# HELP up Whether it is up.\n# TYPE up gauge\nup 1.0\n";
    /// let lines: Vec<String> = promrate::parse(page).map(|e| e.unwrap().to_string()).collect();
    /// assert_eq!(lines.join("\n") + "\n", page);
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        match self {
            Entry::Sample(sample) => return sample.fmt(f),
            Entry::Help { name, text } => {
                super::write::help(&mut line, &unescape(name, true), &text.unescaped())?
            }
            Entry::Type { name, kind } => super::write::metric_type(&mut line, &unescape(name, true), *kind)?,
            Entry::Unit { name, unit } => super::write::unit(&mut line, &unescape(name, true), unit)?,
            Entry::Comment(text) => return write!(f, "# {text}"),
            Entry::Eof => return f.write_str("# EOF"),
        }
        f.write_str(line.trim_end_matches('\n'))
    }
}
