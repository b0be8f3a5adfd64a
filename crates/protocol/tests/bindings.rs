#![allow(clippy::unwrap_used)]
//! Fails when the checked-in TypeScript drifts from the Rust wire types.

use std::path::PathBuf;

fn checked_in_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/lib/ipc/types.gen.ts")
}

#[test]
fn typescript_bindings_match_checked_in_file() {
    let generated = nomos_protocol::typescript_bindings();
    let path = checked_in_path();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{} is out of date with crates/protocol; run `UPDATE_BINDINGS=1 cargo test -p nomos-protocol`",
        path.display()
    );
}

#[test]
fn status_serializes_snake_case() {
    let json = serde_json::to_string(&nomos_protocol::SessionStatus::Executing).unwrap();
    assert_eq!(json, "\"executing\"");
}
