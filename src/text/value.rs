//! Sample values and timestamps: the float and integer grammars of both formats.

/// Parses a sample value as Prometheus and prometheus_client accept it: decimal floats with
/// optional sign and exponent, `NaN`, `Inf`/`+Inf`/`-Inf` (any case, also `Infinity`).
/// Hex floats and `_` digit separators are refused.
pub(crate) fn parse_float(token: &str) -> Option<f64> {
    let bytes = token.as_bytes();
    // Fast path: short plain integers are the most common value on real pages.
    if !bytes.is_empty() && bytes.len() <= 15 && bytes.iter().all(u8::is_ascii_digit) {
        let mut n: u64 = 0;
        for &b in bytes {
            n = n * 10 + u64::from(b - b'0');
        }
        // Exact: every integer below 10^15 is representable.
        return Some(n as f64);
    }
    // `f64::from_str` is correctly rounded and rejects hex, `_` and whitespace; it accepts
    // exactly the spellings of NaN and infinity that Go's ParseFloat and Python's float do.
    token.parse::<f64>().ok()
}

/// Parses a Prometheus text-format timestamp: a base-10 `i64` of milliseconds.
pub(crate) fn parse_timestamp_ms(token: &str) -> Option<i64> {
    token.parse::<i64>().ok()
}

/// Parses an OpenMetrics timestamp: finite float seconds. Returns the value in seconds.
pub(crate) fn parse_timestamp_seconds(token: &str) -> Option<f64> {
    let b = token.as_bytes();
    // Only digits, sign, '.', and exponent: refuses `Inf`, `NaN` and other words up front.
    if b.is_empty()
        || !b
            .iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    token.parse::<f64>().ok().filter(|s| s.is_finite())
}

/// Converts float seconds to whole milliseconds, rounding to nearest and saturating.
pub(crate) fn seconds_to_ms(seconds: f64) -> i64 {
    // `as` saturates at the i64 range, which is the documented behaviour for huge values.
    (seconds * 1000.0).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats() {
        let cases: &[(&str, Option<f64>)] = &[
            ("1", Some(1.0)),
            ("-1", Some(-1.0)),
            ("+1", Some(1.0)),
            ("1.5e3", Some(1500.0)),
            ("1.950573e+06", Some(1_950_573.0)),
            ("0000000000000000000000000000000000000000001", Some(1.0)),
            ("9223372036854775808", Some(9_223_372_036_854_775_808.0)),
            ("+Inf", Some(f64::INFINITY)),
            ("-Inf", Some(f64::NEG_INFINITY)),
            ("Inf", Some(f64::INFINITY)),
            ("0x1p-3", None),
            ("1_2", None),
            ("", None),
            ("1 ", None),
            ("a", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_float(text), *want, "{text:?}");
        }
        assert!(parse_float("NaN").unwrap().is_nan());
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp_ms("1395066363000"), Some(1_395_066_363_000));
        assert_eq!(parse_timestamp_ms("-5"), Some(-5));
        assert_eq!(parse_timestamp_ms("1.5"), None);
        assert_eq!(parse_timestamp_seconds("1.5e3"), Some(1500.0));
        assert_eq!(parse_timestamp_seconds("Inf"), None);
        assert_eq!(parse_timestamp_seconds("NaN"), None);
        assert_eq!(parse_timestamp_seconds("0x1p-3"), None);
        assert_eq!(seconds_to_ms(1.1), 1100);
        assert_eq!(seconds_to_ms(1e30), i64::MAX);
    }
}
