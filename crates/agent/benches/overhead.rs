//! The agent's own cost per model iteration (DESIGN.md §14: ≤ 2 ms beyond model + command).
//! Prints `BENCH {"id":…}` lines read by `make bench`; `BENCH_QUICK=1` runs fewer rounds.
//!
//! Agent: one operator message whose turn takes two model iterations (a `run` of `true` on
//! the local workstation, then a text reply), against the scripted model on loopback and a
//! real store on disk. Reference, in the same run: the same two model replies fetched
//! directly through the provider plus `true` run directly through the executor. The
//! difference, divided by two, is the overhead per iteration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nomos_agent::{Agent, AgentConfig, AgentParts};
use nomos_exec::{Executor, ExecutorConfig, Inventory, Limits, Target};
use nomos_llm::{ChatRequest, Message, NullSink, OpenAiConfig, OpenAiProvider, Provider};
use nomos_mock_llm::{MockServer, Script, Step};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const ROUNDS: usize = 60;
const QUICK_ROUNDS: usize = 15;

fn run_true() -> Step {
    Step::tool_call(
        "run",
        json!({"target": "host:local", "command": "true", "reason": "bench", "rerun_because": "bench"}),
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = MockServer::start(Script::new(vec![
            Step::tool_call("propose_plan", json!({"steps": [{"title": "bench", "target": "host:local"}]})),
        ]))
        .await
        .unwrap();
        let store = nomos_store::Store::open_in_dir(dir.path()).unwrap();
        let provider: Arc<dyn Provider> =
            Arc::new(OpenAiProvider::new(OpenAiConfig::new(server.base_url(), "mock"), None).unwrap());
        let executor = Arc::new(Executor::new(ExecutorConfig::new(dir.path().join("exec"))).unwrap());
        let agent = Agent::new(AgentParts {
            store,
            provider: provider.clone(),
            executor: executor.clone(),
            inventory: Inventory::with_local(),
            config: AgentConfig { max_identical_calls: u32::MAX, ..AgentConfig::default() },
        });
        let session = agent.send(None, "bench").await.unwrap();
        server.push(Step::text("approved"));
        agent.approve_plan(session, 1).await.unwrap();

        let rounds = if std::env::var_os("BENCH_QUICK").is_some_and(|v| v == "1") { QUICK_ROUNDS } else { ROUNDS };
        let mut agent_times = Vec::with_capacity(rounds);
        let mut reference_times = Vec::with_capacity(rounds);
        let cancel = CancellationToken::new();
        let target = Target::local();
        for round in 0..rounds {
            // Agent: two iterations through the whole core.
            server.push(run_true());
            server.push(Step::text("ok"));
            let t = Instant::now();
            agent.send(Some(session), &format!("again {round}")).await.unwrap();
            agent_times.push(t.elapsed());

            // Reference: the same two replies and the same command, without the agent.
            server.push(run_true());
            server.push(Step::text("ok"));
            let request = ChatRequest { messages: vec![Message::user("bench")], ..ChatRequest::default() };
            let t = Instant::now();
            provider.stream(&request, &mut NullSink, &cancel).await.unwrap();
            executor.run(&target, "true", &Limits::default()).await.unwrap();
            provider.stream(&request, &mut NullSink, &cancel).await.unwrap();
            reference_times.push(t.elapsed());
        }
        agent_times.sort();
        reference_times.sort();
        let med_a = percentile(&agent_times, 0.5);
        let med_r = percentile(&reference_times, 0.5);
        let per_iteration = med_a.saturating_sub(med_r) / 2;
        println!("agent turn (2 model iterations + `true`): median {:?}, p95 {:?}", med_a, percentile(&agent_times, 0.95));
        println!("reference (2 provider calls + `true`):   median {:?}, p95 {:?}", med_r, percentile(&reference_times, 0.95));
        println!(
            "agent overhead per model iteration: {:.2} ms (budget 2 ms); ratio agent/reference {:.2}",
            per_iteration.as_secs_f64() * 1000.0,
            med_a.as_secs_f64() / med_r.as_secs_f64()
        );
        // Read by `make bench` (scripts/bench/table.mjs).
        for (id, v) in [
            ("agent.overhead_per_iteration", per_iteration),
            ("agent.turn_median", med_a),
            ("agent.reference_median", med_r),
        ] {
            println!("BENCH {}", json!({"id": id, "value": v.as_secs_f64() * 1000.0, "unit": "ms"}));
        }
        assert!(server.failures().is_empty(), "{:?}", server.failures());
    });
}
