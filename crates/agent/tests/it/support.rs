use std::sync::Arc;
use std::time::Duration;

use nomos_agent::{Agent, AgentConfig, AgentParts, EventStream};
use nomos_exec::{Executor, ExecutorConfig, Inventory};
use nomos_llm::{OpenAiConfig, OpenAiProvider};
use nomos_mock_llm::{MockServer, Script, Step};
use nomos_protocol::AgentEvent;
use nomos_store::{SessionId, Store};
use serde_json::{Value, json};

pub struct Harness {
    pub config: AgentConfig,
    pub agent: Agent,
    pub server: MockServer,
    pub events: EventStream,
    pub dir: tempfile::TempDir,
}

pub fn test_config() -> AgentConfig {
    AgentConfig::for_scripted_model()
}

impl Harness {
    pub async fn new(steps: Vec<Step>) -> Self {
        Self::with_config(steps, test_config()).await
    }

    pub async fn with_config(steps: Vec<Step>, config: AgentConfig) -> Self {
        Self::with_inventory(steps, config, Inventory::with_local()).await
    }

    /// A harness whose agent knows the targets of `inventory` (nothing runs on the remote
    /// ones: they only give plans something to name).
    pub async fn with_inventory(
        steps: Vec<Step>,
        config: AgentConfig,
        inventory: Inventory,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let server = MockServer::start(Script::new(steps)).await.unwrap();
        let store = Store::open_in_dir(dir.path()).unwrap();
        let provider =
            OpenAiProvider::new(OpenAiConfig::new(server.base_url(), "mock"), None).unwrap();
        let executor = Executor::new(ExecutorConfig::new(dir.path().join("exec"))).unwrap();
        let agent = Agent::new(AgentParts {
            store,
            provider: Arc::new(provider),
            executor: Arc::new(executor),
            inventory,
            config: config.clone(),
        });
        let events = agent.subscribe();
        Self {
            config,
            agent,
            server,
            events,
            dir,
        }
    }

    /// Replaces the agent with one whose store runs on `clock` (same database, same model).
    pub fn set_clock(&mut self, clock: Arc<dyn nomos_store::Clock>) {
        let store = self.agent.store().clone().with_clock(clock);
        let provider =
            OpenAiProvider::new(OpenAiConfig::new(self.server.base_url(), "mock"), None).unwrap();
        let executor = Executor::new(ExecutorConfig::new(self.dir.path().join("exec"))).unwrap();
        self.agent = Agent::new(AgentParts {
            store,
            provider: Arc::new(provider),
            executor: Arc::new(executor),
            inventory: Inventory::with_local(),
            config: self.config.clone(),
        });
        self.events = self.agent.subscribe();
    }

    /// A new process on the same data: a fresh agent (nothing in memory) over the same
    /// database and the same scripted model.
    pub fn restart(&mut self) {
        self.restart_with(self.config.clone());
    }

    /// [`Harness::restart`] with another configuration.
    pub fn restart_with(&mut self, config: AgentConfig) {
        let store = Store::open_in_dir(self.dir.path()).unwrap();
        let provider =
            OpenAiProvider::new(OpenAiConfig::new(self.server.base_url(), "mock"), None).unwrap();
        let executor = Executor::new(ExecutorConfig::new(self.dir.path().join("exec"))).unwrap();
        self.config = config.clone();
        self.agent = Agent::new(AgentParts {
            store,
            provider: Arc::new(provider),
            executor: Arc::new(executor),
            inventory: Inventory::with_local(),
            config,
        });
        self.events = self.agent.subscribe();
    }

    pub fn store(&self) -> &Store {
        self.agent.store()
    }

    pub fn drain(&mut self) -> Vec<AgentEvent> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }

    /// Every tool call of the session in order: (name, result, is_error).
    pub fn tool_results(&self, session: SessionId) -> Vec<(String, String, bool)> {
        self.store()
            .transcript(session)
            .unwrap()
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .map(|c| {
                (
                    c.name.clone(),
                    c.result.clone().unwrap_or_default(),
                    c.is_error,
                )
            })
            .collect()
    }

    pub fn result_of(&self, session: SessionId, tool: &str) -> (String, bool) {
        let (_, r, e) = self
            .tool_results(session)
            .into_iter()
            .rev()
            .find(|(n, _, _)| n == tool)
            .unwrap_or_else(|| panic!("no {tool} call in session {session}"));
        (r, e)
    }

    /// Waits (up to 5 s) until the execution's result has been delivered to the model.
    pub async fn wait_continued(&self, execution: i64) -> nomos_store::Execution {
        for _ in 0..100 {
            let row = self.store().get_execution(execution).unwrap();
            if row.continued_at_ms.is_some() {
                return row;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.store().get_execution(execution).unwrap()
    }

    pub fn assert_no_script_failures(&self) {
        let failures = self.server.failures();
        assert!(
            failures.is_empty(),
            "scripted model saw unexpected requests: {failures:?}"
        );
    }
}

pub fn call(name: &str, args: Value) -> Step {
    Step::tool_call(name, args)
}

pub fn plan(steps: &[(&str, &str)]) -> Step {
    call(
        "propose_plan",
        json!({"steps": steps.iter().map(|(t, target)| json!({"title": t, "target": target})).collect::<Vec<_>>()}),
    )
}

/// `run` on this workstation for plan step `step`.
pub fn run_step(command: &str, step: i64) -> Step {
    call(
        "run",
        json!({"target": "host:local", "command": command, "reason": "test", "step": step}),
    )
}

pub fn run(command: &str) -> Step {
    call(
        "run",
        json!({"target": "host:local", "command": command, "reason": "test"}),
    )
}

pub fn text(t: &str) -> Step {
    Step::text(t)
}

/// Events of one kind, by the `type` tag.
pub fn of_type<'a>(events: &'a [AgentEvent], kind: &str) -> Vec<&'a AgentEvent> {
    events
        .iter()
        .filter(|e| serde_json::to_value(e).unwrap()["type"] == kind)
        .collect()
}

pub fn dones(events: &[AgentEvent]) -> Vec<bool> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Done { error, .. } => Some(*error),
            _ => None,
        })
        .collect()
}

/// This workstation plus `host:web-01`, `host:db`, `host:pve` (ssh) and `lxc:101` (pct).
pub fn lab_inventory() -> Inventory {
    let mut inv = Inventory::with_local();
    inv.merge_file(
        r#"
[[target]]
slug = "host:web-01"
transport = "ssh"

[[target]]
slug = "host:db"
transport = "ssh"

[[target]]
slug = "host:pve"
transport = "ssh"

[[target]]
slug = "lxc:101"
transport = "pct"
vmid = 101
proxmox = "host:pve"
"#,
        "lab.toml",
    )
    .unwrap();
    inv
}

/// An agent on `store` with its own executor directory and the scripted model at `base_url`
/// (another process's agent, when `store` is a second open of the same data directory).
pub fn agent_on(
    store: Store,
    exec_dir: &std::path::Path,
    base_url: &str,
    config: AgentConfig,
) -> Agent {
    let provider = OpenAiProvider::new(OpenAiConfig::new(base_url, "mock"), None).unwrap();
    let executor = Executor::new(ExecutorConfig::new(exec_dir)).unwrap();
    Agent::new(AgentParts {
        store,
        provider: Arc::new(provider),
        executor: Arc::new(executor),
        inventory: Inventory::with_local(),
        config,
    })
}

/// [`test_config`] with a short run wait, so commands move to the background.
pub fn background_config() -> AgentConfig {
    AgentConfig {
        run_wait: Duration::from_millis(150),
        ..test_config()
    }
}
