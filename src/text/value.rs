//! Sample values and timestamps: the float and integer grammars of both formats.

/// Parses a sample value as Prometheus reads it: Go's `strconv.ParseFloat` without the hex
/// and `_` forms Prometheus refuses. Decimal floats with optional sign and exponent, `NaN`
/// (unsigned), `Inf`/`+Inf`/`-Inf` and `Infinity` in any case.
///
/// Two kinds of value that prometheus_client accepts are refused, on purpose, as
/// Prometheus refuses them: a literal out of the f64 range (`1e400`, which would become
/// ±Inf) and a signed NaN (`+NaN`, `-NaN`). promrate's figures are meant to agree with the
/// Prometheus server that scrapes the same page, and that server drops such samples. The
/// golden file `tests/data/values/prometheus-values.tsv` (from Go itself) checks this.
#[inline(always)]
pub(crate) fn parse_float(token: &str) -> Option<f64> {
    if let Some(v) = parse_simple_decimal(token.as_bytes()) {
        return Some(v);
    }
    // `f64::from_str` is correctly rounded and rejects hex, `_` and whitespace, like Go's
    // ParseFloat on what Prometheus lets through; it differs only where handled below.
    let value = token.parse::<f64>().ok()?;
    let unsigned = token.trim_start_matches(['+', '-']);
    if value.is_nan() && unsigned.len() != token.len() {
        return None; // signed NaN
    }
    if value.is_infinite()
        && !(unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity"))
    {
        return None; // out of range
    }
    Some(value)
}

/// Powers of ten that are exact in an f64.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// Clinger's fast path: a decimal whose digits fit in 2^53 and whose exponent is within
/// ±22 is one exact integer times or divided by one exact power of ten, so a single IEEE
/// operation gives the correctly rounded result. Covers nearly every exporter value
/// (`0`, `680175.0`, `4.404533e+06`, `1.6e-05`); anything else returns `None`.
#[inline(always)]
fn parse_simple_decimal(b: &[u8]) -> Option<f64> {
    match decimal_prefix(b, 0)? {
        (value, end) if end == b.len() => Some(value),
        _ => None,
    }
}

/// An optional sign at `b[i]`: whether it is `-`, and the index after it.
#[inline(always)]
fn sign(b: &[u8], i: usize) -> (bool, usize) {
    match b.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// The run of decimal digits at `b[i..]` folded into `acc` (wrapping: callers bound the
/// digit count) and the index after it.
#[inline(always)]
fn digits(b: &[u8], mut i: usize, mut acc: u64) -> (u64, usize) {
    while let Some(digit) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(digit));
        i += 1;
    }
    (acc, i)
}

/// The decimal at `b[i..]` in Clinger's fast path (see [`parse_simple_decimal`]) and the
/// index just past it; `None` if it is not one (more than 19 digits, a large exponent, a
/// word such as `NaN`), which callers then read with the full parser.
#[inline(always)]
pub(crate) fn decimal_prefix(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let (negative, int_start) = sign(b, i);
    let (mut mantissa, mut i) = digits(b, int_start, 0);
    let mut count = i - int_start;
    let mut exponent: i32 = 0;
    if b.get(i) == Some(&b'.') {
        let frac_start = i + 1;
        (mantissa, i) = digits(b, frac_start, mantissa);
        count += i - frac_start;
        exponent = -((i - frac_start) as i32);
    }
    // Up to 19 digits fit in a u64, so the wrapping arithmetic above never wrapped.
    if count == 0 || count > 19 {
        return None;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        let (negative_exp, exp_start) = sign(b, i + 1);
        let (e, end) = digits(b, exp_start, 0);
        if end == exp_start || end - exp_start > 4 {
            return None;
        }
        i = end;
        exponent += if negative_exp { -(e as i32) } else { e as i32 };
    }
    if mantissa > 1 << 53 {
        return None;
    }
    // `18.0` is 180e-1: dropping the fraction's trailing zeros turns a division (slow, and
    // needed for exact rounding) into a multiplication by 1; the value is the same.
    while exponent < 0 && mantissa != 0 && mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    let m = mantissa as f64;
    let value = match exponent {
        _ if mantissa == 0 => 0.0,
        0..=22 => m * EXACT_POWERS_OF_TEN[exponent as usize],
        -22..=-1 => m / EXACT_POWERS_OF_TEN[(-exponent) as usize],
        _ => return None,
    };
    Some((if negative { -value } else { value }, i))
}

/// The base-10 integer at `b[i..]` (optional sign, 1 to 18 digits, so it cannot overflow
/// an i64) and the index just past it.
#[inline(always)]
pub(crate) fn integer_prefix(b: &[u8], i: usize) -> Option<(i64, usize)> {
    let (negative, start) = sign(b, i);
    let (value, end) = digits(b, start, 0);
    if end == start || end - start > 18 {
        return None;
    }
    let value = value as i64;
    Some((if negative { -value } else { value }, end))
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

/// An OpenMetrics timestamp in seconds as whole milliseconds: [`parse_timestamp_seconds`]
/// then [`seconds_to_ms`]; whole seconds (up to ten digits, a fraction of zeros at most),
/// the common shape, read as integers: below 2^33 seconds their milliseconds are exact in
/// a double, so the float path gives the same integer.
pub(crate) fn timestamp_seconds_to_ms(token: &str) -> Option<i64> {
    decimal_ms(token.as_bytes()).or_else(|| parse_timestamp_seconds(token).map(seconds_to_ms))
}

/// Whole seconds (at most ten digits, below 2^33; a fraction of up to three zeros) in
/// milliseconds. Any other fraction takes the float path: Prometheus truncates the float
/// product, which is not the decimal's milliseconds for some (`4387801283.999` is
/// ...283998 there).
fn decimal_ms(b: &[u8]) -> Option<i64> {
    let point = b.iter().position(|&c| c == b'.').unwrap_or(b.len());
    let (whole, fraction) = (&b[..point], b.get(point + 1..).unwrap_or(&[]));
    if whole.is_empty() || whole.len() > 10 || fraction.len() > 3 || fraction.iter().any(|&c| c != b'0') {
        return None;
    }
    let seconds = whole.iter().try_fold(0i64, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })?;
    (seconds < 1 << 33).then_some(seconds * 1000)
}

/// Converts float seconds to whole milliseconds as Prometheus' OpenMetrics parsers do
/// (`int64(ts * 1000)`): the product truncated toward zero, so that a page's times are the
/// ones Prometheus stores, to the millisecond. Saturates.
pub(crate) fn seconds_to_ms(seconds: f64) -> i64 {
    // `as` truncates toward zero, as Go's conversion does, and saturates at the i64 range,
    // which is the documented behaviour for huge values.
    (seconds * 1000.0) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Decimals as exporters write them (integers, fractions with and without trailing
        /// zeros, exponents) read bit for bit as the standard library reads them.
        #[test]
        fn decimals_read_as_the_standard_parser_reads_them(
            negative in any::<bool>(),
            integer in "[0-9]{0,21}",
            // Long fractions, and short ones of mostly zeros (`.0`, `.001`, `.50`).
            fraction in proptest::option::of(prop_oneof!["[0-9]{0,21}", "0{0,4}[0-9]?0{0,4}"]),
            exponent in proptest::option::of(-30i32..30),
        ) {
            let mut text = format!("{}{integer}", if negative { "-" } else { "" });
            if let Some(fraction) = &fraction {
                text.push('.');
                text.push_str(fraction);
            }
            if let Some(exponent) = exponent {
                text.push_str(&format!("e{exponent}"));
            }
            let expected = text.parse::<f64>().ok();
            let got = parse_float(&text);
            prop_assert_eq!(got.map(f64::to_bits), expected.map(f64::to_bits), "{}", text);
        }
    }

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
    fn fast_path_agrees_with_the_standard_parser() {
        let samples = [
            "0",
            "-0",
            "0.0",
            "1.0",
            "680175.0",
            "4.404533e+06",
            "1.6e-05",
            "3.4359738368e+10",
            "2351.5699999999997",
            "1.7644801077700212e+09",
            "0.06860010275898172",
            "9007199254740993",
            "123456789012345678",
            "1e22",
            "1e-22",
            "1e23",
            "5e-324",
            ".5",
            "5.",
            "+.5e1",
            "0.000000000000000000000000001",
            "1E5",
            "00012",
            "18.0",
            "1.50",
            "-0.0",
            "0.10",
            "100.000",
            "9007199254740993.0",
            "1234567890123456789.0",
            "123456789012345678.0",
            "1.0000000000000000001",
        ];
        for text in samples {
            let expected = text.parse::<f64>().unwrap();
            let got = parse_float(text).unwrap();
            assert_eq!(got.to_bits(), expected.to_bits(), "{text}");
        }
        for bad in ["", "-", ".", "e5", "1e", "1e+", "1.2.3", "1e5e5", "--1", "1x"] {
            assert_eq!(parse_float(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn decimal_seconds_read_as_the_float_path_reads_them() {
        let mut texts: Vec<String> = Vec::new();
        let mut n: u64 = 0x2545_f491_4f6c_dd1d;
        for whole in [
            0u64,
            1,
            9,
            1_395_066_363,
            1_700_000_000,
            8_589_934_591,
            8_589_934_592,
            9_999_999_999,
        ] {
            for fraction in ["", ".", ".0", ".5", ".05", ".123", ".999", ".001", ".1234", ".x"] {
                texts.push(format!("{whole}{fraction}"));
            }
        }
        for _ in 0..20_000 {
            n ^= n << 13;
            n ^= n >> 7;
            n ^= n << 17;
            texts.push(format!("{}.{:03}", n % (1 << 34), n % 1000));
        }
        for text in texts {
            let float = parse_timestamp_seconds(&text).map(seconds_to_ms);
            assert_eq!(timestamp_seconds_to_ms(&text), float, "{text}");
            if let Some(ms) = decimal_ms(text.as_bytes()) {
                assert_eq!(Some(ms), float, "{text}");
            }
        }
        assert_eq!(decimal_ms(b"1395066363.000"), Some(1_395_066_363_000));
        assert_eq!(decimal_ms(b"1395066363.123"), None);
        assert_eq!(decimal_ms(b"8589934592.0"), None);
        // Prometheus' `int64(ts * 1000)`: truncated, so not always the decimal's digits.
        assert_eq!(timestamp_seconds_to_ms("1395066363.123"), Some(1_395_066_363_123));
        assert_eq!(timestamp_seconds_to_ms("4387801283.999"), Some(4_387_801_283_998));
        assert_eq!(timestamp_seconds_to_ms("-0.0015"), Some(-1));
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
