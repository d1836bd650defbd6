//! Any bytes through the Prometheus text parser: no panic, errors inside the input, and
//! every sample's labels replay (iterate, look up, unescape) without failing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for strict in [true, false] {
        let parser = promrate::Parser::new(promrate::Format::PrometheusText).strict(strict);
        check(text, parser);
    }
});

fn check(text: &str, parser: promrate::Parser) {
    let lines = text.split('\n').count();
    for entry in parser.parse(text) {
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
            }
            Ok(_) => {}
            Err(e) => assert!(e.line >= 1 && e.line <= lines && e.column >= 1),
        }
    }
}
