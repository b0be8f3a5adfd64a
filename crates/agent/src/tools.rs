//! The tools offered to the model: names, descriptions (crisp contracts) and JSON schemas.

use nomos_llm::ToolSpec;
use serde_json::{Value, json};

fn tool(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    }
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// Every tool, in the order the task flow uses them.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        tool(
            "set_goal",
            "Record the task's goal in one sentence (what done looks like). Opens no approval.",
            obj(json!({"goal": {"type": "string"}}), &["goal"]),
        ),
        tool(
            "search_knowledge",
            "Full-text search over what Nomos already knows (investigations, runbooks, notes, entities). Use before running commands.",
            obj(
                json!({"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 50}}),
                &["query"],
            ),
        ),
        tool(
            "get_knowledge_content",
            "Read one knowledge entry in full by id.",
            obj(json!({"id": {"type": "integer"}}), &["id"]),
        ),
        tool(
            "get_entity",
            "Read an entity (host:…, lxc:…, vm:…, service:…) with its attributes, history, relations and the knowledge about it.",
            obj(json!({"slug": {"type": "string"}}), &["slug"]),
        ),
        tool(
            "list_entities",
            "List entities, optionally of one kind (host, lxc, vm, service, …).",
            obj(
                json!({"kind": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 500}}),
                &[],
            ),
        ),
        tool(
            "get_relations",
            "The relations of an entity (runs_on, depends_on, …).",
            obj(json!({"slug": {"type": "string"}}), &["slug"]),
        ),
        tool(
            "list_targets",
            "The targets commands can run on, with their transport and when each was last audited.",
            obj(json!({}), &[]),
        ),
        tool(
            "get_health_summary",
            "A short summary of the fleet: targets, when each was last audited, recent failed executions.",
            obj(json!({}), &[]),
        ),
        tool(
            "get_state_snapshot",
            "The recorded state of this session: goal, status, every plan step with its status, and every execution with its result. Use it to reconcile, never re-run.",
            obj(json!({}), &[]),
        ),
        tool(
            "propose_plan",
            "Propose the plan: ordered steps, each with a title and a target. Mandatory before any run. Call it ONCE; after it, STOP and wait for the operator's approval. Refused while a step of the current plan is running or done.",
            obj(
                json!({"steps": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                    "title": {"type": "string"}, "detail": {"type": "string"}, "target": {"type": "string"}
                }, "required": ["title"], "additionalProperties": false}}}),
                &["steps"],
            ),
        ),
        tool(
            "update_plan_step",
            "Move a plan step (by seq) to running, done, failed or skipped, with a short note of what you found. Steps complete in order.",
            obj(
                json!({"seq": {"type": "integer", "minimum": 1}, "status": {"type": "string", "enum": ["running", "done", "failed", "skipped"]}, "note": {"type": "string"}}),
                &["seq", "status"],
            ),
        ),
        tool(
            "run",
            "Run one shell command on one target. The policy classifier decides: read-only runs at once once a plan exists; config changes need the operator's approval window; destructive or unknown commands wait for the operator's approval on this command.",
            obj(
                json!({
                    "target": {"type": "string", "description": "target slug from list_targets, e.g. host:local"},
                    "command": {"type": "string"},
                    "reason": {"type": "string", "description": "why this command, for the operator"},
                    "step": {"type": "integer", "description": "the plan step (seq) it serves"},
                    "rerun_because": {"type": "string", "description": "only to re-run a command that already ran in this plan: what changed"}
                }),
                &["target", "command", "reason"],
            ),
        ),
        tool(
            "cancel_execution",
            "Cancel a running or waiting execution by id.",
            obj(json!({"id": {"type": "integer"}}), &["id"]),
        ),
        tool(
            "update_entity_attributes",
            "Record facts about an entity (creates it if new): attributes as a JSON object, e.g. {\"os\": \"Debian 12\", \"disk_free_pct\": 41}.",
            obj(
                json!({"slug": {"type": "string"}, "attributes": {"type": "object"}}),
                &["slug", "attributes"],
            ),
        ),
        tool(
            "create_relationship",
            "Record how two entities connect, e.g. service:nginx runs_on host:web-01.",
            obj(
                json!({"from": {"type": "string"}, "kind": {"type": "string"}, "to": {"type": "string"}, "attributes": {"type": "object"}}),
                &["from", "kind", "to"],
            ),
        ),
        tool(
            "upsert_knowledge",
            "Write a knowledge entry (investigation, document, runbook, note) with `about` links to the entities it concerns. Same slug updates.",
            obj(
                json!({"kind": {"type": "string", "enum": ["investigation", "document", "runbook", "note"]}, "title": {"type": "string"}, "body": {"type": "string"}, "slug": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}, "about": {"type": "array", "items": {"type": "string"}}}),
                &["kind", "title", "body"],
            ),
        ),
        tool(
            "ask_operator",
            "Ask the operator one precise question and end your turn. The answer is never plan approval: do not ask for approval with it; the operator approves the plan in chat or with the Approve button.",
            obj(json!({"question": {"type": "string"}}), &["question"]),
        ),
        tool(
            "complete_task",
            "Finish the task: outcome success, partial or failed, and a summary the operator can act on (most critical first). Refused on a finished session; success is downgraded to partial when commands gathered facts that were not written back.",
            obj(
                json!({"outcome": {"type": "string", "enum": ["success", "partial", "failed"]}, "summary": {"type": "string"}}),
                &["outcome", "summary"],
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_tool_of_the_brief_is_offered_once() {
        let names: Vec<String> = specs().into_iter().map(|t| t.name).collect();
        for expected in [
            "set_goal",
            "propose_plan",
            "update_plan_step",
            "complete_task",
            "ask_operator",
            "run",
            "cancel_execution",
            "search_knowledge",
            "get_knowledge_content",
            "upsert_knowledge",
            "get_entity",
            "list_entities",
            "get_relations",
            "update_entity_attributes",
            "create_relationship",
            "list_targets",
            "get_health_summary",
            "get_state_snapshot",
        ] {
            assert_eq!(
                names.iter().filter(|n| *n == expected).count(),
                1,
                "{expected}"
            );
        }
        assert_eq!(names.len(), 18);
    }
}
