#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The four places that name an IPC command agree: the permissions `build.rs` generates, the
//! capability that grants them to the window, the handler the shell registers and the
//! TypeScript wrappers the UI calls. Adding a command is one handler plus these lines; a
//! command missing from one of them fails here, not at run time in the webview.

use std::collections::BTreeSet;
use std::path::PathBuf;

fn read(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("`{start}` not found"))
        + start.len();
    let to = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("`{end}` not found"))
        + from;
    &text[from..to]
}

fn quoted(text: &str) -> BTreeSet<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn build_rs() -> BTreeSet<String> {
    quoted(between(
        &read("build.rs"),
        "const COMMANDS: &[&str] = &[",
        "];",
    ))
}

fn capability() -> BTreeSet<String> {
    let json: serde_json::Value = serde_json::from_str(&read("capabilities/main.json")).unwrap();
    json["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
        .map(|p| p.replace('-', "_"))
        .collect()
}

fn handler() -> BTreeSet<String> {
    between(&read("src/commands.rs"), "tauri::generate_handler![", "]")
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn ui_wrappers() -> BTreeSet<String> {
    let ts = read("../ui/src/lib/ipc/index.ts");
    let api = between(&ts, "export const ipc = {", "\n};");
    api.split("call<")
        .skip(1)
        .filter_map(|c| c.split_once(">('").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once('\''))
        .map(|(name, _)| name.to_owned())
        .collect()
}

#[test]
fn every_ipc_command_is_named_the_same_in_all_four_places() {
    let generated = build_rs();
    assert!(generated.len() >= 20, "{generated:?}");
    assert_eq!(
        capability(),
        generated,
        "capabilities/main.json vs build.rs"
    );
    assert_eq!(handler(), generated, "generate_handler! vs build.rs");
    assert_eq!(
        ui_wrappers(),
        generated,
        "ui/src/lib/ipc/index.ts vs build.rs"
    );
}
