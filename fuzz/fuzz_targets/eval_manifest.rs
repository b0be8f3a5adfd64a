//! The eval manifest parser on arbitrary text: never panics, and a refusal is one of the
//! two typed parse errors naming the file (never an I/O or run-time error).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use nomos_eval::{EvalError, Manifest};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.yaml");
    match Manifest::parse(text, path) {
        Ok(m) => {
            // Parsing is deterministic: the same text gives the same manifest name.
            let again = Manifest::parse(text, path);
            assert!(matches!(again, Ok(ref n) if n.name == m.name), "{text:?}");
        }
        Err(EvalError::Parse { path: p, message }) => {
            assert_eq!(p, path);
            assert!(!message.is_empty());
        }
        Err(EvalError::Invalid { message, .. }) => assert!(!message.is_empty()),
        Err(other) => panic!("untyped refusal {other:?} for {text:?}"),
    }
});
