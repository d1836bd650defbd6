//! The OpenMetrics parser conformance suite: every case accepted or rejected as its
//! `test.json` says.

use promrate::{Format, Parser};

use crate::data;

fn should_parse(json: &str) -> bool {
    let compact: String = json.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("\"shouldParse\":true") {
        true
    } else if compact.contains("\"shouldParse\":false") {
        false
    } else {
        panic!("test.json without shouldParse: {json}")
    }
}

#[test]
fn every_case_agrees_with_test_json() {
    let dir = data::dir();
    let suite = dir.join("openmetrics-suite");
    let mut cases: Vec<_> = std::fs::read_dir(&suite)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.retain(|p| p.join("test.json").is_file());
    cases.sort();
    assert_eq!(cases.len(), 211, "the suite has 211 cases");
    let parser = Parser::new(Format::OpenMetrics);
    let mut disagreements = Vec::new();
    for case in &cases {
        let expected = should_parse(&data::read(&case.join("test.json")));
        let text = data::read(&case.join("metrics"));
        let first_error = parser.parse(&text).find_map(Result::err);
        if expected != first_error.is_none() {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            disagreements.push(format!("{name}: expected {expected}, got {first_error:?}"));
        }
    }
    println!(
        "openmetrics suite: {}/{} cases agree",
        cases.len() - disagreements.len(),
        cases.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
