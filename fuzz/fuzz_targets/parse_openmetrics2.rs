//! Any bytes through the OpenMetrics 2.0 parser (see `common::check_page`); every accepted
//! sample's composite value and exemplars read back without failing, and the line
//! `Sample::write_openmetrics2` renders parses back to the same sample.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use promrate::{Format, Parser};

fuzz_target!(|data: &[u8]| {
    common::check_page(data, Format::OpenMetrics2);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for sample in Parser::new(Format::OpenMetrics2)
        .parse(text)
        .filter_map(|e| e.ok()?.into_sample())
    {
        let mut line = String::new();
        sample.write_openmetrics2(&mut line).unwrap();
        line.push_str("# EOF\n");
        // Lenient: one line alone has no `# TYPE`, and the rules across lines are not at stake.
        let again = Parser::new(Format::OpenMetrics2)
            .strict(false)
            .parse(&line)
            .next();
        let again = again.and_then(|e| e.ok()?.into_sample());
        let again = again.unwrap_or_else(|| panic!("{line:?} does not read back"));
        assert_eq!(common::facts(&again), common::facts(&sample), "{line:?}");
    }
});
