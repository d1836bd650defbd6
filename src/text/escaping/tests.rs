use proptest::prelude::*;

use super::*;

/// prometheus/common's `TestEscapeName` (model/metric_test.go at d2417e2c): input, then
/// underscores, dots, dots unescaped, values (values unescaped is the input).
const GO_ESCAPE_NAME: &[[&str; 5]] = &[
    ["", "", "", "", ""],
    [
        "no:escaping_required",
        "no:escaping_required",
        "no:escaping__required",
        "no:escaping_required",
        "no:escaping_required",
    ],
    [
        "mysystem.prod.west.cpu.load",
        "mysystem_prod_west_cpu_load",
        "mysystem_dot_prod_dot_west_dot_cpu_dot_load",
        "mysystem.prod.west.cpu.load",
        "U__mysystem_2e_prod_2e_west_2e_cpu_2e_load",
    ],
    [
        "mysystem.prod.west.cpu.load_total",
        "mysystem_prod_west_cpu_load_total",
        "mysystem_dot_prod_dot_west_dot_cpu_dot_load__total",
        "mysystem.prod.west.cpu.load_total",
        "U__mysystem_2e_prod_2e_west_2e_cpu_2e_load__total",
    ],
    [
        "http.status:sum",
        "http_status:sum",
        "http_dot_status:sum",
        "http.status:sum",
        "U__http_2e_status:sum",
    ],
    [
        "label with 😱",
        "label_with__",
        "label__with____",
        "label_with__",
        "U__label_20_with_20__1f631_",
    ],
    ["花火", "__", "____", "__", "U___82b1__706b_"],
    [
        "label with \u{0100}",
        "label_with__",
        "label__with____",
        "label_with__",
        "U__label_20_with_20__100_",
    ],
];

/// prometheus/common's `TestValueUnescapeErrors`: a name and what `values` unescapes it to
/// (itself where it breaks the scheme).
const GO_VALUE_UNESCAPE: &[[&str; 2]] = &[
    ["", ""],
    ["U__no:unescapingrequired", "no:unescapingrequired"],
    ["U__capitals_2E_ok", "capitals.ok"],
    ["U__underscores__doubled__", "underscores_doubled_"],
    ["U__underscores_doubled_", "U__underscores_doubled_"],
    ["U__underscores__doubled_", "U__underscores__doubled_"],
    [
        "U__my__hack_2e_attempt_872348732fabdabbab_",
        "U__my__hack_2e_attempt_872348732fabdabbab_",
    ],
    ["U__my__hack_2e", "U__my__hack_2e"],
    ["U__bad__utf_2eg_", "U__bad__utf_2eg_"],
    ["U__bad__utf_D900_", "U__bad__utf_D900_"],
];

#[test]
fn names_escape_and_unescape_as_prometheus_common_does() {
    for [input, underscores, dots, dots_back, values] in GO_ESCAPE_NAME {
        assert_eq!(Escaping::Underscores.escape(input), *underscores, "{input:?}");
        assert_eq!(
            Escaping::Underscores.unescape(underscores),
            *underscores,
            "{input:?}"
        );
        assert_eq!(Escaping::Dots.escape(input), *dots, "{input:?}");
        assert_eq!(Escaping::Dots.unescape(dots), *dots_back, "{input:?}");
        assert_eq!(Escaping::Values.escape(input), *values, "{input:?}");
        assert_eq!(Escaping::Values.unescape(values), *input, "{input:?}");
        assert_eq!(Escaping::AllowUtf8.escape(input), *input);
        assert_eq!(Escaping::AllowUtf8.unescape(input), *input);
    }
    for [input, expected] in GO_VALUE_UNESCAPE {
        assert_eq!(Escaping::Values.unescape(input), *expected, "{input:?}");
    }
}

/// Five hex digits at most, as prometheus/common reads them: a character past U+FFFFF is
/// escaped but not read back (its six digits refuse the name).
#[test]
fn a_code_of_six_hex_digits_is_not_read_back() {
    let escaped = Escaping::Values.escape("a\u{10000}b\u{100000}");
    assert_eq!(escaped, "U__a_10000_b_100000_");
    assert_eq!(Escaping::Values.unescape(&escaped), escaped);
    assert_eq!(Escaping::Values.unescape("U__a_10000_b"), "a\u{10000}b");
    // A name that needs no escape is written as it is; one that starts with `U__` then
    // reads as escaped (found by `cargo fuzz`; prometheus/common reads it so too).
    assert_eq!(Escaping::Values.escape("U__a"), "U__a");
    assert_eq!(Escaping::Values.unescape("U__a"), "a");
    // Hex digits folded as prometheus/common folds them: `c | 0x20` reads 0x11 as `1`.
    assert_eq!(Escaping::Values.unescape("U___\u{11}_"), "\u{1}");
    assert_eq!(Escaping::Values.unescape("U___4A_"), "J");
    assert_eq!(Escaping::Values.unescape("U___\u{7}_"), "U___\u{7}_");
}

#[test]
fn schemes_are_named_as_the_escaping_parameter_names_them() {
    for scheme in [
        Escaping::AllowUtf8,
        Escaping::Underscores,
        Escaping::Dots,
        Escaping::Values,
    ] {
        assert_eq!(scheme.as_str().parse::<Escaping>(), Ok(scheme));
        assert_eq!(scheme.to_string(), scheme.as_str());
    }
    assert!(
        "Values".parse::<Escaping>().is_err(),
        "exactly, as ToEscapingScheme"
    );
    assert!("".parse::<Escaping>().is_err());
    let header = |h| Escaping::from_content_type(h);
    assert_eq!(
        header("text/plain;version=1.0.0;escaping=values"),
        Some(Escaping::Values)
    );
    assert_eq!(
        header("application/openmetrics-text; escaping=\"dots\""),
        Some(Escaping::Dots)
    );
    assert_eq!(header("text/plain; escaping=utf8"), None);
    assert_eq!(
        header("escaping=values"),
        None,
        "a parameter follows the media type"
    );
}

proptest! {
    /// `values` gives every name back (below U+100000), and every scheme but
    /// `allow-utf-8` writes a name the legacy characters spell.
    #[test]
    fn escaped_names_are_legacy_and_values_reads_back(name in "[a-z0-9_.:\\- é😱\u{80}-\u{FFFFF}]{1,12}") {
        let escaped = Escaping::Values.escape(&name);
        prop_assert_eq!(Escaping::Values.unescape(&escaped), name.as_str());
        for scheme in [Escaping::Underscores, Escaping::Dots, Escaping::Values] {
            let escaped = scheme.escape(&name);
            prop_assert!(is_metric_name(&escaped), "{} {:?} -> {:?}", scheme, name, escaped);
            prop_assert_eq!(scheme.apply(&name), if is_metric_name(&name) { name.clone() } else { escaped.into_owned() });
        }
    }

    /// `dots` reads back a name of letters, digits, colons and dots.
    #[test]
    fn dots_read_back_a_name_of_dots(name in "[a-z][a-z0-9:.]{0,12}") {
        let escaped = Escaping::Dots.escape(&name);
        prop_assert_eq!(Escaping::Dots.unescape(&escaped), name.as_str());
    }
}
