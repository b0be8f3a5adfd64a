//! A model's response body through the SSE parser and the provider's assembler, as the
//! network would deliver it. Input: byte 0 picks the wire format (bit 0: Anthropic, else
//! OpenAI-compatible) and whether the body is a whole JSON reply (bit 1); byte 1 is the
//! chunk size of the second delivery (0: whole); the rest is the body.
//!
//! Invariants: never a panic; the outcome and the events do not depend on where the body
//! was split (lines, JSON and UTF-8 cut anywhere); a success carries text or tool calls and
//! ends with exactly one `Done`; a failure is a typed error with a code and sends no `Done`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nomos_llm::{StreamEvent, WireFormat, assemble_body};

fuzz_target!(|data: &[u8]| {
    let [flags, size, body @ ..] = data else {
        return;
    };
    let format = if flags & 1 == 0 {
        WireFormat::OpenAi
    } else {
        WireFormat::Anthropic
    };
    let json = flags & 2 != 0;
    let run = |chunks: &[&[u8]]| {
        let mut events = Vec::new();
        let result = assemble_body(format, json, chunks, &mut |e: StreamEvent| events.push(e));
        (result, events)
    };
    let (whole, whole_events) = run(&[body]);
    // 0 keeps the body whole (the fast path); any other size splits it everywhere.
    let size = match usize::from(*size) {
        0 => body.len().max(1),
        n => n,
    };
    let pieces: Vec<&[u8]> = body.chunks(size).collect();
    let (split, split_events) = run(&pieces);
    assert_eq!(whole, split, "outcome depends on chunks of {size}");
    assert_eq!(
        whole_events, split_events,
        "events depend on chunks of {size}"
    );

    let dones = whole_events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Done { .. }))
        .count();
    match &whole {
        Ok(response) => {
            assert!(!response.is_empty_reply());
            assert_eq!(dones, 1);
            assert!(matches!(
                whole_events.last(),
                Some(StreamEvent::Done { .. })
            ));
        }
        Err(e) => {
            assert!(!e.code().is_empty());
            assert_eq!(dones, 0);
        }
    }
});
