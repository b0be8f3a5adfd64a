//! The terminal face of `nomos ask`: agent events as an operator reads them.
//!
//! The plan is shown once, then only its step changes; each command shows its target, the
//! exact text that runs, its class (with the classifier's reason when it needed approval or
//! was refused), then its exit code, duration and first lines of output; the knowledge tools
//! become short human lines ("Goal: …", "Learned: pve1 kernel = 6.8.12", "Linked nginx →
//! pve1"); model text is rendered markdown, streamed a line at a time. Tool names, raw tool
//! JSON and the notes Nomos writes for the model are never printed here: they are in the
//! trace (`--verbose`, [`trace`]) and the event lines (`--json`).
//!
//! Every piece of text from the model, a command or a host goes through [`crate::term`] (B3).

pub mod markdown;
pub mod style;
pub mod trace;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;

use std::collections::HashMap;

use nomos_protocol::{
    AgentEvent, CommandClass, ExecStatus, Execution, Message, PlanStep, Role, SessionStatus,
    SessionView, StepStatus,
};
use serde_json::Value;

use crate::term;
use markdown::Markdown;
use style::Style;

/// Where a rendered piece goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// The transcript: model text, plan, commands and their output, the summary.
    Stdout,
    /// Around it: retry notices, errors.
    Stderr,
}

/// Lines of a command's output shown under it; the rest is one `nomos sessions show` away.
pub const OUTPUT_LINES: usize = 10;
/// Characters of one output line shown.
const LINE_CHARS: usize = 200;

/// The knowledge tools and the words an operator reads for them. A tool missing here would be
/// shown as "a step the model took" (a test checks every tool the agent declares is listed).
pub const TOOL_WORDS: &[(&str, &str)] = &[
    ("set_goal", "the goal"),
    ("search_knowledge", "a knowledge search"),
    ("get_knowledge_content", "a knowledge read"),
    ("get_entity", "an entity lookup"),
    ("list_entities", "an entity listing"),
    ("get_relations", "a relations lookup"),
    ("list_targets", "the target listing"),
    ("get_health_summary", "the health summary"),
    ("get_state_snapshot", "the state snapshot"),
    ("propose_plan", "the plan"),
    ("update_plan_step", "a step update"),
    ("run", "a command"),
    ("cancel_execution", "a cancel"),
    ("update_entity_attributes", "recording facts"),
    ("create_relationship", "a link between entities"),
    ("upsert_knowledge", "a knowledge entry"),
    ("ask_operator", "a question"),
    ("complete_task", "completing the task"),
];

/// The model's streamed reply for one message.
#[derive(Debug)]
struct TextStream {
    md: Markdown,
    /// Everything received so far (after the last restart).
    seen: String,
    /// Bytes of `seen` already rendered (complete lines).
    done: usize,
    /// Some line of this attempt was printed.
    printed: bool,
    finished: bool,
}

#[derive(Debug, Default)]
struct ExecSeen {
    status: Option<ExecStatus>,
    waited_for_approval: bool,
    /// Its turn went on without it: the result, when it comes, names the command again.
    background: bool,
}

/// Counts for the final summary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Commands that ran to an end (any exit code).
    pub ran: usize,
    /// Of those, the ones that failed (non-zero exit, killed, timed out).
    pub failed: usize,
    /// Commands denied, cancelled or refused before they ran.
    pub not_run: usize,
}

/// The state the face keeps between events.
#[derive(Debug)]
pub struct Renderer {
    style: Style,
    session: Option<i64>,
    /// The plan generation whose listing was printed.
    generation: Option<i64>,
    steps: HashMap<i64, StepStatus>,
    calls: HashMap<String, (String, Value)>,
    execs: HashMap<i64, ExecSeen>,
    /// The execution each `run` call created.
    exec_calls: HashMap<String, i64>,
    /// Executions denied from this face: by the operator (with their reason), or because
    /// nobody could be asked (`None`).
    denials: HashMap<i64, Option<Option<String>>>,
    texts: HashMap<i64, TextStream>,
    approval_open: bool,
    learned: Vec<String>,
    tally: Tally,
    /// The execution whose lines were the last ones printed.
    last_block: Option<i64>,
    /// The last thing the model did was ask the operator this.
    question: Option<String>,
}

type Chunks = Vec<(Out, String)>;

impl Renderer {
    pub fn new(style: Style) -> Self {
        Self {
            style,
            session: None,
            generation: None,
            steps: HashMap::new(),
            calls: HashMap::new(),
            execs: HashMap::new(),
            exec_calls: HashMap::new(),
            denials: HashMap::new(),
            texts: HashMap::new(),
            approval_open: false,
            learned: Vec::new(),
            tally: Tally::default(),
            last_block: None,
            question: None,
        }
    }

    /// Whether the approval window was already open before this face started: only a window
    /// that opens while it watches is announced as the operator's approval.
    pub fn prime_approval(&mut self, open: bool) {
        self.approval_open = open;
    }

    /// The human lines gathered so far: facts, links, knowledge written.
    #[cfg(test)]
    pub fn learned(&self) -> &[String] {
        &self.learned
    }

    /// What one event prints (possibly nothing).
    pub fn feed(&mut self, event: &AgentEvent) -> Chunks {
        self.session.get_or_insert(event.session_id());
        let mut out = Chunks::new();
        match event {
            AgentEvent::TextDelta {
                message_id, delta, ..
            } => self.text_delta(*message_id, delta, &mut out),
            AgentEvent::ModelRetrying {
                message_id, notice, ..
            } => self.restart(*message_id, notice, &mut out),
            AgentEvent::Message { message, .. } => self.message(message, &mut out),
            AgentEvent::ToolCall {
                call, message_id, ..
            } => {
                // The reply streamed before its tool calls: its last line (with no line
                // break) is shown now, above the commands, not after them.
                self.flush_partial(*message_id, &mut out);
                let args = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                self.calls
                    .insert(call.call_id.clone(), (call.name.clone(), args));
            }
            AgentEvent::ToolResult {
                call_id,
                name,
                result,
                is_error,
                ..
            } => self.tool_result(call_id, name, result, *is_error, &mut out),
            AgentEvent::Plan { steps, .. } => self.plan(steps, &mut out),
            AgentEvent::Execution { execution, .. } => self.execution(execution, &mut out),
            AgentEvent::TaskStatus {
                approval_open,
                status,
                ..
            } => {
                if *approval_open && !self.approval_open && !status.is_terminal() {
                    let plan = self
                        .generation
                        .map(|g| format!(" v{g}"))
                        .unwrap_or_default();
                    out.push(self.say(format!(
                        "{} You approved plan{plan}: its steps run now.\n",
                        self.style.green("✓")
                    )));
                }
                self.approval_open = *approval_open;
            }
            AgentEvent::TaskReopened { .. } => {
                out.push(self.say("↺ Follow-up: the finished session reopens with a new plan.\n"));
            }
            AgentEvent::Error { code, message, .. } => out.push((
                Out::Stderr,
                format!(
                    "{} {} [{}]\n",
                    self.style.red("✗"),
                    term::block(message),
                    term::line(code.as_str())
                ),
            )),
            AgentEvent::Done { .. } => {
                // A reply cut by an error or a stop keeps what arrived.
                let ids: Vec<i64> = self.texts.keys().copied().collect();
                for id in ids {
                    self.flush_text(id, &mut out);
                }
            }
            AgentEvent::TurnStarted { .. } | AgentEvent::ApprovalRequested { .. } => {}
        }
        if !out.is_empty() && !matches!(event, AgentEvent::Execution { .. }) {
            self.last_block = None;
        }
        out
    }

    fn say(&self, s: impl Into<String>) -> (Out, String) {
        (Out::Stdout, s.into())
    }

    fn session_ref(&self) -> String {
        match self.session {
            Some(id) => format!("nomos sessions show {id}"),
            None => "nomos sessions show".to_owned(),
        }
    }

    // ---- model text ----------------------------------------------------------------------

    fn stream(&mut self, id: i64) -> &mut TextStream {
        let style = self.style;
        self.texts.entry(id).or_insert_with(|| TextStream {
            md: Markdown::new(style),
            seen: String::new(),
            done: 0,
            printed: false,
            finished: false,
        })
    }

    fn text_delta(&mut self, id: i64, delta: &str, out: &mut Chunks) {
        let t = self.stream(id);
        if t.finished {
            return;
        }
        t.seen.push_str(delta);
        self.render_lines(id, out);
    }

    /// Renders every complete line not yet rendered.
    fn render_lines(&mut self, id: i64, out: &mut Chunks) {
        let t = self.stream(id);
        let mut text = String::new();
        while let Some(pos) = t.seen[t.done..].find('\n') {
            let line = t.seen[t.done..t.done + pos].to_owned();
            t.done += pos + 1;
            text.push_str(&t.md.line(&line));
            t.printed = true;
        }
        if !text.is_empty() {
            self.question = None;
            out.push((Out::Stdout, text));
        }
    }

    /// The rest of a reply (its last line has no line break).
    fn flush_text(&mut self, id: i64, out: &mut Chunks) {
        let t = self.stream(id);
        if t.finished {
            return;
        }
        if t.done < t.seen.len() {
            t.seen.push('\n');
            self.render_lines(id, out);
        }
        let t = self.stream(id);
        t.finished = true;
        t.md.reset();
    }

    /// Shows the unfinished last line of a streamed reply as a line of its own.
    fn flush_partial(&mut self, id: i64, out: &mut Chunks) {
        let Some(t) = self.texts.get_mut(&id) else {
            return;
        };
        if t.finished || t.done >= t.seen.len() {
            return;
        }
        let line = t.seen[t.done..].to_owned();
        t.done = t.seen.len();
        t.printed = true;
        let text = t.md.line(&line);
        self.question = None;
        out.push((Out::Stdout, text));
    }

    fn restart(&mut self, id: i64, notice: &str, out: &mut Chunks) {
        out.push((Out::Stderr, format!("· {}\n", term::line(notice))));
        let style = self.style;
        let t = self.stream(id);
        if t.printed {
            out.push((
                Out::Stdout,
                format!(
                    "{}\n",
                    style.dim("(the reply above was cut off; the model starts it again)")
                ),
            ));
        }
        *t = TextStream {
            md: Markdown::new(style),
            seen: String::new(),
            done: 0,
            printed: false,
            finished: false,
        };
    }

    fn message(&mut self, m: &Message, out: &mut Chunks) {
        // The operator's own words are not echoed; notes Nomos writes are for the model.
        if m.role != Role::Assistant || m.pending {
            return;
        }
        let t = self.stream(m.id);
        if t.finished {
            return;
        }
        if m.text.starts_with(t.seen.as_str()) {
            // Whatever did not stream (a provider that sends the text whole) is shown now.
            let rest = m.text[t.seen.len()..].to_owned();
            t.seen.push_str(&rest);
        } else {
            // The stored text differs from what streamed: the stored one is the reply.
            if t.printed {
                out.push((
                    Out::Stdout,
                    format!("{}\n", self.style.dim("(the reply, as recorded:)")),
                ));
            }
            let t = self.stream(m.id);
            t.seen = m.text.clone();
            t.done = 0;
            t.md.reset();
        }
        self.flush_text(m.id, out);
    }

    // ---- the plan ------------------------------------------------------------------------

    fn plan(&mut self, steps: &[PlanStep], out: &mut Chunks) {
        let Some(generation) = steps.iter().map(|s| s.generation).max() else {
            return;
        };
        let current: Vec<&PlanStep> = steps
            .iter()
            .filter(|s| s.generation == generation)
            .collect();
        let s = self.style;
        if self.generation != Some(generation) {
            let mut text = String::new();
            if let Some(old) = self.generation {
                text.push_str(&format!("Plan v{old} was replaced.\n"));
            }
            text.push_str(&format!(
                "\n{} ({} step{}):\n",
                s.bold(&format!("Plan v{generation}")),
                current.len(),
                if current.len() == 1 { "" } else { "s" }
            ));
            for step in &current {
                let mark = match step.status {
                    StepStatus::Done => format!(" {}", s.green("✓")),
                    StepStatus::Failed => format!(" {}", s.red("✗")),
                    StepStatus::Running => " (running)".to_owned(),
                    StepStatus::Skipped => " (skipped)".to_owned(),
                    StepStatus::Pending | StepStatus::Replaced => String::new(),
                };
                text.push_str(&format!(
                    "  {}. {}{}{}\n",
                    step.seq,
                    step_title(step),
                    step.target
                        .as_deref()
                        .map(|t| s.dim(&format!(" · {}", term::line(t))))
                        .unwrap_or_default(),
                    mark
                ));
            }
            text.push('\n');
            out.push(self.say(text));
            self.generation = Some(generation);
            self.steps = current.iter().map(|st| (st.id, st.status)).collect();
            return;
        }
        for step in current {
            let before = self.steps.insert(step.id, step.status);
            if before == Some(step.status) {
                continue;
            }
            let note = step
                .note
                .as_deref()
                .filter(|n| !n.trim().is_empty())
                .map(|n| format!(" — {}", humanize(&term::line(n))))
                .unwrap_or_default();
            let title = step_title(step);
            let line = match step.status {
                StepStatus::Running => format!("{} {} {}\n", s.cyan("→"), step.seq, s.bold(&title)),
                StepStatus::Done => format!("{} {} {title}{note}\n", s.green("✓"), step.seq),
                StepStatus::Failed => format!("{} {} {title}{note}\n", s.red("✗"), step.seq),
                StepStatus::Skipped => {
                    format!("– {} {title} (skipped){note}\n", step.seq)
                }
                StepStatus::Pending | StepStatus::Replaced => continue,
            };
            out.push(self.say(line));
        }
    }

    // ---- commands ------------------------------------------------------------------------

    fn execution(&mut self, e: &Execution, out: &mut Chunks) {
        let s = self.style;
        if let Some(call) = &e.call_id {
            self.exec_calls.insert(call.clone(), e.id);
        }
        let first = !self.execs.contains_key(&e.id);
        let seen = self.execs.entry(e.id).or_default();
        if seen.status == Some(e.status) {
            return;
        }
        let was_waiting = seen.waited_for_approval;
        // A result that comes after other output names its command again.
        let renamed = !first
            && self.last_block != Some(e.id)
            && (seen.background || seen.waited_for_approval);
        seen.status = Some(e.status);
        if e.status == ExecStatus::AwaitingApproval {
            seen.waited_for_approval = true;
        }
        let mut text = String::new();
        if first {
            text.push_str(&command_header(s, &e.target, &e.canonical, e.class));
            if e.class != CommandClass::ReadOnly {
                let why = match (e.class, e.status) {
                    (_, ExecStatus::AwaitingApproval) => "needs your approval",
                    (CommandClass::ConfigMutation, _) => "runs inside your approval window",
                    _ => "approved",
                };
                text.push_str(&format!(
                    "    {}: {}\n",
                    s.yellow(why),
                    term::line(&e.reason)
                ));
            }
        }
        let ended = !matches!(
            e.status,
            ExecStatus::Queued | ExecStatus::Running | ExecStatus::AwaitingApproval
        );
        if renamed && ended {
            text.push_str(&command_header(s, &e.target, &e.canonical, e.class));
        }
        match e.status {
            ExecStatus::Queued | ExecStatus::Running => {}
            ExecStatus::AwaitingApproval => {}
            ExecStatus::Finished | ExecStatus::Failed | ExecStatus::TimedOut => {
                self.tally.ran += 1;
                let failed =
                    e.status != ExecStatus::Finished || e.exit_code.is_some_and(|c| c != 0);
                if failed {
                    self.tally.failed += 1;
                }
                let head = match (e.status, e.exit_code) {
                    (ExecStatus::TimedOut, _) => "timed out; its processes were killed".to_owned(),
                    (_, Some(code)) => format!("exit {code}"),
                    (_, None) => "failed".to_owned(),
                };
                let duration = e
                    .duration_ms
                    .map(|ms| format!(" · {}", duration(ms)))
                    .unwrap_or_default();
                text.push_str(&format!(
                    "    {} {head}{duration}\n",
                    if failed { s.red("✗") } else { s.green("✓") }
                ));
                let session = self.session_ref();
                text.push_str(&output_block(s, &e.stdout, "│", &session));
                if failed && !e.stderr.trim().is_empty() {
                    text.push_str(&format!("    {}\n", s.red("stderr:")));
                    text.push_str(&output_block(s, &e.stderr, "│", &session));
                }
            }
            ExecStatus::Cancelled => {
                self.tally.not_run += 1;
                let line = match self.denials.get(&e.id) {
                    Some(Some(Some(reason))) => {
                        format!("You denied it: {}; not run.", term::line(reason))
                    }
                    Some(Some(None)) => "You denied it; not run.".to_owned(),
                    Some(None) => "Denied: no terminal to ask you at; not run.".to_owned(),
                    None if was_waiting => "Denied; not run.".to_owned(),
                    None => "Cancelled.".to_owned(),
                };
                text.push_str(&format!("    {} {line}\n", s.red("✗")));
            }
        }
        if !text.is_empty() {
            self.last_block = Some(e.id);
            out.push(self.say(text));
        }
    }

    /// The operator denied execution `id` (with the reason the model receives).
    pub fn denied(&mut self, id: i64, reason: Option<&str>) {
        self.denials.insert(id, Some(reason.map(str::to_owned)));
    }

    /// Execution `id` was denied because nobody could be asked (no terminal).
    pub fn unanswered(&mut self, id: i64) {
        self.denials.insert(id, None);
    }

    // ---- tools ---------------------------------------------------------------------------

    fn tool_result(
        &mut self,
        call_id: &str,
        name: &str,
        result: &str,
        is_error: bool,
        out: &mut Chunks,
    ) {
        let s = self.style;
        let args = self
            .calls
            .get(call_id)
            .map(|(_, a)| a.clone())
            .unwrap_or(Value::Null);
        let arg = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        if name == "run" {
            if let Some(id) = self.exec_calls.get(call_id) {
                // Still running after the inline wait: its result comes when it ends.
                let id = *id;
                let running = self
                    .execs
                    .get(&id)
                    .is_some_and(|e| e.status == Some(ExecStatus::Running));
                if running && !is_error {
                    if let Some(e) = self.execs.get_mut(&id) {
                        e.background = true;
                    }
                    out.push(self.say(format!(
                        "    {}\n",
                        s.dim(
                            "… still running in the background; its result is shown when it ends"
                        )
                    )));
                }
                return;
            }
            // Refused or answered from the ledger before anything ran.
            let mut text = command_header(s, &arg("target"), &arg("command"), None);

            if is_error {
                self.tally.not_run += 1;
                text.push_str(&format!(
                    "    {} not run: {}\n",
                    s.red("✗"),
                    run_refusal(&arg("command"), self.generation.is_some())
                ));
            } else if result.starts_with("Not started again") {
                text.push_str(&format!(
                    "    {} not started again: the same command is already in flight\n",
                    s.dim("↺")
                ));
            } else {
                text.push_str(&format!(
                    "    {} not run again: it already ran in this plan, its result was reused\n",
                    s.dim("↺")
                ));
            }
            out.push(self.say(text));
            return;
        }
        if !TOOL_WORDS.iter().any(|(n, _)| *n == name) {
            out.push(self.say(format!(
                "{} The model asked for a tool that does not exist; Nomos refused it.\n",
                s.dim("·")
            )));
            return;
        }
        if is_error {
            // Why is written for the model (and in the trace); the operator reads what.
            let what = TOOL_WORDS
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("a step", |(_, w)| *w);
            out.push(self.say(format!(
                "{} Nomos refused {what} the model asked for; it was told why.\n",
                s.yellow("!")
            )));
            return;
        }
        let line = match name {
            "set_goal" => Some(format!("{} {}", s.bold("Goal:"), term::line(&arg("goal")))),
            "search_knowledge" => Some(format!(
                "Searched what is known for “{}”: {}",
                term::line(&arg("query")),
                search_counts(result)
            )),
            "get_knowledge_content" => Some(
                match serde_json::from_str::<Value>(result)
                    .ok()
                    .and_then(|v| v.get("title").and_then(Value::as_str).map(str::to_owned))
                {
                    Some(title) => format!("Read knowledge “{}”", term::line(&title)),
                    None => "Read a knowledge entry".to_owned(),
                },
            ),
            "get_entity" => {
                let slug = arg("slug");
                Some(if result.starts_with("No entity") {
                    format!("Looked up {}: not known yet", short(&slug))
                } else {
                    format!("Looked up {}", short(&slug))
                })
            }
            "list_entities" => Some(match serde_json::from_str::<Value>(result).ok() {
                Some(Value::Array(a)) => format!("Listed {} known entities", a.len()),
                _ => "Listed known entities".to_owned(),
            }),
            "get_relations" => Some(format!(
                "Looked up what {} connects to",
                short(&arg("slug"))
            )),
            "list_targets" => Some(match target_slugs(result) {
                Some(t) if !t.is_empty() => format!("Targets: {}", t.join(", ")),
                _ => "Listed the targets".to_owned(),
            }),
            "get_health_summary" => Some("Read the fleet's health summary".to_owned()),
            "get_state_snapshot" => Some("Read this session's recorded state".to_owned()),
            "cancel_execution" => Some(format!(
                "Cancelled command #{}",
                args.get("id").map(Value::to_string).unwrap_or_default()
            )),
            "update_entity_attributes" => {
                let line = learned_line(&arg("slug"), args.get("attributes"));
                self.learned.push(line.clone());
                Some(line)
            }
            "create_relationship" => {
                let kind = arg("kind").replace('_', " ");
                let line = format!(
                    "Linked {} → {}{}",
                    short(&arg("from")),
                    short(&arg("to")),
                    if kind.trim().is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", term::line(&kind))
                    }
                );
                self.learned.push(line.clone());
                Some(line)
            }
            "upsert_knowledge" => {
                let about: Vec<String> = args
                    .get("about")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(short).collect())
                    .unwrap_or_default();
                let line = format!(
                    "Saved {} “{}”{}",
                    term::line(&arg("kind")),
                    term::line(&arg("title")),
                    if about.is_empty() {
                        String::new()
                    } else {
                        format!(" about {}", about.join(", "))
                    }
                );
                self.learned.push(line.clone());
                Some(line)
            }
            "ask_operator" => {
                let q = arg("question");
                self.question = Some(q.clone());
                let body = markdown::render(s, &q);
                out.push(self.say(format!("{} {}", s.yellow("?"), body)));
                return;
            }
            // The only way a completion that was not refused says "partial": the model asked
            // for success, but nothing the commands found was recorded as a fact.
            "complete_task"
                if arg("outcome") == "success" && result.starts_with("Completed as partial") =>
            {
                Some(
                    "Recorded as partial, not success: what the commands found was not written \
                     back as facts."
                        .to_owned(),
                )
            }
            // Shown by the plan, the commands and the summary.
            _ => None,
        };
        if let Some(line) = line {
            out.push(self.say(format!("{} {line}\n", s.dim("·"))));
        }
    }

    // ---- the end -------------------------------------------------------------------------

    /// The closing block: outcome, steps, commands, what was learned, the session id.
    pub fn summary(&self, view: &SessionView, plan_waits: bool) -> String {
        let s = self.style;
        let id = view.session.id;
        let generation = view.plan.iter().map(|p| p.generation).max();
        let steps: Vec<&PlanStep> = view
            .plan
            .iter()
            .filter(|p| Some(p.generation) == generation)
            .collect();
        let mut out = format!("\n{}\n", s.bold("Summary"));
        let status = view.session.status;
        let outcome = match (status, view.session.outcome) {
            (SessionStatus::Done, _) => s.green("done — success"),
            (SessionStatus::Partial, _) => s.yellow("done — partial"),
            (SessionStatus::Failed, _) => s.red("failed"),
            (SessionStatus::Abandoned, _) => s.red("abandoned"),
            _ if self.question.is_some() => s.yellow(&format!(
                "waiting for your answer — reply with: nomos ask --session {id} \"…\""
            )),
            _ if plan_waits => s.yellow(&format!(
                "plan v{} waits for your approval — approve with: nomos ask --session {id} \"go\"",
                generation.unwrap_or(1)
            )),
            (other, _) => s.yellow(&format!(
                "{} — continue with: nomos ask --session {id} \"…\"",
                status_word(other)
            )),
        };
        out.push_str(&format!("  Outcome:  {outcome}\n"));
        if let Some(summary) = view
            .session
            .summary
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        {
            for line in markdown::render(s, summary).lines() {
                out.push_str(&format!("            {line}\n"));
            }
        }
        if let Some(g) = generation {
            let done = steps
                .iter()
                .filter(|p| p.status == StepStatus::Done)
                .count();
            out.push_str(&format!(
                "  Steps:    {done} of {} done (plan v{g})\n",
                steps.len()
            ));
        }
        let t = &self.tally;
        let mut commands = format!("{} run", t.ran);
        if t.failed > 0 {
            commands.push_str(&format!(", {} failed", t.failed));
        }
        if t.not_run > 0 {
            commands.push_str(&format!(", {} not run", t.not_run));
        }
        out.push_str(&format!("  Commands: {commands}\n"));
        for (i, line) in self.learned.iter().enumerate() {
            let label = if i == 0 {
                "  Learned:  "
            } else {
                "            "
            };
            let line = line.strip_prefix("Learned: ").unwrap_or(line);
            out.push_str(&format!("{label}{line}\n"));
        }
        out.push_str(&format!(
            "  Session:  {id} — details: nomos sessions show {id}\n"
        ));
        out
    }
}

fn status_word(s: SessionStatus) -> &'static str {
    match s {
        SessionStatus::Idle => "idle",
        SessionStatus::Planning => "planning",
        SessionStatus::Executing => "executing",
        SessionStatus::Done => "done",
        SessionStatus::Partial => "partial",
        SessionStatus::Failed => "failed",
        SessionStatus::Abandoned => "abandoned",
    }
}

fn class_word(c: CommandClass) -> &'static str {
    match c {
        CommandClass::ReadOnly => "read-only",
        CommandClass::ConfigMutation => "config change",
        CommandClass::Destructive => "destructive",
    }
}

/// `  host:local $ df -h /  · read-only`
fn command_header(
    s: Style,
    target: &str,
    command: &str,
    class: impl Into<Option<CommandClass>>,
) -> String {
    let class = class
        .into()
        .map(|c| {
            let w = class_word(c);
            let w = match c {
                CommandClass::ReadOnly => s.dim(w),
                CommandClass::ConfigMutation => s.yellow(w),
                CommandClass::Destructive => s.red(w),
            };
            format!("  · {w}")
        })
        .unwrap_or_default();
    format!(
        "  {} {} {}{class}\n",
        s.cyan(&term::line(target)),
        s.dim("$"),
        s.bold(&term::line(command)),
    )
}

/// The first [`OUTPUT_LINES`] lines of a stream, each escaped and cut, then how many more
/// there are and where to read them.
fn output_block(s: Style, text: &str, bar: &str, session: &str) -> String {
    let text = text.trim_end_matches(['\n', '\r']);
    if text.trim().is_empty() {
        return format!("    {}\n", s.dim("(no output)"));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = String::new();
    for line in lines.iter().take(OUTPUT_LINES) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let shown: String = if line.chars().count() > LINE_CHARS {
            let mut cut: String = line.chars().take(LINE_CHARS).collect();
            cut.push('…');
            cut
        } else {
            (*line).to_owned()
        };
        out.push_str(&format!("    {} {}\n", s.dim(bar), term::line(&shown)));
    }
    if lines.len() > OUTPUT_LINES {
        let more = lines.len() - OUTPUT_LINES;
        out.push_str(&format!(
            "    {}\n",
            s.dim(&format!(
                "… {more} more line{} — see them with: {session}",
                if more == 1 { "" } else { "s" }
            ))
        ));
    }
    out
}

/// `1234` → `1.2 s`, `83000` → `1 min 23 s`.
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {} s", ms / 60_000, ms % 60_000 / 1000)
    }
}

/// An entity slug as the operator names it: `host:pve1` → `pve1`.
fn short(slug: &str) -> String {
    let name = match slug.split_once(':') {
        Some((kind, name))
            if !name.is_empty() && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            name
        }
        _ => slug,
    };
    term::line(name).into_owned()
}

fn value_text(v: &Value) -> String {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".to_owned(),
        other => other.to_string(),
    };
    let text = if text.chars().count() > 60 {
        let mut t: String = text.chars().take(59).collect();
        t.push('…');
        t
    } else {
        text
    };
    term::line(&text).into_owned()
}

/// `Learned: pve1 kernel = 6.8.12, os = Debian 12`
fn learned_line(slug: &str, attributes: Option<&Value>) -> String {
    let facts: Vec<String> = attributes
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{} = {}", term::line(k), value_text(v)))
                .collect()
        })
        .unwrap_or_default();
    let shown = facts.len().min(4);
    let mut line = format!("Learned: {} {}", short(slug), facts[..shown].join(", "));
    if facts.len() > shown {
        line.push_str(&format!(" and {} more", facts.len() - shown));
    }
    line.trim_end().to_owned()
}

fn search_counts(result: &str) -> String {
    if result.starts_with("Nothing known") {
        return "nothing yet".to_owned();
    }
    let Ok(v) = serde_json::from_str::<Value>(result) else {
        return "some results".to_owned();
    };
    let count = |k: &str| v.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    let (k, e) = (count("knowledge"), count("entities"));
    format!(
        "{k} entr{}, {e} entit{}",
        if k == 1 { "y" } else { "ies" },
        if e == 1 { "y" } else { "ies" }
    )
}

fn target_slugs(result: &str) -> Option<Vec<String>> {
    let v: Value = serde_json::from_str(result).ok()?;
    Some(
        v.get("targets")?
            .as_array()?
            .iter()
            .filter_map(|t| t.get("slug").and_then(Value::as_str))
            .map(|s| term::line(s).into_owned())
            .collect(),
    )
}

/// A step title in the operator's words: the write-back step Nomos appends is named for what
/// it does, and tool names a model put in a title become plain words.
fn step_title(step: &PlanStep) -> String {
    if step.title == nomos_store::WRITE_BACK_TITLE {
        return "Record what was learned (facts, links, knowledge)".to_owned();
    }
    humanize(&term::line(&step.title))
}

/// Tool names in text meant for the operator (a step title, a step note) as plain words.
fn humanize(text: &str) -> String {
    let mut out = text.to_owned();
    for (name, words) in [
        ("update_entity_attributes", "record facts"),
        ("create_relationship", "link entities"),
        ("upsert_knowledge", "save knowledge"),
        ("update_plan_step", "update the step"),
        ("propose_plan", "propose a plan"),
        ("complete_task", "complete the task"),
        ("search_knowledge", "search knowledge"),
        ("get_knowledge_content", "read knowledge"),
        ("get_entity", "look up the entity"),
        ("list_entities", "list entities"),
        ("get_relations", "look up relations"),
        ("list_targets", "list targets"),
        ("get_health_summary", "read the health summary"),
        ("get_state_snapshot", "read the recorded state"),
        ("cancel_execution", "cancel the command"),
        ("ask_operator", "ask the operator"),
        ("set_goal", "set the goal"),
    ] {
        out = out.replace(name, words);
    }
    out
}

/// Why a `run` was refused before anything ran, in the operator's terms, from what the face
/// knows itself: the refusal text is written for the model (the trace shows it).
fn run_refusal(command: &str, plan_shown: bool) -> String {
    if command.trim().is_empty() {
        return "the model's request named no command.".to_owned();
    }
    let decision = nomos_policy::classify(command);
    if decision
        .canonical
        .as_deref()
        .is_none_or(|c| c.trim().is_empty())
    {
        return format!(
            "Nomos could not check this command ({}), so it never runs.",
            term::line(&decision.summary())
        );
    }
    if !plan_shown {
        return "no plan yet; a command runs only under a plan.".to_owned();
    }
    "refused by Nomos (the model was told why; --verbose shows it).".to_owned()
}
