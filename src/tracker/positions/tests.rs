use super::*;

#[test]
fn common_ends_are_counted_word_by_word_as_byte_by_byte() {
    let naive_prefix = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let naive_suffix = |a: &[u8], b: &[u8]| {
        a.iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count()
    };
    let base = b"requests_total{instance=\"vllm-00042:8000\",job=\"api\",route=\"/v1/r7\"}";
    for cut in 0..base.len() {
        for change in 0..base.len() {
            let a = &base[..];
            let mut b = base[cut..].to_vec();
            if let Some(byte) = b.get_mut(change) {
                *byte ^= 1;
            }
            for (a, b) in [(a, &b[..]), (&b[..], a), (&a[..cut], a)] {
                assert_eq!(common_prefix(a, b), naive_prefix(a, b), "{cut} {change}");
                assert_eq!(common_suffix(a, b), naive_suffix(a, b), "{cut} {change}");
            }
        }
    }
}

/// Looks up and stores a page's keys in order, as the tracker does; returns the hits.
fn scrape(cache: &mut PositionCache, keys: &[String]) -> usize {
    let mut anchor = "";
    let mut hits = 0;
    for (position, key) in keys.iter().enumerate() {
        let target = Target::Series(key.len() % 7 + key.bytes().map(usize::from).sum::<usize>());
        match cache.lookup(position, key, anchor, 0) {
            Some(found) => {
                assert_eq!(found, target, "{key}");
                hits += 1;
            }
            None => cache.store(position, key, anchor, true, target, 0),
        }
        if cache.is_anchor(position) {
            anchor = key;
        }
    }
    hits
}

#[test]
fn keys_are_replaced_and_compacted_without_mixing_positions() {
    let mut cache = PositionCache::default();
    let page = |round: u64| -> Vec<String> {
        (0..20)
            .map(|position| format!("series_{position}{{round=\"{}\"}}", round % 3))
            .collect()
    };
    for round in 0..50u64 {
        let keys = page(round);
        scrape(&mut cache, &keys);
        assert_eq!(scrape(&mut cache, &keys), 20, "every key known on a repeat");
    }
    assert!(
        cache.keys.len() <= 3 * 20 * 24,
        "garbage is compacted: {}",
        cache.keys.len()
    );
    assert_eq!(
        cache.lookup(3, "series_4{round=\"1\"}", "series_2{round=\"1\"}", 0),
        None
    );
}

#[test]
fn front_coding_stores_what_differs_and_notices_a_changed_neighbour() {
    let mut cache = PositionCache::default();
    let keys: Vec<String> = (0..100)
        .map(|i| format!("tokens_total{{instance=\"host-{i:04}:8000\"}}"))
        .collect();
    scrape(&mut cache, &keys);
    // Each key after the first stores what follows `host-0` or more: at most 11 bytes.
    assert!(
        cache.keys.len() <= keys[0].len() + 99 * 11,
        "{} bytes",
        cache.keys.len()
    );
    assert_eq!(scrape(&mut cache, &keys), 100);
    // A key in the run changes: only it misses.
    let mut changed = keys.clone();
    changed[10] = "tokens_total{instance=\"host-0010:8001\"}".to_string();
    assert_eq!(scrape(&mut cache, &changed), 99);
    assert_eq!(scrape(&mut cache, &changed), 100);
    // The anchor changes: the run coded against it is stored again, and is right.
    changed[0] = "other_total{a=\"b\"}".to_string();
    assert_eq!(scrape(&mut cache, &changed), 0);
    assert_eq!(scrape(&mut cache, &changed), 100);
    // Back: 0 and 10 differ; 1 had become an anchor of its own, so its run holds.
    assert_eq!(scrape(&mut cache, &keys), 98);
    // A page that ends right after a replaced anchor leaves its run unusable.
    let mut fresh = PositionCache::default();
    scrape(&mut fresh, &keys);
    scrape(&mut fresh, &changed[..1]);
    assert_eq!(scrape(&mut fresh, &keys), 0, "nothing is mixed up");
    assert_eq!(scrape(&mut fresh, &keys), 100);
}

#[test]
fn an_entry_is_16_bytes() {
    assert_eq!(std::mem::size_of::<Entry>(), 16);
}

fn created(series: [Option<u32>; 3]) -> Target {
    Target::Created(CreatedFor {
        series,
        buckets: None,
    })
}

#[test]
fn created_targets_are_resolved_again_after_an_insertion() {
    let mut cache = PositionCache::default();
    cache.store(0, "x_created", "", true, created([None, Some(1), None]), 7);
    assert!(cache.lookup(0, "x_created", "", 7).is_some());
    assert!(cache.lookup(0, "x_created", "", 8).is_none());
    cache.store(25, "late", "x", false, Target::Ignored, 0);
    assert_eq!(cache.lookup(24, "", "", 0), None);
    assert_eq!(cache.lookup(25, "late", "x", 0), Some(Target::Ignored));
    // Recognised at a line's start: the same bytes, then a space.
    assert_eq!(
        cache.known_prefix(0, "x_created 5\n", "", 7).map(|k| k.0),
        Some(9)
    );
    assert_eq!(
        cache.known_prefix(0, "x_created 5\n", "", 8),
        None,
        "to be resolved again"
    );
    assert_eq!(cache.known_prefix(0, "x_createdx 5\n", "", 7), None);
    assert_eq!(cache.known_prefix(0, "x_created{a=\"1\"} 5\n", "", 7), None);
    assert_eq!(
        cache.known_prefix(25, "late 1\n", "x", 0),
        None,
        "not stored as a line start"
    );
    for _ in 0..100 {
        cache.store(0, "x_created", "", true, created([Some(2), Some(1), None]), 9);
    }
    assert!(cache.created.len() < 60, "replaced created targets are compacted");
    assert_eq!(
        cache.lookup(0, "x_created", "", 9),
        Some(created([Some(2), Some(1), None]))
    );
}
