//! The face on recorded event sequences.

use nomos_protocol::{
    ApprovalKind, CommandClass, ExecStatus, Execution, Message, PlanStep, Role, SessionStatus,
    SessionSummary, SessionView, StepStatus, ToolCall,
};
use serde_json::json;

use super::style::strip_sgr;
use super::*;
use crate::term::tests::hostile_samples;

const S: i64 = 7;

/// Every tool the agent offers the model, from the agent itself, so a tool added there is
/// covered here without editing this list.
pub(crate) fn declared_tools() -> Vec<String> {
    let names = nomos_agent::tool_names();
    assert!(names.len() >= 18, "the agent lost tools: {names:?}");
    names
}

/// The agent's source files (notes for the model, tool results), read from its folder so a
/// new module is covered too.
fn agent_sources() -> Vec<String> {
    fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let path = e.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                out.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/src"),
        &mut out,
    );
    assert!(out.len() >= 10, "the agent's sources were not found");
    out
}

/// Fragments of every note and tool result Nomos writes for the model: none may reach the
/// operator's face.
pub(crate) fn model_note_fragments() -> Vec<String> {
    let mut out = Vec::new();
    for src in agent_sources() {
        let body = src.split("#[cfg(test)]").next().unwrap_or_default();
        // Doc comments are for readers of the code, not text sent to the model.
        let body: String = body
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for (i, lit) in body.split('"').enumerate() {
            if i % 2 == 0 {
                continue;
            }
            for piece in lit.split(['{', '}', '\\']) {
                let piece = piece.trim();
                // Long enough to be a sentence written for the model, not a word.
                if piece.len() >= 28 && piece.contains(' ') {
                    out.push(piece.to_owned());
                }
            }
        }
    }
    assert!(out.len() > 20, "{out:?}");
    out
}

fn feed_all(r: &mut Renderer, events: &[AgentEvent]) -> (String, String) {
    let (mut o, mut e) = (String::new(), String::new());
    for ev in events {
        for (out, text) in r.feed(ev) {
            match out {
                Out::Stdout => o.push_str(&text),
                Out::Stderr => e.push_str(&text),
            }
        }
    }
    (o, e)
}

fn plain(events: &[AgentEvent]) -> String {
    feed_all(&mut Renderer::new(Style::PLAIN), events).0
}

fn step(id: i64, generation: i64, seq: i64, title: &str, status: StepStatus) -> PlanStep {
    PlanStep {
        id,
        generation,
        seq,
        title: title.to_owned(),
        detail: None,
        target: Some("host:local".into()),
        status,
        note: None,
    }
}

fn plan(steps: Vec<PlanStep>) -> AgentEvent {
    AgentEvent::Plan {
        session_id: S,
        steps,
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> AgentEvent {
    AgentEvent::ToolCall {
        session_id: S,
        message_id: 1,
        call: ToolCall {
            call_id: id.into(),
            name: name.into(),
            arguments: args.to_string(),
            result: None,
            is_error: false,
        },
    }
}

fn result(id: &str, name: &str, text: &str, is_error: bool) -> AgentEvent {
    AgentEvent::ToolResult {
        session_id: S,
        message_id: 1,
        call_id: id.into(),
        name: name.into(),
        result: text.into(),
        is_error,
    }
}

fn exec(id: i64, call: &str, status: ExecStatus) -> Execution {
    Execution {
        id,
        session_id: S,
        call_id: Some(call.into()),
        target: "host:local".into(),
        command: "df -h".into(),
        canonical: "df -h".into(),
        class: CommandClass::ReadOnly,
        reason: "df reads disk usage".into(),
        status,
        approval: Some(ApprovalKind::NotNeeded),
        exit_code: None,
        duration_ms: None,
        stdout: String::new(),
        stderr: String::new(),
        created_at_ms: 0,
        generation: None,
        plan_step_id: None,
        error: None,
    }
}

fn ev_exec(e: &Execution) -> AgentEvent {
    AgentEvent::Execution {
        session_id: S,
        execution: e.clone(),
    }
}

fn assistant(id: i64, text: &str, pending: bool) -> AgentEvent {
    AgentEvent::Message {
        session_id: S,
        message: Message {
            id,
            role: Role::Assistant,
            text: text.to_owned(),
            pending,
            auto: false,
            error: None,
            tool_calls: Vec::new(),
            created_at_ms: 0,
        },
    }
}

fn system(text: &str) -> AgentEvent {
    AgentEvent::Message {
        session_id: S,
        message: Message {
            id: 99,
            role: Role::System,
            text: text.to_owned(),
            pending: false,
            auto: true,
            error: None,
            tool_calls: Vec::new(),
            created_at_ms: 0,
        },
    }
}

fn delta(id: i64, d: &str) -> AgentEvent {
    AgentEvent::TextDelta {
        session_id: S,
        message_id: id,
        delta: d.to_owned(),
    }
}

fn restart(id: i64, attempt: u32) -> AgentEvent {
    AgentEvent::ModelRetrying {
        session_id: S,
        message_id: id,
        attempt,
        max_attempts: 3,
        delay_ms: 500,
        code: "llm.idle_timeout".into(),
        notice: format!("no reply from the model for 2 min — retrying ({attempt}/3)"),
    }
}

fn status(status: SessionStatus, approval_open: bool) -> AgentEvent {
    AgentEvent::TaskStatus {
        session_id: S,
        status,
        outcome: None,
        summary: None,
        approval_open,
    }
}

/// A whole task as the agent emits it: goal, knowledge reads, a plan, approval, two
/// commands (one long, one failing), write-back, completion.
fn recorded_task() -> Vec<AgentEvent> {
    let titles = ["Check disk usage", "Read the kernel"];
    let mut steps: Vec<PlanStep> = titles
        .iter()
        .enumerate()
        .map(|(i, t)| step(i as i64 + 1, 1, i as i64 + 1, t, StepStatus::Pending))
        .collect();
    steps.push(step(
        3,
        1,
        3,
        nomos_store::WRITE_BACK_TITLE,
        StepStatus::Pending,
    ));
    let with = |steps: &Vec<PlanStep>, id: i64, st: StepStatus, note: Option<&str>| {
        let mut s = steps.clone();
        for p in &mut s {
            if p.id == id {
                p.status = st;
                p.note = note.map(str::to_owned);
            }
        }
        s
    };
    let long: String = (1..=25).map(|i| format!("line {i}\n")).collect();
    let mut df = exec(1, "c5", ExecStatus::Queued);
    let mut events = vec![
        AgentEvent::TurnStarted {
            session_id: S,
            auto: false,
        },
        call(
            "c1",
            "set_goal",
            json!({"goal": "Know the disk usage of this machine"}),
        ),
        status(SessionStatus::Planning, false),
        result(
            "c1",
            "set_goal",
            "Goal set. Next: read what is known (search_knowledge, list_targets), then propose_plan.",
            false,
        ),
        call("c2", "list_targets", json!({})),
        result(
            "c2",
            "list_targets",
            &serde_json::to_string_pretty(
                &json!({"targets": [{"slug": "host:local", "transport": "local"}]}),
            )
            .unwrap(),
            false,
        ),
        call(
            "c3",
            "propose_plan",
            json!({"steps": [{"title": titles[0]}, {"title": titles[1]}]}),
        ),
        plan(steps.clone()),
        AgentEvent::ApprovalRequested {
            session_id: S,
            execution: None,
        },
        result(
            "c3",
            "propose_plan",
            "Plan v1 set (3 steps). A write-back step was appended: record what you learn as facts before completing. STOP. Wait for operator approval. Approval words: yes, ok, go, go ahead, proceed, continue, approved. On approval advance with update_plan_step + run. Do NOT call propose_plan again.",
            false,
        ),
        AgentEvent::Done {
            session_id: S,
            error: false,
        },
        system(
            "The operator approved the plan (Approve button). Advance it now: update_plan_step (running) + run, in order. Do NOT call propose_plan again.",
        ),
        status(SessionStatus::Executing, true),
        call(
            "c4",
            "update_plan_step",
            json!({"seq": 1, "status": "running"}),
        ),
    ];
    let s1 = with(&steps, 1, StepStatus::Running, None);
    events.push(plan(s1.clone()));
    events.push(result(
        "c4",
        "update_plan_step",
        "Step 1 is running.",
        false,
    ));
    events.push(call(
        "c5",
        "run",
        json!({"target": "host:local", "command": "df -h", "reason": "step 1"}),
    ));
    events.push(ev_exec(&df));
    df.status = ExecStatus::Running;
    events.push(ev_exec(&df));
    df.status = ExecStatus::Finished;
    df.exit_code = Some(0);
    df.duration_ms = Some(1234);
    df.stdout = long.clone();
    events.push(ev_exec(&df));
    events.push(result(
        "c5",
        "run",
        &format!("Execution 1 on host:local: finished, exit 0, 1.2s\nstdout:\n{long}"),
        false,
    ));
    events.push(call(
        "c6",
        "update_plan_step",
        json!({"seq": 1, "status": "done", "note": "41% used"}),
    ));
    let s2 = with(&s1, 1, StepStatus::Done, Some("41% used"));
    events.push(plan(s2.clone()));
    events.push(result("c6", "update_plan_step", "Step 1 is done.", false));
    let s3 = with(&s2, 2, StepStatus::Running, None);
    events.push(plan(s3.clone()));
    let mut bad = exec(2, "c7", ExecStatus::Running);
    bad.canonical = "ls /nonexistent".into();
    bad.command = "ls /nonexistent".into();
    events.push(call(
        "c7",
        "run",
        json!({"target": "host:local", "command": "ls /nonexistent", "reason": "x"}),
    ));
    events.push(ev_exec(&bad));
    bad.status = ExecStatus::Finished;
    bad.exit_code = Some(2);
    bad.duration_ms = Some(15);
    bad.stderr = "ls: cannot access '/nonexistent': No such file or directory\n".into();
    events.push(ev_exec(&bad));
    events.push(result(
        "c7",
        "run",
        "Execution 2 on host:local: finished, exit 2",
        false,
    ));
    let s4 = with(&s3, 2, StepStatus::Failed, Some("no such path"));
    events.push(plan(s4.clone()));
    events.push(call(
        "c8",
        "update_entity_attributes",
        json!({"slug": "host:pve1", "attributes": {"kernel": "6.8.12"}}),
    ));
    events.push(result(
        "c8",
        "update_entity_attributes",
        "Recorded on host:pve1: {\n  \"changed\": [\"kernel\"]\n}",
        false,
    ));
    events.push(call(
        "c9",
        "create_relationship",
        json!({"from": "service:nginx", "kind": "runs_on", "to": "host:pve1"}),
    ));
    events.push(result(
        "c9",
        "create_relationship",
        "Recorded: {\"id\": 3}",
        false,
    ));
    events.push(call("c10", "upsert_knowledge", json!({"kind": "note", "title": "Disk usage on pve1", "body": "41%", "about": ["host:pve1"]})));
    events.push(result(
        "c10",
        "upsert_knowledge",
        "Knowledge entry 4 saved (note-disk-usage).",
        false,
    ));
    events.push(plan(with(&s4, 3, StepStatus::Done, None)));
    events.push(assistant(20, "", true));
    events.push(delta(
        20,
        "## Disk report\n\n**All good**: `/` is at *41%*.\n- pve1 kernel 6.8.12\n",
    ));
    events.push(assistant(
        20,
        "## Disk report\n\n**All good**: `/` is at *41%*.\n- pve1 kernel 6.8.12\n",
        false,
    ));
    events.push(call(
        "c11",
        "complete_task",
        json!({"outcome": "partial", "summary": "Disk fine; kernel path failed."}),
    ));
    events.push(AgentEvent::TaskStatus {
        session_id: S,
        status: SessionStatus::Partial,
        outcome: Some(nomos_protocol::Outcome::Partial),
        summary: Some("Disk fine; kernel path failed.".into()),
        approval_open: false,
    });
    events.push(result(
        "c11",
        "complete_task",
        "Task completed. The operator has been notified.",
        false,
    ));
    events.push(AgentEvent::Done {
        session_id: S,
        error: false,
    });
    events
}

#[test]
fn the_plan_is_shown_once_then_only_step_changes() {
    let out = plain(&recorded_task());
    assert_eq!(out.matches("Plan v1").count(), 1, "{out}");
    assert_eq!(out.matches("Plan v1 (3 steps):").count(), 1, "{out}");
    // Each step title appears in the listing and once per change, never a re-listing.
    assert!(
        out.contains("  1. Check disk usage · host:local\n"),
        "{out}"
    );
    assert!(out.contains("→ 1 Check disk usage\n"), "{out}");
    assert!(out.contains("✓ 1 Check disk usage — 41% used\n"), "{out}");
    assert!(
        out.contains("✗ 2 Read the kernel — no such path\n"),
        "{out}"
    );
    assert_eq!(out.matches("Check disk usage").count(), 3, "{out}");
    // The write-back step in the operator's words.
    assert!(
        out.contains("Record what was learned (facts, links, knowledge)"),
        "{out}"
    );
    assert!(out.contains("You approved plan v1"), "{out}");
}

#[test]
fn a_new_generation_is_listed_and_the_old_one_said_replaced() {
    let mut r = Renderer::new(Style::PLAIN);
    let (a, _) = feed_all(
        &mut r,
        &[plan(vec![step(1, 1, 1, "Old step", StepStatus::Pending)])],
    );
    assert!(a.contains("Plan v1 (1 step):"), "{a}");
    let (b, _) = feed_all(
        &mut r,
        &[plan(vec![
            step(1, 1, 1, "Old step", StepStatus::Replaced),
            step(2, 2, 1, "New step", StepStatus::Pending),
            step(3, 2, 2, "Second", StepStatus::Pending),
        ])],
    );
    assert!(b.contains("Plan v1 was replaced."), "{b}");
    assert!(
        b.contains("Plan v2 (2 steps):") && !b.contains("Old step"),
        "{b}"
    );
    // The same plan event again prints nothing.
    let (c, _) = feed_all(
        &mut r,
        &[plan(vec![
            step(2, 2, 1, "New step", StepStatus::Pending),
            step(3, 2, 2, "Second", StepStatus::Pending),
        ])],
    );
    assert_eq!(c, "");
}

#[test]
fn a_command_shows_target_command_class_result_and_its_first_lines() {
    let out = plain(&recorded_task());
    assert!(out.contains("  host:local $ df -h  · read-only\n"), "{out}");
    assert!(out.contains("    ✓ exit 0 · 1.2 s\n"), "{out}");
    for i in 1..=OUTPUT_LINES {
        assert!(
            out.contains(&format!("    │ line {i}\n")),
            "line {i}: {out}"
        );
    }
    assert!(!out.contains("line 11\n"), "{out}");
    assert!(
        out.contains("… 15 more lines — see them with: nomos sessions show 7"),
        "{out}"
    );
    // A failed command shows its stderr; its exit code and duration.
    assert!(out.contains("    ✗ exit 2 · 15 ms\n"), "{out}");
    assert!(
        out.contains("    stderr:\n    │ ls: cannot access"),
        "{out}"
    );
}

#[test]
fn output_is_cut_at_ten_lines_whatever_its_length() {
    for n in [0usize, 1, 9, 10, 11, 12, 100] {
        let mut e = exec(1, "c", ExecStatus::Finished);
        e.exit_code = Some(0);
        e.stdout = (1..=n).map(|i| format!("row-{i}\n")).collect();
        let out = plain(&[ev_exec(&e)]);
        let shown = out.matches("│ row-").count();
        assert_eq!(shown, n.min(OUTPUT_LINES), "{n}: {out}");
        let more = n.saturating_sub(OUTPUT_LINES);
        assert_eq!(
            out.contains(&format!("… {more} more line")),
            more > 0,
            "{n}: {out}"
        );
        if n == 0 {
            assert!(out.contains("(no output)"), "{out}");
        }
        // Stderr only when the command failed.
        e.stderr = "warning: x\n".into();
        assert!(!plain(&[ev_exec(&e)]).contains("warning: x"));
        e.exit_code = Some(1);
        assert!(plain(&[ev_exec(&e)]).contains("warning: x"));
    }
}

#[test]
fn approvals_show_class_and_reason_and_a_denial_its_reason() {
    for (class, word) in [
        (CommandClass::Destructive, "destructive"),
        (CommandClass::ConfigMutation, "config change"),
    ] {
        let mut e = exec(4, "c", ExecStatus::AwaitingApproval);
        e.class = class;
        e.canonical = "systemctl restart nginx".into();
        e.reason = "restarts a service".into();
        let mut r = Renderer::new(Style::PLAIN);
        let (out, _) = feed_all(&mut r, &[ev_exec(&e)]);
        assert!(
            out.contains(&format!("$ systemctl restart nginx  · {word}")),
            "{out}"
        );
        assert!(
            out.contains("needs your approval: restarts a service"),
            "{out}"
        );
        r.denied(4, Some("not during business hours"));
        e.status = ExecStatus::Cancelled;
        let (out, _) = feed_all(&mut r, &[ev_exec(&e)]);
        // Right under its card: the command is not repeated.
        assert!(!out.contains("systemctl"), "{out}");
        assert!(
            out.contains("You denied it: not during business hours; not run."),
            "{out}"
        );
    }
    // Nobody to ask: said as it is, not as the operator's denial.
    let mut r = Renderer::new(Style::PLAIN);
    let mut e = exec(6, "c", ExecStatus::AwaitingApproval);
    e.class = CommandClass::Destructive;
    feed_all(&mut r, &[ev_exec(&e)]);
    r.unanswered(6);
    e.status = ExecStatus::Cancelled;
    let (out, _) = feed_all(&mut r, &[ev_exec(&e)]);
    assert!(
        out.contains("✗ Denied: no terminal to ask you at; not run."),
        "{out}"
    );
    // Cancelled without a card: cancelled, not denied.
    let mut e = exec(7, "c", ExecStatus::Running);
    let mut r = Renderer::new(Style::PLAIN);
    feed_all(&mut r, &[ev_exec(&e)]);
    e.status = ExecStatus::Cancelled;
    let (out, _) = feed_all(&mut r, &[ev_exec(&e)]);
    assert!(out.contains("✗ Cancelled."), "{out}");
    // A config change inside the window says why it ran without asking.
    let mut e = exec(5, "c", ExecStatus::Running);
    e.class = CommandClass::ConfigMutation;
    e.reason = "writes a unit file".into();
    let out = plain(&[ev_exec(&e)]);
    assert!(
        out.contains("runs inside your approval window: writes a unit file"),
        "{out}"
    );
}

#[test]
fn plumbing_tools_become_human_lines() {
    let out = plain(&recorded_task());
    for want in [
        "· Goal: Know the disk usage of this machine\n",
        "· Targets: host:local\n",
        "· Learned: pve1 kernel = 6.8.12\n",
        "· Linked nginx → pve1 (runs on)\n",
        "· Saved note “Disk usage on pve1” about pve1\n",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    let mut r = Renderer::new(Style::PLAIN);
    feed_all(&mut r, &recorded_task());
    assert_eq!(
        r.learned(),
        [
            "Learned: pve1 kernel = 6.8.12",
            "Linked nginx → pve1 (runs on)",
            "Saved note “Disk usage on pve1” about pve1"
        ]
    );
}

/// Every declared tool, called with plausible arguments and answered ok and refused, with the
/// notes Nomos writes for the model as system messages: the face shows no tool name in a call
/// form, no raw JSON, no note.
#[test]
fn no_tool_name_raw_json_or_model_note_reaches_the_face() {
    let notes = model_note_fragments();
    let mut events = vec![plan(vec![step(1, 1, 1, "Check", StepStatus::Pending)])];
    for (i, name) in declared_tools().iter().enumerate() {
        let id = format!("x{i}");
        let args = json!({
            "goal": "g", "query": "disk", "id": 3, "slug": "host:pve1", "kind": "note",
            "steps": [{"title": "t"}], "seq": 1, "status": "done", "target": "host:local",
            "command": "uname -r", "reason": "r", "attributes": {"os": "Debian"},
            "from": "service:a", "to": "host:b", "title": "T", "body": "B",
            "question": "Which disk?", "outcome": "success", "summary": "S"
        });
        events.push(call(&id, name, args.clone()));
        for (j, note) in notes.iter().enumerate() {
            if j % 7 == i % 7 {
                events.push(result(&id, name, note, j % 2 == 0));
            }
        }
        events.push(result(
            &id,
            name,
            &format!("Refused: Call {name} first. STOP. Do NOT call propose_plan again."),
            true,
        ));
        events.push(result(
            &id,
            name,
            "{\n  \"raw\": {\"json\": true}\n}",
            false,
        ));
    }
    for note in &notes {
        events.push(system(note));
    }
    events.push(call("u", "no_such_tool", json!({})));
    events.push(result(
        "u",
        "no_such_tool",
        "Unknown tool `no_such_tool`. Available: set_goal, run.",
        true,
    ));
    let (out, err) = feed_all(&mut Renderer::new(Style::PLAIN), &events);
    let all = format!("{out}{err}");
    for name in declared_tools() {
        // Snake-case names are never words an operator reads; `run` is one, so only its call
        // forms are checked.
        let forms = [
            format!("{name}("),
            format!("{name} {{"),
            format!("\"{name}\""),
            format!("→ {name} "),
            format!("← {name}"),
            format!("`{name}`"),
        ];
        for f in forms {
            assert!(!all.contains(&f), "{f:?} printed:\n{all}");
        }
        if name.contains('_') {
            assert!(!all.contains(&name), "{name} printed:\n{all}");
        }
    }
    for note in &notes {
        assert!(
            !all.contains(note.as_str()),
            "note {note:?} printed:\n{all}"
        );
    }
    for raw in ["\"raw\"", "{\"", "STOP", "Do NOT", "no_such_tool"] {
        assert!(!all.contains(raw), "{raw:?} printed:\n{all}");
    }
    // Something human was said for each: refusals, the question, the unknown tool.
    assert!(all.contains("? Which disk?"), "{all}");
    assert!(all.contains("a tool that does not exist"), "{all}");
    assert!(
        all.contains("Nomos refused the goal the model asked for"),
        "{all}"
    );
}

#[test]
fn every_declared_tool_has_words() {
    for name in declared_tools() {
        assert!(
            TOOL_WORDS.iter().any(|(n, _)| *n == name),
            "{name} has no human words in TOOL_WORDS"
        );
    }
}

#[test]
fn a_refused_run_names_the_command_and_why_in_operator_words() {
    let events = [
        call(
            "r",
            "run",
            json!({"target": "host:local", "command": "uptime", "reason": "x"}),
        ),
        result(
            "r",
            "run",
            "Refused: no plan. Call propose_plan first (a one-step plan is fine for a read-only question), then wait for the operator's approval.",
            true,
        ),
        call(
            "d",
            "run",
            json!({"target": "host:local", "command": "uname -a", "reason": "x"}),
        ),
        result(
            "d",
            "run",
            "Not re-run: this exact command already ran on this target in this plan 3s ago. Its result:\nLinux",
            false,
        ),
    ];
    let out = plain(&events);
    assert!(
        out.contains(
            "host:local $ uptime\n    ✗ not run: no plan yet; a command runs only under a plan.\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("host:local $ uname -a\n    ↺ not run again"),
        "{out}"
    );
    assert!(
        !out.contains("Call propose_plan") && !out.contains("Linux"),
        "{out}"
    );
    // Under a plan: a command the classifier cannot check says so in its words; any other
    // refusal says only that Nomos refused it, never the text written for the model.
    let mut events = vec![plan(vec![step(1, 1, 1, "Check", StepStatus::Running)])];
    for (i, cmd) in ["ls &", "f() { ls; }; f", "echo \"open"].iter().enumerate() {
        let id = format!("u{i}");
        events.push(call(
            &id,
            "run",
            json!({"target": "host:local", "command": cmd}),
        ));
        events.push(result(&id, "run", "Refused: the command could not be checked (x), so it has no checked form to run and will not run as typed. Rewrite it.", true));
    }
    events.push(call(
        "t",
        "run",
        json!({"target": "host:nowhere", "command": "uptime"}),
    ));
    events.push(result(
        "t",
        "run",
        "unknown target host:nowhere. Known targets: host:local. Call list_targets.",
        true,
    ));
    events.push(call("m", "run", json!({"target": "host:local"})));
    events.push(result(
        "m",
        "run",
        "Missing argument `command` (a non-empty string).",
        true,
    ));
    let out = plain(&events);
    assert_eq!(
        out.matches("Nomos could not check this command (").count(),
        3,
        "{out}"
    );
    assert!(out.contains("background jobs"), "{out}");
    assert!(
        out.contains("host:nowhere $ uptime\n    ✗ not run: refused by Nomos (the model was told why; --verbose shows it).\n"),
        "{out}"
    );
    assert!(
        out.contains("not run: the model's request named no command."),
        "{out}"
    );
    for model in ["Rewrite", "Call list_targets", "Missing argument"] {
        assert!(!out.contains(model), "{model}: {out}");
    }
}

#[test]
fn model_text_streams_as_rendered_markdown_whatever_the_chunks() {
    let text = "## Disk report\n\n**All good**: `/` is at *41%*.\n\n- one\n- **two**\n\n```\nFilesystem  Size\n```\nDone.";
    let whole = {
        let mut r = Renderer::new(Style::PLAIN);
        feed_all(
            &mut r,
            &[
                assistant(3, "", true),
                delta(3, text),
                assistant(3, text, false),
            ],
        )
        .0
    };
    assert_eq!(
        whole,
        "Disk report\n-----------\n\nAll good: `/` is at 41%.\n\n  • one\n  • two\n\n    Filesystem  Size\nDone.\n"
    );
    // Split at every byte boundary that is a char boundary, into two and three pieces.
    let bounds: Vec<usize> = (1..text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    for &a in &bounds {
        for b in [a + 1, a + 7, text.len() - 1] {
            if b <= a || b >= text.len() || !text.is_char_boundary(b) {
                continue;
            }
            let mut r = Renderer::new(Style::PLAIN);
            let (out, _) = feed_all(
                &mut r,
                &[
                    assistant(3, "", true),
                    delta(3, &text[..a]),
                    delta(3, &text[a..b]),
                    delta(3, &text[b..]),
                    assistant(3, text, false),
                ],
            );
            assert_eq!(out, whole, "split at {a},{b}");
        }
    }
    // A provider that sends no deltas: the finished message is shown whole.
    let mut r = Renderer::new(Style::PLAIN);
    assert_eq!(feed_all(&mut r, &[assistant(3, text, false)]).0, whole);
    // A line is printed as soon as it is complete, before the message ends.
    let mut r = Renderer::new(Style::PLAIN);
    let (early, _) = feed_all(&mut r, &[delta(3, "# Title\nstill typ")]);
    assert_eq!(early, "Title\n=====\n");
}

#[test]
fn a_success_downgraded_to_partial_says_why_in_operator_words() {
    let downgraded = "Completed as partial, not success: Outcome downgraded to partial: plan v1 ran 2 command(s) that gathered facts, but none were written back to the knowledge graph. Call update_entity_attributes for every entity you inspected.";
    let out = plain(&[
        call(
            "c",
            "complete_task",
            json!({"outcome": "success", "summary": "ok"}),
        ),
        result("c", "complete_task", downgraded, false),
    ]);
    assert_eq!(
        out,
        "· Recorded as partial, not success: what the commands found was not written back as facts.\n"
    );
    // A completion as asked prints nothing of its own (the summary says it).
    for (outcome, text) in [
        ("success", "Task completed. The operator has been notified."),
        ("partial", "Task completed. The operator has been notified."),
    ] {
        let out = plain(&[
            call(
                "c",
                "complete_task",
                json!({"outcome": outcome, "summary": "ok"}),
            ),
            result("c", "complete_task", text, false),
        ]);
        assert_eq!(out, "", "{outcome}");
    }
}

#[test]
fn a_command_still_running_says_so_and_its_result_follows() {
    let mut r = Renderer::new(Style::PLAIN);
    let mut slow = exec(3, "slow", ExecStatus::Running);
    slow.canonical = "sleep 60".into();
    let other = exec(4, "other", ExecStatus::Running);
    let (out, _) = feed_all(
        &mut r,
        &[
            ev_exec(&other),
            call(
                "slow",
                "run",
                json!({"target": "host:local", "command": "sleep 60"}),
            ),
            ev_exec(&slow),
            result(
                "slow",
                "run",
                "Execution 3 is still running; it continues in the background and its result will be delivered to you when it finishes. Do not start it again.",
                false,
            ),
        ],
    );
    assert!(
        out.ends_with("  host:local $ sleep 60  · read-only\n    … still running in the background; its result is shown when it ends\n"),
        "{out}"
    );
    assert!(!out.contains("Do not start"), "{out}");
    // Another command that finished inline says nothing of the kind.
    let mut quick = exec(5, "quick", ExecStatus::Finished);
    quick.exit_code = Some(0);
    let (out, _) = feed_all(
        &mut r,
        &[
            ev_exec(&quick),
            result(
                "quick",
                "run",
                "Execution 5 on host:local: finished, exit 0",
                false,
            ),
        ],
    );
    assert!(!out.contains("still running"), "{out}");
    // The slow one ends later, in a continuation: its result is shown then, under its name.
    slow.status = ExecStatus::Finished;
    slow.exit_code = Some(0);
    slow.duration_ms = Some(60_000);
    let (out, _) = feed_all(&mut r, &[ev_exec(&slow)]);
    assert_eq!(
        out,
        "  host:local $ sleep 60  · read-only\n    ✓ exit 0 · 1 min 0 s\n    (no output)\n"
    );
}

#[test]
fn text_before_a_command_is_shown_before_it() {
    // The agent streams the reply, then runs its tool calls, then finishes the message: a
    // last line without a line break must not end up under the command's output.
    for text in [
        "Let me check the disk first.",
        "Two lines:\nthen the **check**",
        "Ends with a break.\n",
    ] {
        let mut e = exec(1, "c1", ExecStatus::Finished);
        e.exit_code = Some(0);
        e.stdout = "out-line\n".into();
        let out = plain(&[
            assistant(4, "", true),
            delta(4, &text[..text.len() / 2]),
            delta(4, &text[text.len() / 2..]),
            AgentEvent::ToolCall {
                session_id: S,
                message_id: 4,
                call: ToolCall {
                    call_id: "c1".into(),
                    name: "run".into(),
                    arguments: json!({"target": "host:local", "command": "df -h"}).to_string(),
                    result: None,
                    is_error: false,
                },
            },
            ev_exec(&e),
            result(
                "c1",
                "run",
                "Execution 1 on host:local: finished, exit 0",
                false,
            ),
            assistant(4, text, false),
        ]);
        let rendered = markdown::render(Style::PLAIN, text.trim_end_matches('\n'));
        assert!(out.starts_with(&rendered), "{text:?}:\n{out}");
        assert_eq!(out.matches("out-line").count(), 1, "{out}");
        assert!(
            out.trim_end().ends_with("out-line"),
            "nothing after the output:\n{out}"
        );
    }
}

#[test]
fn a_retried_attempt_replaces_the_partial_text() {
    let q = "The question \"why\" has three answers.";
    for cuts in [
        vec![13usize],
        vec![13, 13, 13],
        vec![3, 20],
        vec![1, q.len() - 1],
    ] {
        let mut events = vec![assistant(5, "", true)];
        for (i, cut) in cuts.iter().enumerate() {
            events.push(delta(5, &q[..*cut]));
            events.push(restart(5, i as u32 + 2));
            events.push(assistant(5, "", true));
        }
        events.push(delta(5, q));
        events.push(assistant(5, q, false));
        events.push(assistant(6, "", true));
        events.push(delta(6, "Second"));
        events.push(restart(6, 2));
        events.push(assistant(6, "", true));
        events.push(delta(6, "Second reply."));
        events.push(assistant(6, "Second reply.", false));
        let out = plain(&events);
        assert_eq!(out, format!("{q}\nSecond reply.\n"), "cuts {cuts:?}");
    }
    // Cut after whole lines were printed: the operator is told, and the reply follows whole.
    let mut r = Renderer::new(Style::PLAIN);
    let (out, err) = feed_all(
        &mut r,
        &[
            delta(5, "First line\nsecond"),
            restart(5, 2),
            delta(5, "First line\nsecond line"),
            assistant(5, "First line\nsecond line", false),
        ],
    );
    assert_eq!(
        out,
        "First line\n(the reply above was cut off; the model starts it again)\nFirst line\nsecond line\n"
    );
    assert_eq!(
        err,
        "· no reply from the model for 2 min — retrying (2/3)\n"
    );
}

#[test]
fn the_summary_says_outcome_steps_commands_learned_and_session() {
    let mut r = Renderer::new(Style::PLAIN);
    let events = recorded_task();
    feed_all(&mut r, &events);
    let AgentEvent::Plan { steps, .. } = events
        .iter()
        .rev()
        .find(|e| matches!(e, AgentEvent::Plan { .. }))
        .unwrap()
    else {
        unreachable!()
    };
    let view = SessionView {
        session: SessionSummary {
            id: S,
            title: "t".into(),
            goal: None,
            status: SessionStatus::Partial,
            outcome: Some(nomos_protocol::Outcome::Partial),
            summary: Some("Disk **fine**; kernel path failed.".into()),
            created_at_ms: 0,
            last_active_at_ms: 0,
            demo: false,
        },
        messages: Vec::new(),
        older: false,
        newer: false,
        generation_before: 0,
        plan: steps.clone(),
        executions: Vec::new(),
        approval_open: false,
    };
    let sum = r.summary(&view, false);
    for want in [
        "Outcome:  done — partial",
        "Disk fine; kernel path failed.",
        "Steps:    2 of 3 done (plan v1)",
        "Commands: 2 run, 1 failed",
        "Learned:  pve1 kernel = 6.8.12\n",
        "Linked nginx → pve1 (runs on)",
        "Session:  7 — details: nomos sessions show 7",
    ] {
        assert!(sum.contains(want), "{want:?} missing:\n{sum}");
    }
    assert!(!sum.contains("**"), "{sum}");
    // Waiting for an answer to the model's question: says how to answer.
    let mut asking = Renderer::new(Style::PLAIN);
    let (q, _) = feed_all(
        &mut asking,
        &[
            call("q", "ask_operator", json!({"question": "Which **disk**?"})),
            result(
                "q",
                "ask_operator",
                "Question shown to the operator. STOP and wait for the answer.",
                false,
            ),
        ],
    );
    assert_eq!(q, "? Which disk?\n");
    let mut open = view.clone();
    open.session.status = SessionStatus::Executing;
    let sum = asking.summary(&open, false);
    assert!(
        sum.contains("waiting for your answer — reply with: nomos ask --session 7 \"…\""),
        "{sum}"
    );
    // Waiting for the plan's approval: says how to approve.
    let mut waiting = view.clone();
    waiting.session.status = SessionStatus::Planning;
    let sum = Renderer::new(Style::PLAIN).summary(&waiting, true);
    assert!(
        sum.contains(
            "plan v1 waits for your approval — approve with: nomos ask --session 7 \"go\""
        ),
        "{sum}"
    );
}

#[test]
fn no_escape_sequence_without_colour_and_only_sgr_with_it() {
    let events = recorded_task();
    let (out, err) = feed_all(&mut Renderer::new(Style::PLAIN), &events);
    // Model text differs by design (a rule under a heading, backticks without colour).
    let events: Vec<AgentEvent> = events
        .into_iter()
        .filter(|e| !matches!(e, AgentEvent::Message { .. } | AgentEvent::TextDelta { .. }))
        .collect();
    assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}'), "{out}");
    let (out, _) = feed_all(&mut Renderer::new(Style { color: true }), &events);
    assert!(out.contains('\u{1b}'), "colour is used on a terminal");
    assert!(!strip_sgr(&out).contains('\u{1b}'), "{out:?}");
    // The same words either way.
    assert_eq!(strip_sgr(&out), plain(&events));
}

/// B3 for the face: text from the model, a command or a host never prints a hostile character
/// raw, whichever event carries it.
#[test]
fn b3_no_event_prints_a_hostile_character_raw() {
    for (name, c) in hostile_samples() {
        let h = c.to_string();
        let mut e = exec(9, &format!("c{h}"), ExecStatus::AwaitingApproval);
        e.target = format!("host:x{h}");
        e.canonical = format!("rm -rf /{h}");
        e.reason = format!("why{h}");
        e.class = CommandClass::Destructive;
        let mut done = e.clone();
        done.status = ExecStatus::Finished;
        done.exit_code = Some(1);
        done.stdout = format!("out{h}\n");
        done.stderr = format!("err{h}\n");
        let mut events = vec![
            delta(1, &format!("text{h}\nmore{h}")),
            assistant(1, &format!("text{h}\nmore{h}"), false),
            restart(2, 2),
            plan(vec![PlanStep {
                note: Some(format!("n{h}")),
                target: Some(format!("host:{h}")),
                ..step(1, 1, 1, &format!("Title{h}"), StepStatus::Pending)
            }]),
            plan(vec![PlanStep {
                note: Some(format!("n{h}")),
                ..step(1, 1, 1, &format!("Title{h}"), StepStatus::Done)
            }]),
            ev_exec(&e),
            ev_exec(&done),
            AgentEvent::Error {
                session_id: S,
                code: nomos_protocol::ErrorCode::LlmProviderError,
                message: format!("provider said {h}"),
                retryable: false,
            },
        ];
        for (i, tool) in declared_tools().iter().enumerate() {
            let id = format!("t{i}");
            events.push(call(
                &id,
                tool,
                json!({"goal": h, "query": h, "slug": format!("host:{h}"), "attributes": {h.clone(): h},
                       "from": h, "to": h, "kind": h, "title": h, "about": [h], "question": h,
                       "target": h, "command": h}),
            ));
            events.push(result(&id, tool, &format!("Refused: bad {h}."), true));
            events.push(result(
                &id,
                tool,
                &format!("{{\"targets\": [{{\"slug\": \"{h}\"}}], \"title\": \"{h}\"}}"),
                false,
            ));
        }
        for style in [Style::PLAIN, Style { color: true }] {
            let mut r = Renderer::new(style);
            r.denied(9, Some(&format!("no{h}")));
            let (out, err) = feed_all(&mut r, &events);
            let all = strip_sgr(&format!("{out}{err}"));
            assert!(!all.contains(c), "{name} printed raw: {all:?}");
        }
    }
}

#[test]
fn durations_read_like_a_person_wrote_them() {
    assert_eq!(duration(0), "0 ms");
    assert_eq!(duration(15), "15 ms");
    assert_eq!(duration(1234), "1.2 s");
    assert_eq!(duration(59_999), "60.0 s");
    assert_eq!(duration(83_000), "1 min 23 s");
    assert_eq!(duration(-5), "0 ms");
}
