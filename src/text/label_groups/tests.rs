use super::*;

/// A plain set as the fast path reads it (with its recorded lengths), from `a="1",...`.
fn plain(raw: &str) -> Labels<'_> {
    let count = raw.matches('"').count() as u32 / 2;
    let mut spans = Spans::default();
    for (name, value) in Labels::simple(raw, count, Spans::default()).iter() {
        spans.push(name.len(), value.raw().len());
    }
    Labels::simple(raw, count, spans)
}

#[test]
fn the_first_difference_is_found_in_values_only() {
    use Difference::{Names, Value};
    let value = |position, before: &str, after: &str| Value {
        position,
        bytes_up: before < after,
    };
    let cases: &[(&str, &str, Difference)] = &[
        (r#"a="1",b="x""#, r#"a="1",b="x""#, Difference::None),
        (r#"a="1",b="x""#, r#"a="1",b="y""#, value(1, "x", "y")),
        (r#"a="1",b="x""#, r#"a="10",b="w""#, value(0, "1", "10")),
        (r#"a="10""#, r#"a="1""#, value(0, "10", "1")),
        (r#"a="",b="x""#, r#"a="=,",b="x""#, value(0, "", "=,")),
        // Other names, fewer or more labels: not comparable.
        (r#"a="1",b="x""#, r#"a="1",c="x""#, Names),
        (r#"a="1",b="x""#, r#"a="2",c="x""#, Names),
        (r#"a="1""#, r#"a="1",b="x""#, Names),
        (r#"a="1",b="x""#, r#"a="2""#, Names),
        (r#"a="1",b="x""#, r#"a="1""#, Names),
        (r#"b="1",a="x""#, r#"a="x",b="1""#, Names),
        // A value ending in `=` or holding `",` look-alikes cannot fool the count.
        (r#"a="x=",b="1""#, r#"a="x=",c="1""#, Names),
    ];
    // Six labels before: the difference is found by counting quotes, not recorded.
    let long = r#"p="1",q="2",r="3",s="4",t="5",u="6","#;
    // Both ways of finding it, after the common prefix.
    let first = |a: &str, b: &str| match common_prefix(a.as_bytes(), b.as_bytes()) {
        at if at == a.len() && at == b.len() => Difference::None,
        at => first_difference(plain(a), b, at),
    };
    let recorded = |a: &str, b: &str| match common_prefix(a.as_bytes(), b.as_bytes()) {
        at if at == a.len() && at == b.len() => Some(Difference::None),
        at => recorded_difference(plain(a), plain(b), at),
    };
    for (a, b, want) in cases {
        assert_eq!(first(a, b), *want, "{a} -> {b}");
        assert_eq!(difference(plain(a), plain(b)), *want, "{a} -> {b}");
        // From the recorded lengths: the same answer, for every case here.
        assert_eq!(recorded(a, b).as_ref(), Some(want), "{a} -> {b}");
        let (a, b) = (format!("{long}{a}"), format!("{long}{b}"));
        let want = match *want {
            Value { position, bytes_up } => Value {
                position: position + 6,
                bytes_up,
            },
            Difference::None => Difference::None,
            Names => Names,
        };
        assert_eq!(first(&a, &b), want, "{a} -> {b}");
        assert_eq!(difference(plain(&a), plain(&b)), want, "{a} -> {b}");
        // Too many labels to have all their lengths recorded: none, or the same answer.
        let recorded = recorded(&a, &b);
        assert!(recorded.is_none() || recorded == Some(want.clone()), "{a} -> {b}");
    }
}

/// The groups `texts` placed in order as one family; the placements.
fn placements(texts: &[&'static str]) -> Vec<Placement> {
    let mut groups = Groups::default();
    texts
        .iter()
        .map(|t| groups.place(plain(t), None, false))
        .collect()
}

/// A split needs a return to an earlier group; neither the order nor the scan of a run
/// hides one, and every placement agrees with hashing each group.
#[test]
fn steps_down_are_proven_new_by_their_run() {
    use Placement::{First, New, Same, Split};
    let cases: &[(&[&str], &[Placement])] = &[
        // A histogram's bounds: down in bytes at "10" and "+Inf", new in their run.
        (
            &[
                r#"le="0.5""#,
                r#"le="10""#,
                r#"le="2""#,
                r#"le="+Inf""#,
                r#"le="+Inf""#,
            ],
            &[First, New, New, New, Same],
        ),
        (&[r#"le="2""#, r#"le="10""#, r#"le="2""#], &[First, New, Split]),
        // Runs per series: the same bound again in another series is new.
        (
            &[
                r#"a="x",le="5""#,
                r#"a="x",le="+Inf""#,
                r#"a="y",le="5""#,
                r#"a="y",le="+Inf""#,
                r#"a="y",le="5""#,
            ],
            &[First, New, New, New, Split],
        ),
        // Once a position below went down, the run is unknown: every group is compared.
        (
            &[
                r#"a="y",b="1""#,
                r#"a="x",b="1""#,
                r#"a="x",b="2""#,
                r#"a="y",b="2""#,
                r#"a="y",b="1""#,
            ],
            &[First, New, New, New, Split],
        ),
        (
            &[
                r#"a="2",b="b""#,
                r#"a="2",b="c""#,
                r#"a="10",b="a""#,
                r#"a="3",b="a""#,
                r#"a="2",b="c""#,
            ],
            &[First, New, New, New, Split],
        ),
        // A step up is greater than its run only: below it, a position went down.
        (
            &[
                r#"a="2",b="2""#,
                r#"a="0",b="2""#,
                r#"a="2",b="10""#,
                r#"a="2",b="2""#,
            ],
            &[First, New, New, Split],
        ),
    ];
    for (texts, want) in cases {
        assert_eq!(placements(texts), *want, "{texts:?}");
    }
}

/// Places `texts` in one family: the first opens it, each other but the last is a new
/// group, the last returns to an earlier one, found by the hashes.
fn new_groups_then_a_split_by_hashes(texts: &[String]) {
    let mut groups = Groups::default();
    let got: Vec<Placement> = texts
        .iter()
        .map(|t| groups.place(plain(t), None, false))
        .collect();
    assert_eq!(got[0], Placement::First);
    assert!(got[1..got.len() - 1].iter().all(|p| *p == Placement::New));
    assert_eq!(got.last(), Some(&Placement::Split));
    assert!(matches!(groups.current, Current::Hashed(_)));
}

/// Beyond the scan's reach the family is hashed, and still finds a split.
#[test]
fn long_runs_fall_back_to_hashes() {
    let texts: Vec<String> = (0..3 * Ordered::SCAN)
        .rev()
        .map(|k| format!(r#"i="{k}""#))
        .chain([format!(r#"i="{}""#, 2 * Ordered::SCAN)])
        .collect();
    new_groups_then_a_split_by_hashes(&texts);
}

/// A run too long to keep (its steps all up, then one down): the scan cannot reach its
/// start, so the family is hashed, and a return to one of its groups is still a split.
#[test]
fn a_run_too_long_to_keep_falls_back_to_hashes() {
    let texts: Vec<String> = (100..100 + 3 * Ordered::SCAN)
        .map(|k| format!(r#"a="x",le="{k}""#))
        .chain([r#"a="x",le="0""#.to_string(), r#"a="x",le="120""#.to_string()])
        .collect();
    new_groups_then_a_split_by_hashes(&texts);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

    /// Whatever order the groups come in, each placement is the one a set of every
    /// group seen so far gives: the order and the scan of runs prove nothing false.
    #[test]
    fn placements_agree_with_a_set_of_every_group(
        groups in proptest::collection::vec(
            (0usize..3, 0usize..4, 0usize..2, proptest::bool::weighted(0.1)), 1..40),
    ) {
        const VALUES: [&str; 4] = ["2", "10", "+Inf", "a"];
        let texts: Vec<String> = groups
            .iter()
            .map(|&(a, b, c, swapped)| {
                let (a, b, c) = (a.to_string(), VALUES[b], VALUES[c]);
                // Mostly one order of names; sometimes another, or one label fewer.
                match (swapped, c) {
                    (true, "a") => format!(r#"le="{b}",a="{a}""#),
                    (true, _) => format!(r#"a="{a}""#),
                    _ => format!(r#"a="{a}",b="{c}",le="{b}""#),
                }
            })
            .collect();
        agrees_with_a_set(&texts)?;
    }

    /// Long runs at the last label (a histogram's bounds, down in bytes at one step of
    /// two, and more groups than a run's bits): the same as a set of every group.
    #[test]
    fn runs_at_the_last_label_agree_with_a_set_of_every_group(
        runs in proptest::collection::vec(
            (0usize..4, proptest::collection::vec((0u32..400, 0usize..3), 1..60)), 1..5),
    ) {
        const FORMS: [&str; 3] = ["", ".5", "e-05"];
        let texts: Vec<String> = runs
            .iter()
            .flat_map(|(a, bounds)| {
                bounds.iter().map(move |&(le, form)| format!(r#"a="{a}",le="{le}{}""#, FORMS[form]))
            })
            .collect();
        agrees_with_a_set(&texts)?;
    }

    /// Runs at a label before others (prometheus_client writes `le` before
    /// `model_name`), those after it mostly the same, sometimes not (a step after the
    /// run's label, in the run): the same as a set of every group.
    #[test]
    fn runs_before_the_last_label_agree_with_a_set_of_every_group(
        runs in proptest::collection::vec(
            (0usize..4, proptest::collection::vec((0u32..400, 0usize..3, proptest::bool::weighted(0.2)), 1..60)),
            1..5,
        ),
    ) {
        const FORMS: [&str; 3] = ["", ".5", "e-05"];
        let texts: Vec<String> = runs
            .iter()
            .flat_map(|(a, bounds)| {
                bounds.iter().map(move |&(le, form, other)| {
                    let model = if other { "m2" } else { "model" };
                    format!(r#"a="{a}",le="{le}{}",model_name="{model}""#, FORMS[form])
                })
            })
            .collect();
        agrees_with_a_set(&texts)?;
    }
}

/// Each placement of `texts`, as one family, is the one a set of every group gives.
fn agrees_with_a_set(texts: &[String]) -> Result<(), proptest::test_runner::TestCaseError> {
    let mut groups = Groups::default();
    let mut seen = HashSet::new();
    let mut previous: Option<Vec<(String, String)>> = None;
    for text in texts {
        let mut key: Vec<(String, String)> = plain(text)
            .iter()
            .map(|(n, v)| (n.to_string(), v.raw().to_string()))
            .collect();
        key.sort();
        let want = match &previous {
            None => Placement::First,
            Some(p) if *p == key => Placement::Same,
            Some(_) if seen.contains(&key) => Placement::Split,
            Some(_) => Placement::New,
        };
        let got = groups.place(plain(text), None, false);
        proptest::prop_assert_eq!(got, want, "{:?} at {}", texts, text);
        if want == Placement::Split {
            break;
        }
        seen.insert(key.clone());
        previous = Some(key);
    }
    Ok(())
}

#[test]
fn names_are_compared_between_quotes() {
    let same = |x: &str, y: &str| same_names(x.as_bytes(), y.as_bytes());
    assert!(same(r#"""#, r#"""#));
    assert!(same(
        r#"",b="1",c="2""#,
        r#"",b="long value, with = and ,c=",c="""#
    ));
    assert!(!same(r#"",b="1""#, r#"",c="1""#));
    assert!(!same(r#"",b="1""#, r#"""#));
    assert!(!same(r#"""#, r#"",b="1""#));
    assert!(!same(r#"",b="1",c="2""#, r#"",b="1""#));
    assert!(!same(r#"",bb="1""#, r#"",b="1""#));
}

#[test]
fn common_prefixes_by_word_agree_with_a_byte_loop() {
    let text: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
    for len_x in 0..text.len() {
        for len_y in [0, 1, 7, 8, 9, 15, 16, 17, 39] {
            for at in 0..len_y {
                let mut y = text[..len_y].to_vec();
                y[at] = b'#';
                let x = &text[..len_x];
                let want = x.iter().zip(&y).take_while(|(p, q)| p == q).count();
                assert_eq!(common_prefix(x, &y), want, "{len_x} {len_y} {at}");
            }
            let want = len_x.min(len_y);
            assert_eq!(common_prefix(&text[..len_x], &text[..len_y]), want);
        }
    }
}

#[test]
fn quotes_are_counted_across_many_words() {
    for len in [0usize, 7, 8, 9, 2039, 2040, 2041, 5000] {
        let text: Vec<u8> = (0..len).map(|i| if i % 3 == 0 { b'"' } else { b'x' }).collect();
        assert_eq!(count_quotes(&text), len.div_ceil(3), "{len}");
    }
}
