//! Shared by the fuzz targets: what every page-parser target checks (no panic, every error
//! inside the input, and every sample's labels and exemplar replay without failing, in
//! strict and lenient mode), and how the tracker targets cut their input into pages.

#[allow(dead_code)] // The tracker targets use `page_sequence` only.
pub fn check_page(data: &[u8], format: promrate::Format) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.split('\n').count();
    for strict in [true, false] {
        for entry in promrate::Parser::new(format).strict(strict).parse(text) {
            match entry {
                Ok(promrate::Entry::Sample(s)) => {
                    let mut count = 0;
                    for (name, value) in s.labels() {
                        count += 1;
                        assert!(s.labels().get(name).is_some());
                        let unescaped = value.unescaped();
                        assert!(value == &*unescaped);
                    }
                    assert_eq!(count, s.labels().len());
                    let _ = s.timestamp();
                    if let Some(ex) = s.exemplar() {
                        assert_eq!(ex.labels().iter().count(), ex.labels().len());
                    }
                }
                Ok(_) => {}
                Err(e) => assert!(e.line >= 1 && e.line <= lines && e.column >= 1),
            }
        }
    }
}

/// Everything a sample says, floats by their bits, for comparing two readings of it (and
/// reading every composite field and exemplar on the way).
#[allow(dead_code)]
pub fn facts(s: &promrate::Sample<'_>) -> String {
    let bits = |v: f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
    let mut out = format!("{:?}", s.name_unescaped());
    for (name, value) in s.labels().iter_unescaped() {
        out += &format!(" {name:?}={:?}", value.unescaped());
    }
    out += &format!(
        " v={} t={:?} st={:?}",
        bits(s.value()),
        s.timestamp_ms(),
        s.start_timestamp_ms()
    );
    if let Some(c) = s.composite() {
        out += &format!(" {:?} count={} sum={}", c.kind(), bits(c.count()), bits(c.sum()));
        for (a, b) in c
            .buckets()
            .into_iter()
            .flatten()
            .chain(c.quantiles().into_iter().flatten())
        {
            out += &format!(" {}:{}", bits(a), bits(b));
        }
        if let Some(n) = c.native() {
            out += &format!(
                " schema={} zt={} zc={}",
                n.schema(),
                bits(n.zero_threshold()),
                bits(n.zero_count())
            );
            out += &format!(
                " {:?} {:?}",
                n.negative_spans().collect::<Vec<_>>(),
                n.positive_spans().collect::<Vec<_>>()
            );
            for b in n.negative_buckets().chain(n.positive_buckets()) {
                out += &format!(" {}", bits(b));
            }
        }
    }
    // Labels as they mean, not as written: a writer spells an escape one way (an unknown
    // escape such as `\q`, kept as it is when read, is written `\\q`).
    for e in s.exemplars() {
        out += " #";
        for (name, value) in e.labels().iter_unescaped() {
            out += &format!(" {name:?}={:?}", value.unescaped());
        }
        out += &format!(" {} {:?}", bits(e.value()), e.timestamp_ms());
    }
    out
}

/// The pages of a tracker target's input: split at 0xFF bytes, the UTF-8 ones kept (at
/// most `most`), each stamped 1, 3, 5, ... seconds after the target's epoch.
#[allow(dead_code)] // The page-parser targets use `check_page` only.
pub fn page_sequence(data: &[u8], most: usize) -> Vec<(&str, i64)> {
    data.split(|&b| b == 0xFF)
        .filter_map(|page| std::str::from_utf8(page).ok())
        .zip((1..).step_by(2))
        .take(most)
        .collect()
}
