//! Arbitrary page sequences (pages split at 0xFF bytes): a tracker that recognises lines it
//! has seen before parsing them records and reports exactly what one that parses every line
//! does.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let pages = common::page_sequence(rest, 8);
    promrate::fuzzing::tracker_line_recognition_agrees(
        &pages,
        flags & 1 == 1,
        flags & 2 == 2,
        u32::from(flags >> 6) + 1,
    );
});
