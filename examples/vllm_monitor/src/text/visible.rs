//! What a server sent, as people may safely read it on a terminal: every control character
//! written out (`\x1b`, `\n`, `\x08`, C1 controls as `\u{9b}`) and the characters that
//! reorder a line (bidirectional overrides) too, so that an error body, a label value or an
//! instance name can neither change the terminal (a title, a cleared screen, a cursor
//! moved) nor pass for something it is not (a row split over three lines, a word rubbed
//! out by backspaces).
//!
//! For the next maintainer: every human-facing renderer shows server text through
//! [`visible`] (plain lines all pass through it where they are written; the dashboard where
//! a server's string meets a widget; stderr's messages). `--json` keeps the text exact
//! and still safe on a terminal: what JSON lets through raw (C1 controls, DEL, the
//! reordering characters) is written as `\u` escapes ([`json_safe`]). `--export csv` is
//! exact when piped or redirected; on a terminal its cells pass through [`visible`] (CSV
//! has no escapes). A backslash is left as it is: escaping twice changes
//! nothing, so a line escaped where it is written may hold parts escaped before.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as it is.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with its control and reordering characters escaped; borrowed when it has none
/// (the usual case costs a scan).
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A line of JSON with every character [`visible`] would escape that JSON lets through
/// raw (DEL, the C1 controls, the reordering characters), and the line and paragraph
/// separators, written as a `\u` escape: the
/// same JSON value, safe on a terminal. Such characters stand only inside strings (JSON's
/// own syntax is ASCII), where `\uXXXX` means the character itself; serde_json escapes
/// the other controls already.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    // And the line and paragraph separators, which JSON allows raw but JavaScript and
    // line splitters (Python's `splitlines`) take for line ends.
    let raw = |c: char| (hidden(c) && (c as u32) >= 0x20) || matches!(c, '\u{2028}' | '\u{2029}');
    if !json.chars().any(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 12);
    for c in json.chars() {
        if raw(c) {
            // Every such character is in the Basic Multilingual Plane: one escape.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json writes raw (an 8-bit CSI, DEL, a right-to-left override) comes out
    /// as `\u` escapes that read back to the same string; nothing else changes.
    #[test]
    fn json_safe_escapes_what_json_lets_through_and_reads_back_the_same() {
        let name = "m\u{9b}2J\u{7f}\u{202e}x\u{1b}]0;t\u{7}é\n\u{2028}\u{2029}";
        let json = serde_json::json!({ "model_name": name }).to_string();
        assert!(json.chars().any(hidden), "{json}");
        let safe = json_safe(&json);
        assert!(!safe.chars().any(hidden), "{safe}");
        assert_eq!(safe.lines().count(), 1, "{safe}");
        assert!(!safe.contains(['\u{2028}', '\u{2029}']), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["model_name"], name);
        assert!(matches!(json_safe(r#"{"a":"café"}"#), Cow::Borrowed(_)));
    }

    /// An error body that retitles the window, clears the screen and rubs out a word shows
    /// each of those characters, and nothing a terminal would act on is left.
    #[test]
    fn control_characters_are_written_out() {
        let body = "\u{1b}]0;pwned\u{7}\u{1b}[2Jok\u{8}\u{8}no\r\n\tdone\u{9b}31m\u{7f}";
        let shown = visible(body);
        assert_eq!(
            shown,
            "\\x1b]0;pwned\\x07\\x1b[2Jok\\x08\\x08no\\r\\n\\tdone\\u{9b}31m\\x7f"
        );
        assert!(!shown.chars().any(hidden));
    }

    /// Text that reorders a line (a right-to-left override) is shown, not obeyed.
    #[test]
    fn bidirectional_overrides_are_written_out() {
        assert_eq!(visible("gpu\u{202e}1"), "gpu\\u{202e}1");
    }

    /// Ordinary text, accents and all, is the same text (borrowed), and escaping twice
    /// changes nothing.
    #[test]
    fn plain_text_is_untouched_and_escaping_twice_changes_nothing() {
        assert!(matches!(visible("Llama-3 · café:8000"), Cow::Borrowed(_)));
        let once = visible("a\nb\\x1b").into_owned();
        assert_eq!(visible(&once), once);
    }
}
