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
