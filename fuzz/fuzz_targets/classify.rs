//! The command classifier on arbitrary UTF-8: never panics, and every decision is
//! internally consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nomos_policy::{Class, classify};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let d = classify(text);
    // One of the three classes, and fail-closed decisions are destructive.
    assert!(Class::ALL.contains(&d.class));
    assert!(!d.unknown || d.class == Class::Destructive);
    // The class is the maximum of the findings; an unknown finding makes the decision unknown.
    let max = d
        .findings
        .iter()
        .map(|f| f.class)
        .max()
        .unwrap_or(Class::ReadOnly);
    assert_eq!(d.class, max, "{text:?}");
    assert!(
        !d.findings.iter().any(|f| f.unknown) || d.unknown,
        "{text:?}"
    );
    // What the executor would run must classify no lower than the original.
    if let Some(c) = &d.canonical
        && !d.unknown
    {
        assert!(classify(c).class >= d.class, "{text:?} -> {c:?}");
    }
});
