//! `nomos ask "<task>"`: the agent without a window. Approvals are asked at the terminal;
//! without a terminal nothing is approved unless the operator said so with a flag, and no
//! flag approves a destructive command.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, setup};
use nomos_protocol::{AgentEvent, Execution, SessionStatus};
use nomos_store::Store;

use crate::error::CliError;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// The task, in plain words.
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

fn print_event(event: &AgentEvent, json: bool) {
    if json {
        if let Ok(line) = serde_json::to_string(event) {
            println!("{line}");
        }
        return;
    }
    match event {
        AgentEvent::TextDelta { delta, .. } => {
            print!("{delta}");
            let _ = std::io::stdout().flush();
        }
        AgentEvent::Message { message, .. }
            if message.role == nomos_protocol::Role::Assistant && !message.pending =>
        {
            println!();
        }
        AgentEvent::Message { message, .. } if message.role == nomos_protocol::Role::System => {
            eprintln!("· {}", message.text);
        }
        AgentEvent::ToolCall { call, .. } => eprintln!("  → {} {}", call.name, call.arguments),
        AgentEvent::ToolResult {
            name,
            result,
            is_error,
            ..
        } => {
            let first = result.lines().next().unwrap_or_default();
            eprintln!(
                "  ← {name}{}: {first}",
                if *is_error { " (refused/failed)" } else { "" }
            );
        }
        AgentEvent::Plan { steps, .. } => {
            let generation = steps.iter().map(|s| s.generation).max().unwrap_or(0);
            eprintln!("Plan v{generation}:");
            for s in steps.iter().filter(|s| s.generation == generation) {
                eprintln!("  {}. [{:?}] {}", s.seq, s.status, s.title);
            }
        }
        AgentEvent::TaskStatus {
            status,
            outcome,
            summary,
            ..
        } => {
            eprintln!(
                "status: {status:?}{}{}",
                outcome.map(|o| format!(" ({o:?})")).unwrap_or_default(),
                summary
                    .as_ref()
                    .map(|s| format!(": {s}"))
                    .unwrap_or_default()
            );
        }
        AgentEvent::Error { code, message, .. } => eprintln!("error [{code}]: {message}"),
        _ => {}
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

fn describe(e: &Execution) -> String {
    format!(
        "Run `{}` on {} ({:?}: {})?",
        e.canonical, e.target, e.class, e.reason
    )
}

async fn ask(args: AskArgs) -> Result<(), CliError> {
    let agent = open_agent().await?;
    let mut events = agent.subscribe();
    let json = args.json;
    let printer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            print_event(&event, json);
        }
    });
    let stop = tokio_util::sync::CancellationToken::new();
    let worker = agent.spawn_workers(stop.clone());
    let core = |e: nomos_agent::AgentError| CliError::Core(e.code(), e.to_string());

    let session = agent.send(args.session, &args.task).await.map_err(core)?;
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
        if agent.has_plan_awaiting_approval(session).map_err(core)?
            && (args.approve_plan || confirm("Approve the plan?".to_owned()).await)
        {
            agent.approve_plan(session).await.map_err(core)?;
            continue;
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
