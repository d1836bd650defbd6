//! Text as every output and message writes it, and nothing else: numbers that fit their
//! columns, durations, text cut or wrapped to a width, and what a terminal may be shown
//! (`visible.rs`). A leaf: it knows no figure, snapshot or output.
//!
//! Every duration the monitor writes is formatted here, in one of four forms by what it
//! is: [`duration`] (how long something took or will take: `5m30s`), [`ms`] (a measured
//! latency: `50ms`, `76.7s`), [`objective`] (a bound as typed, exact: `1.5s`) and
//! [`setting`] (an interval or window: `1m 30s`).

pub mod visible;

/// What every output shows for a figure the server does not expose (`-` is a figure not
/// known yet).
pub const NOT_EXPOSED: &str = "n/a";

/// A figure's text, or [`NOT_EXPOSED`] when no server among the sources exposes it.
pub fn exposed_or_na(exposed: bool, text: impl FnOnce() -> String) -> String {
    if exposed {
        text()
    } else {
        NOT_EXPOSED.into()
    }
}

/// `v` with `decimals` digits, or "-" when unknown; shortened with k/M/G suffixes (then
/// fewer digits) so it never takes more than `width` characters.
pub fn num(v: Option<f64>, decimals: usize, width: usize) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    // Fewer decimals before a unit: 121.1 rather than 0.12k.
    for d in (0..=decimals).rev() {
        let text = format!("{v:.d$}");
        if text.len() <= width {
            return text;
        }
    }
    for (scale, suffix) in [(1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")] {
        if v.abs() / scale >= 999.5 && scale < 1e12 {
            continue;
        }
        for d in (0..=decimals.max(1)).rev() {
            let text = format!("{:.d$}{suffix}", v / scale);
            if text.len() <= width {
                return text;
            }
        }
    }
    format!("{v:.0e}")
}

/// The widest percentage: `100.0`.
const PERCENT_WIDTH: usize = 5;

/// A percentage of a fraction, or "-", never wider than `100.0` (a server's `1e10` is
/// `1000G`, not a column pushed past its header).
pub fn percent(v: Option<f64>) -> String {
    num(v.map(|v| v * 100.0), 1, PERCENT_WIDTH)
}

/// A latency in seconds as `50ms` below a second and `76.7s` above, or "-".
pub fn ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() < 1.0 => format!("{:.0}ms", v * 1000.0),
        Some(v) => format!("{v:.1}s"),
    }
}

/// A duration as people read one: `45s`, `5m30s`, `2h05m`, or "-".
pub fn duration(seconds: Option<f64>) -> String {
    let Some(s) = seconds.filter(|s| s.is_finite() && *s >= 0.0) else {
        return "-".into();
    };
    let s = s.round() as u64;
    match s {
        0..=99 => format!("{s}s"),
        100..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// An objective as people write it: `500ms`, `50ms`, `30s`, `1.5s`.
pub fn objective(seconds: f64) -> String {
    let trim = |text: String| {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    };
    if seconds < 1.0 {
        format!("{}ms", trim(format!("{:.3}", seconds * 1000.0)))
    } else {
        format!("{}s", trim(format!("{seconds:.3}")))
    }
}

/// A setting's duration as the user types one: `2s`, `30s`, `1m 30s`, `500ms` (the
/// setup line, the window asked, an alert's `for`).
pub fn setting(d: std::time::Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// The terminal columns `text` takes: a CJK character two, a combining accent none (a
/// count of characters misaligned a column of names that held either).
pub fn columns(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// The columns of one character.
fn char_columns(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// `text` right-aligned in `width` columns (as `format!("{text:>width$}")` aligns by
/// characters).
pub fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(columns(text))))
}

/// At most `width` columns of `text`, the end kept and marked with '…' when cut (ports
/// and paths are at the end of URLs).
pub fn keep_end(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_string();
    }
    let mut room = width.saturating_sub(1);
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        let taken = char_columns(c);
        if taken > room {
            break;
        }
        room -= taken;
        start = i;
    }
    format!("…{}", &text[start..])
}

/// At most `width` columns of `text`, cut at the end with '…'.
pub fn keep_start(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_string();
    }
    let mut room = width.saturating_sub(1);
    let mut end = 0;
    for (i, c) in text.char_indices() {
        let taken = char_columns(c);
        if taken > room {
            break;
        }
        room -= taken;
        end = i + c.len_utf8();
    }
    format!("{}…", &text[..end])
}

/// `text` in lines of at most `width` columns, broken at spaces (a word longer than a
/// line where the line ends), lines after the first starting with `indent`: nothing is
/// cut off.
pub fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    // The text's own indentation is kept on its first line.
    let words = text.trim_start_matches(' ');
    let first = " ".repeat(text.len() - words.len());
    wrap_pieces(words.split(' '), " ", width, (first, indent), Long::Break)
}

/// What [`wrap_pieces`] does with a piece longer than a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Long {
    /// Broken where the line ends (a character at least on each line).
    Break,
    /// Kept whole, on a line of its own.
    Keep,
}

/// `pieces` joined by `separator` into lines of at most `width` columns: the first
/// line starting with `starts.0`, the others with `starts.1`. The one wrapping of every
/// output: words of a message ([`wrap`]), parts of a line of figures (` · `).
pub fn wrap_pieces<'a>(
    pieces: impl IntoIterator<Item = &'a str>,
    separator: &str,
    width: usize,
    starts: (String, &str),
    long: Long,
) -> Vec<String> {
    let (mut line, indent) = starts;
    let mut lines = Vec::new();
    // No piece on the line yet.
    let mut fresh = true;
    for piece in pieces {
        let mut piece = piece;
        loop {
            let used = columns(&line);
            let needed = columns(piece) + if fresh { 0 } else { columns(separator) };
            if used + needed <= width || (fresh && long == Long::Keep) {
                if !fresh {
                    line.push_str(separator);
                }
                line.push_str(piece);
                fresh = false;
                break;
            }
            if !fresh {
                lines.push(std::mem::replace(&mut line, indent.to_string()));
                fresh = true;
                continue;
            }
            // A piece longer than a line: broken where the line ends (a character at least).
            let mut room = width.saturating_sub(used);
            let mut split = 0;
            for (i, c) in piece.char_indices() {
                let taken = char_columns(c);
                if taken > room && split > 0 {
                    break;
                }
                room = room.saturating_sub(taken);
                split = i + c.len_utf8();
            }
            line.push_str(&piece[..split]);
            lines.push(std::mem::replace(&mut line, indent.to_string()));
            piece = &piece[split..];
            if piece.is_empty() {
                break;
            }
        }
    }
    if !fresh || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns, not characters: a CJK name takes two a character, an accent written apart
    /// none, so that a column of names stays aligned and a line within its width.
    #[test]
    fn widths_are_terminal_columns() {
        let decomposed = "cafe\u{301}";
        assert_eq!((decomposed.chars().count(), columns(decomposed)), (5, 4));
        assert_eq!(columns("通义千问"), 8);
        assert_eq!(pad_left(decomposed, 6), format!("  {decomposed}"));
        assert_eq!(pad_left("通义", 6), "  通义");
        assert_eq!(keep_start("通义千问", 6), "通义…");
        assert_eq!(keep_end("通义千问", 6), "…千问");
        assert_eq!(keep_end("通义千问", 5), "…千问");
        for line in wrap("模型 通义千问 正在 运行 中 abcdefghijklmnopqrstuvwxyz", 9, "") {
            assert!(columns(&line) <= 9, "{line:?}");
        }
    }

    #[test]
    fn a_percentage_keeps_its_width() {
        assert_eq!(percent(Some(0.5)), "50.0");
        assert_eq!(percent(Some(1.0)), "100.0");
        assert_eq!(percent(None), "-");
        for huge in [12.3456, 1e10, -1e10, f64::MAX] {
            assert!(
                percent(Some(huge)).len() <= PERCENT_WIDTH,
                "{}",
                percent(Some(huge))
            );
        }
    }

    #[test]
    fn long_text_wraps_whole() {
        let text =
            "server restarted (process started 21:02:53 UTC, was 20:02:43 UTC); 141 counter series reset";
        let lines = wrap(text, 40, "  ");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert!(
            lines[1..]
                .iter()
                .all(|l| l.starts_with("  ") && !l.starts_with("   ")),
            "{lines:?}"
        );
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(&lines.join(" ")), words(text));
        assert_eq!(wrap("short", 40, "  "), ["short"]);
        assert_eq!(wrap("  indented", 40, "    "), ["  indented"]);
        // A word longer than a line is broken where the line ends, not dropped.
        let long = "x".repeat(50);
        let lines = wrap(&format!("a {long}"), 20, "  ");
        assert_eq!(lines.concat().replace([' '], ""), format!("a{long}"));
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
    }

    proptest::proptest! {
        /// Whatever the text and the width, no line is wider and nothing is lost.
        #[test]
        fn wrapped_text_fits_and_keeps_every_character(
            text in "[a-zé·:/ ]{0,200}",
            width in 8usize..80,
        ) {
            let lines = wrap(&text, width, "  ");
            proptest::prop_assert!(lines.iter().all(|l| l.chars().count() <= width), "{:?}", lines);
            let squeezed = |t: &str| t.chars().filter(|c| *c != ' ').collect::<String>();
            proptest::prop_assert_eq!(squeezed(&lines.concat()), squeezed(&text));
        }
    }

    #[test]
    fn numbers_fit_their_columns() {
        assert_eq!(num(Some(1598.34), 1, 8), "1598.3");
        assert_eq!(num(Some(123_456_789.0), 1, 8), "123.5M");
        assert_eq!(num(Some(9_876_543.0), 1, 6), "9.9M");
        assert_eq!(num(None, 1, 8), "-");
        assert_eq!(
            (ms(Some(0.0504)), ms(Some(76.66)), ms(None)),
            ("50ms".into(), "76.7s".into(), "-".into())
        );
        assert_eq!(duration(Some(45.2)), "45s");
        assert_eq!(duration(Some(330.0)), "5m30s");
        assert_eq!(duration(Some(7500.0)), "2h05m");
        assert_eq!(keep_end("http://127.0.0.1:9101", 10), "….0.1:9101");
        assert_eq!(keep_end("http://127.0.0.1:9101", 10).chars().count(), 10);
        assert_eq!(keep_start("abcdef", 4), "abc…");
    }
}
