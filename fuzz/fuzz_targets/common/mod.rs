//! What every page-parser target checks: no panic, every error inside the input, and every
//! sample's labels (and exemplar) replay without failing, in strict and lenient mode.

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
