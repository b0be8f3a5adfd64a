//! Runs every golden manifest in the repository's `evals/` against the scripted model and
//! asserts they all pass: this is how `cargo test --workspace` runs the golden set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use nomos_eval::{Mode, Options, run_paths};

fn evals_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../evals")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_golden_manifest_passes_offline() {
    let report = run_paths(
        &[evals_dir()],
        Options {
            mode: Mode::Offline,
            repeat: 1,
            // Every scripted reply of the golden set is reached.
            all_replies_used: true,
        },
    )
    .await
    .expect("the manifests load");
    println!("{}", report.table());
    assert!(
        report.manifests.len() >= 15,
        "the golden set shrank: {} manifests",
        report.manifests.len()
    );
    assert!(report.passed, "golden evals failed:\n{}", report.table());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_report_is_machine_readable() {
    let path = evals_dir().join("plan-advances-on-proceed.yaml");
    let report = run_paths(&[path], Options::default()).await.unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["mode"], "offline");
    let m = &json["manifests"][0];
    assert_eq!(m["name"], "plan-advances-on-proceed");
    let assertions = m["assertions"].as_array().unwrap();
    assert!(
        assertions
            .iter()
            .all(|a| a["passed"].is_boolean() && a["reason"].is_string())
    );
    assert!(m["tool_calls"]["propose_plan"].as_u64().unwrap() >= 2);
}

/// Issue 16: with `all_replies_used`, a manifest whose scripted model has a reply the
/// conversation never reached fails; without it, the same manifest passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_scripted_reply_fails_when_every_reply_must_be_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unused.yaml");
    std::fs::write(
        &path,
        "name: unused\nturns:\n  - say: hello\nscript:\n  replies:\n    - kind: text\n      text: Hello.\n    - kind: text\n      text: Never asked for.\nassert:\n  - no_empty_bubble\n",
    )
    .unwrap();
    let lax = run_paths(std::slice::from_ref(&path), Options::default())
        .await
        .unwrap();
    assert!(lax.passed, "{}", lax.table());
    let strict = run_paths(
        &[path],
        Options {
            all_replies_used: true,
            ..Options::default()
        },
    )
    .await
    .unwrap();
    assert!(!strict.passed, "{}", strict.table());
    assert!(
        strict.table().contains("1 reply(ies) left unused"),
        "{}",
        strict.table()
    );
}

/// Issue 16: two assertions that read alike are two rows of the report, each with its own
/// verdict; before, the second was folded into the first and its failure hidden or misfiled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assertions_with_the_same_label_are_reported_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twins.yaml");
    std::fs::write(&path, TWINS).unwrap();
    let report = run_paths(&[path], Options::default()).await.unwrap();
    let rows = &report.manifests[0].assertions;
    let twins: Vec<_> = rows
        .iter()
        .filter(|a| a.assertion.starts_with("tool_refused run"))
        .collect();
    assert_eq!(twins.len(), 2, "{}", report.table());
    assert_eq!(twins[0].assertion, "tool_refused run");
    assert_eq!(twins[1].assertion, "tool_refused run #2");
    assert!(twins[0].passed, "{}", report.table());
    assert!(!twins[1].passed, "{}", report.table());
    assert!(!report.passed);
}

/// A run before any plan is refused (I1): the first twin finds that refusal, the second asks
/// for a text no refusal contains.
const TWINS: &str = "name: twins
turns:
  - say: check the kernel
script:
  replies:
    - kind: tool_calls
      calls:
        - {name: run, arguments: {target: \"host:local\", command: uname -s, reason: kernel}}
  fallback: {kind: text, text: I need a plan first.}
assert:
  - tool_refused: {tool: run, contains: Refused}
  - tool_refused: {tool: run, contains: no refusal says this}
  - no_run
";
