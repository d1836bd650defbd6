//! Whatever parses, written back with `text::write`, parses to the same samples: names,
//! unescaped label sets (in order), value bits and timestamps.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promrate::text::write;

type Row = (String, Vec<(String, String)>, u64, Option<i64>);

fn rows(text: &str) -> Vec<Row> {
    promrate::parse(text)
        .filter_map(|e| e.ok()?.into_sample())
        .map(|s| {
            // Names as they read, not as they were written: a quoted name may hold escapes
            // (text 1.0.0), which the writer writes again.
            let labels = s
                .labels()
                .iter_unescaped()
                .map(|(k, v)| (k.into_owned(), v.unescaped().into_owned()))
                .collect();
            let bits = if s.value().is_nan() {
                f64::NAN.to_bits()
            } else {
                s.value().to_bits()
            };
            (s.name_unescaped().into_owned(), labels, bits, s.timestamp_ms())
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = rows(text);
    let mut written = String::new();
    for (name, labels, bits, timestamp_ms) in &parsed {
        write::sample(&mut written, name, labels, f64::from_bits(*bits), *timestamp_ms)
            .expect("writing to a String");
    }
    let again = rows(&written);
    assert_eq!(parsed, again, "written back as {written:?}");
});
