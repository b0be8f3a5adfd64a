//! Coalescing a turn's text deltas for a face that pays per event.
//!
//! A provider can stream hundreds of deltas a second; the webview receives each event as one
//! IPC message (a script evaluated in the page) and shows text at most once per frame. The
//! shell therefore sends a message's first delta at once and the rest at most once per
//! window, merged. Nothing is lost or reordered: held text goes out before any other event,
//! and before a delta of another message.

use std::time::{Duration, Instant};

use crate::AgentEvent;

/// Merges consecutive [`AgentEvent::TextDelta`]s of one message. Pure: the caller owns the
/// clock and the timer (`deadline`, then `flush`).
#[derive(Debug)]
pub struct DeltaBatcher {
    window: Duration,
    max_bytes: usize,
    /// Text received but not sent yet: (session, message, text).
    held: Option<(i64, i64, String)>,
    /// The message whose text was last sent, and when.
    last_sent: Option<(i64, Instant)>,
}

impl DeltaBatcher {
    /// At most one delta event per `window` per message, and none larger than `max_bytes`
    /// of text (a long burst goes out in pieces rather than one large message).
    pub fn new(window: Duration, max_bytes: usize) -> Self {
        Self {
            window,
            max_bytes: max_bytes.max(1),
            held: None,
            last_sent: None,
        }
    }

    /// Takes the next event of the stream; appends to `out` what must be sent now, in order.
    pub fn push(&mut self, event: AgentEvent, now: Instant, out: &mut Vec<AgentEvent>) {
        let AgentEvent::TextDelta {
            session_id,
            message_id,
            delta,
        } = event
        else {
            // Any other event may depend on the text before it (a finished message, a
            // retry that voids it): the held text goes first.
            out.extend(self.flush(now));
            out.push(event);
            return;
        };
        match &mut self.held {
            Some((s, m, text)) if *s == session_id && *m == message_id => {
                text.push_str(&delta);
                if text.len() >= self.max_bytes {
                    out.extend(self.flush(now));
                }
                return;
            }
            Some(_) => out.extend(self.flush(now)),
            None => {}
        }
        let recent = matches!(self.last_sent,
            Some((m, at)) if m == message_id && now.saturating_duration_since(at) < self.window);
        if recent && delta.len() < self.max_bytes {
            self.held = Some((session_id, message_id, delta));
        } else {
            // A message's first delta, or one after a quiet window, shows at once.
            self.last_sent = Some((message_id, now));
            out.push(AgentEvent::TextDelta {
                session_id,
                message_id,
                delta,
            });
        }
    }

    /// When the held text is due (None: nothing is held).
    pub fn deadline(&self) -> Option<Instant> {
        self.held.as_ref()?;
        // Text is only held after a send of its message, so `last_sent` is set.
        self.last_sent.map(|(_, at)| at + self.window)
    }

    /// The held text as one event (at its deadline, or when the stream ends).
    pub fn flush(&mut self, now: Instant) -> Option<AgentEvent> {
        let (session_id, message_id, delta) = self.held.take()?;
        self.last_sent = Some((message_id, now));
        Some(AgentEvent::TextDelta {
            session_id,
            message_id,
            delta,
        })
    }
}
