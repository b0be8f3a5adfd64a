//! Desktop notifications for what needs the operator: a task finished, an approval or a
//! question waits, an error. Only when the window is not focused, and never twice in a row
//! for the same thing.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use nomos_protocol::{AgentEvent, SessionStatus};
use tauri::Manager as _;
use tauri_plugin_notification::NotificationExt as _;

/// The same notice for the same session is not repeated within this long.
const REPEAT_AFTER: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub struct Notifier {
    last: HashMap<(i64, &'static str), Instant>,
}

impl Notifier {
    /// The notice for an event, if it deserves one: (kind, title, body).
    fn notice(event: &AgentEvent) -> Option<(&'static str, &'static str, String)> {
        match event {
            AgentEvent::TaskStatus {
                status, summary, ..
            } => match status {
                SessionStatus::Done => {
                    Some(("done", "Task done", summary.clone().unwrap_or_default()))
                }
                SessionStatus::Partial => Some((
                    "done",
                    "Task partly done",
                    summary.clone().unwrap_or_default(),
                )),
                SessionStatus::Failed => {
                    Some(("done", "Task failed", summary.clone().unwrap_or_default()))
                }
                _ => None,
            },
            AgentEvent::ApprovalRequested { execution, .. } => Some((
                "approval",
                "Approval needed",
                match execution {
                    Some(e) => format!("{} on {}", e.command, e.target),
                    None => "A plan waits for your approval.".to_owned(),
                },
            )),
            AgentEvent::ToolCall { call, .. } if call.name == "ask_operator" => {
                let question = serde_json::from_str::<serde_json::Value>(&call.arguments)
                    .ok()
                    .and_then(|v| {
                        v.get("question")
                            .and_then(|q| q.as_str())
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                Some(("question", "Nomos has a question", question))
            }
            AgentEvent::Error { message, .. } => {
                Some(("error", "Nomos hit an error", message.clone()))
            }
            _ => None,
        }
    }

    pub fn maybe_notify<R: tauri::Runtime>(
        &mut self,
        app: &tauri::AppHandle<R>,
        event: &AgentEvent,
    ) {
        let Some((kind, title, body)) = Self::notice(event) else {
            return;
        };
        let focused = app
            .get_webview_window("main")
            .and_then(|w| w.is_focused().ok())
            .unwrap_or(false);
        if focused {
            return;
        }
        let key = (event.session_id(), kind);
        let now = Instant::now();
        if self
            .last
            .get(&key)
            .is_some_and(|t| now.duration_since(*t) < REPEAT_AFTER)
        {
            return;
        }
        self.last.insert(key, now);
        if let Err(e) = app.notification().builder().title(title).body(body).show() {
            tracing::warn!("notification not shown: {e}");
        }
    }
}
