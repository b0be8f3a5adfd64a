//! The typed tools through the real dispatch: every tool the model is offered is reached by
//! its name, and arguments that do not match its schema are answered with an error naming the
//! tool and the field, before anything is recorded or run.

use nomos_mock_llm::{Reply, ScriptedCall, Step};
use serde_json::{Value, json};

use crate::support::*;

/// The tool names of the first request the model received.
fn offered_tools(h: &Harness) -> Vec<String> {
    let body = &h.server.requests()[0].body;
    body["tools"]
        .as_array()
        .expect("tools in the request")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

fn calls(list: Vec<(String, Value)>) -> Step {
    Step::new(Reply::ToolCalls {
        text: String::new(),
        reasoning: None,
        calls: list
            .into_iter()
            .map(|(name, args)| ScriptedCall::new(name, args))
            .collect(),
    })
}

#[tokio::test]
async fn tools_every_offered_tool_is_dispatched_and_refuses_a_key_its_schema_lacks() {
    let h = Harness::new(vec![text("Hello.")]).await;
    let session = h.agent.send(None, "hi").await.unwrap();
    let names = offered_tools(&h);
    assert!(names.len() >= 18, "{names:?}");

    // One reply calling every tool with a key none of them has, then a text answer.
    h.server.push(calls(
        names
            .iter()
            .map(|n| (n.clone(), json!({"bogus_key": 1})))
            .collect(),
    ));
    h.server.push(text("Sorry."));
    h.agent.send(Some(session), "go on").await.unwrap();

    let results = h.tool_results(session);
    assert_eq!(results.len(), names.len());
    for ((called, result, is_error), name) in results.iter().zip(&names) {
        assert_eq!(called, name);
        assert!(*is_error, "{name}: {result}");
        assert!(
            result.contains(&format!("Invalid arguments for {name}"))
                && result.contains("bogus_key"),
            "{name} was not reached by the dispatch or did not name the key: {result}"
        );
        assert!(!result.contains("Unknown tool"), "{name}: {result}");
    }
    // Nothing was acted on: no plan, no goal, no execution, the session still open.
    let row = h.store().get_session(session).unwrap();
    assert_eq!(row.goal, None);
    assert!(h.store().current_plan(session).unwrap().steps.is_empty());
    assert!(h.store().executions(session).unwrap().is_empty());
    assert!(!row.status.is_terminal());
    h.assert_no_script_failures();
}

#[tokio::test]
async fn tools_a_malformed_run_records_no_execution_and_names_the_field() {
    let run_args = |patch: Value| {
        let mut args = json!({"target": "host:local", "command": "uname -s", "reason": "test"});
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() && k.starts_with('-') {
                args.as_object_mut().unwrap().remove(&k[1..]);
            } else {
                args[k] = v.clone();
            }
        }
        args
    };
    let malformed: Vec<(Value, &str)> = vec![
        (json!({"-reason": null}), "reason"),
        (json!({"-command": null}), "command"),
        (json!({"command": ""}), "command"),
        (json!({"command": "   "}), "command"),
        (json!({"command": null}), "command"),
        (json!({"command": ["uname", "-s"]}), "command"),
        (json!({"target": 1}), "target"),
        (json!({"step": "first"}), "step"),
        (json!({"step": true}), "step"),
        (json!({"rerun_because": 5}), "rerun_because"),
        (json!({"sudo": true}), "sudo"),
    ];
    let mut steps = vec![plan(&[("Read the kernel name", "host:local")])];
    steps.push(calls(
        malformed
            .iter()
            .map(|(patch, _)| ("run".to_owned(), run_args(patch.clone())))
            .collect(),
    ));
    // A step number sent as digits still counts (read as before).
    steps.push(call("run", run_args(json!({"step": "1"}))));
    steps.push(text("Done."));
    let h = Harness::new(steps).await;
    let session = h.agent.send(None, "which kernel?").await.unwrap();
    h.agent.send(Some(session), "yes").await.unwrap();

    let runs: Vec<(String, bool)> = h
        .tool_results(session)
        .into_iter()
        .filter(|(n, _, _)| n == "run")
        .map(|(_, r, e)| (r, e))
        .collect();
    assert_eq!(runs.len(), malformed.len() + 1);
    for ((result, is_error), (patch, field)) in runs.iter().zip(&malformed) {
        assert!(*is_error, "{patch}: {result}");
        assert!(
            result.contains("Invalid arguments for run") && result.contains(field),
            "{patch}: {result}"
        );
    }
    let (last, last_error) = runs.last().unwrap();
    assert!(!last_error, "{last}");
    let execs = h.store().executions(session).unwrap();
    assert_eq!(execs.len(), 1, "only the well-formed run is recorded");
    let step1 = h.store().current_plan(session).unwrap().steps[0].id;
    assert_eq!(execs[0].plan_step_id, Some(step1));
    assert_eq!(execs[0].command, "uname -s");
    h.assert_no_script_failures();
}
