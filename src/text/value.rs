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

/// An OpenMetrics timestamp in seconds as whole milliseconds ([`parse_timestamp_seconds`]
/// then [`seconds_to_ms`]) and the nanoseconds beyond them (0 for whole seconds; the
/// timestamp's sign), for the rules that order a page's timestamps: OpenMetrics times are
/// decimal seconds, and two of them in one millisecond are still in an order, as the
/// reference parser compares them (to the nanosecond; here to a double's precision, about a
/// quarter of a microsecond at today's times). Whole seconds (up to ten digits, a
/// fraction of zeros at most), the common shape, are read as integers: below 2^33 seconds
/// their milliseconds are exact in a double, so the float path gives the same integer.
pub(crate) fn timestamp_seconds_fine(token: &str) -> Option<(i64, i32)> {
    match decimal_ms(token.as_bytes()) {
        Some(ms) => Some((ms, 0)),
        None => parse_timestamp_seconds(token).map(|seconds| {
            let ms = seconds_to_ms(seconds);
            (ms, nanos_past_ms(seconds * 1000.0, ms))
        }),
    }
}

/// The whole milliseconds of [`timestamp_seconds_fine`].
#[cfg(test)]
pub(crate) fn timestamp_seconds_to_ms(token: &str) -> Option<i64> {
    timestamp_seconds_fine(token).map(|(ms, _)| ms)
}

/// The nanoseconds of `product` (milliseconds) beyond `ms`, its truncation. `product - ms`
/// is exact (the two are within a factor of two, or `ms` is 0), and every step rounds
/// monotonically, so a later time never reads as an earlier one; beyond 2^53 ms a double
/// has no fraction to give.
fn nanos_past_ms(product: f64, ms: i64) -> i32 {
    if product.abs() >= 9_007_199_254_740_992.0 {
        return 0;
    }
    // Rounded, not truncated: 1e-9 s is 0.999... ns as a double.
    ((product - ms as f64) * 1e6).round().clamp(-999_999.0, 999_999.0) as i32
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
mod tests;
