//! [`HelpText`]: a `# HELP` line's text, unescaped on request.

use std::borrow::Cow;
use std::fmt;

use super::escape::{unescape, UnescapedBytes};

/// Help text as written, with lazy unescaping.
///
/// In the Prometheus text format `\\` and `\n` are escapes; OpenMetrics adds `\"`.
///
/// # Example
/// ```
/// let entry = promrate::parse("# HELP a line\\nbreak\n").next().unwrap()?;
/// if let promrate::Entry::Help { name, text } = entry {
///     assert_eq!(name, "a");
///     assert_eq!(text.unescaped(), "line\nbreak");
///     assert!(text == "line\nbreak");
///     assert_eq!(text.to_string(), "line\nbreak");
/// }
/// # Ok::<(), promrate::ParseError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct HelpText<'page> {
    raw: &'page str,
    quote: bool,
}

impl<'page> HelpText<'page> {
    pub(crate) fn new(raw: &'page str, quote: bool) -> Self {
        HelpText { raw, quote }
    }

    /// The text as written.
    ///
    /// # Example
    /// ```
    /// let e = promrate::parse("# HELP a x\\\\y").next().unwrap()?;
    /// if let promrate::Entry::Help { text, .. } = e { assert_eq!(text.raw(), "x\\\\y"); }
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn raw(&self) -> &'page str {
        self.raw
    }

    /// The text with escapes resolved; borrows when there are none.
    ///
    /// # Example
    /// ```
    /// let e = promrate::parse("# HELP a x\\\\y").next().unwrap()?;
    /// if let promrate::Entry::Help { text, .. } = e { assert_eq!(text.unescaped(), "x\\y"); }
    /// # Ok::<(), promrate::ParseError>(())
    /// ```
    pub fn unescaped(&self) -> Cow<'page, str> {
        unescape(self.raw, self.quote)
    }
}

impl fmt::Display for HelpText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.unescaped())
    }
}

impl PartialEq<str> for HelpText<'_> {
    /// Compares the unescaped text.
    fn eq(&self, other: &str) -> bool {
        UnescapedBytes::new(self.raw, self.quote).eq(other.bytes())
    }
}

impl PartialEq<&str> for HelpText<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl fmt::Debug for HelpText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.unescaped(), f)
    }
}
