//! An alert rule as the user types it, `FIGURE OP NUMBER [for DURATION]`, parsed with
//! `nom`; a mistake is reported with its column and what was expected there.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{multispace0, multispace1};
use nom::number::complete::recognize_float;
use nom::{IResult, Parser as _};

use super::catalogue::{Figure, Unit};

/// How a rule compares its figure with the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Below,
    AtMost,
    Above,
    AtLeast,
    Equal,
    NotEqual,
}

impl Comparison {
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Below => "<",
            Comparison::AtMost => "<=",
            Comparison::Above => ">",
            Comparison::AtLeast => ">=",
            Comparison::Equal => "==",
            Comparison::NotEqual => "!=",
        }
    }

    /// Whether `value` is on the rule's side of `threshold`.
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Comparison::Below => value < threshold,
            Comparison::AtMost => value <= threshold,
            Comparison::Above => value > threshold,
            Comparison::AtLeast => value >= threshold,
            Comparison::Equal => value == threshold,
            Comparison::NotEqual => value != threshold,
        }
    }
}

/// One `--alert` rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub figure: &'static Figure,
    pub comparison: Comparison,
    /// In the unit of the JSON row (seconds, a fraction from 0 to 1).
    pub threshold: f64,
    /// The threshold as written (`500ms`, `90%`), for messages.
    threshold_text: String,
    /// How long the condition must hold, in data time, before the rule fires (zero: at
    /// the first interval it holds).
    pub hold: Duration,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.figure.name,
            self.comparison.symbol(),
            self.threshold_text
        )?;
        if !self.hold.is_zero() {
            write!(f, " for {}", crate::text::setting(self.hold))?;
        }
        Ok(())
    }
}

/// A rule that does not parse: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The rule as typed.
    pub rule: String,
    /// The mistake's first column (characters, from 1) and its width (at least 1).
    pub column: usize,
    pub width: usize,
    pub expected: String,
    /// Whether the message lists every figure name (the name was the mistake).
    pub list_figures: bool,
}

impl fmt::Display for RuleError {
    /// `column N: what was expected`, the rule, and carets under the mistake.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Tabs and newlines as spaces, so that the carets stay under the right character.
        let shown: String = self
            .rule
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        write!(
            f,
            "column {}: {}\n  {shown}\n  {}{}",
            self.column,
            self.expected,
            " ".repeat(self.column - 1),
            "^".repeat(self.width)
        )?;
        if self.list_figures {
            write!(
                f,
                "\nfigures: {} (--help says what each is)",
                super::catalogue::names()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for RuleError {}

type Parsed<'a, T> = IResult<&'a str, T>;

fn blank(i: &str) -> &str {
    multispace0::<_, nom::error::Error<&str>>(i).map_or(i, |(rest, _)| rest)
}

/// A name: letters (any script, so that a typo is reported whole), digits and `_`.
fn word(i: &str) -> Parsed<'_, &str> {
    take_while1(|c: char| c.is_alphanumeric() || c == '_').parse(i)
}

fn comparison(i: &str) -> Parsed<'_, Comparison> {
    alt((
        tag("<=").map(|_| Comparison::AtMost),
        tag(">=").map(|_| Comparison::AtLeast),
        tag("==").map(|_| Comparison::Equal),
        tag("!=").map(|_| Comparison::NotEqual),
        tag("<").map(|_| Comparison::Below),
        tag(">").map(|_| Comparison::Above),
    ))
    .parse(i)
}

/// What follows a number directly: a unit (`ms`, `%`), or nothing.
fn unit_suffix(i: &str) -> Parsed<'_, &str> {
    alt((tag("%"), take_while(|c: char| c.is_alphabetic()))).parse(i)
}

/// `for` and the blank after it.
fn for_keyword(i: &str) -> Parsed<'_, &str> {
    (tag("for"), multispace1).map(|(keyword, _)| keyword).parse(i)
}

/// Positions in the rule being parsed.
struct Parse<'a> {
    whole: &'a str,
}

impl Parse<'_> {
    /// An error at `rest` (the input from the mistake on), `width` characters wide.
    fn error(&self, rest: &str, width: usize, expected: impl Into<String>) -> RuleError {
        let offset = self.whole.len() - rest.len();
        RuleError {
            rule: self.whole.to_string(),
            column: self.whole[..offset].chars().count() + 1,
            width: width.max(1),
            expected: expected.into(),
            list_figures: false,
        }
    }

    fn rule(&self) -> Result<Rule, RuleError> {
        let rest = blank(self.whole);
        let Ok((after, name)) = word(rest) else {
            return Err(RuleError {
                list_figures: true,
                ..self.error(
                    rest,
                    1,
                    "expected a figure name (FIGURE OP NUMBER [for DURATION])",
                )
            });
        };
        let figure = Figure::named(name).ok_or_else(|| {
            let hint = match Figure::nearest(name) {
                Some(near) => format!("; did you mean {}?", near.name),
                None => String::new(),
            };
            RuleError {
                list_figures: true,
                ..self.error(rest, name.chars().count(), format!("unknown figure {name}{hint}"))
            }
        })?;
        let rest = blank(after);
        let (after, comparison) = comparison(rest)
            .map_err(|_| self.error(rest, 1, "expected a comparison: <, <=, >, >=, == or !="))?;
        let rest = blank(after);
        let (after, number) = recognize_float::<_, nom::error::Error<&str>>(rest).map_err(|_| {
            self.error(
                rest,
                1,
                format!("expected a number: {} is {}", figure.name, figure.unit.how()),
            )
        })?;
        let unit_at = after;
        let (after, unit) = unit_suffix(after).unwrap_or((after, ""));
        let threshold = self.threshold(figure, rest, number, unit_at, unit)?;
        let threshold_text = format!("{number}{unit}");
        let rest = blank(after);
        if rest.is_empty() {
            return Ok(Rule {
                figure,
                comparison,
                threshold,
                threshold_text,
                hold: Duration::ZERO,
            });
        }
        if rest.len() == after.len() {
            // Something stuck to the number that is not a unit.
            return Err(self.error(
                rest,
                1,
                "expected a blank, then `for DURATION` or the end of the rule",
            ));
        }
        let Ok((after, _)) = for_keyword(rest) else {
            let width = word(rest).map_or(1, |(_, w)| w.chars().count());
            return Err(self.error(rest, width, "expected `for DURATION` or the end of the rule"));
        };
        let hold = self.duration(after.trim_end())?;
        Ok(Rule {
            figure,
            comparison,
            threshold,
            threshold_text,
            hold,
        })
    }

    /// The threshold in the row's unit, from the number (at `at`) and the unit after it.
    fn threshold(
        &self,
        figure: &Figure,
        at: &str,
        number: &str,
        unit_at: &str,
        unit: &str,
    ) -> Result<f64, RuleError> {
        let value: f64 = number
            .parse()
            .map_err(|_| self.error(at, number.len(), "expected a number"))?;
        let wrong_unit = |allowed: &str| {
            self.error(
                unit_at,
                unit.chars().count(),
                format!(
                    "expected {allowed} after the number: {} is {}",
                    figure.name,
                    figure.unit.how()
                ),
            )
        };
        let value = match (figure.unit, unit) {
            // A bare number was read as seconds: `ttft_p95 > 500` could never fire.
            (Unit::Seconds, "") => {
                return Err(self.error(
                    at,
                    number.len(),
                    format!("{number} what? write {number}ms or {number}s"),
                ))
            }
            (Unit::Seconds, _) if value < 0.0 => {
                return Err(self.error(at, number.len(), "expected a duration, never negative"))
            }
            (Unit::Seconds, _) => humantime::parse_duration(&format!("{number}{unit}"))
                .map_err(|_| wrong_unit("a duration unit (ms, s, m, h)"))?
                .as_secs_f64(),
            (Unit::Fraction, "%") => value / 100.0,
            (Unit::Fraction, "") if value > 1.0 => {
                return Err(self.error(
                    at,
                    number.len(),
                    "expected a fraction from 0 to 1, or a percentage: 0.9 or 90%",
                ))
            }
            (Unit::Fraction, "") => value,
            (Unit::Fraction, _) => return Err(wrong_unit("% or nothing")),
            (Unit::Percent, "" | "%") => value,
            (Unit::Percent, _) => return Err(wrong_unit("% or nothing")),
            (_, "") => value,
            (_, _) => return Err(wrong_unit("nothing")),
        };
        Ok(value)
    }

    /// `for`'s duration (humantime's, as `--interval`), its errors at their column.
    fn duration(&self, text: &str) -> Result<Duration, RuleError> {
        use humantime::DurationError as E;
        let expected = "expected a duration after `for` (30s, 5m, 1h30m)";
        if text.is_empty() {
            return Err(self.error(&self.whole[self.whole.len()..], 1, expected));
        }
        humantime::parse_duration(text).map_err(|e| match e {
            E::InvalidCharacter(at) | E::NumberExpected(at) => self.error(&text[at..], 1, expected),
            // A number alone: humantime reports an empty unit past its end.
            E::UnknownUnit { start, unit, .. } if unit.is_empty() => self.error(
                &text[start.min(text.len())..],
                1,
                format!(
                    "a unit after the number: {}s, {}m (ms, s, m, h, d)",
                    text.trim(),
                    text.trim()
                ),
            ),
            E::UnknownUnit { start, end, unit, .. } => self.error(
                &text[start..],
                text[start..end].chars().count(),
                format!("unknown unit {unit} in the duration (ms, s, m, h, d)"),
            ),
            E::NumberOverflow | E::Empty => self.error(text, text.chars().count(), expected),
        })
    }
}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Rule, RuleError> {
        Parse { whole: text }.rule()
    }
}

/// `--alert`'s value parser: clap prints the error after the option's name and exits 2.
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    text.parse::<Rule>().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::catalogue::FIGURES;
    use super::*;
    use proptest::prelude::*;

    fn rule(text: &str) -> Rule {
        text.parse().unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn rules_read_as_written() {
        let r = rule("gen_tok_s < 1000 for 30s");
        assert_eq!(r.figure.name, "gen_tok_s");
        assert_eq!(
            (r.comparison, r.threshold, r.hold),
            (Comparison::Below, 1000.0, Duration::from_secs(30))
        );
        assert_eq!(r.to_string(), "gen_tok_s < 1000 for 30s");
        let table: &[(&str, f64, u64, &str)] = &[
            ("kv_used > 0.9 for 1m", 0.9, 60, "kv_used > 0.9 for 1m"),
            ("kv_used>90%\tfor 1m", 0.9, 60, "kv_used > 90% for 1m"),
            ("  slo_ttft < 0.95 for 5m  ", 0.95, 300, "slo_ttft < 0.95 for 5m"),
            ("scrape_errors > 0", 0.0, 0, "scrape_errors > 0"),
            (
                "ttft_p95 >= 500ms for 1m30s",
                0.5,
                90,
                "ttft_p95 >= 500ms for 1m 30s",
            ),
            ("e2e_mean != 1.5s", 1.5, 0, "e2e_mean != 1.5s"),
            ("itl_p99 <= 50ms for 0s", 0.05, 0, "itl_p99 <= 50ms"),
            ("e2e_p99 > 0.5s", 0.5, 0, "e2e_p99 > 0.5s"),
            ("gpu_util == 90%", 90.0, 0, "gpu_util == 90%"),
            ("stalled\t==\t1\tfor\t10s", 1.0, 10, "stalled == 1 for 10s"),
            ("req_s < 1e2", 100.0, 0, "req_s < 1e2"),
        ];
        for &(text, threshold, hold, shown) in table {
            let r = rule(text);
            assert_eq!((r.threshold, r.hold.as_secs()), (threshold, hold), "{text}");
            assert_eq!(r.to_string(), shown);
        }
        assert!(Comparison::AtMost.holds(1.0, 1.0) && !Comparison::Below.holds(1.0, 1.0));
        assert!(Comparison::NotEqual.holds(0.0, 1.0) && Comparison::AtLeast.holds(2.0, 1.0));
    }

    /// Each mistake at its column (counted in characters), with what was expected there.
    #[test]
    fn mistakes_are_reported_at_their_column() {
        let table: &[(&str, usize, usize, &str)] = &[
            ("", 1, 1, "expected a figure name"),
            ("   ", 4, 1, "expected a figure name"),
            ("< 5", 1, 1, "expected a figure name"),
            (
                "gen_toks < 1000",
                1,
                8,
                "unknown figure gen_toks; did you mean gen_tok_s?",
            ),
            ("throughput < 1000", 1, 10, "unknown figure throughput"),
            ("gen_tok_s = 1000", 11, 1, "expected a comparison"),
            ("gen_tok_s 1000", 11, 1, "expected a comparison"),
            (
                "gen_tok_s <> 1000",
                12,
                1,
                "expected a number: gen_tok_s is a number per second",
            ),
            ("gen_tok_s < fast", 13, 1, "expected a number"),
            ("gen_tok_s < 1000 tok/s", 18, 3, "expected `for DURATION`"),
            ("gen_tok_s < 1000ms", 17, 2, "expected nothing after the number"),
            ("gen_tok_s < 1000/s", 17, 1, "expected a blank"),
            ("kv_used > 90%for 1m", 14, 1, "expected a blank"),
            ("kv_used > 90", 11, 2, "expected a fraction from 0 to 1"),
            ("kv_used > 0.9ms", 14, 2, "expected % or nothing"),
            ("ttft_p95 > 500xs", 15, 2, "expected a duration unit"),
            // Seconds or milliseconds? A time needs its unit.
            ("ttft_p95 > 500", 12, 3, "500 what? write 500ms or 500s"),
            (
                "itl_p99 <= 0.05 for 1m",
                12,
                4,
                "0.05 what? write 0.05ms or 0.05s",
            ),
            ("gen_tok_s < 1000 for", 18, 3, "expected `for DURATION`"),
            ("gen_tok_s < 1000 for ", 22, 1, "expected a duration after `for`"),
            ("gen_tok_s < 1000 for 30q", 24, 1, "unknown unit q"),
            ("gen_tok_s < 1000 for 30", 24, 1, "a unit after the number: 30s"),
            ("gen_tok_s < 1000 for 30s and more", 26, 1, "expected a duration"),
            ("gen_tok_s < 1000 during 30s", 18, 6, "expected `for DURATION`"),
            ("débit < 5", 1, 5, "unknown figure débit"),
            ("gen_tok_s < 1000 for ½s", 22, 1, "expected a duration"),
        ];
        for &(text, column, width, expected) in table {
            let e = text.parse::<Rule>().expect_err(text);
            assert_eq!((e.column, e.width), (column, width), "{text:?}: {e}");
            assert!(e.expected.starts_with(expected), "{text:?}: {e}");
            let shown = e.to_string();
            let lines: Vec<&str> = shown.lines().collect();
            // The caret line puts its first caret under the column, as the rule is echoed.
            assert_eq!(lines[2].find('^'), Some(2 + column - 1), "{shown}");
            assert_eq!(e.list_figures, expected.contains("figure"), "{text:?}");
        }
        let unknown = "gen_toks < 1000".parse::<Rule>().unwrap_err().to_string();
        assert!(
            unknown.contains("figures: gen_tok_s, gen_tok_s_ewma,"),
            "{unknown}"
        );
    }

    /// A valid rule for the figure, written with `blanks` of spacing where blanks are
    /// optional, and its threshold and hold.
    fn write(
        figure: &Figure,
        op: &str,
        value: u32,
        unit_choice: usize,
        hold: Option<(u64, &str)>,
        blanks: [&str; 3],
    ) -> (String, f64, Duration) {
        let v = f64::from(value);
        let (number, threshold) = match figure.unit {
            Unit::Fraction if unit_choice % 2 == 0 => {
                (format!("{}%", value % 101), f64::from(value % 101) / 100.0)
            }
            Unit::Fraction => (format!("0.{:03}", value % 1000), f64::from(value % 1000) / 1000.0),
            Unit::Seconds => match unit_choice % 3 {
                0 => (format!("{value}ms"), v / 1000.0),
                1 => (format!("{value}s"), v),
                _ => (format!("{value}us"), v / 1e6),
            },
            Unit::Percent if unit_choice % 2 == 0 => (format!("{value}%"), v),
            _ => (format!("{value}"), v),
        };
        let (hold_text, hold) = match hold {
            Some((n, unit)) => {
                let seconds = if unit == "m" { n * 60 } else { n };
                (
                    format!(" for{}{n}{unit}", blanks[2].replace(' ', "  ")),
                    Duration::from_secs(seconds),
                )
            }
            None => (String::new(), Duration::ZERO),
        };
        let text = format!(
            "{}{}{op}{}{number}{hold_text}{}",
            blanks[0], figure.name, blanks[1], blanks[0]
        );
        (text, threshold, hold)
    }

    proptest! {
        /// Every rule the grammar allows reads back to its parts, and its canonical form
        /// reads back to the same rule.
        #[test]
        fn written_rules_parse_and_round_trip(
            index in 0..FIGURES.len(),
            op in prop::sample::select(vec!["<", "<=", ">", ">=", "==", "!="]),
            value in 0u32..100_000,
            unit_choice in 0usize..6,
            hold in prop::option::of((1u64..120, prop::sample::select(vec!["s", "m"]))),
            blanks in [
                prop::sample::select(vec!["", " ", "  ", "\t"]),
                prop::sample::select(vec!["", " ", "\t "]),
                prop::sample::select(vec![" ", "\t"]),
            ],
        ) {
            let figure = &FIGURES[index];
            let (text, threshold, hold) = write(figure, op, value, unit_choice, hold, blanks);
            let r: Rule = text.parse().map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
            prop_assert_eq!(r.figure.name, figure.name);
            prop_assert_eq!(r.comparison.symbol(), op);
            prop_assert!((r.threshold - threshold).abs() <= 1e-12 * threshold.max(1.0), "{} {}", r.threshold, threshold);
            prop_assert_eq!(r.hold, hold);
            let again: Rule = r.to_string().parse().map_err(|e| TestCaseError::fail(format!("{r}: {e}")))?;
            prop_assert_eq!(again, r);
        }

        /// Whatever is typed, parsing answers (never panics), and a mistake's column is
        /// within the rule or just after it.
        #[test]
        fn any_text_is_a_rule_or_a_mistake_within_it(text in "\\PC{0,40}") {
            if let Err(e) = text.parse::<Rule>() {
                prop_assert!(e.column >= 1 && e.column <= text.chars().count() + 1, "{e}");
                prop_assert!(e.width >= 1);
            }
        }

        /// Changing one character of a valid rule into another gives a valid rule or a
        /// mistake reported at or before that character (never after it: the parser
        /// stops at the first thing it cannot read).
        #[test]
        fn one_wrong_character_is_reported_where_it_is(
            index in 0..FIGURES.len(),
            at in 0usize..40,
            c in prop::sample::select(vec!['#', 'x', '?', ',', '=', '-']),
        ) {
            // A time's threshold with its unit.
            let one = if FIGURES[index].unit == Unit::Seconds { "1s" } else { "1" };
            let text = format!("{} >= {one} for 30s", FIGURES[index].name);
            let at = at % text.chars().count();
            let changed: String = text
                .chars()
                .enumerate()
                .map(|(i, old)| if i == at { c } else { old })
                .collect();
            if let Err(e) = changed.parse::<Rule>() {
                prop_assert!(e.column <= at + 1, "{changed:?} at {}: {e}", at + 1);
            }
        }
    }
}
