//! `nomos ask "<task>"`: the agent without a window. Approvals are asked at the terminal;
//! without a terminal nothing is approved unless the operator said so with a flag, and no
//! flag approves a destructive command.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, setup};
use nomos_protocol::{AgentEvent, Execution, SessionStatus};
use nomos_store::Store;

use crate::error::CliError;
use crate::term;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// The task, in plain words; `-` reads it from standard input (a message longer than
    /// the command line allows, or one from a file: `nomos ask - < task.txt`).
    task: String,
    /// Continue an existing session instead of starting one.
    #[arg(long)]
    session: Option<i64>,
    /// Print every agent event as one JSON object per line.
    #[arg(long)]
    json: bool,
    /// Approve the plan without asking (its config changes then run inside the approval
    /// window). Destructive commands still need an answer at the terminal, and are denied
    /// without one.
    #[arg(long)]
    approve_plan: bool,
}

pub fn run(args: AskArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(ask(args))
}

async fn open_agent() -> Result<Agent, CliError> {
    let data_dir =
        nomos_store::default_data_dir().map_err(|e| CliError::Core(e.code(), e.to_string()))?;
    let store =
        Store::open_in_dir(&data_dir).map_err(|e| CliError::Core(e.code(), e.to_string()))?;
    let agent = setup::assemble_from_settings(
        store,
        &data_dir,
        &setup::RuntimeSettings::default(),
        &nomos_llm::ProcessEnv,
        None,
        AgentConfig::default(),
    )
    .await
    .map_err(|e| CliError::Core(e.code(), e.to_string()))?;
    agent
        .recover()
        .map_err(|e| CliError::Core(e.code(), e.to_string()))?;
    Ok(agent)
}

/// Asks a yes/no question on the terminal; no terminal means no.
async fn confirm(question: String) -> bool {
    if !std::io::stdin().is_terminal() {
        eprintln!("{question} [no terminal: denied]");
        return false;
    }
    tokio::task::spawn_blocking(move || {
        eprint!("{question} [y/N] ");
        let _ = std::io::stderr().flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).is_ok()
            && matches!(line.trim(), "y" | "Y" | "yes" | "Yes")
    })
    .await
    .unwrap_or(false)
}

/// Where a rendered event goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// The model's own text.
    Stdout,
    /// Everything around it: notes, tool cards, plans, status, errors.
    Stderr,
}

/// What one event prints, if anything (a trailing newline included where one belongs). Every
/// piece of text that came from the model, a command or a host goes through [`term`] (B3).
fn render(event: &AgentEvent, json: bool) -> Option<(Out, String)> {
    if json {
        let line = serde_json::to_string(event).ok()?;
        return Some((Out::Stdout, format!("{}\n", term::json(&line))));
    }
    let err = |s: String| Some((Out::Stderr, s));
    match event {
        // The text face prints a reply whole when its message is finished (below): an
        // attempt cut and retried must not leave its partial text on stdout.
        AgentEvent::TextDelta { .. } => None,
        AgentEvent::Message { message, .. }
            if message.role == nomos_protocol::Role::Assistant && !message.pending =>
        {
            if message.text.is_empty() {
                None
            } else {
                Some((Out::Stdout, format!("{}\n", term::block(&message.text))))
            }
        }
        // The attempt restarted: its partial text is void (nothing of it was printed) and the
        // operator sees why ("no reply from the model for 2 min — retrying (2/3)").
        AgentEvent::ModelRetrying { notice, .. } => err(format!("· {}\n", term::line(notice))),
        AgentEvent::Message { message, .. } if message.role == nomos_protocol::Role::System => {
            err(format!("· {}\n", term::block(&message.text)))
        }
        AgentEvent::ToolCall { call, .. } => err(format!(
            "  → {} {}\n",
            term::line(&call.name),
            term::line(&call.arguments)
        )),
        AgentEvent::ToolResult {
            name,
            result,
            is_error,
            ..
        } => {
            let first = result.lines().next().unwrap_or_default();
            err(format!(
                "  ← {}{}: {}\n",
                term::line(name),
                if *is_error { " (refused/failed)" } else { "" },
                term::line(first)
            ))
        }
        AgentEvent::Plan { steps, .. } => {
            let generation = steps.iter().map(|s| s.generation).max().unwrap_or(0);
            let mut out = format!("Plan v{generation}:\n");
            for s in steps.iter().filter(|s| s.generation == generation) {
                out.push_str(&format!(
                    "  {}. [{:?}] {}{}\n",
                    s.seq,
                    s.status,
                    term::line(&s.title),
                    s.target
                        .as_deref()
                        .map(|t| format!(" ({})", term::line(t)))
                        .unwrap_or_default()
                ));
            }
            err(out)
        }
        AgentEvent::TaskStatus {
            status,
            outcome,
            summary,
            ..
        } => err(format!(
            "status: {status:?}{}{}\n",
            outcome.map(|o| format!(" ({o:?})")).unwrap_or_default(),
            summary
                .as_ref()
                .map(|s| format!(": {}", term::block(s)))
                .unwrap_or_default()
        )),
        AgentEvent::Error { code, message, .. } => err(format!(
            "error [{}]: {}\n",
            term::line(code.as_str()),
            term::block(message)
        )),
        _ => None,
    }
}

fn print_event(event: &AgentEvent, json: bool) {
    let Some((out, text)) = render(event, json) else {
        return;
    };
    match out {
        Out::Stdout => {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
        Out::Stderr => eprint!("{text}"),
    }
}

async fn wait_settled(agent: &Agent, session: i64) -> Result<(), CliError> {
    loop {
        if agent
            .is_settled(session)
            .map_err(|e| CliError::Core(e.code(), e.to_string()))?
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The approval prompt for one command: the command, target and reason are escaped, so no
/// text in them can redraw the prompt (B3).
fn describe(e: &Execution) -> String {
    format!(
        "Run `{}` on {} ({:?}: {})?",
        term::line(&e.canonical),
        term::line(&e.target),
        e.class,
        term::line(&e.reason)
    )
}

/// The task text: the argument, or everything on `input` when the argument is `-`.
fn task_text(arg: &str, input: &mut dyn std::io::Read) -> Result<String, CliError> {
    if arg != "-" {
        return Ok(arg.to_owned());
    }
    let mut text = String::new();
    input.read_to_string(&mut text)?;
    let text = text.trim_end_matches(['\n', '\r']).to_owned();
    if text.trim().is_empty() {
        return Err(CliError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "`nomos ask -` read an empty task from standard input",
        )));
    }
    Ok(text)
}

async fn ask(args: AskArgs) -> Result<(), CliError> {
    let task = task_text(&args.task, &mut std::io::stdin().lock())?;
    let agent = open_agent().await?;
    follow(agent, args.json, args.approve_plan, |agent| async move {
        agent.send(args.session, &task).await.map_err(core)
    })
    .await
}

/// `nomos resume`: arguments.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The session whose work was cut (Nomos closed or crashed mid-task).
    session: i64,
    /// Print every agent event as one JSON object per line.
    #[arg(long)]
    json: bool,
    /// Approve the plan without asking (see `nomos ask --approve-plan`).
    #[arg(long)]
    approve_plan: bool,
}

/// Resumes a session whose work was in flight (I12), the way the desktop does when it shows
/// that session again: a finished, paused or busy session is left as it is.
pub fn resume(args: ResumeArgs) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let agent = open_agent().await?;
        let session = args.session;
        follow(agent, args.json, args.approve_plan, |agent| async move {
            let resumed = agent.reconnect(session).await.map_err(core)?;
            if !resumed {
                eprintln!(
                    "Session {session} has no work to resume (finished, paused by Stop, idle or busy elsewhere)."
                );
            }
            Ok(session)
        })
        .await
    })
}

fn core(e: nomos_agent::AgentError) -> CliError {
    CliError::Core(e.code(), e.to_string())
}

/// Starts the session's turn with `start`, prints its events, asks the operator at the
/// terminal for each approval, and returns when the session settles.
async fn follow<F, Fut>(
    agent: Agent,
    json: bool,
    approve_plan: bool,
    start: F,
) -> Result<(), CliError>
where
    F: FnOnce(Agent) -> Fut,
    Fut: std::future::Future<Output = Result<i64, CliError>>,
{
    let mut events = agent.subscribe();
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            print_event(&event, json);
        }
    });
    let stop = tokio_util::sync::CancellationToken::new();
    let worker = agent.spawn_workers(stop.clone());

    let session = start(agent.clone()).await?;
    let outcome = loop {
        wait_settled(&agent, session).await?;
        let view = agent.session_view(session).map_err(core)?;
        if let Some(e) = view
            .executions
            .iter()
            .find(|e| e.status == nomos_protocol::ExecStatus::AwaitingApproval)
        {
            if confirm(describe(e)).await {
                agent.approve_execution(e.id).await.map_err(core)?;
            } else {
                agent
                    .deny_execution(e.id, Some("denied at the terminal"))
                    .await
                    .map_err(core)?;
            }
            continue;
        }
        if agent.has_plan_awaiting_approval(session).map_err(core)? {
            // The generation shown is the one approved; a plan changed meanwhile is refused.
            let generation = view.plan.iter().map(|s| s.generation).max().unwrap_or(0);
            if approve_plan || confirm(format!("Approve plan v{generation}?")).await {
                agent
                    .approve_plan(session, generation)
                    .await
                    .map_err(core)?;
                continue;
            }
        }
        break view.session.status;
    };
    stop.cancel();
    let _ = worker.await;
    drop(agent);
    let _ = tokio::time::timeout(Duration::from_millis(200), printer).await;
    match outcome {
        SessionStatus::Done | SessionStatus::Partial => Ok(()),
        other => Err(CliError::Unfinished(
            session,
            format!("{other:?}").to_lowercase(),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
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

    fn assistant(id: i64, text: &str, pending: bool) -> AgentEvent {
        AgentEvent::Message {
            session_id: 1,
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

    fn delta(id: i64, d: &str) -> AgentEvent {
        AgentEvent::TextDelta {
            session_id: 1,
            message_id: id,
            delta: d.to_owned(),
        }
    }

    fn stdout_of(events: &[AgentEvent]) -> String {
        events
            .iter()
            .filter_map(|e| render(e, false))
            .filter(|(out, _)| *out == Out::Stdout)
            .map(|(_, t)| t)
            .collect()
    }

    #[test]
    fn a_retried_attempt_replaces_the_partial_text_in_the_text_face() {
        let q = "The question \"why\" has three answers.";
        // Cut after a prefix, once, several times, at different points, across two messages.
        for cuts in [
            vec![13usize],
            vec![13, 13, 13],
            vec![3, 20],
            vec![1, q.len() - 1],
        ] {
            let mut events = vec![assistant(5, "", true)];
            for (i, cut) in cuts.iter().enumerate() {
                events.push(delta(5, &q[..*cut]));
                // The restart, as the agent sends it.
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
            let out = stdout_of(&events);
            assert_eq!(out, format!("{q}\nSecond reply.\n"), "cuts {cuts:?}");
            assert_eq!(out.matches("The question").count(), 1, "{out:?}");
        }
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
        let (out, text) = render(&restart(5, 2), false).unwrap();
        assert_eq!(out, Out::Stderr);
        assert_eq!(
            text,
            "· no reply from the model for 2 min — retrying (2/3)\n"
        );
        let (out, line) = render(&restart(5, 2), true).unwrap();
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
                    let Some((_, text)) = render(&event, json) else {
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
}
