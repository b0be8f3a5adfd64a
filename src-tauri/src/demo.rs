//! "Try the demo" on a first launch without a model: the scripted model (nomos-mock-llm,
//! in-process on loopback) drives a real agent over the real store, classifier, executor and
//! knowledge graph, with real read-only commands on this workstation. Each demo is its own
//! session (marked `demo` in the store, titled "Demo: …"), its own scripted server and its own
//! agent; the commands a demo session receives go to that agent.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use nomos_agent::setup::{self, RuntimeSettings};
use nomos_agent::{Agent, AgentConfig};
use nomos_llm::{LlmSettings, MapEnv, ProviderKind};
use nomos_mock_llm::{MockServer, RecordedRequest, Reply, Script, ScriptedCall, Step};
use nomos_protocol::{ErrorCode, IpcError};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The scripted model's replies.
pub const SCRIPT: &str = include_str!("../demo/script.yaml");

/// The operator's message that starts a demo; its first line is the session's title.
pub const TASK: &str = "Demo: what is this workstation running?\n\
     (The Nomos demo: a scripted model reads the kernel, uptime, disks and memory of this \
     machine with read-only commands and records what it finds.)";

/// The hook in [`SCRIPT`] that writes back what the commands printed.
const WRITE_BACK_HOOK: &str = "demo_write_back";

/// One running demo: its scripted model, its agent and the agent's workers.
struct Run {
    agent: Agent,
    _server: MockServer,
    stop: CancellationToken,
}

impl Drop for Run {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The demos of this app run, by session.
#[derive(Default)]
pub struct Demos {
    runs: Mutex<HashMap<i64, Run>>,
}

impl std::fmt::Debug for Demos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions: Vec<i64> = self
            .runs
            .lock()
            .map(|r| r.keys().copied().collect())
            .unwrap_or_default();
        f.debug_struct("Demos")
            .field("sessions", &sessions)
            .finish()
    }
}

impl Demos {
    /// The agent of a demo session, when `session` is one.
    pub fn agent_for(&self, session: i64) -> Option<Agent> {
        self.runs
            .lock()
            .ok()?
            .get(&session)
            .map(|r| r.agent.clone())
    }

    /// Starts a demo in a new session; returns its id once the first turn is under way.
    pub async fn start<R: tauri::Runtime>(
        &self,
        app: &tauri::AppHandle<R>,
        store: nomos_store::Store,
        data_dir: &std::path::Path,
    ) -> Result<i64, IpcError> {
        let script = Script::from_yaml(SCRIPT).map_err(|e| {
            IpcError::new(ErrorCode::InternalTaskFailed, format!("demo script: {e}"))
        })?;
        let server = MockServer::start(script).await.map_err(|e| {
            IpcError::new(
                ErrorCode::LlmConnect,
                format!("The demo's scripted model could not listen on loopback: {e}"),
            )
        })?;
        server.set_hook(WRITE_BACK_HOOK, write_back);
        let settings = RuntimeSettings {
            llm: LlmSettings {
                provider: Some(ProviderKind::OpenAiCompatible),
                base_url: Some(server.base_url()),
                model: Some("nomos-demo".to_owned()),
                ..LlmSettings::default()
            },
            // This workstation only: no inventory, no ~/.ssh/config hosts.
            inventory_path: None,
            import_ssh_config: false,
            ..RuntimeSettings::default()
        };
        // The session exists, marked as a demo, before its first turn: no face ever lists it
        // unmarked, and the mark is a field, not the title.
        let session = store
            .create_session(nomos_store::NewSession {
                title: nomos_agent::title_from(TASK),
                goal: None,
            })
            .and_then(|s| store.mark_session_demo(s.id))
            .map_err(|e| crate::convert::store_error(&e))?
            .id;
        // No environment: no key, no inventory from NOMOS_INVENTORY, nothing but loopback.
        let agent = setup::assemble(
            store,
            data_dir,
            &settings,
            &MapEnv::default(),
            None,
            AgentConfig::default(),
        )
        .map_err(|e| IpcError::from_parts(e.code(), e.to_string(), e.is_retryable()))?;
        crate::relay::attach(app, &agent);
        let stop = CancellationToken::new();
        let _workers = agent.spawn_workers(stop.clone());
        agent
            .submit(Some(session), TASK)
            .await
            .map_err(|e| crate::convert::agent_error(&e))?;
        if let Ok(mut runs) = self.runs.lock() {
            runs.insert(
                session,
                Run {
                    agent,
                    _server: server,
                    stop,
                },
            );
        }
        Ok(session)
    }
}

/// What the demo learned, from the outputs of its commands in the request's tool results.
pub fn facts(request: &RecordedRequest) -> BTreeMap<&'static str, String> {
    let results: Vec<String> = request
        .messages()
        .into_iter()
        .filter(|m| m.role == "tool")
        .map(|m| m.text)
        .collect();
    facts_from(&results)
}

/// The facts in command outputs (each a `run` result: a status line, then `stdout:` and the
/// output). Only what is there is returned.
pub fn facts_from(results: &[String]) -> BTreeMap<&'static str, String> {
    let mut facts = BTreeMap::new();
    for result in results {
        let stdout = result.split_once("\nstdout:\n").map_or("", |(_, rest)| {
            rest.split("\nstderr:\n").next().unwrap_or("")
        });
        for line in stdout.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            // uname -a: "Linux host 6.1.0-18-amd64 #1 SMP … x86_64 GNU/Linux"
            if words.len() >= 4 && words[3].starts_with('#') && !facts.contains_key("kernel") {
                facts.insert("os", words[0].to_owned());
                facts.insert("hostname", words[1].to_owned());
                facts.insert("kernel", words[2].to_owned());
            }
            // uptime: " 17:25:55 up 7:47,  1 user,  load average: 2.04, 0.62, 0.21"
            if let Some((before, load)) = line.split_once("load average:")
                && let Some((_, up)) = before.split_once(" up ")
            {
                let up = up
                    .split(',')
                    .filter(|p| !p.contains("user"))
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(", ");
                facts.insert("uptime", up);
                facts.insert("load_average", load.trim().to_owned());
            }
            // df -h: the root file system's line.
            if words.len() >= 6 && words[words.len() - 1] == "/" && words[4].ends_with('%') {
                facts.insert("root_fs_size", words[1].to_owned());
                facts.insert("root_fs_used", words[4].to_owned());
                facts.insert("root_fs_available", words[3].to_owned());
            }
            // free -m: "Mem: total used free shared buff/cache available"
            if words.first() == Some(&"Mem:") && words.len() >= 3 {
                facts.insert("memory_total_mib", words[1].to_owned());
                if let Some(available) = words.get(6) {
                    facts.insert("memory_available_mib", (*available).to_owned());
                }
            }
        }
    }
    facts
}

/// The write-back reply: step 2 done, the facts on host:local, and a note in prose.
fn write_back(request: &RecordedRequest) -> Step {
    let facts = facts(request);
    let mut attributes: serde_json::Map<String, Value> = facts
        .iter()
        .map(|(k, v)| ((*k).to_owned(), Value::String(v.clone())))
        .collect();
    if attributes.is_empty() {
        attributes.insert(
            "demo_note".into(),
            Value::String("The demo's commands printed nothing it could read.".into()),
        );
    }
    let body = if facts.is_empty() {
        "The demo's commands printed nothing it could read.".to_owned()
    } else {
        facts
            .iter()
            .map(|(k, v)| format!("- {}: {v}", k.replace('_', " ")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let text = match (facts.get("kernel"), facts.get("root_fs_used")) {
        (Some(k), Some(d)) => format!("Kernel {k}, root file system {d} full. Recording it."),
        (Some(k), None) => format!("Kernel {k}. Recording it."),
        _ => "Recording what the commands printed.".to_owned(),
    };
    Step::new(Reply::ToolCalls {
        text,
        reasoning: None,
        calls: vec![
            ScriptedCall::new("update_plan_step", json!({"seq": 2, "status": "done"})),
            ScriptedCall::new(
                "update_entity_attributes",
                json!({"slug": "host:local", "attributes": attributes}),
            ),
            ScriptedCall::new(
                "upsert_knowledge",
                json!({
                    "kind": "investigation",
                    "title": "Demo: this workstation at a glance",
                    "body": body,
                    "tags": ["demo"],
                    "about": ["host:local"],
                }),
            ),
        ],
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// Every command the demo can run, from the script and from the hook's reply.
    fn run_commands(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .filter_map(|s| match &s.reply {
                Reply::ToolCalls { calls, .. } => Some(calls),
                _ => None,
            })
            .flatten()
            .filter(|c| c.name == "run")
            .map(|c| {
                let args: Value = serde_json::from_str(&c.argument_string()).unwrap();
                args["command"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    fn sample_results() -> Vec<String> {
        vec![
            "Execution 1 on host:local: done, exit 0, 0.0s\nstdout:\nLinux ws1 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) x86_64 GNU/Linux\n".into(),
            "Execution 2 on host:local: done, exit 0, 0.0s\nstdout:\n 17:25:55 up 3 days,  7:47,  2 users,  load average: 2.04, 0.62, 0.21\n".into(),
            "Execution 3 on host:local: done, exit 0, 0.1s\nstdout:\nFilesystem      Size  Used Avail Use% Mounted on\nudev            3.9G     0  3.9G   0% /dev\n/dev/vda        252G   41G  199G  18% /\ntmpfs           796M  1.2M  795M   1% /run\n".into(),
            "Execution 4 on host:local: done, exit 0, 0.0s\nstdout:\n               total        used        free      shared  buff/cache   available\nMem:            7951        2011        3120          12        3100        5940\nSwap:              0           0           0\n".into(),
        ]
    }

    #[test]
    fn every_command_of_the_demo_classifies_read_only() {
        let script = Script::from_yaml(SCRIPT).unwrap();
        let mut steps: Vec<Step> = script.replies.clone();
        steps.extend(script.fallback.clone());
        // The hook's reply is part of the demo too.
        let request = RecordedRequest {
            seq: 3,
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            format: nomos_mock_llm::Format::OpenAi,
            headers: vec![],
            body: json!({"messages": sample_results().iter().map(|r| json!({"role": "tool", "content": r})).collect::<Vec<_>>()}),
            step: Some(3),
        };
        steps.push(write_back(&request));
        let commands = run_commands(&steps);
        assert_eq!(commands, ["uname -a", "uptime", "df -h", "free -m"]);
        for command in &commands {
            let decision = nomos_policy::classify(command);
            assert_eq!(
                decision.class,
                nomos_policy::Class::ReadOnly,
                "{command}: {}",
                decision.summary()
            );
        }
        // The script is what the app serves: one hook, registered under its name.
        let hooks: Vec<&str> = script
            .replies
            .iter()
            .filter_map(|s| match &s.reply {
                Reply::Hook { name } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(hooks, [WRITE_BACK_HOOK]);
    }

    #[test]
    fn the_write_back_carries_what_the_commands_printed() {
        let facts = facts_from(&sample_results());
        let expected: BTreeMap<&str, &str> = [
            ("os", "Linux"),
            ("hostname", "ws1"),
            ("kernel", "6.1.0-18-amd64"),
            ("uptime", "3 days, 7:47"),
            ("load_average", "2.04, 0.62, 0.21"),
            ("root_fs_size", "252G"),
            ("root_fs_used", "18%"),
            ("root_fs_available", "199G"),
            ("memory_total_mib", "7951"),
            ("memory_available_mib", "5940"),
        ]
        .into_iter()
        .collect();
        let got: BTreeMap<&str, &str> = facts.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(got, expected);
        // Other shapes of the same outputs: short uptime, a df line with a long device name.
        let other = facts_from(&[
            "Execution 2 on host:local: done, exit 0\nstdout:\n 09:01:02 up 5 min,  0 users,  load average: 0.00, 0.01, 0.05\n".into(),
            "Execution 3 on host:local: done, exit 0\nstdout:\nFilesystem                Size  Used Avail Use% Mounted on\n/dev/mapper/vg0-root       30G   12G   17G  42% /\n/dev/sda1                 511M  6.1M  505M   2% /boot/efi\nstderr:\ndf: /run/user/1000/doc: Operation not permitted\n".into(),
        ]);
        assert_eq!(other.get("uptime").map(String::as_str), Some("5 min"));
        assert_eq!(other.get("root_fs_used").map(String::as_str), Some("42%"));
        assert!(!other.contains_key("kernel"));
    }

    #[test]
    fn a_demo_whose_commands_printed_nothing_still_writes_back() {
        assert!(
            facts_from(&[
                "Execution 1 on host:local: failed, exit 127\nstderr:\nnot found\n".into()
            ])
            .is_empty()
        );
        let request = RecordedRequest {
            seq: 3,
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            format: nomos_mock_llm::Format::OpenAi,
            headers: vec![],
            body: json!({"messages": []}),
            step: Some(3),
        };
        let Reply::ToolCalls { calls, .. } = write_back(&request).reply else {
            panic!("tool calls")
        };
        let attrs: Value = serde_json::from_str(&calls[1].argument_string()).unwrap();
        assert_eq!(calls[1].name, "update_entity_attributes");
        assert!(attrs["attributes"]["demo_note"].is_string());
    }
}
