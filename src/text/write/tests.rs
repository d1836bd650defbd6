use super::*;

/// Every time written reads back to its millisecond, as Prometheus reads it (the float
/// product truncated): three decimals where they do, the next float where they fall
/// short (about one time in 130 of the current era's).
#[test]
fn seconds_read_back_to_their_millisecond() {
    let mut moved = 0;
    let start = 1_700_000_000_000i64;
    for ms in (start..start + 100_000)
        .chain(-100_000..100_000)
        .chain([i64::from(i32::MAX) * 1000])
    {
        let text = Seconds(ms).to_string();
        assert_eq!(
            super::super::value::timestamp_seconds_to_ms(&text),
            Some(ms),
            "{text}"
        );
        let decimals = text.split_once('.').map_or(0, |(_, fraction)| fraction.len());
        moved += usize::from(decimals != 3);
    }
    assert!(moved > 0, "some times need the next float");
}

#[test]
// The ties below are written as their exact values, which need more digits than the
// shortest form that reads back to them.
#[allow(clippy::excessive_precision)]
fn go_floats() {
    let cases = [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (-2.5, "-2.5"),
        (123456.0, "123456.0"),
        (1234567.0, "1.234567e+06"),
        (1.76448001237e9, "1.76448001237e+09"),
        (1e16, "1e+16"),
        (-1e16, "-1e+16"),
        (-1234567.0, "-1234567.0"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (2351.5699999999997, "2351.5699999999997"),
        (1e300, "1e+300"),
        (5e-324, "5e-324"),
        // Exact ties between two shortest forms go to the even digit, as Python's
        // `repr` and Go's `FormatFloat` write them (Rust's shortest form goes up).
        (-673136162761606.25, "-673136162761606.2"),
        (1849974461670542.25, "1.8499744616705422e+15"),
        (71069476851597.625, "7.106947685159762e+13"),
        (242854086865572.125, "2.4285408686557212e+14"),
    ];
    for (v, want) in cases {
        assert_eq!(GoFloat(v).to_string(), want, "{v:e}");
        assert_eq!(
            GoFloat(v).to_string().parse::<f64>().unwrap().to_bits(),
            v.to_bits()
        );
    }
}
