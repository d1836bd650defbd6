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
fn times_within_a_millisecond_keep_their_order() {
    assert_eq!(timestamp_seconds_fine("1395066363"), Some((1_395_066_363_000, 0)));
    assert_eq!(timestamp_seconds_fine("0.0000000001"), Some((0, 0)));
    assert_eq!(timestamp_seconds_fine("0.000000001"), Some((0, 1)));
    assert_eq!(timestamp_seconds_fine("0.0015"), Some((1, 500_000)));
    assert_eq!(timestamp_seconds_fine("-0.0015"), Some((-1, -500_000)));
    assert_eq!(timestamp_seconds_fine("1e-7"), Some((0, 100)));
    assert_eq!(timestamp_seconds_fine("1e300").map(|(_, ns)| ns), Some(0));
    // Decimals in order read in order (never reversed), at a page's times too.
    let mut n: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..20_000 {
        n ^= n << 13;
        n ^= n >> 7;
        n ^= n << 17;
        let whole = 1_700_000_000 + n % 1000;
        let (a, b) = (n % 1_000_000_000, (n >> 30) % 1_000_000_000);
        let (lo, hi) = (a.min(b), a.max(b));
        let early = timestamp_seconds_fine(&format!("{whole}.{lo:09}")).unwrap();
        let late = timestamp_seconds_fine(&format!("{whole}.{hi:09}")).unwrap();
        assert!(
            early <= late,
            "{whole}.{lo:09} {early:?} after {whole}.{hi:09} {late:?}"
        );
        let early = timestamp_seconds_fine(&format!("-{whole}.{hi:09}")).unwrap();
        let late = timestamp_seconds_fine(&format!("-{whole}.{lo:09}")).unwrap();
        assert!(
            early <= late,
            "-{whole}.{hi:09} {early:?} after -{whole}.{lo:09} {late:?}"
        );
    }
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
