//! `nomos ask "<task>"`: the agent without a window. Approvals are asked at the terminal;
//! without a terminal nothing is approved unless the operator said so with a flag, and no
//! flag approves a destructive command.
//!
//! Three faces over the same events: the operator's ([`crate::render::Renderer`], the
//! default), the trace (`--verbose`: tool calls, arguments, notes, as the agent sent them)
//! and the event lines (`--json`, one JSON object per event, unchanged by the others).

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, EventStream, setup};
use nomos_protocol::{AgentEvent, ExecStatus, Execution, SessionStatus};
use nomos_store::Store;
use tokio::task::JoinHandle;

use crate::error::CliError;
use crate::render::{Out, Renderer, style::Style, trace::trace};
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
    /// Print the trace: every tool call with its arguments and result, and the notes Nomos
    /// writes for the model.
    #[arg(long, conflicts_with = "json")]
    verbose: bool,
    /// Approve the plan without asking (its config changes then run inside the approval
    /// window). Destructive commands still need an answer at the terminal, and are denied
    /// without one.
    #[arg(long)]
    approve_plan: bool,
}

/// How events are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The operator's face.
    Face,
    /// The trace (`--verbose`).
    Trace,
    /// One JSON object per event (`--json`).
    Json,
}

impl Mode {
    fn from_flags(json: bool, verbose: bool) -> Self {
        match (json, verbose) {
            (true, _) => Self::Json,
            (false, true) => Self::Trace,
            (false, false) => Self::Face,
        }
    }
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
    // The operator's settings from the desktop's Settings view (model, inventory, limits such
    // as the model request deadline) apply here too; an unreadable file is said, and the
    // defaults apply, as in the desktop.
    let settings = setup::RuntimeSettings::load(&data_dir).unwrap_or_else(|e| {
        eprintln!("{e}; using the default settings.");
        setup::RuntimeSettings::default()
    });
    let agent = setup::assemble_from_settings(
        store,
        &data_dir,
        &settings,
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

/// The operator's answer to a command's approval card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    Approve,
    /// Denied, with the reason the model receives (if the operator gave one).
    Deny(Option<String>),
    /// Nobody could be asked (no terminal): denied, and the model is told so.
    NoAnswer,
}

/// What the model receives when nobody could be asked.
const NO_ANSWER_REASON: &str = "no terminal to ask the operator at: denied";

/// Who answers approvals: the terminal, or a script in tests.
pub(crate) trait Operator {
    /// A yes/no question about a plan.
    async fn approve_plan(&mut self, question: String) -> bool;
    /// A command's approval card.
    async fn approve_command(&mut self, question: String) -> Decision;
}

/// The operator at this terminal; no terminal means no.
#[derive(Debug)]
struct TerminalOperator;

impl Operator for TerminalOperator {
    async fn approve_plan(&mut self, question: String) -> bool {
        if !std::io::stdin().is_terminal() {
            eprintln!("{question} [no terminal: denied]");
            return false;
        }
        tokio::task::spawn_blocking(move || {
            eprint!("{question} [y/N] ");
            let _ = std::io::stderr().flush();
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).is_ok() && is_yes(&line)
        })
        .await
        .unwrap_or(false)
    }

    async fn approve_command(&mut self, question: String) -> Decision {
        if !std::io::stdin().is_terminal() {
            eprintln!("{question} [no terminal: denied]");
            return Decision::NoAnswer;
        }
        tokio::task::spawn_blocking(move || {
            read_decision(
                &question,
                &mut std::io::stdin().lock(),
                &mut std::io::stderr(),
            )
        })
        .await
        .unwrap_or(Decision::Deny(None))
    }
}

fn is_yes(answer: &str) -> bool {
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES")
}

/// Asks about one command on `prompt` and reads the answer from `input`: yes approves;
/// anything else denies, and a second line is the reason the model receives (empty: none).
/// The end of input denies.
pub(crate) fn read_decision(
    question: &str,
    input: &mut dyn std::io::BufRead,
    prompt: &mut dyn std::io::Write,
) -> Decision {
    let _ = write!(prompt, "{question} [y/N] ");
    let _ = prompt.flush();
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => return Decision::Deny(None),
        Ok(_) if is_yes(&line) => return Decision::Approve,
        Ok(_) => {}
    }
    let _ = write!(prompt, "Reason for the model (Enter for none): ");
    let _ = prompt.flush();
    let mut reason = String::new();
    let _ = input.read_line(&mut reason);
    let reason = reason.trim();
    Decision::Deny((!reason.is_empty()).then(|| reason.to_owned()))
}

/// Where the faces write.
pub(crate) trait Sink {
    fn write(&mut self, out: Out, text: &str);
}

/// Standard output and standard error.
#[derive(Debug)]
struct Stdio;

impl Sink for Stdio {
    fn write(&mut self, out: Out, text: &str) {
        match out {
            Out::Stdout => {
                let mut o = std::io::stdout().lock();
                let _ = o.write_all(text.as_bytes());
                let _ = o.flush();
            }
            Out::Stderr => {
                let _ = std::io::stderr().write_all(text.as_bytes());
            }
        }
    }
}

/// The approval prompt for one command: the command, target, class and reason are escaped,
/// so no text in them can redraw the prompt (B3).
fn describe(e: &Execution) -> String {
    format!(
        "Approve `{}` on {}? It is {}: {}.",
        term::line(&e.canonical),
        term::line(&e.target),
        match e.class {
            nomos_protocol::CommandClass::ReadOnly => "read-only",
            nomos_protocol::CommandClass::ConfigMutation => "a config change",
            nomos_protocol::CommandClass::Destructive => "destructive",
        },
        term::line(e.reason.trim_end_matches('.'))
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
    let opts = Options {
        mode: Mode::from_flags(args.json, args.verbose),
        approve_plan: args.approve_plan,
        style: Style::detect(),
    };
    ask_with(
        &agent,
        args.session,
        &task,
        opts,
        &mut TerminalOperator,
        &mut Stdio,
    )
    .await
}

/// What a follow prints and approves by itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    pub mode: Mode,
    pub approve_plan: bool,
    pub style: Style,
}

/// Sends the task (a new session, or `session`), then follows it to the end.
pub(crate) async fn ask_with(
    agent: &Agent,
    session: Option<i64>,
    task: &str,
    opts: Options,
    operator: &mut impl Operator,
    sink: &mut impl Sink,
) -> Result<(), CliError> {
    let events = agent.subscribe();
    let stop = tokio_util::sync::CancellationToken::new();
    let worker = agent.spawn_workers(stop.clone());
    let approval_open = match session {
        Some(id) => agent.session_view(id).map_err(core)?.approval_open,
        None => false,
    };
    let result = async {
        // Accepted (or refused) before the turn runs; the turn itself is heard as events.
        let id = agent.submit(session, task).await.map_err(core)?;
        let mut f = Follow::new(agent, id, events, opts, sink);
        f.renderer.prime_approval(approval_open);
        f.wait_done = true;
        f.run(None, operator).await
    }
    .await;
    stop.cancel();
    let _ = worker.await;
    result
}

/// `nomos resume`: arguments.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The session whose work was cut (Nomos closed or crashed mid-task).
    session: i64,
    /// Print every agent event as one JSON object per line.
    #[arg(long)]
    json: bool,
    /// Print the trace (see `nomos ask --verbose`).
    #[arg(long, conflicts_with = "json")]
    verbose: bool,
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
        // An unknown session is an error before anything runs.
        let view = agent.session_view(session).map_err(core)?;
        let opts = Options {
            mode: Mode::from_flags(args.json, args.verbose),
            approve_plan: args.approve_plan,
            style: Style::detect(),
        };
        let events = agent.subscribe();
        let stop = tokio_util::sync::CancellationToken::new();
        let worker = agent.spawn_workers(stop.clone());
        let a = agent.clone();
        let kickoff = tokio::spawn(async move {
            let resumed = a.reconnect(session).await.map_err(core)?;
            if !resumed {
                eprintln!(
                    "Session {session} has no work to resume (finished, paused by Stop, idle or busy elsewhere)."
                );
            }
            Ok(())
        });
        let mut sink = Stdio;
        let mut f = Follow::new(&agent, session, events, opts, &mut sink);
        f.renderer.prime_approval(view.approval_open);
        let result = f.run(Some(kickoff), &mut TerminalOperator).await;
        stop.cancel();
        let _ = worker.await;
        result
    })
}

fn core(e: nomos_agent::AgentError) -> CliError {
    CliError::Core(e.code(), e.to_string())
}

type Pending = Option<JoinHandle<Result<(), CliError>>>;

/// Awaits the operator's action in flight, or never when there is none.
async fn join(pending: &mut Pending) -> Result<(), CliError> {
    match pending {
        Some(handle) => match handle.await {
            Ok(result) => result,
            Err(e) => Err(CliError::Io(std::io::Error::other(e.to_string()))),
        },
        None => std::future::pending().await,
    }
}

/// One session followed to the point where nothing more happens without the operator.
struct Follow<'a, S: Sink> {
    agent: &'a Agent,
    session: i64,
    events: EventStream,
    opts: Options,
    sink: &'a mut S,
    renderer: Renderer,
    /// A turn was started and its `done` has not been heard yet.
    wait_done: bool,
}

impl<'a, S: Sink> Follow<'a, S> {
    fn new(
        agent: &'a Agent,
        session: i64,
        events: EventStream,
        opts: Options,
        sink: &'a mut S,
    ) -> Self {
        Self {
            agent,
            session,
            events,
            opts,
            sink,
            renderer: Renderer::new(opts.style),
            wait_done: false,
        }
    }

    fn show(&mut self, event: &AgentEvent) {
        let ours = event.session_id() == self.session;
        if ours && matches!(event, AgentEvent::Done { .. }) {
            self.wait_done = false;
        }
        match self.opts.mode {
            // The event lines are every event, as they always were.
            Mode::Json => {
                if let Some((out, text)) = trace(event, true) {
                    self.sink.write(out, &text);
                }
            }
            Mode::Trace if ours => {
                if let Some((out, text)) = trace(event, false) {
                    self.sink.write(out, &text);
                }
            }
            Mode::Face if ours => {
                for (out, text) in self.renderer.feed(event) {
                    self.sink.write(out, &text);
                }
            }
            Mode::Trace | Mode::Face => {}
        }
    }

    /// Prints events until the session settles and `pending` (an action the operator took)
    /// has returned.
    async fn settle(&mut self, mut pending: Pending) -> Result<(), CliError> {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tokio::select! {
                biased;
                Some(event) = self.events.recv() => self.show(&event),
                result = join(&mut pending) => {
                    pending = None;
                    result?;
                }
                _ = tick.tick() => {
                    if pending.is_none()
                        && !self.wait_done
                        && self.agent.is_settled(self.session).map_err(core)?
                    {
                        while let Ok(event) = self.events.try_recv() {
                            self.show(&event);
                        }
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Follows the session, asking the operator for each approval, until it settles with
    /// nothing to approve; prints the summary.
    async fn run(
        &mut self,
        mut pending: Pending,
        operator: &mut impl Operator,
    ) -> Result<(), CliError> {
        let agent = self.agent.clone();
        let session = self.session;
        let (view, plan_waits) = loop {
            self.settle(pending.take()).await?;
            let view = agent.session_view(session).map_err(core)?;
            if let Some(e) = view
                .executions
                .iter()
                .find(|e| e.status == ExecStatus::AwaitingApproval)
            {
                let id = e.id;
                let a = agent.clone();
                pending = Some(match operator.approve_command(describe(e)).await {
                    Decision::Approve => {
                        tokio::spawn(async move { a.approve_execution(id).await.map_err(core) })
                    }
                    Decision::NoAnswer => {
                        self.renderer.unanswered(id);
                        tokio::spawn(async move {
                            a.deny_execution(id, Some(NO_ANSWER_REASON))
                                .await
                                .map_err(core)
                        })
                    }
                    Decision::Deny(reason) => {
                        self.renderer.denied(id, reason.as_deref());
                        let reason = reason.unwrap_or_else(|| "denied at the terminal".to_owned());
                        tokio::spawn(async move {
                            a.deny_execution(id, Some(&reason)).await.map_err(core)
                        })
                    }
                });
                continue;
            }
            let plan_waits = agent.has_plan_awaiting_approval(session).map_err(core)?;
            if plan_waits {
                // The generation shown is the one approved; a plan changed meanwhile is refused.
                let generation = view.plan.iter().map(|s| s.generation).max().unwrap_or(0);
                let steps = view
                    .plan
                    .iter()
                    .filter(|s| s.generation == generation)
                    .count();
                if self.opts.approve_plan
                    || operator
                        .approve_plan(format!("Approve plan v{generation} ({steps} steps)?"))
                        .await
                {
                    let a = agent.clone();
                    pending = Some(tokio::spawn(async move {
                        a.approve_plan(session, generation).await.map_err(core)
                    }));
                    continue;
                }
            }
            break (view, plan_waits);
        };
        if self.opts.mode == Mode::Face {
            let summary = self.renderer.summary(&view, plan_waits);
            self.sink.write(Out::Stdout, &summary);
        }
        match view.session.status {
            SessionStatus::Done | SessionStatus::Partial => Ok(()),
            other => Err(CliError::Unfinished(
                session,
                format!("{other:?}").to_lowercase(),
            )),
        }
    }
}

#[cfg(test)]
#[path = "ask_tests.rs"]
mod tests;
