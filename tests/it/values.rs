//! The sample-value grammar against Prometheus' own rule (Go's `strconv.ParseFloat` minus
//! the `p`, `P` and `_` forms, as `model/textparse` reads values): the golden file
//! `tests/data/values/prometheus-values.tsv` was written by `tests/go/values.go`; CI
//! regenerates it with Go and fails on a difference.

use crate::data;

#[test]
fn every_value_reads_as_prometheus_reads_it() {
    let golden = data::read(&data::dir().join("values/prometheus-values.tsv"));
    let (mut checked, mut refused) = (0, 0);
    let mut differ = Vec::new();
    for line in golden.lines() {
        let (input, want) = line.split_once('\t').expect("input<TAB>expected");
        let page = format!("a {input}\n");
        let got = match promrate::parse(&page).next() {
            Some(Ok(promrate::Entry::Sample(s))) => {
                let v = s.value();
                if v.is_nan() {
                    "nan".to_string()
                } else {
                    format!("{:016x}", v.to_bits())
                }
            }
            Some(Err(_)) => "error".to_string(),
            other => panic!("{input:?}: {other:?}"),
        };
        checked += 1;
        refused += usize::from(want == "error");
        if got != want {
            differ.push(format!("{input:?}: Prometheus {want}, promrate {got}"));
        }
    }
    assert!(checked >= 2000, "only {checked} values in the golden file");
    assert!(
        differ.is_empty(),
        "{} of {checked} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    println!(
        "value grammar: {checked} of {checked} values read as Prometheus reads them ({refused} refused by both)"
    );
}
