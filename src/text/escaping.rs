//! The name escaping schemes of Prometheus 3's content negotiation (`escaping=` in an
//! `Accept` or `Content-Type` header): how a UTF-8 metric or label name is written for a
//! reader that only takes the legacy characters `[a-zA-Z_:][a-zA-Z0-9_:]*`.
//!
//! The rules are those of prometheus/common's `model.EscapeName` and `model.UnescapeName`
//! (at d2417e2c, 2026-08-21), read from its source and checked against the vectors of its
//! `model/metric_test.go` (in `escaping/tests.rs`).

use std::borrow::Cow;
use std::fmt::{self, Write};
use std::str::FromStr;

use super::names::is_metric_name;

/// An `escaping` parameter this crate does not know (see [`Escaping`]).
///
/// # Example
/// ```
/// let err = "utf8".parse::<promrate::text::Escaping>().unwrap_err();
/// assert_eq!(err.to_string(), "unknown escaping scheme \"utf8\" (allow-utf-8, underscores, dots or values)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown escaping scheme {0:?} (allow-utf-8, underscores, dots or values)")]
pub struct UnknownEscaping(pub String);

/// A name escaping scheme: what a server does to names the legacy characters cannot
/// spell, when the scraper asks for it (`escaping=underscores`, ...).
///
/// # Example
/// ```
/// use promrate::text::Escaping;
/// let scheme: Escaping = "values".parse()?;
/// assert_eq!(scheme.escape("http.requests"), "U__http_2e_requests");
/// assert_eq!(scheme.unescape("U__http_2e_requests"), "http.requests");
/// assert_eq!(Escaping::Underscores.escape("http.requests"), "http_requests");
/// assert_eq!(Escaping::Dots.escape("http.requests_total"), "http_dot_requests__total");
/// # Ok::<(), promrate::text::UnknownEscaping>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Escaping {
    /// `allow-utf-8`: names are written as they are (quoted where they must be).
    AllowUtf8,
    /// `underscores`: every character the legacy names do not take becomes `_` (not
    /// reversible). Prometheus' default for a scraper that names no scheme.
    #[default]
    Underscores,
    /// `dots`: `.` becomes `_dot_`, `_` becomes `__`, any other such character `__`
    /// (reversible for names of letters, digits, `:` and `.` that do not start with a
    /// digit: `a_dot_b` reads back as `a_._b`).
    Dots,
    /// `values`: `U__` first, `_` doubled, any other such character its code point in
    /// lower-case hex between underscores (`.` is `_2e_`); reversible but for characters
    /// from U+100000 on and legacy names that start with `U__` (see
    /// [`Escaping::unescape`]).
    Values,
}

impl Escaping {
    /// The scheme's name, as the `escaping` parameter spells it.
    ///
    /// # Example
    /// ```
    /// assert_eq!(promrate::text::Escaping::AllowUtf8.as_str(), "allow-utf-8");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            Escaping::AllowUtf8 => "allow-utf-8",
            Escaping::Underscores => "underscores",
            Escaping::Dots => "dots",
            Escaping::Values => "values",
        }
    }

    /// The scheme an HTTP `Content-Type` (or `Accept` media range) names in its `escaping`
    /// parameter; `None` without one, or with one this does not know.
    ///
    /// # Example
    /// ```
    /// use promrate::text::Escaping;
    /// let header = "text/plain; version=1.0.0; escaping=allow-utf-8; charset=utf-8";
    /// assert_eq!(Escaping::from_content_type(header), Some(Escaping::AllowUtf8));
    /// assert_eq!(Escaping::from_content_type("text/plain; version=0.0.4"), None);
    /// ```
    pub fn from_content_type(content_type: &str) -> Option<Escaping> {
        content_type.split(';').skip(1).find_map(|param| {
            let (key, value) = param.split_once('=')?;
            let value = value.trim().trim_matches('"');
            (key.trim().eq_ignore_ascii_case("escaping")).then(|| value.parse().ok())?
        })
    }

    /// `name` escaped by this scheme, as prometheus/common's `EscapeName` writes it:
    /// [`Escaping::Dots`] doubles the underscores of a name that needed nothing, the others
    /// leave such a name as it is. (An exposition escapes only the names that need it:
    /// [`Escaping::apply`].)
    ///
    /// # Example
    /// ```
    /// use promrate::text::Escaping;
    /// assert_eq!(Escaping::Values.escape("label with 😱"), "U__label_20_with_20__1f631_");
    /// assert_eq!(Escaping::Dots.escape("no:escaping_required"), "no:escaping__required");
    /// assert_eq!(Escaping::Underscores.escape("0ab"), "_ab");
    /// ```
    pub fn escape<'a>(&self, name: &'a str) -> Cow<'a, str> {
        match self {
            Escaping::Dots => self.rewritten(name),
            _ => self.apply(name),
        }
    }

    /// `name` escaped as an exposition escapes it (prometheus/common's
    /// `EscapeMetricFamily`): only a name the legacy characters cannot spell, so that
    /// [`Escaping::Dots`] leaves `http_requests_total` as it is. Label names are treated
    /// as metric names (`:` kept), as there.
    ///
    /// # Example
    /// ```
    /// use promrate::text::Escaping;
    /// assert_eq!(Escaping::Dots.apply("http_requests_total"), "http_requests_total");
    /// assert_eq!(Escaping::Dots.apply("http.requests_total"), "http_dot_requests__total");
    /// ```
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        if is_metric_name(name) {
            return Cow::Borrowed(name);
        }
        self.rewritten(name)
    }

    /// `name` written in this scheme's characters, whether or not it needed it.
    fn rewritten<'a>(&self, name: &'a str) -> Cow<'a, str> {
        match self {
            _ if name.is_empty() => Cow::Borrowed(name),
            Escaping::AllowUtf8 => Cow::Borrowed(name),
            Escaping::Underscores => Cow::Owned(
                name.char_indices()
                    .map(|(i, c)| if legacy_char(c, i) { c } else { '_' })
                    .collect(),
            ),
            Escaping::Dots => {
                let mut out = String::with_capacity(name.len() + 8);
                for (i, c) in name.char_indices() {
                    match c {
                        '_' => out.push_str("__"),
                        '.' => out.push_str("_dot_"),
                        c if legacy_char(c, i) => out.push(c),
                        _ => out.push_str("__"),
                    }
                }
                Cow::Owned(out)
            }
            Escaping::Values => {
                let mut out = String::with_capacity(name.len() + 16);
                out.push_str("U__");
                for (i, c) in name.char_indices() {
                    match c {
                        '_' => out.push_str("__"),
                        c if legacy_char(c, i) => out.push(c),
                        // Writing to a `String` cannot fail.
                        c => {
                            let _ = write!(out, "_{:x}_", u32::from(c));
                        }
                    }
                }
                Cow::Owned(out)
            }
        }
    }

    /// `name` unescaped by this scheme, as prometheus/common's `UnescapeName` reads it:
    /// [`Escaping::Underscores`] cannot be undone (the name comes back as it is),
    /// [`Escaping::Dots`] reads `_dot_` as `.` and then `__` as `_`, and
    /// [`Escaping::Values`] reads a name that starts with `U__`, or gives it back whole
    /// if any part of it is not a valid escape (a lone `_`, a code that is no character,
    /// more than five hex digits). As there, a name that needed no escape and so was
    /// written as it is, yet starts with `U__`, reads as escaped (`U__a` gives `a`).
    ///
    /// # Example
    /// ```
    /// use promrate::text::Escaping;
    /// assert_eq!(Escaping::Values.unescape("U___82b1__706b_"), "花火");
    /// assert_eq!(Escaping::Values.unescape("U__bad__utf_D900_"), "U__bad__utf_D900_");
    /// assert_eq!(Escaping::Dots.unescape("mysystem_dot_prod__x"), "mysystem.prod_x");
    /// ```
    pub fn unescape<'a>(&self, name: &'a str) -> Cow<'a, str> {
        match self {
            Escaping::AllowUtf8 | Escaping::Underscores => Cow::Borrowed(name),
            Escaping::Dots => {
                if !name.contains("__") && !name.contains("_dot_") {
                    return Cow::Borrowed(name);
                }
                Cow::Owned(name.replace("_dot_", ".").replace("__", "_"))
            }
            Escaping::Values => match name.strip_prefix("U__").and_then(value_decoded) {
                Some(decoded) => Cow::Owned(decoded),
                None => Cow::Borrowed(name),
            },
        }
    }
}

/// Whether `c`, at byte `at` of a name, is one the legacy names take there (a digit not
/// first).
fn legacy_char(c: char, at: usize) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':' || (c.is_ascii_digit() && at > 0)
}

/// The text of a `values`-escaped name after its `U__`, decoded; `None` where it breaks
/// the scheme.
fn value_decoded(escaped: &str) -> Option<String> {
    let b = escaped.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'_' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        match b.get(i)? {
            b'_' => {
                out.push(b'_');
                i += 1;
            }
            _ => {
                // A code point in hex up to its closing `_`: at most five digits, as
                // prometheus/common reads them (a sixth refuses the name).
                let digits = b[i..].iter().position(|&c| c == b'_')?;
                if digits > 5 {
                    return None;
                }
                // At least one digit: a `_` here was read as a doubled one above. Each is
                // folded to lower case as prometheus/common folds it (`c | 0x20`, which also
                // reads the control bytes 0x10 to 0x19 as the digits 0 to 9).
                let mut code: u32 = 0;
                for &c in &b[i..i + digits] {
                    code = code * 16 + char::from(c | 0x20).to_digit(16)?;
                }
                let c = char::from_u32(code)?;
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += digits + 1;
            }
        }
    }
    // Bytes are copied whole and characters encoded whole: the text stays UTF-8.
    String::from_utf8(out).ok()
}

impl fmt::Display for Escaping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Escaping {
    type Err = UnknownEscaping;

    /// The scheme of an `escaping` parameter's value: `allow-utf-8`, `underscores`,
    /// `dots` or `values`, exactly (as prometheus/common's `ToEscapingScheme`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow-utf-8" => Ok(Escaping::AllowUtf8),
            "underscores" => Ok(Escaping::Underscores),
            "dots" => Ok(Escaping::Dots),
            "values" => Ok(Escaping::Values),
            other => Err(UnknownEscaping(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests;
