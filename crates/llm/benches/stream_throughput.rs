//! Streaming throughput: 10,000 text deltas pushed through the OpenAI-compatible provider
//! over loopback HTTP from the scripted server.
//!
//! Reported figures (printed before criterion's own output):
//! - deltas per second through the provider (HTTP + SSE parsing + assembly + sink);
//! - the same reply read as raw bytes by a plain HTTP client, in the same run (the
//!   reference: server, loopback and HTTP cost without any parsing);
//! - the added latency per delta = (provider time − raw read time) / 10,000, i.e. what
//!   this crate adds between a delta's bytes arriving and the sink receiving it;
//! - the in-memory parse cost per delta (no HTTP), for comparison.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use nomos_llm::{
    ChatRequest, EventSink, Message, OpenAiConfig, OpenAiProvider, Provider, StreamEvent,
    assemble_data_lines,
};
use nomos_mock_llm::{MockServer, Script, Step};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

const DELTAS: usize = 10_000;

struct Setup {
    rt: Runtime,
    server: MockServer,
    provider: OpenAiProvider,
    client: reqwest::Client,
    request: ChatRequest,
}

fn setup() -> Setup {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // One character per delta: 10,000 SSE events per reply, served again for every request.
    let text: String = (0..DELTAS)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let server = rt
        .block_on(MockServer::start(Script {
            fallback: Some(Step::text(text).chunk_chars(1)),
            ..Script::default()
        }))
        .unwrap();
    let provider =
        OpenAiProvider::new(OpenAiConfig::new(server.base_url(), "bench"), None).unwrap();
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let request = ChatRequest {
        messages: vec![Message::user("stream please")],
        ..ChatRequest::default()
    };
    Setup {
        rt,
        server,
        provider,
        client,
        request,
    }
}

struct CountingSink(usize);

impl EventSink for CountingSink {
    fn event(&mut self, event: StreamEvent) {
        if matches!(event, StreamEvent::TextDelta(_)) {
            self.0 += 1;
        }
        black_box(&event);
    }
}

async fn through_provider(s: &Setup) -> Duration {
    let mut sink = CountingSink(0);
    let start = Instant::now();
    let r = s
        .provider
        .stream(&s.request, &mut sink, &CancellationToken::new())
        .await
        .unwrap();
    let elapsed = start.elapsed();
    assert_eq!(sink.0, DELTAS);
    assert_eq!(r.text.len(), DELTAS);
    elapsed
}

async fn raw_read(s: &Setup) -> Duration {
    let body = serde_json::to_vec(&s.provider.request_body(&s.request)).unwrap();
    let start = Instant::now();
    let resp = s
        .client
        .post(format!("{}/chat/completions", s.server.base_url()))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let mut bytes = 0usize;
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        bytes += chunk.unwrap().len();
    }
    let elapsed = start.elapsed();
    assert!(bytes > DELTAS * 50);
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The `data:` payloads of one reply, captured once for the in-memory parse figure.
fn captured_lines(s: &Setup) -> Vec<String> {
    let body = serde_json::to_vec(&s.provider.request_body(&s.request)).unwrap();
    let text = s.rt.block_on(async {
        s.client
            .post(format!("{}/chat/completions", s.server.base_url()))
            .body(body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

fn report(s: &Setup) {
    const RUNS: usize = 15;
    // Warm up connections and allocators.
    s.rt.block_on(async {
        through_provider(s).await;
        raw_read(s).await;
    });
    let mut provider_times = Vec::with_capacity(RUNS);
    let mut raw_times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        // Interleave so drift on a shared machine hits both alike.
        provider_times.push(s.rt.block_on(through_provider(s)));
        raw_times.push(s.rt.block_on(raw_read(s)));
    }
    let lines = captured_lines(s);
    let mut parse_times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut sink = CountingSink(0);
        let start = Instant::now();
        let r = assemble_data_lines(lines.iter().map(String::as_str), &mut sink).unwrap();
        parse_times.push(start.elapsed());
        assert_eq!(r.text.len(), DELTAS);
    }
    let provider = median(provider_times);
    let raw = median(raw_times);
    let parse = median(parse_times);
    let per_sec = DELTAS as f64 / provider.as_secs_f64();
    let added = provider.saturating_sub(raw).as_secs_f64() / DELTAS as f64;
    println!("stream_throughput: {DELTAS} deltas over loopback HTTP, median of {RUNS} runs");
    println!(
        "  provider (HTTP + SSE + assembly): {:>8.2} ms  = {:>10.0} deltas/s",
        provider.as_secs_f64() * 1e3,
        per_sec
    );
    println!(
        "  raw byte read, same reply:        {:>8.2} ms  = {:>10.0} deltas/s",
        raw.as_secs_f64() * 1e3,
        DELTAS as f64 / raw.as_secs_f64()
    );
    println!(
        "  added latency per delta:          {:>8.2} µs  (provider / raw = {:.2}x)",
        added * 1e6,
        provider.as_secs_f64() / raw.as_secs_f64()
    );
    println!(
        "  in-memory parse per delta:        {:>8.2} µs  (no HTTP)",
        parse.as_secs_f64() * 1e6 / DELTAS as f64
    );
}

fn bench(c: &mut Criterion) {
    let s = Arc::new(setup());
    report(&s);
    let mut group = c.benchmark_group("stream_10k_deltas");
    group
        .throughput(Throughput::Elements(DELTAS as u64))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    group.bench_function("provider_over_loopback", |b| {
        b.iter(|| s.rt.block_on(through_provider(&s)));
    });
    group.bench_function("raw_read_over_loopback", |b| {
        b.iter(|| s.rt.block_on(raw_read(&s)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
