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

/// Each pattern matches its value as Go answered (`go`).
fn answers_are_gos(cases: &[(&str, &str, bool)]) {
    for &(pattern, value, go) in cases {
        assert_eq!(matches(pattern, value), go, "{pattern} on {value:?}");
    }
}

/// Go's answers, from Prometheus' matcher (grafana/regexp, Go 1.24's regexp).
#[test]
fn perl_classes_are_ascii_as_in_go() {
    answers_are_gos(&[
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
    ]);
}

#[test]
fn class_operators_of_the_crate_are_characters_in_go() {
    answers_are_gos(&[
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
    ]);
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
        (r"\Q*\E", "*"),
        (r"\Q*", "*"),
        (r"a\Q", "a"),
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
        // Counts multiply through nested repetitions (Go's `repeatIsValid`).
        ("(a{500}){3}", "invalid repeat count: `{3}`", 9),
        ("((a{10}){10}){11}", "invalid repeat count: `{11}`", 14),
        ("((a{1000}){1}){2}", "invalid repeat count: `{2}`", 15),
        // Property names as Go's tables spell them, nothing else.
        (r"\p{greek}", "invalid character class range: `\\p{greek}`", 1),
        (r"\p{Letter}", "invalid character class range: `\\p{Letter}`", 1),
        (r"\pl", "invalid character class range: `\\pl`", 1),
        (r"\p{ASCII}", "invalid character class range: `\\p{ASCII}`", 1),
        (
            r"\p{Assigned}",
            "invalid character class range: `\\p{Assigned}`",
            1,
        ),
        (r"\p{Grek}", "invalid character class range: `\\p{Grek}`", 1),
        (r"\p{IsGreek}", "invalid character class range: `\\p{IsGreek}`", 1),
        (
            r"\p{Alphabetic}",
            "invalid character class range: `\\p{Alphabetic}`",
            1,
        ),
        (
            r"\p{White_Space}",
            "invalid character class range: `\\p{White_Space}`",
            1,
        ),
        (r"\p{Emoji}", "invalid character class range: `\\p{Emoji}`", 1),
        (r"\p{Garay}", "invalid character class range: `\\p{Garay}`", 1),
        (r"[\p{Dash}]", "invalid character class range: `\\p{Dash}`", 2),
        ("(?i-)a", "invalid or unsupported Perl syntax: `(?i-)`", 1),
        ("(?-i-s)a", "invalid or unsupported Perl syntax: `(?-i-`", 1),
        // Flags alone or an empty `\Q\E` between: counts still multiply.
        (r"a{2}\Q\E{999}", "invalid repeat count: `{999}`", 9),
        ("a{2}(?i){999}", "invalid repeat count: `{999}`", 9),
        ("(?i)*", "missing argument to repetition operator: `*`", 5),
    ] {
        let refused = translate(pattern).unwrap_err();
        assert_eq!((refused.reason.as_str(), refused.at), (reason, at), "{pattern}");
    }
}

/// Found by comparing with Prometheus' parser and Go's (differential checks of 26 M
/// pattern and value pairs); Prometheus 3.14's answers where Go's version matters.
#[test]
fn what_go_reads_otherwise_than_the_crate() {
    answers_are_gos(&[
        // A count with a leading zero is no repetition: the `{` is text.
        ("a{01}", "a{01}", true),
        ("a{01}", "a", false),
        ("a{00}", "", false),
        ("a{1,02}", "a{1,02}", true),
        ("a{0}", "", true),
        ("a{0,10}", "aaa", true),
        // A flag twice is one flag; after the `-` it is cleared.
        ("(?ii)a", "A", true),
        ("(?i-i)a", "A", false),
        ("(?i-i)a", "a", true),
        ("(?sU-sU)a.", "a\n", false),
        ("(?i)(?-i:a)", "A", false),
        // Flags alone and an empty `\Q\E` are no item: a repetition after them repeats
        // the item before, a repetition included.
        ("a(?i)*", "aa", true),
        ("a(?i)*b", "aaB", true),
        ("a(?i)*b", "aAb", false),
        ("a(?)?", "", true),
        ("a*(?i)*", "aaa", true),
        ("b(?UU)(?Ui)?/", "/", true),
        (r"\}(?i)(?-i)?x", "}X", false),
        ("a(?i)(?-i)+", "aa", true),
        (r"a+\Q\E?", "", true),
        (r"a{3}\Q\E?", "", true),
        (r"a{3}\Q\E?", "aa", false),
        (r"a(?i)\Q\E*", "", true),
        (r"\Qab\E+", "abb", true),
        (r"\Qab\E+", "abab", false),
        // Counts that multiply to 1000 at most; a count of 0 ends the chain.
        ("(a{10}){100}", &"a".repeat(1000), true),
        ("((a{1000}){0}){5}", "", true),
        ("(a{1000}){0,1}", "", true),
        (r"((?:){1000}\Q\E{0}){4}", "", true),
        // Property names exactly as Go's tables spell them.
        (r"\p{Greek}", "α", true),
        (r"\p{Old_Italic}", "\u{10300}", true),
        (r"\p{SignWriting}", "\u{1D800}", true),
        (r"\p{Nko}", "\u{7CA}", true),
        (r"\p{LC}", "a", true),
        (r"\p{Cn}", "\u{378}", true),
        (r"[\P{^Lu}]", "A", true),
    ]);
}
