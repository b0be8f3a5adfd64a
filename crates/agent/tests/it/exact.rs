//! I22: what runs is byte for byte the text that was classified and approved. The store keeps a
//! redacted display copy; every path that runs a command (a fresh run, a config change inside
//! the window, the approval card, an approval after a restart) runs the exact text or nothing.
//! A command the classifier cannot give a canonical form is refused.

use std::path::{Path, PathBuf};

use nomos_mock_llm::{Expect, Reply, ScriptedCall, Step};
use nomos_store::{CommandClass, ExecStatus};
use serde_json::json;

use crate::support::*;

/// A directory with a file whose name holds a secret-looking value and decoys a redacted
/// copy of that name would hit (`[REDACTED]` as a glob matches `R`, `E`, …).
struct Files {
    dir: PathBuf,
}

impl Files {
    fn new(h: &Harness) -> Self {
        let dir = h.dir.path().join("files");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("password=abcdef"), "EXACT-FILE\n").unwrap();
        for decoy in ["R", "E", "D", "A", "C", "T"] {
            std::fs::write(dir.join(format!("password={decoy}")), "DECOY-FILE\n").unwrap();
        }
        std::fs::write(dir.join("password=[REDACTED]"), "DECOY-FILE\n").unwrap();
        Self { dir }
    }

    /// `cmd` run in the directory: the file name stands alone as a word, where the masker
    /// redacts `password=…` (inside a path it is left as it is).
    fn in_dir(&self, cmd: &str) -> String {
        format!("cd {} && {cmd}", self.dir.display())
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn exists(&self, name: &str) -> bool {
        Path::new(&self.path(name)).exists()
    }

    fn decoys_intact(&self) -> bool {
        ["R", "E", "D", "A", "C", "T", "[REDACTED]"]
            .iter()
            .all(|d| self.exists(&format!("password={d}")))
    }
}

/// The display copy really is redacted: otherwise the test proves nothing.
fn assert_display_copy_redacted(row: &nomos_store::Execution) {
    assert!(
        row.canonical.contains(nomos_store::REDACTED) && !row.canonical.contains("abcdef"),
        "the stored copy is a redacted display copy: {row:?}"
    );
}

/// A read-only command whose output is the length of the text it was given: 15 for the exact
/// `password=abcdef`, 19 for the redacted `password=[REDACTED]`.
fn count_chars(value: &str) -> String {
    format!("printf %s password={value} | wc -c")
}

#[tokio::test]
async fn i22_a_fresh_read_only_run_runs_the_exact_text() {
    let h = Harness::new(vec![
        plan(&[("Count", "host:local")]),
        run_step(&count_chars("abcdef"), 1),
        text("Counted.").expect(Expect::LastToolResultContains("exit 0".into())),
    ])
    .await;
    let session = h.agent.send(None, "count it").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    let row = &h.store().executions(session).unwrap()[0];
    assert_eq!(row.class, CommandClass::ReadOnly, "{row:?}");
    assert_display_copy_redacted(row);
    assert_eq!(row.stdout.trim(), "15", "{row:?}");
    // The stored decision is a display copy too.
    let decision = serde_json::to_string(&row.decision).unwrap();
    assert!(!decision.contains("abcdef"), "{decision}");
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i22_an_approved_card_runs_the_exact_text_not_the_redacted_copy() {
    for approve in ["button", "cli"] {
        let h = Harness::new(Vec::new()).await;
        let f = Files::new(&h);
        h.server.push(plan(&[("Remove the file", "host:local")]));
        h.server
            .push(run_step(&f.in_dir("rm -f password=abcdef"), 1));
        h.server
            .push(text("Removed.").expect(Expect::LastUserContains("Background execution".into())));
        let session = h.agent.send(None, "remove it").await.unwrap();
        h.agent.send(Some(session), "yes").await.unwrap();
        let row = h.store().executions(session).unwrap()[0].clone();
        assert_eq!(row.class, CommandClass::Destructive);
        assert_eq!(row.status, ExecStatus::AwaitingApproval);
        assert_display_copy_redacted(&row);
        // The desktop button and the CLI's `y` both call approve_execution.
        h.agent.approve_execution(row.id).await.unwrap();
        let done = h.wait_continued(row.id).await;
        assert_eq!(done.exit_code, Some(0), "{approve}: {done:?}");
        assert!(
            !f.exists("password=abcdef"),
            "{approve}: the exact file is removed"
        );
        assert!(f.decoys_intact(), "{approve}: no other file was touched");
        h.assert_no_script_failures();
    }
}

#[tokio::test]
async fn i22_a_config_change_inside_the_window_runs_the_exact_text() {
    let h = Harness::new(Vec::new()).await;
    let f = Files::new(&h);
    let created = f.path("password=newvalue");
    h.server.push(plan(&[("Create the marker", "host:local")]));
    h.server
        .push(run_step(&f.in_dir("touch password=newvalue"), 1));
    h.server.push(text("Created."));
    let session = h.agent.send(None, "create it").await.unwrap();
    h.agent.send(Some(session), "go ahead").await.unwrap();
    let row = &h.store().executions(session).unwrap()[0];
    assert_eq!(row.class, CommandClass::ConfigMutation, "{row:?}");
    assert!(row.canonical.contains(nomos_store::REDACTED), "{row:?}");
    assert_eq!(row.exit_code, Some(0), "{row:?}");
    assert!(Path::new(&created).exists(), "the exact file was created");
    assert!(f.decoys_intact());
    assert!(
        !std::fs::read_dir(&f.dir).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("newvalue]")),
        "nothing named after the display copy"
    );
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i22_after_a_restart_a_card_whose_exact_text_is_gone_is_refused_and_a_plain_one_runs() {
    let mut h = Harness::new(Vec::new()).await;
    let f = Files::new(&h);
    std::fs::write(f.dir.join("plain-file"), "PLAIN\n").unwrap();
    let secret = f.in_dir("rm -f password=abcdef");
    let plain = f.in_dir("rm -f plain-file");
    h.server.push(plan(&[("Remove both", "host:local")]));
    h.server.push(Step::new(Reply::ToolCalls {
        text: String::new(),
        reasoning: None,
        calls: vec![
            ScriptedCall::new(
                "run",
                json!({"target": "host:local", "command": secret, "reason": "a", "step": 1}),
            ),
            ScriptedCall::new(
                "run",
                json!({"target": "host:local", "command": plain, "reason": "b", "step": 1}),
            ),
        ],
    }));
    let session = h.agent.send(None, "remove both").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    let rows = h.store().executions(session).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r.status == ExecStatus::AwaitingApproval)
    );
    assert_display_copy_redacted(&rows[0]);

    // Nomos restarts: the exact texts held in memory are gone.
    h.restart();
    h.server.push(
        text("I will ask to run it again.")
            .expect(Expect::LastUserContains("no longer held".into())),
    );
    let err = h.agent.approve_execution(rows[0].id).await.unwrap_err();
    assert_eq!(err.code(), "agent.exact_command_unavailable", "{err}");
    assert!(err.to_string().contains("restarted"), "{err}");
    let refused = h.store().get_execution(rows[0].id).unwrap();
    assert_eq!(refused.status, ExecStatus::Cancelled, "{refused:?}");
    assert!(
        f.exists("password=abcdef") && f.decoys_intact(),
        "nothing ran"
    );

    // A command with nothing redacted is its own exact text: the digest proves it.
    h.server
        .push(text("Removed.").expect(Expect::LastUserContains("Background execution".into())));
    h.agent.approve_execution(rows[1].id).await.unwrap();
    let done = h.wait_continued(rows[1].id).await;
    assert_eq!(done.exit_code, Some(0), "{done:?}");
    assert!(!f.exists("plain-file"));
    assert!(f.exists("password=abcdef") && f.decoys_intact());
    h.assert_no_script_failures();
}

#[tokio::test]
async fn i18_commands_differing_only_in_a_secret_are_different_runs() {
    let h = Harness::new(vec![
        plan(&[("Count both", "host:local")]),
        run_step(&count_chars("abcdef"), 1),
        run_step(&count_chars("abcdefghijkl"), 1)
            .expect(Expect::LastToolResultContains("15".into())),
        text("Both counted.").expect(Expect::LastToolResultContains("21".into())),
    ])
    .await;
    let session = h.agent.send(None, "count both").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();
    let rows = h.store().executions(session).unwrap();
    assert_eq!(rows.len(), 2, "the second command ran: {rows:?}");
    assert_eq!(rows[0].canonical, rows[1].canonical, "same display copy");
    assert_eq!(rows[1].stdout.trim(), "21");
    h.assert_no_script_failures();
}

/// Commands the classifier cannot lower at all: no canonical form.
fn commands_without_canonical_form() -> Vec<&'static str> {
    let candidates = [
        "echo 'unterminated",
        "ls \"/tmp",
        "if true; then ls",
        "ls )",
        "cat <<",
        "for x in; do",
        "ls ${",
        "echo $(ls",
    ];
    let out: Vec<&str> = candidates
        .into_iter()
        .filter(|c| nomos_policy::classify(c).canonical.is_none())
        .collect();
    assert!(
        out.len() >= 3,
        "too few commands without canonical form: {out:?}"
    );
    out
}

#[tokio::test]
async fn i22_a_command_with_no_canonical_form_is_refused_not_run_as_typed() {
    for command in commands_without_canonical_form() {
        let h = Harness::new(vec![
            plan(&[("Run it", "host:local")]),
            run_step(command, 1),
            text("Rewriting.").expect(Expect::LastToolResultContains(
                "could not be checked".into(),
            )),
        ])
        .await;
        let session = h.agent.send(None, "run it").await.unwrap();
        h.agent.send(Some(session), "yes").await.unwrap();
        let (result, is_error) = h.result_of(session, "run");
        assert!(is_error, "{command}: {result}");
        assert!(
            h.store().executions(session).unwrap().is_empty(),
            "{command}: no execution row, no card"
        );
        h.assert_no_script_failures();
    }
}
