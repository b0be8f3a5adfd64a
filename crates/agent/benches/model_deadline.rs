//! A model request that never completes (DESIGN §14: ended with a clear error within 5 min).
//!
//! Two scripted servers that never finish a reply: one streams `: keep-alive` comments
//! forever (the idle timeout never fires), one sends headers and then nothing. An operator
//! message goes through the whole agent (store, turn, provider, retries) and the time until
//! the turn's `Done` (after its `Error` event) is measured. Waiting five real minutes per case is not a bench,
//! so the request deadline (`model_retry.max_total`, the `model_request_secs` setting) and the
//! provider's idle timeout are reduced here; the configured defaults are printed next to
//! them, and `make bench` projects the default case as default deadline + the overshoot
//! measured past the reduced one.
//!
//! Prints `BENCH {"id":…}` lines read by `make bench`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::{Agent, AgentConfig, AgentParts};
use nomos_exec::{Executor, ExecutorConfig, Inventory};
use nomos_llm::{OpenAiConfig, OpenAiProvider, Provider, StreamLimits};
use nomos_mock_llm::{MockServer, Reply, Script, Step};
use nomos_protocol::AgentEvent;
use serde_json::json;

/// The reduced request deadline the bench runs with.
const REDUCED_DEADLINE: Duration = Duration::from_secs(3);
/// The reduced idle timeout (the silent server's attempts end on it, then are retried).
const REDUCED_IDLE: Duration = Duration::from_secs(1);

fn emit(id: &str, value: f64, unit: &str) {
    println!("BENCH {}", json!({"id": id, "value": value, "unit": unit}));
}

/// One operator message against a server that answers with `reply` forever; returns the
/// time until the turn's `Done`, and the code and text of the turn's `Error` event (the
/// face shows those; `send` itself only refuses a message, it does not fail a turn).
async fn time_to_error(reply: Reply) -> (Duration, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(Script {
        fallback: Some(Step::new(reply)),
        ..Script::default()
    })
    .await
    .unwrap();
    let store = nomos_store::Store::open_in_dir(dir.path()).unwrap();
    let mut llm = OpenAiConfig::new(server.base_url(), "mock");
    llm.limits = StreamLimits {
        idle_timeout: REDUCED_IDLE,
        ..StreamLimits::default()
    };
    let provider: Arc<dyn Provider> = Arc::new(OpenAiProvider::new(llm, None).unwrap());
    let executor = Arc::new(Executor::new(ExecutorConfig::new(dir.path().join("exec"))).unwrap());
    let mut config = AgentConfig::default();
    config.model_retry.max_total = REDUCED_DEADLINE;
    // The empty-reply retries are another path; a hung request must end on the deadline.
    config.empty_reply_retries = 0;
    let agent = Agent::new(AgentParts {
        store,
        provider,
        executor,
        inventory: Inventory::with_local(),
        config,
    });
    let mut events = agent.subscribe();
    let started = Instant::now();
    agent.send(None, "check the disks").await.unwrap();
    let mut error = None;
    // Bounded: a turn that never ends fails the bench instead of hanging it.
    let outcome = tokio::time::timeout(REDUCED_DEADLINE * 20, async {
        while let Some(event) = events.recv().await {
            match event {
                AgentEvent::Error { code, message, .. } => {
                    let code = serde_json::to_value(code)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_else(|| "unknown".to_owned());
                    error = Some((code, message));
                }
                AgentEvent::Done { .. } => return started.elapsed(),
                _ => {}
            }
        }
        started.elapsed()
    })
    .await;
    let took = outcome
        .unwrap_or_else(|_| panic!("the turn did not end within {:?}", REDUCED_DEADLINE * 20));
    let (code, message) = error.unwrap_or_else(|| {
        (
            "none".to_owned(),
            "the turn ended without an error".to_owned(),
        )
    });
    (took, code, message)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let default = AgentConfig::default().model_retry.max_total;
    let default_idle = StreamLimits::default().idle_timeout;
    println!(
        "model_deadline: configured defaults: request deadline {} s (setting model_request_secs), idle timeout {} s; reduced here to {} s and {} s",
        default.as_secs(),
        default_idle.as_secs(),
        REDUCED_DEADLINE.as_secs_f64(),
        REDUCED_IDLE.as_secs_f64()
    );
    emit("agent.deadline.default", default.as_secs_f64(), "s");
    emit(
        "agent.deadline.reduced",
        REDUCED_DEADLINE.as_secs_f64(),
        "s",
    );
    let cases = [
        (
            "keepalive",
            Reply::KeepaliveForever {
                text: String::new(),
                every_ms: 50,
            },
        ),
        (
            "silent",
            Reply::Hang {
                text: String::new(),
            },
        ),
    ];
    for (name, reply) in cases {
        let (took, code, message) = rt.block_on(time_to_error(reply));
        println!(
            "  {name:<9} ended after {:6.2} s with {code}: {message}",
            took.as_secs_f64()
        );
        emit(&format!("agent.deadline.{name}"), took.as_secs_f64(), "s");
        // The table shows the code as the figure's note; a turn that did not fail is a 0.
        emit(
            &format!("agent.deadline.{name}.clear_error"),
            f64::from(u8::from(code != "none")),
            "bool",
        );
        println!(
            "BENCH {}",
            json!({"id": format!("agent.deadline.{name}.code"), "value": 0, "unit": "code", "note": code})
        );
    }
}
