//! Desktop notifications for what needs the operator: a task finished (done, partly done,
//! failed), an approval or a question waits, an error. Raised from the core's event stream
//! (see [`crate::relay`]), once per app whatever the webview does, only while the window is
//! not focused, and never twice for the same thing.
//!
//! On Linux a notification is a freedesktop notification with a default action: clicking it
//! focuses the window and opens its session ([`OPEN_SESSION_EVENT`]). The notification plugin
//! delivers no clicks on the Linux desktop, so this path uses `notify-rust` directly and
//! waits for the daemon's `ActionInvoked` on a thread of its own.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use nomos_protocol::{AgentEvent, SessionStatus};
use tauri::{Emitter as _, Manager as _};

/// The same kind of notice for the same session is not repeated within this long.
pub const REPEAT_AFTER: Duration = Duration::from_secs(30);

/// The webview listens for this event; its payload is the session id to open.
pub const OPEN_SESSION_EVENT: &str = "open-session";

/// The freedesktop action a click on the notification's body invokes.
const DEFAULT_ACTION: &str = "default";

/// A notification body longer than this is cut: it is a pointer to the session, not a copy.
const MAX_BODY_CHARS: usize = 240;

/// What a notice is about; one of each per session at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The task reached done, partial or failed.
    Finished,
    /// A plan or a command waits for the operator's approval.
    Approval,
    /// The model asked the operator a question.
    Question,
    /// A turn failed.
    Error,
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub session_id: i64,
    pub kind: Kind,
    pub title: &'static str,
    pub body: String,
}

/// The notice an event deserves, if any. Pure, so the unit tests cover every variant.
pub fn notice(event: &AgentEvent) -> Option<Notice> {
    let session_id = event.session_id();
    let (kind, title, body) = match event {
        AgentEvent::TaskStatus {
            status, summary, ..
        } => {
            let title = match status {
                SessionStatus::Done => "Task done",
                SessionStatus::Partial => "Task partly done",
                SessionStatus::Failed => "Task failed",
                SessionStatus::Idle
                | SessionStatus::Planning
                | SessionStatus::Executing
                | SessionStatus::Abandoned => return None,
            };
            (Kind::Finished, title, summary.clone().unwrap_or_default())
        }
        AgentEvent::ApprovalRequested { execution, .. } => (
            Kind::Approval,
            "Approval needed",
            match execution {
                Some(e) => format!("{} on {}", e.command, e.target),
                None => "A plan waits for your approval.".to_owned(),
            },
        ),
        AgentEvent::ToolCall { call, .. } if call.name == "ask_operator" => {
            let question = serde_json::from_str::<serde_json::Value>(&call.arguments)
                .ok()
                .and_then(|v| v.get("question")?.as_str().map(str::to_owned))
                .unwrap_or_default();
            (Kind::Question, "Nomos has a question", question)
        }
        AgentEvent::Error { message, .. } => (Kind::Error, "Nomos hit an error", message.clone()),
        AgentEvent::TurnStarted { .. }
        | AgentEvent::TextDelta { .. }
        | AgentEvent::ModelRetrying { .. }
        | AgentEvent::Message { .. }
        | AgentEvent::ToolCall { .. }
        | AgentEvent::ToolResult { .. }
        | AgentEvent::Plan { .. }
        | AgentEvent::Execution { .. }
        | AgentEvent::TaskReopened { .. }
        | AgentEvent::Done { .. } => return None,
    };
    Some(Notice {
        session_id,
        kind,
        title,
        body: shorten(body.trim()),
    })
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_BODY_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_BODY_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Decides which notices are shown: the de-duplication state of the whole app.
#[derive(Debug, Default)]
pub struct Notifier {
    /// When each (session, kind) was last shown.
    last: HashMap<(i64, Kind), Instant>,
    /// The last status each session reported: a finished task is announced when it becomes
    /// finished, not again when the same status is reported once more.
    status: HashMap<i64, SessionStatus>,
}

impl Notifier {
    /// The notice to show for `event` at `now`, given whether the window has the focus.
    pub fn consider(&mut self, event: &AgentEvent, focused: bool, now: Instant) -> Option<Notice> {
        let previous = match event {
            AgentEvent::TaskStatus {
                session_id, status, ..
            } => self.status.insert(*session_id, *status),
            _ => None,
        };
        let notice = notice(event)?;
        if focused {
            // The operator is looking at the window; it shows the same thing.
            return None;
        }
        if let AgentEvent::TaskStatus { status, .. } = event
            && previous == Some(*status)
        {
            return None;
        }
        let key = (notice.session_id, notice.kind);
        if self
            .last
            .get(&key)
            .is_some_and(|t| now.saturating_duration_since(*t) < REPEAT_AFTER)
        {
            return None;
        }
        // A new task state starts afresh: the next question or approval is news again.
        if notice.kind == Kind::Finished {
            self.last
                .retain(|(session, _), _| *session != notice.session_id);
        }
        self.last.insert(key, now);
        Some(notice)
    }
}

/// Whether the main window has the keyboard focus (no window counts as not focused).
pub fn window_focused<R: tauri::Runtime>(app: &tauri::AppHandle<R>) -> bool {
    app.get_webview_window("main")
        .and_then(|w| w.is_focused().ok())
        .unwrap_or(false)
}

/// Brings the window forward and tells the webview to open `session`.
pub fn open_session<R: tauri::Runtime>(app: &tauri::AppHandle<R>, session: i64) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
    if let Err(e) = app.emit(OPEN_SESSION_EVENT, session) {
        tracing::warn!(session, "the window was not told to open the session: {e}");
    }
}

/// Shows `notice`; a click on it opens its session.
#[cfg(target_os = "linux")]
pub fn show<R: tauri::Runtime>(app: &tauri::AppHandle<R>, notice: Notice) {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Notifications whose click is still awaited, each on its own thread; past this many,
    /// new ones are shown without a click handler rather than piling up threads.
    const MAX_WAITING: usize = 16;
    static WAITING: AtomicUsize = AtomicUsize::new(0);

    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("nomos-notification".into())
        .spawn(move || {
            let handle = match build(&notice).show() {
                Ok(handle) => handle,
                Err(e) => {
                    // No notification daemon on the session bus: nothing to show it with.
                    tracing::warn!("notification not shown: {e}");
                    return;
                }
            };
            if WAITING.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING {
                WAITING.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            // Returns when the operator acts on it or the daemon closes it.
            handle.wait_for_action(|action| {
                if action == DEFAULT_ACTION {
                    open_session(&app, notice.session_id);
                }
            });
            WAITING.fetch_sub(1, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        tracing::warn!("notification thread not started: {e}");
    }
}

#[cfg(target_os = "linux")]
fn build(notice: &Notice) -> notify_rust::Notification {
    let mut n = notify_rust::Notification::new();
    n.appname("Nomos")
        .summary(notice.title)
        .body(&body_for_daemon(&notice.body, body_markup()))
        // The default action is what a click on the notification invokes.
        .action(DEFAULT_ACTION, "Open session")
        .hint(notify_rust::Hint::Category(
            match notice.kind {
                Kind::Finished => "transfer.complete",
                Kind::Approval | Kind::Question => "im.received",
                Kind::Error => "transfer.error",
            }
            .to_owned(),
        ));
    n
}

/// Whether the daemon reads the body as markup (asked once per process).
#[cfg(target_os = "linux")]
fn body_markup() -> bool {
    static MARKUP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *MARKUP.get_or_init(|| {
        notify_rust::get_capabilities()
            .map(|caps| caps.iter().any(|c| c == "body-markup"))
            .unwrap_or(false)
    })
}

/// Text from a model or a command is shown as text: a daemon that reads markup gets it
/// escaped, so `<b>` or a link in a summary is not rendered.
pub fn body_for_daemon(body: &str, markup: bool) -> String {
    if !markup {
        return body.to_owned();
    }
    let mut out = String::with_capacity(body.len());
    for c in body.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Shows `notice` through the notification plugin (no click on these platforms yet).
#[cfg(not(target_os = "linux"))]
pub fn show<R: tauri::Runtime>(app: &tauri::AppHandle<R>, notice: Notice) {
    use tauri_plugin_notification::NotificationExt as _;
    if let Err(e) = app
        .notification()
        .builder()
        .title(notice.title)
        .body(notice.body)
        .show()
    {
        tracing::warn!("notification not shown: {e}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use nomos_protocol::{
        CommandClass, ErrorCode, ExecStatus, Execution, Message, Outcome, PlanStep, Role, ToolCall,
    };

    fn status(session: i64, status: SessionStatus) -> AgentEvent {
        AgentEvent::TaskStatus {
            session_id: session,
            status,
            outcome: Some(Outcome::Success),
            summary: Some(format!("summary of {session}")),
            approval_open: false,
        }
    }

    fn execution(session: i64, id: i64, command: &str) -> Execution {
        Execution {
            id,
            session_id: session,
            call_id: None,
            target: "host:local".into(),
            command: command.into(),
            canonical: command.into(),
            class: CommandClass::ConfigMutation,
            reason: "writes a unit".into(),
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
        }
    }

    fn call(session: i64, name: &str, arguments: &str) -> AgentEvent {
        AgentEvent::ToolCall {
            session_id: session,
            message_id: 1,
            call: ToolCall {
                call_id: "c1".into(),
                name: name.into(),
                arguments: arguments.into(),
                result: None,
                is_error: false,
            },
        }
    }

    fn error(session: i64, message: &str) -> AgentEvent {
        AgentEvent::Error {
            session_id: session,
            code: ErrorCode::from_code("llm.provider_error"),
            message: message.into(),
            retryable: true,
        }
    }

    /// Every event that is not for the operator, one of each variant.
    fn quiet_events(session: i64) -> Vec<AgentEvent> {
        let mut events = vec![
            AgentEvent::TurnStarted {
                session_id: session,
                auto: false,
            },
            AgentEvent::TextDelta {
                session_id: session,
                message_id: 1,
                delta: "Approval needed? I have a question".into(),
            },
            AgentEvent::ModelRetrying {
                session_id: session,
                message_id: 1,
                attempt: 2,
                max_attempts: 3,
                delay_ms: 10,
                code: "llm.connect".into(),
                notice: "retrying".into(),
            },
            AgentEvent::Message {
                session_id: session,
                message: Message {
                    id: 1,
                    role: Role::Assistant,
                    text: "Which host?".into(),
                    pending: false,
                    auto: false,
                    error: None,
                    tool_calls: vec![],
                    created_at_ms: 0,
                },
            },
            AgentEvent::ToolResult {
                session_id: session,
                message_id: 1,
                call_id: "c1".into(),
                name: "ask_operator".into(),
                result: "Question shown".into(),
                is_error: false,
            },
            AgentEvent::Plan {
                session_id: session,
                steps: Vec::<PlanStep>::new(),
            },
            AgentEvent::Execution {
                session_id: session,
                execution: execution(session, 9, "uptime"),
            },
            AgentEvent::TaskReopened {
                session_id: session,
                generation: 2,
            },
            AgentEvent::Done {
                session_id: session,
                error: true,
            },
        ];
        for s in [
            SessionStatus::Idle,
            SessionStatus::Planning,
            SessionStatus::Executing,
            SessionStatus::Abandoned,
        ] {
            events.push(status(session, s));
        }
        for tool in ["run", "propose_plan", "set_goal", "complete_task", "ask"] {
            events.push(call(session, tool, r#"{"question":"not a question tool"}"#));
        }
        events
    }

    #[test]
    fn every_event_for_the_operator_notifies_with_its_session() {
        let cases = [
            (status(7, SessionStatus::Done), Kind::Finished, "Task done"),
            (
                status(7, SessionStatus::Partial),
                Kind::Finished,
                "Task partly done",
            ),
            (
                status(7, SessionStatus::Failed),
                Kind::Finished,
                "Task failed",
            ),
            (
                AgentEvent::ApprovalRequested {
                    session_id: 7,
                    execution: None,
                },
                Kind::Approval,
                "Approval needed",
            ),
            (
                AgentEvent::ApprovalRequested {
                    session_id: 7,
                    execution: Some(execution(7, 3, "systemctl restart nginx")),
                },
                Kind::Approval,
                "Approval needed",
            ),
            (
                call(7, "ask_operator", r#"{"question":"Which disk?"}"#),
                Kind::Question,
                "Nomos has a question",
            ),
            (
                error(7, "HTTP 500 upstream"),
                Kind::Error,
                "Nomos hit an error",
            ),
        ];
        for (event, kind, title) in cases {
            let n = notice(&event).unwrap_or_else(|| panic!("no notice for {event:?}"));
            assert_eq!(
                (n.session_id, n.kind, n.title),
                (7, kind, title),
                "{event:?}"
            );
        }
        let cmd = notice(&AgentEvent::ApprovalRequested {
            session_id: 7,
            execution: Some(execution(7, 3, "systemctl restart nginx")),
        })
        .unwrap();
        assert_eq!(cmd.body, "systemctl restart nginx on host:local");
        let q = notice(&call(7, "ask_operator", r#"{"question":"Which disk?"}"#)).unwrap();
        assert_eq!(q.body, "Which disk?");
        let done = notice(&status(7, SessionStatus::Done)).unwrap();
        assert_eq!(done.body, "summary of 7");
        // Malformed arguments still notify: the question is in the window.
        let q = notice(&call(7, "ask_operator", r#"{"question": "Whi"#)).unwrap();
        assert_eq!((q.kind, q.body.as_str()), (Kind::Question, ""));
    }

    #[test]
    fn events_not_for_the_operator_never_notify() {
        let mut n = Notifier::default();
        for event in quiet_events(3) {
            assert_eq!(notice(&event), None, "{event:?}");
            assert_eq!(n.consider(&event, false, Instant::now()), None, "{event:?}");
        }
    }

    #[test]
    fn nothing_is_shown_while_the_window_has_the_focus_and_that_is_not_remembered() {
        let mut n = Notifier::default();
        let t = Instant::now();
        let approval = AgentEvent::ApprovalRequested {
            session_id: 1,
            execution: None,
        };
        for event in [
            approval.clone(),
            call(1, "ask_operator", r#"{"question":"?"}"#),
            error(1, "x"),
            status(1, SessionStatus::Done),
        ] {
            assert_eq!(n.consider(&event, true, t), None, "{event:?}");
        }
        // Focus lost a moment later: the next approval is news (the focused one was seen).
        assert!(
            n.consider(&approval, false, t + Duration::from_secs(1))
                .is_some()
        );
    }

    #[test]
    fn the_same_notice_is_not_repeated_within_the_window_per_session_and_kind() {
        let mut n = Notifier::default();
        let t = Instant::now();
        let events = [
            AgentEvent::ApprovalRequested {
                session_id: 1,
                execution: None,
            },
            AgentEvent::ApprovalRequested {
                session_id: 1,
                execution: Some(execution(1, 4, "apt-get upgrade")),
            },
            call(1, "ask_operator", r#"{"question":"a"}"#),
            call(1, "ask_operator", r#"{"question":"b"}"#),
            error(1, "first"),
            error(1, "second"),
        ];
        let shown: Vec<Kind> = events
            .iter()
            .filter_map(|e| n.consider(e, false, t).map(|x| x.kind))
            .collect();
        assert_eq!(shown, [Kind::Approval, Kind::Question, Kind::Error]);
        // The same event delivered twice (two subscribers, a replay) is one notice.
        for e in &events {
            assert_eq!(n.consider(e, false, t + Duration::from_secs(29)), None);
        }
        // Another session is its own.
        assert!(n.consider(&error(2, "other"), false, t).is_some());
        // After the window, the same kind is news again.
        assert!(
            n.consider(&error(1, "later"), false, t + REPEAT_AFTER)
                .is_some()
        );
    }

    #[test]
    fn a_finished_task_is_announced_once_per_transition() {
        let mut n = Notifier::default();
        let t = Instant::now();
        for s in [
            SessionStatus::Done,
            SessionStatus::Partial,
            SessionStatus::Failed,
        ] {
            let session = s as i64 + 10;
            assert!(
                n.consider(&status(session, SessionStatus::Executing), false, t)
                    .is_none()
            );
            assert!(n.consider(&status(session, s), false, t).is_some(), "{s:?}");
            // The same status again, even long after, is not news.
            assert!(
                n.consider(&status(session, s), false, t + REPEAT_AFTER * 4)
                    .is_none()
            );
            // Reopened and finished again later: news.
            assert!(
                n.consider(
                    &status(session, SessionStatus::Executing),
                    false,
                    t + REPEAT_AFTER * 5
                )
                .is_none()
            );
            assert!(
                n.consider(&status(session, s), false, t + REPEAT_AFTER * 6)
                    .is_some()
            );
        }
    }

    #[test]
    fn a_finished_task_clears_the_sessions_earlier_notices() {
        let mut n = Notifier::default();
        let t = Instant::now();
        let approval = AgentEvent::ApprovalRequested {
            session_id: 5,
            execution: None,
        };
        assert!(n.consider(&approval, false, t).is_some());
        assert!(
            n.consider(&status(5, SessionStatus::Done), false, t)
                .is_some()
        );
        // Reopened by a follow-up: its new plan's approval is announced at once.
        assert!(
            n.consider(&status(5, SessionStatus::Planning), false, t)
                .is_none()
        );
        assert!(
            n.consider(&approval, false, t + Duration::from_secs(2))
                .is_some()
        );
    }

    #[test]
    fn bodies_are_short_and_escaped_for_a_markup_daemon() {
        let long = "x".repeat(1000);
        let n = notice(&error(1, &long)).unwrap();
        assert_eq!(n.body.chars().count(), MAX_BODY_CHARS);
        assert!(n.body.ends_with('…'));
        for (raw, escaped) in [
            ("<b>bold</b>", "&lt;b&gt;bold&lt;/b&gt;"),
            (
                "<a href=\"http://x\">x</a>",
                "&lt;a href=&quot;http://x&quot;&gt;x&lt;/a&gt;",
            ),
            ("a & b", "a &amp; b"),
            ("<img src='x'>", "&lt;img src=&#39;x&#39;&gt;"),
            ("&amp;", "&amp;amp;"),
        ] {
            assert_eq!(body_for_daemon(raw, true), escaped);
            assert_eq!(
                body_for_daemon(raw, false),
                raw,
                "plain-text daemons get the text"
            );
        }
    }
}
