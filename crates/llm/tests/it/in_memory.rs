//! `assemble_body`, the in-memory entry the fuzzer drives, must give exactly what the HTTP
//! path gives for every recorded stream, however the body is split: otherwise the fuzzer
//! would test other code than the providers run.

use nomos_llm::{StreamEvent, WireFormat, assemble_body};

use crate::support::*;

fn recorded_streams() -> Vec<(Kind, String)> {
    let mut names: Vec<String> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sse"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "the recorded streams are missing");
    names
        .into_iter()
        .map(|n| {
            let kind = if n.contains("anthropic") {
                Kind::Anthropic
            } else {
                Kind::OpenAi
            };
            (kind, n)
        })
        .collect()
}

#[tokio::test]
async fn in_memory_assembly_matches_http_for_every_recording_and_split() {
    for (kind, name) in recorded_streams() {
        let server = serve_fixture(&name, None).await;
        let provider = provider_for(kind, &server, nomos_llm::StreamLimits::default());
        let (expected, events) = run(provider.as_ref(), &request("hi")).await;
        server.shutdown().await;
        let expected_events = events.all();

        let body = std::fs::read(fixture(&name)).unwrap();
        let format = match kind {
            Kind::OpenAi => WireFormat::OpenAi,
            Kind::Anthropic => WireFormat::Anthropic,
        };
        for size in [body.len().max(1), 1, 2, 5, 7, 64] {
            let pieces: Vec<&[u8]> = body.chunks(size).collect();
            let mut got = Vec::new();
            let result = assemble_body(format, false, &pieces, &mut |e: StreamEvent| {
                got.push(e);
            });
            assert_eq!(result, expected, "{name} in chunks of {size}");
            assert_eq!(got, expected_events, "{name} events in chunks of {size}");
        }
    }
}

#[test]
fn in_memory_assembly_types_every_malformed_body() {
    // Invalid UTF-8, a cut JSON payload, a body of only keep-alives, an empty body: each a
    // typed error with a code, never a panic, for both formats and both body kinds.
    let bodies: [&[u8]; 5] = [
        b"data: {\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}\n\n",
        b"data: {\"choices\":[{\"delta\":{\"content\":\"hal",
        b": ping\n\n: ping\n\n",
        b"",
        b"\xc3",
    ];
    for format in [WireFormat::OpenAi, WireFormat::Anthropic] {
        for json in [false, true] {
            for body in bodies {
                let result = assemble_body(format, json, &[body], &mut |_: StreamEvent| {});
                let err = result.expect_err("a malformed body is refused");
                assert!(!err.code().is_empty(), "{format:?} {json} {body:?}");
            }
        }
    }
}
