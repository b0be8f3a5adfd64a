#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `nomos ask` as an operator reads it: the real binary, a real store on disk, real read-only
//! commands on this workstation and the scripted model over HTTP.
//!
//! The commands the script runs are read-only (`seq`, `ls` of a path inside the test's own
//! temporary directory), like the golden evals' `uname -s`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use nomos_mock_llm::{MockServer, Script};
use nomos_protocol::AgentEvent;

/// A whole task: goal, targets, a plan, two commands (25 lines of output; a failure with
/// stderr), write-back, markdown text and completion.
fn script(missing: &Path) -> Script {
    Script::from_yaml(&format!(
        r###"
replies:
  - kind: tool_calls
    calls:
      - {{name: set_goal, arguments: {{goal: Count to 25 and look for a missing path}}}}
      - {{name: list_targets, arguments: {{}}}}
      - name: propose_plan
        arguments:
          steps:
            - {{title: Count to 25, target: "host:local"}}
            - {{title: Look for the missing path, target: "host:local"}}
  - kind: tool_calls
    expect: [{{last_user_contains: approved the plan}}]
    calls:
      - {{name: update_plan_step, arguments: {{seq: 1, status: running}}}}
      - {{name: run, arguments: {{target: "host:local", command: "seq 1 25", reason: count, step: 1}}}}
      - {{name: update_plan_step, arguments: {{seq: 1, status: done, note: 25 lines}}}}
  - kind: tool_calls
    calls:
      - {{name: update_plan_step, arguments: {{seq: 2, status: running}}}}
      - {{name: run, arguments: {{target: "host:local", command: "ls {missing}", reason: look, step: 2}}}}
      - {{name: update_plan_step, arguments: {{seq: 2, status: failed, note: the path does not exist}}}}
  - kind: tool_calls
    calls:
      - {{name: update_entity_attributes, arguments: {{slug: "host:local", attributes: {{counted_to: 25}}}}}}
      - {{name: create_relationship, arguments: {{from: "service:counter", kind: runs_on, to: "host:local"}}}}
      - {{name: upsert_knowledge, arguments: {{kind: note, title: Counting works, body: "seq counts to 25.", about: ["host:local"]}}}}
      - {{name: update_plan_step, arguments: {{seq: 3, status: done}}}}
  - kind: tool_calls
    text: "## Result\n\n**Counting** works; the path is *missing*.\n\n- `seq` printed 25 lines\n- `ls` failed\n"
    calls:
      - {{name: complete_task, arguments: {{outcome: partial, summary: "Counted to 25; the path is **missing**."}}}}
"###,
        missing = missing.display()
    ))
    .unwrap()
}

/// How the binary is started.
#[derive(Debug, Clone, Copy, Default)]
struct Launch {
    /// Under a pseudo-terminal (util-linux `script`), so standard output is a terminal.
    pty: bool,
    /// `NO_COLOR=1` in its environment.
    no_color: bool,
}

fn nomos(home: &Path, base_url: &str, args: &[&str], launch: Launch) -> Output {
    let bin = common::NOMOS;
    let mut cmd = if launch.pty {
        // One shell line for `script -c`: every word single-quoted (none holds a quote).
        let line: Vec<String> = std::iter::once(bin)
            .chain(args.iter().copied())
            .map(|w| {
                assert!(!w.contains('\''), "{w}");
                format!("'{w}'")
            })
            .collect();
        let mut c = Command::new("script");
        c.args(["-qec", &line.join(" "), "/dev/null"]);
        c
    } else {
        let mut c = Command::new(bin);
        c.args(args);
        c
    };
    common::isolate(&mut cmd, home, Some(base_url)).stdin(std::process::Stdio::null());
    if launch.no_color {
        cmd.env("NO_COLOR", "1");
    }
    cmd.output()
        .expect("util-linux `script` runs the pseudo-terminal tests")
}

/// Runs the task through the binary; returns stdout, stderr and the tool names the agent
/// offered the model (every tool it declares).
async fn run_task(extra: &[&str], launch: Launch) -> (String, String, Vec<String>, bool) {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("no-such-dir");
    let server = MockServer::start(script(&missing)).await.unwrap();
    let base = server.base_url();
    let dir = home.path().to_owned();
    let mut args = vec!["ask", "--approve-plan"];
    args.extend_from_slice(extra);
    args.push("count to 25 and look for a path");
    let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
    let output = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        nomos(&dir, &base, &args, launch)
    })
    .await
    .unwrap();
    let failures = server.failures();
    assert!(failures.is_empty(), "{failures:?}");
    let tools: Vec<String> = server
        .requests()
        .first()
        .and_then(|r| r.body.get("tools").and_then(|t| t.as_array()).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            t.pointer("/function/name")
                .or_else(|| t.get("name"))
                .and_then(|n| n.as_str())
                .map(str::to_owned)
        })
        .collect();
    assert!(tools.len() >= 18, "{tools:?}");
    server.shutdown().await;
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        tools,
        output.status.success(),
    )
}

/// Sentences of the notes Nomos writes for the model (crates/agent/src/notes.rs).
fn model_notes() -> Vec<String> {
    let src = include_str!("../../agent/src/notes.rs");
    let body = src.split("#[cfg(test)]").next().unwrap();
    body.split('"')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .flat_map(|(_, lit)| lit.split(['{', '}', '\\']))
        .map(str::trim)
        .filter(|p| p.len() >= 28 && p.contains(' '))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_face_shows_commands_with_their_output_and_no_plumbing() {
    let (out, err, tools, ok) = run_task(&[], Launch::default()).await;
    assert!(ok, "{out}\n{err}");
    let all = format!("{out}{err}");
    // The plan once, then its step changes.
    assert_eq!(out.matches("Plan v1 (3 steps):").count(), 1, "{out}");
    assert!(
        out.contains("→ 1 Count to 25\n") && out.contains("✓ 1 Count to 25 — 25 lines\n"),
        "{out}"
    );
    assert!(
        out.contains("✗ 2 Look for the missing path — the path does not exist\n"),
        "{out}"
    );
    // The command: target, exact text, class, result, the first ten lines, where the rest is.
    assert!(
        out.contains("  host:local $ seq 1 25  · read-only\n    ✓ exit 0 · "),
        "{out}"
    );
    for i in 1..=10 {
        assert!(out.contains(&format!("    │ {i}\n")), "line {i}:\n{out}");
    }
    assert!(!out.contains("    │ 11\n"), "{out}");
    let session = out
        .split("Session:  ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .to_owned();
    assert!(
        out.contains(&format!(
            "… 15 more lines — see them with: nomos sessions show {session}"
        )),
        "{out}"
    );
    // The failed one with its exit code and stderr.
    assert!(out.contains("    ✗ exit 2 · "), "{out}");
    assert!(out.contains("    stderr:\n    │ ls: "), "{out}");
    // Plumbing as human lines.
    for want in [
        "· Goal: Count to 25 and look for a missing path\n",
        "· Targets: host:local\n",
        "· Learned: local counted_to = 25\n",
        "· Linked counter → local (runs on)\n",
        "· Saved note “Counting works” about local\n",
        "You approved plan v1",
        // Markdown rendered.
        "Result\n------\n",
        "Counting works; the path is missing.\n",
        "  • `seq` printed 25 lines\n",
        // The summary.
        "Outcome:  done — partial",
        "Steps:    2 of 3 done (plan v1)",
        "Commands: 2 run, 1 failed",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    // No tool name in any call form, no snake-case name at all, no raw JSON, no note.
    for name in &tools {
        for form in [
            format!("{name}("),
            format!("\"{name}\""),
            format!("→ {name} "),
            format!("← {name}"),
        ] {
            assert!(!all.contains(&form), "{form:?} printed:\n{all}");
        }
        if name.contains('_') {
            assert!(!all.contains(name.as_str()), "{name} printed:\n{all}");
        }
    }
    for note in model_notes() {
        assert!(!all.contains(&note), "note {note:?} printed:\n{all}");
    }
    for raw in ["{\"", "\"slug\"", "STOP", "Do NOT", "**", "## "] {
        assert!(!all.contains(raw), "{raw:?} printed:\n{all}");
    }
    // Piped: no escape sequence at all.
    assert!(!all.contains('\u{1b}'), "{all:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_prints_every_event_as_it_was_and_nothing_else() {
    let (out, err, _, ok) = run_task(&["--json"], Launch::default()).await;
    assert!(ok, "{out}\n{err}");
    let mut kinds = Vec::new();
    for line in out.lines() {
        let event: AgentEvent =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        // The line is the event's own serialisation, byte for byte.
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        kinds.push(v["type"].as_str().unwrap().to_owned());
    }
    for kind in [
        "turn_started",
        "tool_call",
        "tool_result",
        "plan",
        "execution",
        "task_status",
        "done",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} missing: {kinds:?}");
    }
    // The tool calls are there, by name, as machines expect.
    assert!(out.contains("\"name\":\"update_plan_step\""), "{out}");
    // Nothing of the human face.
    for human in ["Summary", "Plan v1 (", "    │ ", "· Goal:"] {
        assert!(!out.contains(human), "{human:?} in --json:\n{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_prints_the_trace() {
    let (out, err, _, ok) = run_task(&["--verbose"], Launch::default()).await;
    assert!(ok, "{out}\n{err}");
    // The old trace: tool calls with their arguments and the notes, on stderr.
    assert!(err.contains("  → propose_plan {"), "{err}");
    assert!(
        err.contains("  ← update_plan_step: Step 1 is running."),
        "{err}"
    );
    assert!(err.contains("STOP. Wait for operator approval."), "{err}");
}

/// Colour on a terminal, none with `NO_COLOR`, and the same words either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colour_only_on_a_terminal_without_no_color() {
    let (tty, _, _, ok) = run_task(
        &[],
        Launch {
            pty: true,
            no_color: false,
        },
    )
    .await;
    assert!(ok, "{tty}");
    assert!(
        tty.contains("\u{1b}[1m"),
        "no colour on a terminal:\n{tty:?}"
    );
    let (tty_no_color, _, _, ok) = run_task(
        &[],
        Launch {
            pty: true,
            no_color: true,
        },
    )
    .await;
    assert!(ok, "{tty_no_color}");
    assert!(!tty_no_color.contains('\u{1b}'), "{tty_no_color:?}");
    // Same words (ignoring colour, timings and the terminal's line ends).
    let words = |s: &str| -> Vec<String> {
        strip_sgr(&s.replace("\r\n", "\n"))
            .lines()
            // Timings and the temporary path differ between the two runs.
            .filter(|l| !l.contains(" exit ") && !l.contains("ls: ") && !l.contains("/tmp"))
            .map(str::to_owned)
            .collect()
    };
    let (a, b) = (words(&tty), words(&tty_no_color));
    assert!(a.iter().any(|l| l.contains("seq 1 25")), "{a:?}");
    // Model markdown differs by design (no rule under a heading, no backticks with colour);
    // everything around it is the same.
    let face = |v: &[String]| -> Vec<String> {
        v.iter()
            .filter(|l| {
                l.starts_with("  host:")
                    || l.starts_with("    │")
                    || l.starts_with("· ")
                    || l.starts_with("✓ ")
                    || l.starts_with("→ ")
            })
            .cloned()
            .collect()
    };
    assert_eq!(face(&a), face(&b));
}

/// The escape sequences the face writes for colour (`ESC [ digits m`) removed.
fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(pos) = rest.find("\u{1b}[") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        assert!(
            after[digits..].starts_with('m'),
            "a non-SGR escape: {:?}",
            &rest[pos..]
        );
        rest = &after[digits + 1..];
    }
    out.push_str(rest);
    out
}

/// Without a terminal a command's card is denied, the face says why, and the model is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_a_card_is_denied_and_the_model_told() {
    let home = tempfile::tempdir().unwrap();
    // `eval` is not modelled by the classifier: it needs a card. It would only print.
    let script = Script::from_yaml(
        r#"
replies:
  - kind: tool_calls
    calls:
      - name: propose_plan
        arguments: {steps: [{title: Print a word, target: "host:local"}]}
  - kind: tool_calls
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: running}}
      - {name: run, arguments: {target: "host:local", command: "eval echo never-printed", reason: print, step: 1}}
  - kind: tool_calls
    expect: [{any_message_contains: "no terminal to ask the operator at"}]
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: skipped}}
      - {name: update_plan_step, arguments: {seq: 2, status: skipped}}
      - {name: complete_task, arguments: {outcome: partial, summary: "Nothing ran."}}
"#,
    )
    .unwrap();
    let server = MockServer::start(script).await.unwrap();
    let base = server.base_url();
    let dir = home.path().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        nomos(
            &dir,
            &base,
            &["ask", "--approve-plan", "print a word"],
            Launch::default(),
        )
    })
    .await
    .unwrap();
    assert!(server.failures().is_empty(), "{:?}", server.failures());
    server.shutdown().await;
    let out = String::from_utf8(output.stdout).unwrap();
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{out}\n{err}");
    assert!(
        err.contains("Approve `eval echo never-printed` on host:local? It is destructive: ")
            && err.contains("[no terminal: denied]"),
        "{err}"
    );
    assert!(
        out.contains("✗ Denied: no terminal to ask you at; not run."),
        "{out}"
    );
    assert!(!out.contains("│ never-printed"), "{out}");
    assert!(out.contains("Commands: 0 run, 1 not run"), "{out}");
}
