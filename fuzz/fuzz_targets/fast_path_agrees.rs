//! Arbitrary lines: whatever the fast sample and metadata paths accept, the general paths
//! (nom for metadata, the lexer for samples) read identically, under arbitrary limits and
//! with arbitrary names remembered from "earlier lines".
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[labels, name_length, value_length, split, split2], rest)) = data.split_first_chunk::<5>()
    else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    // The remembered names are prefixes of the input: the shapes that make them match.
    let cut = |n: u8| {
        let mut at = usize::from(n).min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        &text[..at]
    };
    let (name, label) = (cut(split), cut(split2));
    let label = label.rsplit(['{', ',']).next().unwrap_or("");
    let limit = |byte: u8| {
        if byte == u8::MAX {
            usize::MAX
        } else {
            usize::from(byte)
        }
    };
    promrate::fuzzing::fast_paths_agree(
        text,
        name,
        &[label],
        limit(labels),
        limit(name_length),
        limit(value_length),
    );
});
