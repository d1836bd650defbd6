//! Any text through the name escaping schemes: no panic; every scheme but `allow-utf-8`
//! writes a name the legacy characters spell; `values` reads back what it wrote (below
//! U+100000, and but for a legacy name that starts with `U__`, as prometheus/common reads
//! them), and leaves a name without `U__` as it is.
#![no_main]

use libfuzzer_sys::fuzz_target;
use promrate::text::Escaping;

fuzz_target!(|data: &[u8]| {
    let Ok(name) = std::str::from_utf8(data) else {
        return;
    };
    let legacy = |n: &str| {
        let mut chars = n.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    };
    for scheme in [
        Escaping::AllowUtf8,
        Escaping::Underscores,
        Escaping::Dots,
        Escaping::Values,
    ] {
        let escaped = scheme.escape(name);
        let applied = scheme.apply(name);
        let _ = scheme.unescape(name);
        if scheme != Escaping::AllowUtf8 && !name.is_empty() {
            assert!(legacy(&escaped), "{scheme} {name:?} -> {escaped:?}");
            assert!(legacy(&applied), "{scheme} {name:?} -> {applied:?}");
        }
    }
    let escaped = Escaping::Values.escape(name);
    // A name that needs no escape is written as it is, so one that starts with `U__`
    // reads back as escaped (as prometheus/common reads it).
    let kept_as_is = legacy(name) && name.starts_with("U__");
    if name.chars().all(|c| u32::from(c) < 0x10_0000) && !kept_as_is {
        assert_eq!(Escaping::Values.unescape(&escaped), name);
    }
    if !name.starts_with("U__") {
        assert_eq!(Escaping::Values.unescape(name), name);
    }
});
