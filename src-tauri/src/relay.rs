//! The one subscription of the app to each agent's events. Every event goes, in order, to
//! the notifier (once for the whole app, whether or not a webview listens) and to the
//! webviews that subscribed. A reloaded page's old channel is dropped when the page starts
//! loading again, so nothing is doubled, and an agent rebuilt by Settings is followed at
//! once, so nothing is lost.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use nomos_agent::Agent;
use nomos_protocol::{AgentEvent, DeltaBatcher};
use tauri::Manager as _;
use tauri::ipc::Channel;

use crate::AppState;
use crate::notify::{self, Notifier};

#[derive(Default)]
pub struct EventRelay {
    /// (webview label, channel): the webviews listening now.
    subscribers: Mutex<Vec<(String, Channel<AgentEvent>)>>,
    notifier: Mutex<Notifier>,
}

impl std::fmt::Debug for EventRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRelay")
            .field("subscribers", &self.subscriber_count())
            .finish_non_exhaustive()
    }
}

impl EventRelay {
    /// A webview's channel; it receives every event from now on.
    pub fn subscribe(&self, webview: &str, channel: Channel<AgentEvent>) {
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.push((webview.to_owned(), channel));
        }
    }

    /// The webview started loading a page: its earlier channels lead nowhere now.
    pub fn forget_webview(&self, webview: &str) {
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.retain(|(label, _)| label != webview);
        }
    }

    /// How many channels receive events (tests).
    pub fn subscriber_count(&self) -> usize {
        self.subscribers.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// The notice to show for `event`, if any (the de-duplication state is the app's).
    pub fn notice_for(
        &self,
        event: &AgentEvent,
        focused: bool,
        now: Instant,
    ) -> Option<notify::Notice> {
        self.notifier.lock().ok()?.consider(event, focused, now)
    }

    fn forward(&self, event: &AgentEvent) {
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.retain(|(label, channel)| match channel.send(event.clone()) {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!(webview = %label, "event channel closed: {e}");
                    false
                }
            });
        }
    }

    /// Notifies (when the window is not focused) and forwards one event.
    pub fn dispatch<R: tauri::Runtime>(&self, app: &tauri::AppHandle<R>, event: &AgentEvent) {
        // Asked only for events that may notify: a focus query per streamed delta is waste.
        if notify::notice(event).is_some() {
            let focused = notify::window_focused(app);
            if let Some(notice) = self.notice_for(event, focused, Instant::now()) {
                notify::show(app, notice);
            }
        }
        self.forward(event);
    }
}

/// A streamed message's text reaches the webview at most once per this window (about a
/// frame), merged; its first delta at once.
const DELTA_WINDOW: Duration = Duration::from_millis(16);
/// Merged text stays well under the size Tauri still sends as one evaluated script.
const DELTA_MAX_BYTES: usize = 2048;

/// Follows `agent`'s events for as long as the agent lives (its detached turns included).
/// Text deltas are batched ([`DeltaBatcher`]): each event is one script evaluated in the
/// page, and a provider can send hundreds a second.
pub fn attach<R: tauri::Runtime>(app: &tauri::AppHandle<R>, agent: &Agent) {
    let mut events = agent.subscribe();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let mut batcher = DeltaBatcher::new(DELTA_WINDOW, DELTA_MAX_BYTES);
        let mut out = Vec::new();
        loop {
            let next = match batcher.deadline() {
                Some(due) => tokio::select! {
                    biased;
                    event = events.recv() => event,
                    () = tokio::time::sleep_until(due.into()) => {
                        out.extend(batcher.flush(Instant::now()));
                        send_all(&app, &mut out);
                        continue;
                    }
                },
                None => events.recv().await,
            };
            let Some(event) = next else {
                out.extend(batcher.flush(Instant::now()));
                send_all(&app, &mut out);
                break;
            };
            batcher.push(event, Instant::now(), &mut out);
            send_all(&app, &mut out);
        }
    });
}

fn send_all<R: tauri::Runtime>(app: &tauri::AppHandle<R>, events: &mut Vec<AgentEvent>) {
    let relay = &app.state::<AppState>().relay;
    for event in events.drain(..) {
        relay.dispatch(app, &event);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::{Arc, Mutex};

    use nomos_protocol::{AgentEvent, SessionStatus};
    use tauri::ipc::{Channel, InvokeResponseBody};

    use super::EventRelay;

    type Seen = Arc<Mutex<Vec<i64>>>;

    /// A channel that records the session id of each event it receives.
    fn recording() -> (Channel<AgentEvent>, Seen) {
        let seen: Seen = Arc::default();
        let sink = seen.clone();
        let channel = Channel::new(move |body| {
            let InvokeResponseBody::Json(json) = body else {
                panic!("events are JSON")
            };
            let event: AgentEvent = serde_json::from_str(&json).unwrap();
            sink.lock().unwrap().push(event.session_id());
            Ok(())
        });
        (channel, seen)
    }

    fn closed() -> Channel<AgentEvent> {
        Channel::new(|_| Err(tauri::Error::WebviewNotFound))
    }

    fn done(session: i64) -> AgentEvent {
        AgentEvent::TaskStatus {
            session_id: session,
            status: SessionStatus::Done,
            outcome: None,
            summary: Some("ok".into()),
            approval_open: false,
        }
    }

    #[test]
    fn every_subscriber_gets_every_event_in_order_and_a_closed_one_is_dropped() {
        let app = tauri::test::mock_app();
        let relay = EventRelay::default();
        let (a, seen_a) = recording();
        let (b, seen_b) = recording();
        relay.subscribe("main", a);
        relay.subscribe("other", b);
        relay.subscribe("main", closed());
        for s in 1..=3 {
            relay.dispatch(
                app.handle(),
                &AgentEvent::Done {
                    session_id: s,
                    error: false,
                },
            );
        }
        assert_eq!(*seen_a.lock().unwrap(), [1, 2, 3]);
        assert_eq!(*seen_b.lock().unwrap(), [1, 2, 3]);
        assert_eq!(relay.subscriber_count(), 2, "the closed channel is gone");
    }

    /// A reload: the page starts loading again (its channel is forgotten) and subscribes
    /// anew. Each event then arrives once, and the other webview keeps its channel.
    #[test]
    fn a_reloaded_page_gets_each_event_once() {
        let app = tauri::test::mock_app();
        let relay = EventRelay::default();
        let (before, seen_before) = recording();
        let (other, seen_other) = recording();
        relay.subscribe("main", before);
        relay.subscribe("graph", other);
        relay.dispatch(
            app.handle(),
            &AgentEvent::Done {
                session_id: 1,
                error: false,
            },
        );
        relay.forget_webview("main");
        let (after, seen_after) = recording();
        relay.subscribe("main", after);
        relay.dispatch(
            app.handle(),
            &AgentEvent::Done {
                session_id: 2,
                error: false,
            },
        );
        assert_eq!(*seen_before.lock().unwrap(), [1]);
        assert_eq!(*seen_after.lock().unwrap(), [2]);
        assert_eq!(*seen_other.lock().unwrap(), [1, 2]);
    }

    /// Notifications come from the core's stream, not from a webview: with no subscriber at
    /// all the notifier still sees the event (the same event again is then a duplicate),
    /// and subscribers coming and going never make it notify twice.
    #[test]
    fn the_notifier_runs_without_any_webview_and_once_whatever_the_subscribers() {
        let app = tauri::test::mock_app();
        let relay = EventRelay::default();
        relay.dispatch(app.handle(), &done(4));
        assert_eq!(
            relay.notice_for(&done(4), false, std::time::Instant::now()),
            None,
            "the notice was already raised with no webview listening"
        );
        let (a, _) = recording();
        let (b, _) = recording();
        relay.subscribe("main", a);
        relay.subscribe("main", b);
        let approval = AgentEvent::ApprovalRequested {
            session_id: 4,
            execution: None,
        };
        relay.dispatch(app.handle(), &approval);
        assert_eq!(
            relay.notice_for(&approval, false, std::time::Instant::now()),
            None
        );
    }
}
