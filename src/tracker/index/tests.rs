//! The series index: insertion, lookup by identity and by name, removal and reuse of slots.

use super::*;
use crate::series::GaugeSeries;
use crate::tracker::tracked::SeriesData;

fn sample(line: &str) -> crate::Sample<'_> {
    crate::parse(line).next().unwrap().unwrap().into_sample().unwrap()
}

fn insert(index: &mut SeriesIndex, line: &str) -> usize {
    let sample = sample(line);
    let (name, labels) = index.identity(sample.name(), sample.labels());
    index.insert(TrackedSeries {
        name,
        labels,
        data: SeriesData::Gauge(GaugeSeries::new(chrono::TimeDelta::minutes(1))),
        last_seen: 0,
    })
}

#[test]
fn parsed_and_owned_lookups_find_the_same_slot() {
    let mut index = SeriesIndex::default();
    let a = insert(&mut index, "x_total{b=\"2\",a=\"1\"} 1");
    let b = insert(&mut index, "x_total{a=\"1\"} 1");
    let parsed = sample("x_total{b=\"2\",a=\"1\"} 1");
    assert_eq!(index.find_parsed(&["x", "_total"], parsed.labels()), Some(a));
    assert_eq!(index.find_owned("x_total", &[("a", "1"), ("b", "2")]), Some(a));
    assert_eq!(index.find_owned("x_total", &[("a", "1")]), Some(b));
    assert_eq!(index.find_owned("x_total", &[("a", "2")]), None);
    let escaped = insert(&mut index, r#"e{p="a\"b"} 1"#);
    assert_eq!(
        index.find_parsed(&["e"], sample(r#"e{p="a\"b"} 1"#).labels()),
        Some(escaped)
    );
    assert_eq!(index.find_owned("e", &[("p", "a\"b")]), Some(escaped));
    // Both x_total series share one name and one `a="1"`.
    let (x, y) = (index.get(a).unwrap(), index.get(b).unwrap());
    assert!(Arc::ptr_eq(&x.name, &y.name));
    assert!(Arc::ptr_eq(&x.labels[0], &y.labels[0]));
    assert_eq!(index.named(&["x_total"]).unwrap().slots, [a as u32, b as u32]);
}

/// Sharing, series with the same labels, under any name and in any order, hold one
/// set; a set that differs in one pair, or has one pair more or less, is its own. Not
/// sharing, each has its own.
#[test]
fn series_with_the_same_labels_share_one_set_when_asked() {
    let lines = [
        "h_bucket{i=\"a\",le=\"1\"} 1",
        "g_bucket{le=\"1\",i=\"a\"} 1",
        "h_bucket{i=\"a\",le=\"2\"} 1",
        "h_sum{i=\"a\"} 1",
        "h_count{i=\"a\"} 1",
        "h_sum{i=\"b\"} 1",
        "u 1",
        "v 1",
    ];
    for share in [true, false] {
        let mut index = SeriesIndex::default();
        index.share_label_sets(share);
        let slots: Vec<usize> = lines.iter().map(|l| insert(&mut index, l)).collect();
        let set = |k: usize| &index.get(slots[k]).unwrap().labels;
        let shared = |a, b| LabelSet::ptr_eq(set(a), set(b));
        assert_eq!(shared(0, 1) && shared(3, 4) && shared(6, 7), share);
        assert!(!shared(0, 2) && !shared(3, 5) && !shared(0, 3) && !shared(3, 6));
        assert_eq!(index.get(slots[1]).unwrap().label("le"), Some("1"));
        assert_eq!(index.sets.table.len(), if share { 5 } else { 0 });
        index.remove_where(|s| s.name() == "h_bucket" || s.name() == "h_sum");
        // `g_bucket` and `h_count` keep theirs; `le="2"` and `i="b"` were theirs alone.
        assert_eq!(index.sets.table.len(), if share { 3 } else { 0 });
        assert_eq!(index.labels.table.len(), 2, "i=\"a\" and le=\"1\" are kept");
    }
}

#[test]
fn removed_slots_are_reused_and_lookups_stay_right() {
    let mut index = SeriesIndex::default();
    let slots: Vec<usize> = (0..100)
        .map(|i| insert(&mut index, &format!("s{{i=\"{i}\"}} 1")))
        .collect();
    assert_eq!(
        index.remove_where(|s| s.label("i").unwrap().parse::<u32>().unwrap() % 2 == 0),
        50
    );
    assert_eq!(index.len(), 50);
    assert_eq!(
        index.labels.table.len(),
        50,
        "labels of removed series are forgotten"
    );
    for (i, &slot) in slots.iter().enumerate() {
        let found = index.find_owned("s", &[("i", &i.to_string())]);
        assert_eq!(found, (i % 2 == 1).then_some(slot), "{i}");
    }
    assert_eq!(index.named(&["s"]).unwrap().slots.len(), 50);
    let reused = insert(&mut index, "t 1");
    assert!(reused < 100 && index.get(reused).unwrap().name() == "t");
    let again = insert(&mut index, "s{i=\"0\"} 1");
    let named = &index.named(&["s"]).unwrap().slots;
    assert!(named.windows(2).all(|w| w[0] < w[1]), "ascending: {named:?}");
    assert!(named.contains(&(again as u32)));
}

#[test]
fn names_come_back_to_their_own_entries_in_any_order() {
    let mut index = SeriesIndex::default();
    for (i, name) in ["a", "a", "b", "a", "vllm:x", "vllm_x", "b"]
        .into_iter()
        .enumerate()
    {
        insert(&mut index, &format!("{name}{{i=\"{i}\"}} 1"));
    }
    let slots = |index: &SeriesIndex, name: &str| index.named(&[name]).unwrap().slots.clone();
    assert_eq!(slots(&index, "a"), [0, 1, 3]);
    assert_eq!(slots(&index, "b"), [2, 6]);
    assert_eq!(
        (slots(&index, "vllm:x"), slots(&index, "vllm_x")),
        (vec![4], vec![5])
    );
    index.set_normalize_names(true);
    insert(&mut index, "vllm_x{i=\"7\"} 1");
    insert(&mut index, "vllm:x{i=\"8\"} 1");
    assert_eq!(slots(&index, "vllm:x"), [4, 5, 7, 8]);
    assert_eq!(index.names().len(), 3);
}

#[test]
fn normalizing_names_rekeys_the_index() {
    let mut index = SeriesIndex::default();
    let slot = insert(&mut index, "vllm:x 1");
    let other = insert(&mut index, "vllm_x{a=\"1\"} 1");
    assert_eq!(index.find_owned("vllm_x", &[]), None);
    assert_eq!(index.named(&["vllm_x"]).unwrap().slots, [other as u32]);
    index.set_normalize_names(true);
    assert_eq!(index.find_owned("vllm_x", &[]), Some(slot));
    assert_eq!(index.find_owned("vllm:x", &[]), Some(slot));
    assert_eq!(
        index.named(&["vllm_x"]).unwrap().slots,
        [slot as u32, other as u32]
    );
    assert_eq!(index.names().len(), 1);
}
