//! Go's answers, from Prometheus' matcher (grafana/regexp, Go 1.24's regexp), for the
//! patterns where the `regex` crate's reading differs.

use super::translate;

/// Anchored as Prometheus anchors it.
fn matches(pattern: &str, value: &str) -> bool {
    let translated = translate(pattern).unwrap_or_else(|e| panic!("{pattern}: {e:?}"));
    regex::Regex::new(&format!("^(?s:{translated})$"))
        .unwrap_or_else(|e| panic!("{pattern} as {translated}: {e}"))
        .is_match(value)
}

/// Go's answers, from Prometheus' matcher (grafana/regexp, Go 1.24's regexp).
#[test]
fn perl_classes_are_ascii_as_in_go() {
    for (pattern, value, go) in [
        (r"\w+", "Ω", false),
        (r"\w+", "ab_9", true),
        (r"\d+", "٣", false),
        (r"\d+", "３", false),
        (r"\d+", "42", true),
        (r"\s", "\u{a0}", false),
        (r"\s", "\x0B", false),
        (r"\s", "\x0C", true),
        (r"\W", "Ω", true),
        (r"\D", "٣", true),
        (r"\S", "\x0B", true),
        (r"[\w.]+", "a.Ω", false),
        (r"[^\d]", "٣", true),
        (r"[a\D]", "b", true),
        (r".*\b.*", "xΩ", true),
        (r"x\b.*", "xΩ", true),
        (r"Ω\b", "Ω", false),
    ] {
        assert_eq!(matches(pattern, value), go, "{pattern} on {value:?}");
    }
}

#[test]
fn class_operators_of_the_crate_are_characters_in_go() {
    for (pattern, value, go) in [
        ("[a-z&&[^aeiou]]", "b", false),
        ("[a-z&&[^aeiou]]", "a]", true),
        ("[a&&b]", "&", true),
        ("[a~~b]", "~", true),
        ("[a-c--d]", "d", true),
        ("[[]", "[", true),
        (r"[\d-z]", "-", true),
        ("[]a]", "]", true),
        ("[^]a]", "b", true),
        ("[[:alpha:]]", "q", true),
        ("[[:^alpha:]]", "q", false),
    ] {
        assert_eq!(matches(pattern, value), go, "{pattern} on {value:?}");
    }
}

#[test]
fn what_go_reads_as_text() {
    for (pattern, value) in [
        ("a{,3}", "a{,3}"),
        ("a{,}", "a{,}"),
        ("a{", "a{"),
        ("a{1", "a{1"),
        ("{", "{"),
        ("x{2}", "xx"),
        ("x{1,2}?", "x"),
        (r"\Qa.b\E", "a.b"),
        (r"\Q*", "*"),
        (r"\0", "\0"),
        (r"\07", "\x07"),
        (r"\101", "A"),
        (r"\x41\x{1F600}", "A😀"),
        (r"\<\>\#\ ", "<># "),
        ("(?P<n>a)(?P<n>b)", "ab"),
        ("(?<n>a)", "a"),
        (r"\p{^Greek}", "a"),
        (r"\PL", "1"),
        (r"[\p{Greek}1]", "1"),
        (r"\P{Cs}", "a"),
        ("(?i:A)(?-s:.)(?:c)(?)", "abc"),
    ] {
        assert!(matches(pattern, value), "{pattern} on {value:?}");
    }
    assert!(!matches(r"\p{Cs}", "a"));
}

#[test]
fn what_go_refuses() {
    for (pattern, reason, at) in [
        ("a**", "invalid nested repetition operator: `**`", 2),
        ("a++", "invalid nested repetition operator: `++`", 2),
        ("a?+", "invalid nested repetition operator: `?+`", 2),
        ("a{2}{3}", "invalid nested repetition operator: `{2}{3}`", 2),
        ("a{1001}", "invalid repeat count: `{1001}`", 2),
        ("a{3,2}", "invalid repeat count: `{3,2}`", 2),
        ("*a", "missing argument to repetition operator: `*`", 1),
        ("(?x) a", "invalid or unsupported Perl syntax: `(?x`", 1),
        ("(?i-)a", "invalid or unsupported Perl syntax: `(?i-)`", 1),
        (r"\u0041", "invalid escape sequence: `\\u`", 1),
        (r"\1", "invalid escape sequence: `\\1`", 1),
        (r"\Pn", "invalid character class range: `\\Pn`", 1),
        (
            r"\p{Script=Greek}",
            "invalid character class range: `\\p{Script=Greek}`",
            1,
        ),
        ("[a", "missing closing ]: `[a`", 1),
        ("[z-a]", "invalid character class range: `z-a`", 2),
        ("[a--]", "invalid character class range: `a--`", 2),
        ("(?-)a", "invalid or unsupported Perl syntax: `(?-)`", 1),
        ("[[:foo:]]", "invalid character class range: `[:foo:]`", 2),
        ("(?P<>a)", "invalid named capture: `(?P<>`", 1),
        ("a\\", "trailing backslash at end of expression: `\\`", 2),
    ] {
        let refused = translate(pattern).unwrap_err();
        assert_eq!((refused.reason.as_str(), refused.at), (reason, at), "{pattern}");
    }
}
