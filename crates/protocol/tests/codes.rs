#![allow(clippy::unwrap_used)]
//! Every error code a crate can hand to a face is an `ErrorCode` variant: the UI switches on
//! the union, so a code missing from it would reach the operator as `internal.task_failed`.

use std::path::{Path, PathBuf};

use nomos_protocol::ErrorCode;

/// Crates whose errors reach the desktop or the CLI (not the classifier's rule ids, not the
/// eval harness, not the mock model).
const SOURCES: &[&str] = &[
    "crates/agent/src",
    "crates/auth/src",
    "crates/exec/src",
    "crates/llm/src",
    "crates/protocol/src",
    "crates/store/src",
    "src-tauri/src",
];
const DOMAINS: &[&str] = &[
    "agent",
    "auth",
    "exec",
    "internal",
    "inventory",
    "llm",
    "session",
    "settings",
    "store",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every string literal that looks like a dotted code of a known domain.
fn codes_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in text.split('"').skip(1).step_by(2) {
        let Some((domain, rest)) = piece.split_once('.') else {
            continue;
        };
        if DOMAINS.contains(&domain)
            && !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'.')
            // Sign-in states are statuses, not errors.
            && !piece.starts_with("auth.status.")
        {
            out.push(piece.to_owned());
        }
    }
    out
}

#[test]
fn every_code_a_crate_returns_is_an_error_code() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 40, "{}", files.len());
    let mut seen = 0;
    let mut missing = Vec::new();
    for f in &files {
        for code in codes_in(&std::fs::read_to_string(f).unwrap()) {
            seen += 1;
            if ErrorCode::parse(&code).is_none() {
                missing.push(format!("{code} ({})", f.display()));
            }
        }
    }
    assert!(seen > 100, "{seen}");
    assert!(missing.is_empty(), "add these to ErrorCode: {missing:#?}");
}

#[test]
fn codes_round_trip_through_their_wire_text() {
    for code in ErrorCode::ALL {
        assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
        let json = serde_json::to_string(code).unwrap();
        assert_eq!(json, format!("\"{}\"", code.as_str()));
        assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), *code);
    }
    assert_eq!(
        ErrorCode::from_code("no.such_code"),
        ErrorCode::InternalTaskFailed
    );
    assert!(ErrorCode::LlmRateLimited.retryable());
    assert!(!ErrorCode::StoreSchemaTooNew.retryable());
}
