//! Rendering samples and families back into the text formats, escaped correctly.
//!
//! Values are written the way Go's `strconv.FormatFloat(v, 'g', -1, 64)` and Python
//! `prometheus_client` write them (`1.950573e+06`, `680175.0`, `NaN`, `+Inf`), so a page
//! rendered here looks like the exporters promrate is tested against.
//!
//! # Example
//! ```
//! use promrate::{text::write, MetricType};
//! let mut page = String::new();
//! write::help(&mut page, "vllm:num_requests_running", "Number of requests in model execution batches.")?;
//! write::metric_type(&mut page, "vllm:num_requests_running", MetricType::Gauge)?;
//! write::sample(&mut page, "vllm:num_requests_running", &[("engine", "0"), ("model_name", "m")], 3.0, None)?;
//! assert!(page.ends_with("vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"));
//! let parsed = promrate::parse(&page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
//! assert_eq!(parsed.value(), 3.0);
//! # Ok::<(), std::fmt::Error>(())
//! ```

use std::fmt::{self, Write};

use super::composite::{CompositeKind, CompositeValue};
use super::exemplar::Exemplar;
use super::metric_type::MetricType;
use super::names::{is_label_name, is_metric_name};

/// A float formatted like prometheus_client's `floatToGoString`: Python `repr`, except that
/// positive values with more than six integer digits switch to Go's exponent form.
///
/// # Example
/// ```
/// use promrate::text::write::GoFloat;
/// assert_eq!(GoFloat(4404533.0).to_string(), "4.404533e+06");
/// assert_eq!(GoFloat(680175.0).to_string(), "680175.0");
/// assert_eq!(GoFloat(0.25).to_string(), "0.25");
/// assert_eq!(GoFloat(1e-7).to_string(), "1e-07");
/// assert_eq!(GoFloat(f64::NEG_INFINITY).to_string(), "-Inf");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GoFloat(pub f64);

impl fmt::Display for GoFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v.is_nan() {
            return f.write_str("NaN");
        }
        if v.is_infinite() {
            return f.write_str(if v > 0.0 { "+Inf" } else { "-Inf" });
        }
        // Shortest round-trip digits and decimal exponent, e.g. "4.404533e6": as many
        // digits as Rust's shortest form, then the decimal of that many digits nearest the
        // value, as Python's `repr` and Go's `FormatFloat` choose it. Rust breaks an exact
        // tie between two shortest candidates upward, they to the even digit
        // (673136162761606.25 is `673136162761606.2` in both); its fixed-precision form
        // rounds the exact value half to even. Both forms are written on the stack: a
        // fleet's page writes millions of values.
        let significant = Scientific::of(v.abs(), None).digits().1;
        let sci = Scientific::of(v.abs(), Some(significant.saturating_sub(1)));
        let (digits, count, exp) = sci.digits();
        let digits = std::str::from_utf8(&digits[..count]).map_err(|_| fmt::Error)?;
        let sign = if v.is_sign_negative() { "-" } else { "" };
        if v > 0.0 && (6..16).contains(&exp) {
            // Go's exponent form where Python would print fixed notation with >6 digits.
            let (first, rest) = digits.split_at(1);
            let rest = rest.trim_end_matches('0');
            let dot = if rest.is_empty() { "" } else { "." };
            return write!(f, "{first}{dot}{rest}e+{exp:02}");
        }
        if (-4..16).contains(&exp) {
            // Python repr: fixed notation with at least one fractional digit (at most 16
            // zeros, as the exponent's range bounds them).
            const ZEROS: &str = "0000000000000000";
            let point = exp + 1;
            if point <= 0 {
                let zeros = &ZEROS[..(-point) as usize];
                write!(f, "{sign}0.{zeros}{digits}")
            } else {
                let point = point as usize;
                if digits.len() > point {
                    write!(f, "{sign}{}.{}", &digits[..point], &digits[point..])
                } else {
                    let zeros = &ZEROS[..point - digits.len()];
                    write!(f, "{sign}{digits}{zeros}.0")
                }
            }
        } else {
            let (first, rest) = digits.split_at(1);
            let dot = if rest.is_empty() { "" } else { "." };
            let esign = if exp < 0 { '-' } else { '+' };
            write!(f, "{sign}{first}{dot}{rest}e{esign}{:02}", exp.abs())
        }
    }
}

/// A float in Rust's scientific form (`4.404533e6`), shortest or to a precision, written
/// into a buffer on the stack (the longest, `-1.7976931348623157e308` with 16 more digits,
/// fits in 48 bytes).
struct Scientific {
    bytes: [u8; 48],
    len: usize,
}

impl Scientific {
    fn of(v: f64, precision: Option<usize>) -> Scientific {
        let mut text = Scientific {
            bytes: [0; 48],
            len: 0,
        };
        // A precision of at most 16 digits after the point keeps within the buffer.
        let written = match precision {
            Some(p) => write!(text, "{:.*e}", p.min(16), v),
            None => write!(text, "{v:e}"),
        };
        debug_assert!(written.is_ok(), "a float's scientific form fits in 48 bytes");
        text
    }

    /// The mantissa's digits (up to 17 written in the first 24 bytes), their count, and
    /// the decimal exponent.
    fn digits(&self) -> ([u8; 24], usize, i32) {
        let text = &self.bytes[..self.len];
        let e = text.iter().position(|&b| b == b'e').unwrap_or(text.len());
        let (mut digits, mut count) = ([0u8; 24], 0);
        for &b in text[..e].iter().filter(|b| b.is_ascii_digit()).take(24) {
            digits[count] = b;
            count += 1;
        }
        let exp = std::str::from_utf8(&text[(e + 1).min(text.len())..])
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        (digits, count, exp)
    }
}

impl Write for Scientific {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let room = self.bytes.get_mut(self.len..end).ok_or(fmt::Error)?;
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes `text` with `\\`, `\n` (and `\"` when `quote`) escaped.
///
/// # Example
/// ```
/// let mut out = String::new();
/// promrate::text::write::escaped(&mut out, "a\"b\\c\nd", true)?;
/// assert_eq!(out, r#"a\"b\\c\nd"#);
/// # Ok::<(), std::fmt::Error>(())
/// ```
pub fn escaped<W: Write + ?Sized>(out: &mut W, text: &str, quote: bool) -> fmt::Result {
    let mut start = 0;
    for (i, c) in text.char_indices() {
        let replacement = match c {
            '\\' => "\\\\",
            '\n' => "\\n",
            '"' if quote => "\\\"",
            _ => continue,
        };
        out.write_str(&text[start..i])?;
        out.write_str(replacement)?;
        start = i + c.len_utf8();
    }
    out.write_str(&text[start..])
}

fn quoted<W: Write + ?Sized>(out: &mut W, text: &str) -> fmt::Result {
    out.write_char('"')?;
    escaped(out, text, true)?;
    out.write_char('"')
}

fn family_name<W: Write + ?Sized>(out: &mut W, name: &str) -> fmt::Result {
    if is_metric_name(name) {
        out.write_str(name)
    } else {
        quoted(out, name)
    }
}

/// Writes `# HELP name text` and a newline, escaping the text as the 0.0.4 format does.
///
/// # Example
/// ```
/// let mut out = String::new();
/// promrate::text::write::help(&mut out, "a", "two\nlines")?;
/// assert_eq!(out, "# HELP a two\\nlines\n");
/// # Ok::<(), std::fmt::Error>(())
/// ```
pub fn help<W: Write + ?Sized>(out: &mut W, name: &str, text: &str) -> fmt::Result {
    out.write_str("# HELP ")?;
    family_name(out, name)?;
    out.write_char(' ')?;
    escaped(out, text, false)?;
    out.write_char('\n')
}

/// Writes OpenMetrics' `# UNIT name unit` and a newline (the name quoted as in `# HELP`).
pub(crate) fn unit<W: Write + ?Sized>(out: &mut W, name: &str, unit: &str) -> fmt::Result {
    out.write_str("# UNIT ")?;
    family_name(out, name)?;
    writeln!(out, " {unit}")
}

/// Writes `# TYPE name kind` and a newline (`Unknown` as `untyped`, the 0.0.4 spelling).
///
/// # Example
/// ```
/// let mut out = String::new();
/// promrate::text::write::metric_type(&mut out, "a", promrate::MetricType::Unknown)?;
/// assert_eq!(out, "# TYPE a untyped\n");
/// # Ok::<(), std::fmt::Error>(())
/// ```
pub fn metric_type<W: Write + ?Sized>(out: &mut W, name: &str, kind: MetricType) -> fmt::Result {
    out.write_str("# TYPE ")?;
    family_name(out, name)?;
    let word = match kind {
        MetricType::Unknown => "untyped",
        other => other.as_str(),
    };
    writeln!(out, " {word}")
}

/// Writes one sample line: name, labels (values escaped; names that are not plain
/// identifiers quoted, Prometheus 3 style), value as [`GoFloat`], optional ms timestamp.
///
/// # Example
/// ```
/// let mut out = String::new();
/// promrate::text::write::sample(&mut out, "http.requests", &[("code", "200")], 1.0, Some(5))?;
/// assert_eq!(out, "{\"http.requests\",code=\"200\"} 1.0 5\n");
/// # Ok::<(), std::fmt::Error>(())
/// ```
pub fn sample<W, K, V>(
    out: &mut W,
    name: &str,
    labels: &[(K, V)],
    value: f64,
    timestamp_ms: Option<i64>,
) -> fmt::Result
where
    W: Write + ?Sized,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let labels = labels.iter().map(|(k, v)| (k.as_ref(), v.as_ref()));
    sample_text(out, name, labels, value, timestamp_ms)?;
    out.write_char('\n')
}

/// A series' name and labels as a sample line writes them (`name{a="1"}`), from any
/// sequence of `(label, unescaped value)`: how messages name a series.
pub(crate) fn series_text<W, K, V>(
    out: &mut W,
    name: &str,
    labels: impl IntoIterator<Item = (K, V)>,
) -> fmt::Result
where
    W: Write + ?Sized,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let plain_name = is_metric_name(name);
    if plain_name {
        out.write_str(name)?;
    }
    let mut labels = labels.into_iter().peekable();
    if labels.peek().is_some() || !plain_name {
        out.write_char('{')?;
        let mut first = true;
        if !plain_name {
            quoted(out, name)?;
            first = false;
        }
        for (label, value) in labels {
            if !first {
                out.write_char(',')?;
            }
            first = false;
            let label = label.as_ref();
            if is_label_name(label) {
                out.write_str(label)?;
            } else {
                quoted(out, label)?;
            }
            out.write_char('=')?;
            quoted(out, value.as_ref())?;
        }
        out.write_char('}')?;
    }
    Ok(())
}

/// [`sample`] without the newline, from any sequence of `(label, unescaped value)`: what a
/// sample's `Display` writes.
pub(crate) fn sample_text<W, K, V>(
    out: &mut W,
    name: &str,
    labels: impl IntoIterator<Item = (K, V)>,
    value: f64,
    timestamp_ms: Option<i64>,
) -> fmt::Result
where
    W: Write + ?Sized,
    K: AsRef<str>,
    V: AsRef<str>,
{
    series_text(out, name, labels)?;
    write!(out, " {}", GoFloat(value))?;
    if let Some(ts) = timestamp_ms {
        write!(out, " {ts}")?;
    }
    Ok(())
}

/// A timestamp in milliseconds as OpenMetrics seconds, read back to the same milliseconds
/// by this parser and by Prometheus' (which truncate the float product, `int64(ts * 1000)`):
/// three decimals (`1520879607.789`, `-0.500`), or, for the few whose float times 1000
/// falls just short of the millisecond, the next float away from zero in its shortest form
/// (`4387801283.999001`).
///
/// # Example
/// ```
/// use promrate::text::write::Seconds;
/// assert_eq!(Seconds(1_520_879_607_789).to_string(), "1520879607.789");
/// assert_eq!(Seconds(-500).to_string(), "-0.500");
/// assert_eq!(Seconds(4_387_801_283_999).to_string(), "4387801283.999001");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seconds(pub i64);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let ms = self.0.unsigned_abs();
        // The float the three decimals read as: the quotient correctly rounded, as parsing
        // the decimal rounds it (exact below 2^53 ms, about 285,000 years).
        let read = self.0 as f64 / 1000.0;
        // A few floats away from zero at most: each is 1000 times closer than a millisecond.
        let mut seconds = read;
        for _ in 0..4 {
            if super::value::seconds_to_ms(seconds) == self.0 {
                break;
            }
            seconds = f64::from_bits(seconds.to_bits() + 1);
        }
        if seconds == read || super::value::seconds_to_ms(seconds) != self.0 {
            write!(f, "{sign}{}.{:03}", ms / 1000, ms % 1000)
        } else {
            write!(f, "{seconds}")
        }
    }
}

/// A count or bucket value: whole values below 2^53 without a fractional part (`17`, as
/// exporters of integer histograms write them), others (and -0, which reads back as
/// itself only with its sign) as [`GoFloat`].
struct Count(f64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let negative_zero = self.0 == 0.0 && self.0.is_sign_negative();
        if self.0.fract() == 0.0 && self.0.abs() < 9_007_199_254_740_992.0 && !negative_zero {
            write!(f, "{}", self.0 as i64)
        } else {
            GoFloat(self.0).fmt(f)
        }
    }
}

/// Writes an OpenMetrics 2.0 series: `name{a="1"}`, or with a name that needs quotes
/// `{"my.name",a="1"}` (2.0 puts a quoted name first in the braces), from
/// `(label, unescaped value)` pairs.
///
/// # Example
/// ```
/// let mut out = String::new();
/// promrate::text::write::openmetrics2_series(&mut out, "a.b", [("c.d", "e")])?;
/// assert_eq!(out, r#"{"a.b","c.d"="e"}"#);
/// # Ok::<(), std::fmt::Error>(())
/// ```
pub fn openmetrics2_series<W, K, V>(
    out: &mut W,
    name: &str,
    labels: impl IntoIterator<Item = (K, V)>,
) -> fmt::Result
where
    W: Write + ?Sized,
    K: AsRef<str>,
    V: AsRef<str>,
{
    // The text format's series shape is 2.0's too, and it never puts labels before a
    // quoted name.
    series_text(out, name, labels)
}

/// Writes a composite value in the specification's field order (`{count:17,sum:3.5,...}`),
/// counts as integers where whole.
///
/// # Example
/// ```
/// use promrate::{text::write, Format, Parser};
/// let page = "h {count:2,sum:1.0E-4,bucket:[1e-05:1,+Inf:2]}\n# EOF\n";
/// let s = Parser::new(Format::OpenMetrics2).parse(page).next().unwrap()?.into_sample().unwrap();
/// let mut out = String::new();
/// write::composite(&mut out, &s.composite().unwrap())?;
/// assert_eq!(out, "{count:2,sum:0.0001,bucket:[1e-05:1,+Inf:2]}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn composite<W: Write + ?Sized>(out: &mut W, value: &CompositeValue<'_>) -> fmt::Result {
    count_and_sum(out, value.kind(), value.count(), value.sum())?;
    if let Some(quantiles) = value.quantiles() {
        pairs(out, "quantile", quantiles, false)?;
    }
    if let Some(native) = value.native() {
        write!(
            out,
            ",schema:{},zero_threshold:{},zero_count:{}",
            native.schema(),
            GoFloat(native.zero_threshold()),
            Count(native.zero_count())
        )?;
        let sides = [
            ("negative", native.negative_spans(), native.negative_buckets()),
            ("positive", native.positive_spans(), native.positive_buckets()),
        ];
        for (side, spans, buckets) in sides {
            let mut spans = spans.peekable();
            if spans.peek().is_none() {
                continue;
            }
            write!(out, ",{side}_spans:[")?;
            for (k, span) in spans.enumerate() {
                let comma = if k == 0 { "" } else { "," };
                write!(out, "{comma}{}:{}", span.offset, span.length)?;
            }
            write!(out, "],{side}_buckets:[")?;
            for (k, bucket) in buckets.enumerate() {
                let comma = if k == 0 { "" } else { "," };
                write!(out, "{comma}{}", Count(bucket))?;
            }
            out.write_char(']')?;
        }
    }
    if let Some(buckets) = value.buckets() {
        pairs(out, "bucket", buckets, true)?;
    }
    out.write_char('}')
}

/// Writes a classic composite value from its numbers: a histogram's or gauge histogram's
/// count, sum and `(upper bound, cumulative count)` buckets, or a summary's count, sum and
/// `(quantile, value)` pairs, as [`composite`] writes them (an exporter converting a text
/// page's `_bucket`, `_count` and `_sum` series to 2.0).
///
/// # Example
/// ```
/// use promrate::text::{write, CompositeKind};
/// let mut out = String::new();
/// write::classic_composite(&mut out, CompositeKind::Histogram, 2.0, 0.5, [(0.1, 1.0), (f64::INFINITY, 2.0)])?;
/// assert_eq!(out, "{count:2,sum:0.5,bucket:[0.1:1,+Inf:2]}");
/// # Ok::<(), std::fmt::Error>(())
/// ```
pub fn classic_composite<W: Write + ?Sized>(
    out: &mut W,
    kind: CompositeKind,
    count: f64,
    sum: f64,
    parts: impl IntoIterator<Item = (f64, f64)>,
) -> fmt::Result {
    count_and_sum(out, kind, count, sum)?;
    match kind {
        CompositeKind::Summary => pairs(out, "quantile", parts, false)?,
        _ => pairs(out, "bucket", parts, true)?,
    }
    out.write_char('}')
}

/// `{count:..,sum:..` (`gcount`, `gsum` for a gauge histogram).
fn count_and_sum<W: Write + ?Sized>(out: &mut W, kind: CompositeKind, count: f64, sum: f64) -> fmt::Result {
    let g = if kind == CompositeKind::GaugeHistogram {
        "g"
    } else {
        ""
    };
    write!(out, "{{{g}count:{},{g}sum:{}", Count(count), GoFloat(sum))
}

/// `,key:[a:b,...]`, each `a` as Go writes it, each `b` too or, for `counts`, as a count.
fn pairs<W: Write + ?Sized>(
    out: &mut W,
    key: &str,
    pairs: impl IntoIterator<Item = (f64, f64)>,
    counts: bool,
) -> fmt::Result {
    write!(out, ",{key}:[")?;
    for (k, (a, b)) in pairs.into_iter().enumerate() {
        let comma = if k == 0 { "" } else { "," };
        if counts {
            write!(out, "{comma}{}:{}", GoFloat(a), Count(b))?;
        } else {
            write!(out, "{comma}{}:{}", GoFloat(a), GoFloat(b))?;
        }
    }
    out.write_char(']')
}

/// Writes an exemplar as OpenMetrics 2.0 wants it after a sample: ` # {labels} value
/// seconds`. The timestamp is required in 2.0: an exemplar without one (OpenMetrics 1.0
/// allows that) is not written, as client_java's 2.0 writer leaves it out, rather than
/// given a time it did not have.
///
/// # Example
/// ```
/// use promrate::{text::write, Format, Parser};
/// let page = "# TYPE a counter\na_total 1 # {id=\"7\"} 0.5 2.5\n# EOF\n";
/// let s = Parser::new(Format::OpenMetrics).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let mut out = String::new();
/// write::exemplar(&mut out, &s.exemplar().unwrap())?;
/// assert_eq!(out, r#" # {id="7"} 0.5 2.500"#);
/// // Without its time, nothing: 2.0 has no exemplar without one.
/// let page = "# TYPE a counter\na_total 1 # {id=\"7\"} 0.5\n# EOF\n";
/// let s = Parser::new(Format::OpenMetrics).parse(page).filter_map(|e| e.ok()?.into_sample()).next().unwrap();
/// let mut out = String::new();
/// write::exemplar(&mut out, &s.exemplar().unwrap())?;
/// assert_eq!(out, "");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn exemplar<W: Write + ?Sized>(out: &mut W, exemplar: &Exemplar<'_>) -> fmt::Result {
    let Some(ts) = exemplar.timestamp_ms() else {
        return Ok(());
    };
    out.write_str(" # {")?;
    for (k, (name, value)) in exemplar.labels().iter_unescaped().enumerate() {
        if k > 0 {
            out.write_char(',')?;
        }
        if is_label_name(&name) {
            out.write_str(&name)?;
        } else {
            quoted(out, &name)?;
        }
        out.write_char('=')?;
        quoted(out, &value.unescaped())?;
    }
    write!(out, "}} {} {}", GoFloat(exemplar.value()), Seconds(ts))
}

#[cfg(test)]
mod tests;
