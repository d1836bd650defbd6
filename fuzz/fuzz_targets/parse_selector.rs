//! Any text through the selector parser: no panic, errors point inside the text, and an
//! accepted selector matches a sample without panicking and renders back to a selector
//! that parses to the same matchers (in Prometheus' printed order, sorted) and renders the
//! same again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match promrate::Selector::parse(text) {
        Err(e) => assert!(e.column >= 1 && e.column <= text.chars().count() + 1),
        Ok(selector) => {
            let sample = promrate::parse("up{job=\"api\",path=\"a\\\"b\"} 1")
                .next()
                .unwrap()
                .unwrap();
            let _ = selector.matches(sample.as_sample().unwrap());
            let rendered = selector.to_string();
            let again = promrate::Selector::parse(&rendered).expect("rendered selector parses");
            let set = |s: &promrate::Selector| {
                let mut all: Vec<String> = s.matchers().iter().map(|m| format!("{m:?}")).collect();
                all.sort();
                all
            };
            assert_eq!(set(&again), set(&selector));
            assert_eq!(again.metric_name(), selector.metric_name());
            assert_eq!(again.to_string(), rendered);
        }
    }
});
