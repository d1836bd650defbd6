//! Arbitrary page sequences (pages split at 0xFF bytes), each read whole by one tracker
//! and in chunks cut at arbitrary offsets by another: both record and report the same.
#![no_main]

use libfuzzer_sys::fuzz_target;

mod common;

fuzz_target!(|data: &[u8]| {
    // Two bytes of settings, a count of cuts (up to 8), two bytes per cut, then the pages.
    let Some((&[low, high, count], rest)) = data.split_first_chunk::<3>() else {
        return;
    };
    let count = usize::from(count % 9);
    let Some((cuts, rest)) = rest.split_at_checked(2 * count) else {
        return;
    };
    let cuts: Vec<usize> = cuts
        .chunks_exact(2)
        .map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])))
        .collect();
    let pages = common::page_sequence(rest, 6);
    promrate::fuzzing::tracker_chunks_agree(&pages, &cuts, u16::from_le_bytes([low, high]));
});
