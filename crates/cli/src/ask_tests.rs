#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `nomos ask`: prompts, the event lines, and the whole follow loop against the real agent
//! and the scripted model.

use nomos_protocol::{CommandClass, ExecStatus, Message, PlanStep, Role, StepStatus, ToolCall};

use super::*;
use crate::term::tests::hostile_samples;

/// Every event that carries text from a model, a command or a host, with `h` in each text.
fn events_carrying(h: &str) -> Vec<AgentEvent> {
    let message = |role| Message {
        id: 1,
        role,
        text: format!("note {h}"),
        pending: false,
        auto: false,
        error: None,
        tool_calls: Vec::new(),
        created_at_ms: 0,
    };
    vec![
        AgentEvent::TextDelta {
            session_id: 1,
            message_id: 1,
            delta: format!("Running the read-only check{h}[1A[2K$ ls"),
        },
        AgentEvent::Message {
            session_id: 1,
            message: message(Role::System),
        },
        AgentEvent::Message {
            session_id: 1,
            message: message(Role::Assistant),
        },
        AgentEvent::ModelRetrying {
            session_id: 1,
            message_id: 1,
            attempt: 2,
            max_attempts: 3,
            delay_ms: 0,
            code: "llm.protocol".into(),
            notice: format!("unreadable reply{h} — retrying (2/3)"),
        },
        AgentEvent::ToolCall {
            session_id: 1,
            message_id: 1,
            call: ToolCall {
                call_id: "c".into(),
                name: format!("run{h}"),
                arguments: format!("{{\"command\":\"rm -rf /{h}\"}}"),
                result: None,
                is_error: false,
            },
        },
        AgentEvent::ToolResult {
            session_id: 1,
            message_id: 1,
            call_id: "c".into(),
            name: "run".into(),
            result: format!("stdout: {h}owned"),
            is_error: false,
        },
        AgentEvent::Plan {
            session_id: 1,
            steps: vec![PlanStep {
                id: 1,
                generation: 1,
                seq: 1,
                title: format!("Read the logs{h}"),
                detail: None,
                target: Some(format!("host:web{h}")),
                status: StepStatus::Pending,
                note: None,
            }],
        },
        AgentEvent::TaskStatus {
            session_id: 1,
            status: SessionStatus::Done,
            outcome: None,
            summary: Some(format!("all fine{h}")),
            approval_open: false,
        },
        AgentEvent::Error {
            session_id: 1,
            code: nomos_protocol::ErrorCode::LlmProviderError,
            message: format!("provider said {h}"),
            retryable: false,
        },
    ]
}

fn restart(id: i64, attempt: u32) -> AgentEvent {
    AgentEvent::ModelRetrying {
        session_id: 1,
        message_id: id,
        attempt,
        max_attempts: 3,
        delay_ms: 500,
        code: "llm.idle_timeout".into(),
        notice: format!("no reply from the model for 2 min — retrying ({attempt}/3)"),
    }
}

#[test]
fn a_dash_reads_the_task_from_stdin_whatever_its_size() {
    // Past any argument limit (ARG_MAX is 2 MiB on Linux; one argument 128 KiB), with
    // newlines, quotes and UTF-8 kept as written.
    for body in [
        "check disks".to_owned(),
        "line one\nline \"two\"\n\tthree ✓".to_owned(),
        "x".repeat(3 * 1024 * 1024),
    ] {
        let got = task_text("-", &mut format!("{body}\n").as_bytes()).unwrap();
        assert_eq!(got, body);
    }
    // Any other argument is the task itself; stdin is not read.
    let mut untouched: &[u8] = b"ignored";
    assert_eq!(task_text("check -", &mut untouched).unwrap(), "check -");
    assert_eq!(untouched, b"ignored");
    // Nothing on stdin is an error, not an empty task.
    for empty in ["", "\n", "  \n\n"] {
        let e = task_text("-", &mut empty.as_bytes()).unwrap_err();
        assert_eq!(e.code(), "cli.io");
    }
}

#[test]
fn a_restart_is_announced_on_stderr_and_the_json_face_carries_it() {
    let (out, text) = trace(&restart(5, 2), false).unwrap();
    assert_eq!(out, Out::Stderr);
    assert_eq!(
        text,
        "· no reply from the model for 2 min — retrying (2/3)\n"
    );
    let (out, line) = trace(&restart(5, 2), true).unwrap();
    assert_eq!(out, Out::Stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["type"], "model_retrying");
    assert_eq!(v["message_id"], 5);
    assert_eq!(v["attempt"], 2);
}

#[test]
fn b3_no_event_prints_a_hostile_character_raw() {
    for (name, c) in hostile_samples() {
        let h = c.to_string();
        for event in events_carrying(&h) {
            for json in [false, true] {
                // Deltas are not printed in text mode (the finished message is).
                let Some((_, text)) = trace(&event, json) else {
                    assert!(
                        !json && matches!(event, AgentEvent::TextDelta { .. }),
                        "{event:?} printed nothing"
                    );
                    continue;
                };
                assert!(
                    !text.contains(c),
                    "{name} printed raw (json={json}) for {event:?}: {text:?}"
                );
            }
        }
    }
}

#[test]
fn b3_the_approval_prompt_shows_the_command_on_one_escaped_line() {
    for (name, c) in hostile_samples()
        .into_iter()
        .chain([("LF", '\n'), ("TAB", '\t')])
    {
        let e = Execution {
            id: 1,
            session_id: 1,
            call_id: None,
            target: format!("host:local{c}"),
            command: format!("rm -rf /srv{c}"),
            canonical: format!("rm -rf /srv{c}\u{1b}[2K\rRun `ls` (read-only)"),
            class: CommandClass::Destructive,
            reason: format!("rm deletes{c}"),
            status: ExecStatus::AwaitingApproval,
            approval: None,
            exit_code: None,
            duration_ms: None,
            stdout: String::new(),
            stderr: String::new(),
            created_at_ms: 0,
            generation: None,
            plan_step_id: None,
            error: None,
        };
        let prompt = describe(&e);
        assert!(!prompt.contains(c), "{name} printed raw: {prompt:?}");
        assert!(
            !prompt.contains('\u{1b}') && !prompt.contains('\r'),
            "{prompt:?}"
        );
        assert!(prompt.contains("rm -rf /srv"), "{prompt:?}");
    }
}

#[test]
fn a_command_card_is_approved_only_by_yes_and_a_denial_carries_the_reason() {
    for (input, want) in [
        ("y\n", Decision::Approve),
        ("yes\n", Decision::Approve),
        ("  Y \n", Decision::Approve),
        (
            "n\nnot on a Friday\n",
            Decision::Deny(Some("not on a Friday".into())),
        ),
        (
            "no\n  use the staging host  \n",
            Decision::Deny(Some("use the staging host".into())),
        ),
        ("\n\n", Decision::Deny(None)),
        ("nope\n", Decision::Deny(None)),
        ("yess\n\n", Decision::Deny(None)),
        ("", Decision::Deny(None)),
        ("ok\nwhy not\n", Decision::Deny(Some("why not".into()))),
    ] {
        let mut prompt = Vec::new();
        let got = read_decision("Approve `rm -rf /srv`?", &mut input.as_bytes(), &mut prompt);
        assert_eq!(got, want, "{input:?}");
        let prompt = String::from_utf8(prompt).unwrap();
        assert!(
            prompt.starts_with("Approve `rm -rf /srv`? [y/N] "),
            "{prompt}"
        );
        assert_eq!(
            prompt.contains("Reason for the model"),
            want != Decision::Approve && !input.is_empty(),
            "{input:?}: {prompt}"
        );
    }
}

#[test]
fn the_approval_prompt_names_class_and_reason() {
    for (class, word) in [
        (CommandClass::Destructive, "destructive"),
        (CommandClass::ConfigMutation, "a config change"),
    ] {
        let e = Execution {
            id: 1,
            session_id: 1,
            call_id: None,
            target: "host:web-01".into(),
            command: "systemctl restart nginx".into(),
            canonical: "systemctl restart nginx".into(),
            class,
            reason: "systemctl restart changes a service's state.".into(),
            status: ExecStatus::AwaitingApproval,
            approval: None,
            exit_code: None,
            duration_ms: None,
            stdout: String::new(),
            stderr: String::new(),
            created_at_ms: 0,
            generation: None,
            plan_step_id: None,
            error: None,
        };
        assert_eq!(
            describe(&e),
            format!(
                "Approve `systemctl restart nginx` on host:web-01? It is {word}: systemctl restart changes a service's state."
            )
        );
    }
}

/// `--json` is the event stream as it always was: one `serde_json` document per event,
/// whatever the face around it does.
#[test]
fn json_lines_are_the_events_unchanged() {
    for event in events_carrying("plain") {
        let (out, line) = trace(&event, true).unwrap();
        assert_eq!(out, Out::Stdout);
        assert_eq!(
            line,
            format!("{}\n", serde_json::to_string(&event).unwrap())
        );
        let back: AgentEvent = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(back, event);
    }
}

// ---- the follow loop against the real agent and the scripted model ---------------------

/// Answers approvals from a script and remembers what it was asked.
#[derive(Debug, Default)]
struct Scripted {
    plan: bool,
    command: Option<Decision>,
    asked: Vec<String>,
}

impl Operator for Scripted {
    async fn approve_plan(&mut self, question: String) -> bool {
        self.asked.push(question);
        self.plan
    }
    async fn approve_command(&mut self, question: String) -> Decision {
        self.asked.push(question);
        self.command.clone().unwrap_or(Decision::Deny(None))
    }
}

#[derive(Debug, Default)]
struct Captured {
    out: String,
    err: String,
}

impl Sink for Captured {
    fn write(&mut self, out: Out, text: &str) {
        match out {
            Out::Stdout => self.out.push_str(text),
            Out::Stderr => self.err.push_str(text),
        }
    }
}

async fn agent_for(server: &nomos_mock_llm::MockServer, home: &std::path::Path) -> Agent {
    let data = home.join("data");
    let store = Store::open_in_dir(&data).unwrap();
    let env = nomos_llm::MapEnv::from_pairs([
        ("HOME", home.display().to_string()),
        ("NOMOS_LLM_BASE_URL", server.base_url()),
        ("NOMOS_LLM_MODEL", "m".to_owned()),
        ("NOMOS_LLM_API_KEY", "test-key".to_owned()),
    ]);
    setup::assemble(
        store,
        &data,
        &setup::RuntimeSettings::default(),
        &env,
        None,
        AgentConfig::default(),
    )
    .unwrap()
}

/// Deny with a reason at the terminal: the face says so, and the model's next request
/// carries the reason (the script's `expect` fails the run otherwise).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_with_a_reason_reaches_the_model() {
    let home = tempfile::tempdir().unwrap();
    // A file in the test's own directory: the command is denied and never runs.
    let scratch = home.path().join("scratch.txt");
    let script = nomos_mock_llm::Script::from_yaml(&format!(
        r#"
replies:
  - kind: tool_calls
    calls:
      - {{name: set_goal, arguments: {{goal: Remove the scratch file}}}}
      - name: propose_plan
        arguments: {{steps: [{{title: Remove the scratch file, target: "host:local"}}]}}
  - kind: tool_calls
    expect: [{{last_user_contains: approved the plan}}]
    calls:
      - {{name: update_plan_step, arguments: {{seq: 1, status: running}}}}
      - {{name: run, arguments: {{target: "host:local", command: "rm -f {path}", reason: cleanup, step: 1}}}}
  - kind: tool_calls
    expect: [{{any_message_contains: "not on a Friday"}}]
    text: "Understood: the file **stays**."
    calls:
      - {{name: update_plan_step, arguments: {{seq: 1, status: skipped, note: the operator denied it}}}}
      - {{name: update_plan_step, arguments: {{seq: 2, status: skipped}}}}
      - {{name: complete_task, arguments: {{outcome: partial, summary: "Nothing removed: the operator denied it."}}}}
"#,
        path = scratch.display()
    ))
    .unwrap();
    let server = nomos_mock_llm::MockServer::start(script).await.unwrap();
    let agent = agent_for(&server, home.path()).await;
    let mut operator = Scripted {
        plan: true,
        command: Some(Decision::Deny(Some("not on a Friday".into()))),
        ..Scripted::default()
    };
    let mut sink = Captured::default();
    let opts = Options {
        mode: Mode::Face,
        approve_plan: false,
        style: Style::PLAIN,
    };
    let result = ask_with(
        &agent,
        None,
        "remove the scratch file",
        opts,
        &mut operator,
        &mut sink,
    )
    .await;
    assert!(
        server.failures().is_empty(),
        "{:?}\n{}",
        server.failures(),
        sink.out
    );
    assert!(result.is_ok(), "{result:?}\n{}{}", sink.out, sink.err);
    assert_eq!(operator.asked.len(), 2, "{:?}", operator.asked);
    assert!(
        operator.asked[0].starts_with("Approve plan v1 (2 steps)?"),
        "{:?}",
        operator.asked
    );
    let card = &operator.asked[1];
    assert!(
        card.contains("rm -f") && card.contains("destructive"),
        "{card}"
    );
    let out = &sink.out;
    for want in [
        "· Goal: Remove the scratch file",
        "Plan v1 (2 steps):",
        "You approved plan v1",
        "· destructive",
        "needs your approval: ",
        "You denied it: not on a Friday; not run.",
        "Understood: the file stays.",
        "Outcome:  done — partial",
        "Commands: 0 run, 1 not run",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    assert!(!out.contains("**") && !out.contains("STOP"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
    server.shutdown().await;
}

/// Without an answer (no terminal, no flag) the plan is not approved, nothing runs, and the
/// summary says how to approve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unapproved_plan_waits_and_the_summary_says_how_to_approve() {
    let home = tempfile::tempdir().unwrap();
    let script = nomos_mock_llm::Script::from_yaml(
        r#"
replies:
  - kind: tool_calls
    calls:
      - name: propose_plan
        arguments: {steps: [{title: Read the kernel, target: "host:local"}]}
"#,
    )
    .unwrap();
    let server = nomos_mock_llm::MockServer::start(script).await.unwrap();
    let agent = agent_for(&server, home.path()).await;
    let mut operator = Scripted::default();
    let mut sink = Captured::default();
    let opts = Options {
        mode: Mode::Face,
        approve_plan: false,
        style: Style::PLAIN,
    };
    let result = ask_with(
        &agent,
        None,
        "read the kernel",
        opts,
        &mut operator,
        &mut sink,
    )
    .await;
    let id = match result {
        Err(CliError::Unfinished(id, _)) => id,
        other => panic!("{other:?}"),
    };
    assert!(
        sink.out.contains(&format!(
            "plan v1 waits for your approval — approve with: nomos ask --session {id} \"go\""
        )),
        "{}",
        sink.out
    );
    assert!(!sink.out.contains("You approved"), "{}", sink.out);
    server.shutdown().await;
}

/// Approve at the terminal: the command runs and its output is shown under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_command_runs_and_its_output_is_shown() {
    let home = tempfile::tempdir().unwrap();
    // `eval` is not modelled by the classifier, so it needs a card; it only prints.
    let script = nomos_mock_llm::Script::from_yaml(
        r#"
replies:
  - kind: tool_calls
    calls:
      - name: propose_plan
        arguments: {steps: [{title: Print a word, target: "host:local"}]}
  - kind: tool_calls
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: running}}
      - {name: run, arguments: {target: "host:local", command: "eval echo approved-run", reason: print, step: 1}}
  - kind: tool_calls
    expect: [{any_message_contains: "approved-run"}]
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: done}}
      - {name: update_entity_attributes, arguments: {slug: "host:local", attributes: {printed: approved-run}}}
      - {name: update_plan_step, arguments: {seq: 2, status: done}}
      - {name: complete_task, arguments: {outcome: success, summary: "Printed it."}}
"#,
    )
    .unwrap();
    let server = nomos_mock_llm::MockServer::start(script).await.unwrap();
    let agent = agent_for(&server, home.path()).await;
    let mut operator = Scripted {
        plan: true,
        command: Some(Decision::Approve),
        ..Scripted::default()
    };
    let mut sink = Captured::default();
    let opts = Options {
        mode: Mode::Face,
        approve_plan: false,
        style: Style::PLAIN,
    };
    let result = ask_with(&agent, None, "print a word", opts, &mut operator, &mut sink).await;
    assert!(
        server.failures().is_empty(),
        "{:?}\n{}",
        server.failures(),
        sink.out
    );
    assert!(result.is_ok(), "{result:?}\n{}{}", sink.out, sink.err);
    let card = &operator.asked[1];
    assert!(
        card.contains("`eval echo approved-run` on host:local? It is destructive: "),
        "{card}"
    );
    let out = &sink.out;
    for want in [
        "  host:local $ eval echo approved-run  · destructive\n    needs your approval: ",
        "    ✓ exit 0 · ",
        "    │ approved-run\n",
        "Outcome:  done — success",
        "Commands: 1 run\n",
        "Learned:  local printed = approved-run",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    server.shutdown().await;
}
