//! Live mode end to end: the model comes from the environment (here the scripted server,
//! pointed at through `NOMOS_LLM_BASE_URL` exactly as a real endpoint would be, in an
//! environment map instead of the process's), and a change
//! the operator approves runs inside the throwaway sandbox, so this workstation is untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use nomos_eval::{Mode, Options, run_paths_in};
use nomos_mock_llm::{MockServer, Script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_models_approved_change_runs_in_the_sandbox_and_changes_nothing_here() {
    let dir = tempfile::tempdir().unwrap();
    // Outside /tmp, which the sandbox replaces with its own: a write here would be visible.
    let probe_dir = tempfile::Builder::new()
        .prefix("nomos-live-probe")
        .tempdir_in("/var/tmp")
        .unwrap();
    let probe = probe_dir.path().join("written-by-the-model");
    let command = format!("touch {}", probe.display());

    let script: Script = serde_yaml_ng::from_str(&format!(
        "replies:
  - kind: tool_calls
    calls:
      - name: propose_plan
        arguments: {{steps: [{{title: Mark this machine, target: \"host:local\"}}]}}
  - kind: tool_calls
    calls:
      - {{name: run, arguments: {{target: \"host:local\", command: \"{command}\", reason: mark, step: 1}}}}
  - kind: text
    text: I tried to mark this machine.
fallback: {{kind: text, text: Nothing more to do.}}
"
    ))
    .unwrap();
    let server = MockServer::start(script).await.unwrap();
    let env = nomos_llm::MapEnv::from_pairs([
        ("NOMOS_LLM_BASE_URL", server.base_url()),
        ("NOMOS_LLM_MODEL", "mock".to_owned()),
        ("NOMOS_LLM_PROVIDER", "openai".to_owned()),
        ("NOMOS_LLM_API_KEY", "sk-live-sandbox-test".to_owned()),
    ]);

    let manifest = dir.path().join("live.yaml");
    std::fs::write(
        &manifest,
        format!(
            "name: live-sandbox
turns:
  - say: mark this machine
  - approve_plan
assert:
  - ran: \"{command}\"
  - min_executions: 1
"
        ),
    )
    .unwrap();
    let report = run_paths_in(
        &[manifest],
        Options {
            mode: Mode::Live,
            repeat: 1,
            all_replies_used: false,
        },
        &env,
    )
    .await
    .unwrap();
    println!("{}", report.table());
    assert!(report.passed, "{}", report.table());
    assert!(server.request_count() >= 2, "the live path asked the model");
    assert!(
        !probe.exists(),
        "the approved change ran outside the sandbox and wrote {}",
        probe.display()
    );
    server.shutdown().await;
}
