//! The trace (`nomos ask --verbose`) and the event lines (`--json`): every event as the agent
//! sent it, tool names, arguments and the notes written for the model included. The face an
//! operator reads by default is [`super::Renderer`].

use nomos_protocol::{AgentEvent, Role};

use super::Out;
use crate::term;

/// What one event prints in the trace or as a JSON line, if anything (a trailing newline
/// included). Every piece of text that came from the model, a command or a host goes through
/// [`term`] (B3).
pub fn trace(event: &AgentEvent, json: bool) -> Option<(Out, String)> {
    if json {
        let line = serde_json::to_string(event).ok()?;
        return Some((Out::Stdout, format!("{}\n", term::json(&line))));
    }
    let err = |s: String| Some((Out::Stderr, s));
    match event {
        // The trace prints a reply whole when its message is finished: an attempt cut and
        // retried must not leave its partial text on stdout.
        AgentEvent::TextDelta { .. } => None,
        AgentEvent::Message { message, .. }
            if message.role == Role::Assistant && !message.pending =>
        {
            if message.text.is_empty() {
                None
            } else {
                Some((Out::Stdout, format!("{}\n", term::block(&message.text))))
            }
        }
        AgentEvent::ModelRetrying { notice, .. } => err(format!("· {}\n", term::line(notice))),
        AgentEvent::Message { message, .. } if message.role == Role::System => {
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
