use super::grammar::string_literal;
use super::*;
use crate::error::SelectorErrorKind;

#[cfg(feature = "regex")]
fn sample(line: &str) -> Sample<'_> {
    crate::parse(line).next().unwrap().unwrap().into_sample().unwrap()
}

#[test]
#[cfg(feature = "regex")]
fn matching_table() {
    let line =
        r#"vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B",path="a\"b\\c"} 1"#;
    let s = sample(line);
    let cases = [
        ("vllm:generation_tokens_total", true),
        ("vllm_generation_tokens_total", false),
        (r#"{__name__="vllm:generation_tokens_total"}"#, true),
        (r#"{__name__=~"vllm:.*_total"}"#, true),
        (r#"{__name__!~"vllm:.*", engine="0"}"#, false),
        (r#"vllm:generation_tokens_total{engine="0"}"#, true),
        (r#"vllm:generation_tokens_total{engine!="0"}"#, false),
        (r#"{engine=~"0|1"}"#, true),
        (r#"{engine=~"1|2"}"#, false),
        (r#"{model_name=~"meta-llama/.*"}"#, true),
        (r#"{model_name=~"llama.*"}"#, false),
        (r#"{model_name=~"(?i)META-llama/.*"}"#, true),
        (r#"{engine="0", model_name!~"x.*"}"#, true),
        (r#"{path="a\"b\\c"}"#, true),
        (r#"{path='a"b\\c'}"#, true),
        (r#"{path=~`a"b\\c`}"#, true),
        (r#"{path=~'a"b.c'}"#, true),
        (r#"{engine="0", missing=""}"#, true),
        (r#"{engine="0", missing!=""}"#, false),
        (r#"{engine="0", missing=~"x|"}"#, true),
        (r#"  vllm:generation_tokens_total  {  engine = "0" , }  "#, true),
        (r#"{engine=~"0\n"}"#, false),
        // Prometheus 3: quoted names anywhere in the braces, any number of name matchers.
        (r#"{"vllm:generation_tokens_total", "engine"="0"}"#, true),
        (r#"{engine="0", "vllm:generation_tokens_total"}"#, true),
        (r#"{"bar", __name__="vllm:generation_tokens_total"}"#, false),
        (
            r#"{__name__="vllm:generation_tokens_total", __name__=~"vllm:.*"}"#,
            true,
        ),
    ];
    let escaped = sample(r#"{"my\"metric\n","label\"name\n"="v"} 1"#);
    let selector = Selector::parse(r#"{"my\"metric\n", "label\"name\n"="v"}"#).unwrap();
    assert!(selector.matches(&escaped));
    for (text, want) in cases {
        let selector = Selector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(selector.matches(&s), want, "{text}");
    }
    let normalized = Selector::parse("vllm_generation_tokens_total")
        .unwrap()
        .normalize_names(true);
    assert!(normalized.matches(&s));
}

#[test]
fn string_escapes() {
    let cases = [
        (r#""a\tb""#, "a\tb"),
        (r#""\x41\u00e9\U0001F600\101""#, "Aé😀A"),
        (r#"'it\'s'"#, "it's"),
        (r#"`raw\n`"#, "raw\\n"),
        // Go's byte escapes spell a character together, as Prometheus reads them.
        (r#""\xC3\xA9\303\251""#, "éé"),
    ];
    for (lit, want) in cases {
        assert_eq!(string_literal(lit).unwrap().1, want, "{lit}");
    }
    // Bytes that make no UTF-8 (Go keeps them; a Rust string cannot): at the first.
    assert_eq!(
        string_literal(r#""ab\xff""#).unwrap_err(),
        (3, SelectorErrorKind::InvalidEscape)
    );
    assert_eq!(
        string_literal(r#""\xC3""#).unwrap_err(),
        (1, SelectorErrorKind::InvalidEscape)
    );
    // Octal past a byte: no character (it was read as NUL).
    assert_eq!(
        string_literal(r#""b\400""#).unwrap_err(),
        (2, SelectorErrorKind::InvalidEscape)
    );
}

/// PromQL's lexer: `#` to the end of the line is a blank, and a bare name that is a
/// keyword its grammar does not take as a name (in any case), or a number, is refused;
/// quoted, it is a name. Found by comparing with Prometheus' own parser.
#[test]
fn comments_and_keywords_as_promql_reads_them() {
    let up = Selector::parse("up").unwrap();
    for text in [
        "up # the targets",
        "# first\nup",
        "up{ # open\n job=\"a\" # why\n}",
    ] {
        let s = Selector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(s.matchers()[0].value(), "up", "{text}");
        assert_eq!(
            s.matchers().len(),
            if text.contains("job") {
                2
            } else {
                up.matchers().len()
            }
        );
    }
    for word in [
        "on",
        "bool",
        "IGNORING",
        "group_left",
        "group_right",
        "atan2",
        "inf",
        "NaN",
    ] {
        let err = Selector::parse(word).unwrap_err();
        assert_eq!(err.kind, SelectorErrorKind::KeywordAsName(word.into()), "{word}");
        assert_eq!(err.column, 1);
        assert!(
            Selector::parse(&format!("{{\"{word}\"}}")).is_ok(),
            "{word} quoted"
        );
    }
    // The keywords PromQL's grammar does take as names.
    for word in [
        "sum",
        "by",
        "offset",
        "and",
        "start",
        "topk",
        "without",
        "information",
    ] {
        assert!(Selector::parse(word).is_ok(), "{word}");
    }
}

#[test]
fn errors_with_columns() {
    let cases: &[(&str, usize, SelectorErrorKind)] = &[
        ("up{job=}", 8, SelectorErrorKind::Expected("a quoted string")),
        (r#"up{job="x"#, 8, SelectorErrorKind::UnterminatedString),
        (
            r#"up{job~"x"}"#,
            7,
            SelectorErrorKind::Expected("'=', '!=', '=~' or '!~'"),
        ),
        (
            r#"up{job="x" a="b"}"#,
            12,
            SelectorErrorKind::Expected("',' or '}'"),
        ),
        (r#"{job=""}"#, 1, SelectorErrorKind::EmptyMatchers),
        (r#"{job=~".*"}"#, 1, SelectorErrorKind::EmptyMatchers),
        (r#"up{__name__="x"}"#, 4, SelectorErrorKind::DuplicateName),
        (r#"up{"x"}"#, 4, SelectorErrorKind::DuplicateName),
        (
            r#"up{a="b", __name__=~"x"}"#,
            11,
            SelectorErrorKind::DuplicateName,
        ),
        (r#"up{a="\q"}"#, 7, SelectorErrorKind::InvalidEscape),
        ("up x", 4, SelectorErrorKind::TrailingText),
        ("x_total[5m]", 8, SelectorErrorKind::RangeSelector),
        (r#"x_total{job="a"} [5m]"#, 18, SelectorErrorKind::RangeSelector),
        ("rate(x_total[5m])", 5, SelectorErrorKind::Function("rate".into())),
        ("sum (rate(x[1m]))", 5, SelectorErrorKind::Function("sum".into())),
        (r#"up{a="b"}(x)"#, 10, SelectorErrorKind::TrailingText),
        ("", 1, SelectorErrorKind::Expected("a metric name or '{'")),
        (
            r#""my.metric"{job="x"}"#,
            1,
            SelectorErrorKind::QuotedNameOutsideBraces("my.metric".into()),
        ),
        (
            "{1a=\"x\"}",
            2,
            SelectorErrorKind::Expected("a label name or '}'"),
        ),
    ];
    for (text, column, kind) in cases {
        if !cfg!(feature = "regex") && text.contains("=~") {
            continue;
        }
        let err = Selector::parse(text).unwrap_err();
        assert_eq!((err.column, &err.kind), (*column, kind), "{text}");
    }
    let err = Selector::parse(r#"{a=~"("}"#).unwrap_err();
    #[cfg(feature = "regex")]
    assert!(
        matches!(err.kind, SelectorErrorKind::InvalidRegex(_)) && err.column == 5,
        "{err}"
    );
    // One line, for a log: the reason, and where in the pattern.
    #[cfg(feature = "regex")]
    assert_eq!(
        err.to_string(),
        "column 5: invalid regular expression: unclosed group (at character 1 of the pattern)"
    );
    #[cfg(feature = "regex")]
    // Go's reasons, where Go's syntax refuses it (`go_regex.rs`).
    assert_eq!(
        Selector::parse(r#"{a=~"ab[z-a]"}"#).unwrap_err().to_string(),
        "column 5: invalid regular expression: invalid character class range: `z-a` (at \
         character 4 of the pattern)"
    );
    #[cfg(not(feature = "regex"))]
    assert_eq!(err.kind, SelectorErrorKind::RegexUnsupported);
}

#[test]
#[cfg(feature = "regex")]
fn fast_paths_agree_with_anchored_semantics() {
    let m = Matcher::new("a", MatchOp::RegexMatch, "foo").unwrap();
    assert!(m.matches_value("foo") && !m.matches_value("foobar") && !m.matches_value("xfoo"));
    let m = Matcher::new("a", MatchOp::RegexMatch, "a|b").unwrap();
    assert!(m.matches_value("a") && m.matches_value("b") && !m.matches_value("ab"));
    let m = Matcher::new("a", MatchOp::RegexMatch, ".+").unwrap();
    assert!(m.matches_value("\n") && !m.matches_value(""));
}

/// Printed as Prometheus' printer prints the same selectors (`promql/parser/printer_test.go`
/// @ d15adb9a), except where Prometheus keeps how the name was written
/// (`{__name__="a"}`): a selector here keeps what it picks, not its spelling.
#[test]
fn printed_as_prometheus_prints_it() {
    // Regex matchers need the `regex` feature.
    #[cfg(feature = "regex")]
    let regexes = [(r#"a{b=~"c"}"#, r#"a{b=~"c"}"#), (r#"a{b!~"c"}"#, r#"a{b!~"c"}"#)];
    #[cfg(not(feature = "regex"))]
    let regexes = [];
    for (written, printed) in regexes.into_iter().chain([
        (r#"a{b!="c"}"#, r#"a{b!="c"}"#),
        (r#"{__name__="",a="x"}"#, r#"{__name__="",a="x"}"#),
        (r#"{"a.b"="c"}"#, r#"{"a.b"="c"}"#),
        (r#"{"0"="1"}"#, r#"{"0"="1"}"#),
        (r#"{"_0"="1"}"#, r#"{_0="1"}"#),
        (
            r#"task:errors:rate10s{job="s"}"#,
            r#"task:errors:rate10s{job="s"}"#,
        ),
        (r#"{__name__="a"}"#, "a"),
        (r#"a{z="1", b='2', m=`3`}"#, r#"a{b="2",m="3",z="1"}"#),
        (r#"{"a.b", x="\n"}"#, r#"{__name__="a.b",x="\n"}"#),
        // Beside another `__name__` matcher a name stays in the braces: `a{__name__!="b"}`
        // is refused ("metric name must not be set twice").
        (
            r#"{__name__="a", __name__!="b"}"#,
            r#"{__name__!="b",__name__="a"}"#,
        ),
        (r#"{"b", "a"}"#, r#"{__name__="a",__name__="b"}"#),
    ]) {
        let selector = Selector::parse(written).unwrap();
        assert_eq!(selector.to_string(), printed, "{written}");
    }
}

/// The matchers of a selector, in a canonical order.
fn matcher_set(selector: &Selector) -> Vec<(String, &'static str, String)> {
    let mut set: Vec<_> = selector
        .matchers()
        .iter()
        .map(|m| (m.label().to_string(), m.op().as_str(), m.value().to_string()))
        .collect();
    set.sort();
    set
}

/// The matcher operators the proptest writes: the regex ones need the `regex` feature.
const OPS: usize = if cfg!(feature = "regex") { 4 } else { 2 };

proptest::proptest! {
    /// Any selector printed and parsed again is the same selector (the same matchers and
    /// name), and prints the same.
    #[test]
    fn a_printed_selector_parses_back_to_itself(
        name in proptest::option::of("[a-z_:][a-z0-9_:.]{0,6}"),
        matchers in proptest::collection::vec(
            (
                proptest::prop_oneof![3 => "[a-z_][a-z0-9_.]{0,4}", 1 => proptest::strategy::Just("__name__".to_string())],
                0usize..OPS,
                "[a-z\"\\\\\n é.]{1,5}",
            ),
            0..4,
        ),
    ) {
        let ops = ["=", "!=", "=~", "!~"];
        // Regexes only of letters, so that every generated one compiles.
        // `__name__` among them too: a second name matcher is read, and printed back.
        let inner: Vec<String> = matchers
            .iter()
            .map(|(label, op, value)| {
                let value = if *op >= 2 { value.replace(|c: char| !c.is_ascii_lowercase(), "") } else { value.clone() };
                format!("{label:?}{}{value:?}", ops[*op])
            })
            .collect();
        let text = match &name {
            Some(name) => format!("{{{name:?}{}{}}}", if inner.is_empty() { "" } else { ", " }, inner.join(", ")),
            None => format!("{{{}}}", inner.join(", ")),
        };
        // A refused selector (no matcher that rejects the empty string) has nothing to
        // print: rejected, and counted (too many and the test fails).
        let parsed = Selector::parse(&text);
        proptest::prop_assume!(parsed.is_ok(), "refused: {}", text);
        let selector = parsed.unwrap();
        let printed = selector.to_string();
        let again = Selector::parse(&printed).unwrap_or_else(|e| panic!("{text} printed {printed}: {e}"));
        proptest::prop_assert_eq!(matcher_set(&again), matcher_set(&selector), "{} printed {}", text, printed);
        proptest::prop_assert_eq!(again.metric_name(), selector.metric_name());
        proptest::prop_assert_eq!(again.to_string(), printed);
    }
}
