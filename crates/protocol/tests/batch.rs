#![allow(clippy::unwrap_used)]
//! The delta batcher loses, adds and reorders nothing, and sends fewer, bounded events.

use std::time::{Duration, Instant};

use nomos_protocol::{AgentEvent, DeltaBatcher};

const WINDOW: Duration = Duration::from_millis(16);

fn delta(session_id: i64, message_id: i64, text: &str) -> AgentEvent {
    AgentEvent::TextDelta {
        session_id,
        message_id,
        delta: text.to_owned(),
    }
}

fn done(session_id: i64) -> AgentEvent {
    AgentEvent::Done {
        session_id,
        error: false,
    }
}

/// Runs `input` (event, arrival offset) through a batcher the way the relay does: the timer
/// fires at each deadline that comes before the next event.
fn run(input: &[(AgentEvent, Duration)], max_bytes: usize) -> Vec<(AgentEvent, Duration)> {
    let start = Instant::now();
    let mut batcher = DeltaBatcher::new(WINDOW, max_bytes);
    let mut sent = Vec::new();
    let mut out = Vec::new();
    for (event, at) in input {
        while let Some(due) = batcher.deadline() {
            if due > start + *at {
                break;
            }
            let e = batcher.flush(due).unwrap();
            sent.push((e, due - start));
        }
        batcher.push(event.clone(), start + *at, &mut out);
        sent.extend(out.drain(..).map(|e| (e, *at)));
    }
    // After the last event the timer still fires at the deadline.
    if let Some(due) = batcher.deadline() {
        sent.push((batcher.flush(due).unwrap(), due - start));
    }
    sent
}

/// The stream with consecutive deltas of one message merged: what any batching must equal.
fn merged(events: impl IntoIterator<Item = AgentEvent>) -> Vec<AgentEvent> {
    let mut out: Vec<AgentEvent> = Vec::new();
    for e in events {
        if let (
            Some(AgentEvent::TextDelta {
                session_id: s0,
                message_id: m0,
                delta: text,
            }),
            AgentEvent::TextDelta {
                session_id,
                message_id,
                delta,
            },
        ) = (out.last_mut(), &e)
            && *s0 == *session_id
            && *m0 == *message_id
        {
            text.push_str(delta);
            continue;
        }
        out.push(e);
    }
    out
}

/// A small deterministic generator, so a failure reproduces.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn interleaved_streams_arrive_complete_and_in_order() {
    for seed in 0..200 {
        let mut rng = Lcg(seed);
        let mut input = Vec::new();
        let mut at = Duration::ZERO;
        for i in 0..400 {
            at += Duration::from_micros(rng.next(12_000));
            let session = 1 + i64::try_from(rng.next(2)).unwrap();
            let event = match rng.next(10) {
                0 => done(session),
                // Two messages per session, so a switch of message is exercised too.
                _ => delta(
                    session,
                    session * 10 + i64::try_from(rng.next(2)).unwrap(),
                    &format!("w{i}é "),
                ),
            };
            input.push((event, at));
        }
        let max_bytes = [1, 8, 64, 4096][usize::try_from(seed % 4).unwrap()];
        let sent = run(&input, max_bytes);
        let sent_events: Vec<AgentEvent> = sent.iter().map(|(e, _)| e.clone()).collect();
        assert_eq!(
            merged(sent_events.clone()),
            merged(input.iter().map(|(e, _)| e.clone())),
            "seed {seed}"
        );
        // Sent times never go backwards, and nothing is held longer than its window.
        for pair in sent.windows(2) {
            assert!(pair[0].1 <= pair[1].1, "seed {seed}");
        }
        assert!(sent_events.len() <= input.len(), "seed {seed}");
    }
}

#[test]
fn a_fast_stream_goes_out_once_per_window_with_the_first_delta_at_once() {
    // One delta every 5 ms for a second, as the UI benchmark's model sends them.
    let input: Vec<_> = (0..200)
        .map(|i| (delta(1, 7, &format!("q{i} ")), Duration::from_millis(5 * i)))
        .collect();
    let sent = run(&input, 4096);
    assert_eq!(sent[0], (delta(1, 7, "q0 "), Duration::ZERO));
    // About one event per 16 ms window instead of 200.
    assert!(sent.len() <= 1000 / 16 + 2, "{} events", sent.len());
    // No delta waits more than a window after it arrived.
    let mut arrived = input.iter();
    for (event, at) in &sent {
        let AgentEvent::TextDelta { delta: text, .. } = event else {
            panic!("{event:?}")
        };
        for _ in 0..text.matches(' ').count() {
            let (_, came) = arrived.next().unwrap();
            assert!(*at - *came <= WINDOW, "held {:?}", *at - *came);
        }
    }
    let all: String = sent
        .iter()
        .map(|(e, _)| match e {
            AgentEvent::TextDelta { delta, .. } => delta.as_str(),
            _ => "",
        })
        .collect();
    let expected: String = (0..200).map(|i| format!("q{i} ")).collect();
    assert_eq!(all, expected);
}

#[test]
fn held_text_goes_out_before_any_other_event() {
    let mut batcher = DeltaBatcher::new(WINDOW, 4096);
    let now = Instant::now();
    let mut out = Vec::new();
    batcher.push(delta(1, 2, "a"), now, &mut out);
    batcher.push(delta(1, 2, "b"), now, &mut out);
    batcher.push(delta(1, 2, "c"), now, &mut out);
    assert_eq!(out, vec![delta(1, 2, "a")]);
    assert_eq!(batcher.deadline(), Some(now + WINDOW));
    batcher.push(done(1), now, &mut out);
    assert_eq!(out, vec![delta(1, 2, "a"), delta(1, 2, "bc"), done(1)]);
    assert_eq!(batcher.deadline(), None);
    // Another message's first delta is not held behind this one's window.
    out.clear();
    batcher.push(delta(1, 3, "x"), now, &mut out);
    assert_eq!(out, vec![delta(1, 3, "x")]);
}

#[test]
fn a_burst_is_cut_at_the_byte_bound() {
    let mut batcher = DeltaBatcher::new(WINDOW, 10);
    let now = Instant::now();
    let mut out = Vec::new();
    for _ in 0..8 {
        batcher.push(delta(1, 2, "abcd"), now, &mut out);
    }
    out.extend(batcher.flush(now));
    let sizes: Vec<usize> = out
        .iter()
        .map(|e| match e {
            AgentEvent::TextDelta { delta, .. } => delta.len(),
            _ => 0,
        })
        .collect();
    assert_eq!(sizes, vec![4, 12, 12, 4]);
}
