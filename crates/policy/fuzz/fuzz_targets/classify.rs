//! `cargo +nightly fuzz run classify`: arbitrary bytes must never panic, and every
//! decision must be internally consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nomos_policy::{Class, classify};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let d = classify(text);
    // Fail-closed decisions are destructive; the class is the maximum of the findings.
    assert!(!d.unknown || d.class == Class::Destructive);
    let max = d.findings.iter().map(|f| f.class).max().unwrap_or(Class::ReadOnly);
    assert_eq!(d.class, max);
    // What the executor would run must classify no lower than the original.
    if let Some(c) = &d.canonical
        && !d.unknown
    {
        assert!(classify(c).class >= d.class, "{text:?} -> {c:?}");
    }
});
