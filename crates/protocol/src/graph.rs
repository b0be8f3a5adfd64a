//! The knowledge graph view and the execution ledger ("what ran where").

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::agent::{ApprovalKind, CommandClass, ExecStatus};

/// What part of the graph to load. Nodes come from the neighbourhood of `focus`, else the
/// entities matching `search`, else every entity page by page (`after`); `kinds` and `tag`
/// narrow them. The shell caps `max_nodes` and `max_edges`: the view never loads the whole
/// store of a big estate at once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct GraphQuery {
    /// Only these entity kinds (empty or absent: all).
    #[ts(optional)]
    pub kinds: Option<Vec<String>>,
    /// Only entities that a knowledge entry with this tag is about.
    #[ts(optional)]
    pub tag: Option<String>,
    /// The neighbourhood of this entity slug.
    #[ts(optional)]
    pub focus: Option<String>,
    /// Neighbourhood depth, 1–3.
    #[ts(optional)]
    pub depth: Option<u8>,
    /// Entities matching these words.
    #[ts(optional)]
    pub search: Option<String>,
    /// Next page: the previous slice's `next_after`.
    #[ts(optional, type = "number")]
    pub after: Option<i64>,
    #[ts(optional)]
    pub max_nodes: Option<u32>,
    #[ts(optional)]
    pub max_edges: Option<u32>,
    /// Also return the slugs this session touched (for highlighting).
    #[ts(optional, type = "number")]
    pub touched_by: Option<i64>,
}

/// An entity as a node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct GraphNodeView {
    #[ts(type = "number")]
    pub id: i64,
    /// `kind:name`.
    pub slug: String,
    pub kind: String,
    pub name: String,
    #[ts(type = "Record<string, unknown>")]
    pub attributes: Map<String, Value>,
    /// Its last change (an attribute or its creation), ms since the epoch.
    #[ts(type = "number")]
    pub updated_at_ms: i64,
    /// Its last audit (an investigation or audit-tagged entry about it).
    #[ts(type = "number | null")]
    pub last_audited_at_ms: Option<i64>,
}

/// A relation `from -kind-> to` (slugs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct GraphEdgeView {
    #[ts(type = "number")]
    pub id: i64,
    pub from: String,
    pub kind: String,
    pub to: String,
    /// The session that created or last changed it.
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
}

/// A bounded piece of the graph, as columns: one entry per node in the `node_*` arrays and one
/// per edge in the `edge_*` arrays, kinds as indexes into a table of names and edge ends as
/// indexes into the node columns. A 5,000-node / 15,000-edge slice is a quarter of the bytes of
/// one object per node and edge (slugs repeated at both ends of every edge), and the view
/// decodes it without a JSON object per item (DESIGN §14: first render ≤ 1 s).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct GraphSliceView {
    /// Entity ids.
    #[ts(type = "number[]")]
    pub node_ids: Vec<i64>,
    /// `kind:name` of each node (the graph view's key and label).
    pub node_slugs: Vec<String>,
    /// Index into `kinds` of each node's kind.
    pub node_kinds: Vec<u32>,
    /// Each node's last change (an attribute or its creation), ms since the epoch.
    #[ts(type = "number[]")]
    pub node_updated_at_ms: Vec<i64>,
    /// Each node's last audit (an investigation or audit-tagged entry about it).
    #[ts(type = "(number | null)[]")]
    pub node_audited_at_ms: Vec<Option<i64>>,
    /// Entity kind names, each once.
    pub kinds: Vec<String>,
    /// Relation ids.
    #[ts(type = "number[]")]
    pub edge_ids: Vec<i64>,
    /// Index into the node columns of each edge's source.
    pub edge_from: Vec<u32>,
    /// Index into the node columns of each edge's destination.
    pub edge_to: Vec<u32>,
    /// Index into `relation_kinds` of each edge's kind.
    pub edge_kinds: Vec<u32>,
    /// Relation kind names, each once.
    pub relation_kinds: Vec<String>,
    /// More nodes matched than were returned.
    pub more_nodes: bool,
    /// More edges joined the returned nodes than were returned (or an edge's end was not
    /// among the nodes and was left out).
    pub more_edges: bool,
    /// Ask again with `after` = this for the next page.
    #[ts(type = "number | null")]
    pub next_after: Option<i64>,
    /// Slugs the `touched_by` session changed, linked or wrote about.
    pub touched: Vec<String>,
}

/// One change of an attribute and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AttributeChangeView {
    #[ts(type = "number")]
    pub id: i64,
    pub key: String,
    /// `null`: the attribute was new.
    #[ts(type = "unknown")]
    pub old_value: Option<Value>,
    /// `null`: it was removed.
    #[ts(type = "unknown")]
    pub new_value: Option<Value>,
    #[ts(type = "number")]
    pub changed_at_ms: i64,
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    pub session_title: Option<String>,
    #[ts(type = "number | null")]
    pub generation: Option<i64>,
    #[ts(type = "number | null")]
    pub plan_step_id: Option<i64>,
    #[ts(type = "number | null")]
    pub plan_step_seq: Option<i64>,
    pub plan_step_title: Option<String>,
    /// The execution whose output the fact was read from.
    #[ts(type = "number | null")]
    pub execution_id: Option<i64>,
    pub execution_command: Option<String>,
    pub execution_target: Option<String>,
    /// The message (model turn) that wrote it: the transcript link.
    #[ts(type = "number | null")]
    pub message_id: Option<i64>,
}

/// An attribute's current value and when it last changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct AttributeView {
    pub key: String,
    #[ts(type = "unknown")]
    pub value: Value,
    /// Its latest recorded change (`null`: no history, e.g. written before history existed).
    #[ts(type = "number | null")]
    pub changed_at_ms: Option<i64>,
}

/// A knowledge entry about an entity (without its body).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct KnowledgeRefView {
    #[ts(type = "number")]
    pub id: i64,
    /// `investigation`, `document`, `runbook` or `note`.
    pub kind: String,
    pub title: String,
    pub tags: Vec<String>,
    #[ts(type = "number | null")]
    pub session_id: Option<i64>,
    #[ts(type = "number")]
    pub updated_at_ms: i64,
}

/// How an execution ended, as the ledger filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LedgerOutcome {
    /// Finished with exit code 0.
    Succeeded,
    /// Another exit code, a failure to run, or a timeout.
    Failed,
    /// Denied or stopped.
    Cancelled,
    /// Queued, awaiting approval or running.
    Pending,
}

/// One execution in the ledger (without its output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LedgerRowView {
    #[ts(type = "number")]
    pub id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub session_title: String,
    /// The message whose tool call started it: the transcript link.
    #[ts(type = "number | null")]
    pub message_id: Option<i64>,
    #[ts(type = "number | null")]
    pub plan_step_id: Option<i64>,
    #[ts(type = "number | null")]
    pub plan_step_seq: Option<i64>,
    pub plan_step_title: Option<String>,
    pub target: String,
    pub command: String,
    pub class: CommandClass,
    pub reason: String,
    pub approval: Option<ApprovalKind>,
    pub approved_by: Option<String>,
    #[ts(type = "number | null")]
    pub approved_at_ms: Option<i64>,
    pub status: ExecStatus,
    pub outcome: LedgerOutcome,
    pub exit_code: Option<i32>,
    pub error: Option<String>,
    #[ts(type = "number")]
    pub created_at_ms: i64,
    #[ts(type = "number | null")]
    pub duration_ms: Option<i64>,
}

/// Everything the details panel shows about one entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct EntityDetailsView {
    pub node: GraphNodeView,
    /// Current attributes, by key.
    pub attributes: Vec<AttributeView>,
    /// Attribute changes with provenance, newest first (bounded).
    pub history: Vec<AttributeChangeView>,
    /// Relations from or to it.
    pub relations: Vec<GraphEdgeView>,
    /// Knowledge about it, newest first.
    pub knowledge: Vec<KnowledgeRefView>,
    /// Executions that targeted it, newest first (bounded).
    pub executions: Vec<LedgerRowView>,
}

/// Where a ledger page starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LedgerCursor {
    #[ts(type = "number")]
    pub created_at_ms: i64,
    #[ts(type = "number")]
    pub id: i64,
}

/// Filter of the execution ledger; every field narrows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LedgerQuery {
    /// Target slug, exactly.
    #[ts(optional)]
    pub target: Option<String>,
    #[ts(optional, type = "number")]
    pub session_id: Option<i64>,
    #[ts(optional)]
    pub classes: Option<Vec<CommandClass>>,
    #[ts(optional)]
    pub outcomes: Option<Vec<LedgerOutcome>>,
    /// Created at or after (ms since the epoch).
    #[ts(optional, type = "number")]
    pub since_ms: Option<i64>,
    /// Created before.
    #[ts(optional, type = "number")]
    pub until_ms: Option<i64>,
    #[ts(optional)]
    pub before: Option<LedgerCursor>,
    #[ts(optional)]
    pub limit: Option<u32>,
}

/// A page of the ledger, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LedgerPageView {
    pub rows: Vec<LedgerRowView>,
    /// The next (older) page, when there is one.
    pub next: Option<LedgerCursor>,
}

/// A row of the plan-steps × targets matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MatrixStepView {
    /// `null`: executions outside any plan step.
    #[ts(type = "number | null")]
    pub id: Option<i64>,
    #[ts(type = "number | null")]
    pub generation: Option<i64>,
    #[ts(type = "number | null")]
    pub seq: Option<i64>,
    pub title: String,
    pub status: Option<String>,
}

/// What ran for one step on one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct MatrixCellView {
    #[ts(type = "number | null")]
    pub plan_step_id: Option<i64>,
    pub target: String,
    pub runs: u32,
    pub succeeded: u32,
    pub failed: u32,
    /// The most mutating class among them.
    pub class: CommandClass,
    #[ts(type = "number")]
    pub last_execution_id: i64,
    pub last_outcome: LedgerOutcome,
}

/// Plan steps × targets for one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ExecutionMatrixView {
    #[ts(type = "number")]
    pub session_id: i64,
    pub steps: Vec<MatrixStepView>,
    pub targets: Vec<String>,
    pub cells: Vec<MatrixCellView>,
    /// The session had more executions than the matrix reads.
    pub truncated: bool,
}

/// An entity that depends on a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DependentView {
    pub slug: String,
    pub kind: String,
    /// The relation that makes it depend (`runs_on`, `depends_on`, `hosts`, …).
    pub relation: String,
    /// What it depends on through that relation.
    pub via: String,
    /// 1: on the target directly; 2: through a depth-1 dependent.
    pub depth: u8,
}

/// The blast radius of a target: what runs on it and what depends on it, to depth 2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct DependentsView {
    pub target: String,
    /// The target is an entity of the graph.
    pub known: bool,
    pub dependents: Vec<DependentView>,
    /// More than returned.
    pub more: bool,
}

/// An execution target on the start screen and its last audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TargetAuditView {
    pub slug: String,
    pub kind: String,
    /// `null`: never audited.
    #[ts(type = "number | null")]
    pub last_audited_at_ms: Option<i64>,
}

/// A command waiting for the operator's approval (the link opens its session at the card).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WaitingApprovalView {
    #[ts(type = "number")]
    pub execution_id: i64,
    #[ts(type = "number")]
    pub session_id: i64,
    pub session_title: String,
    pub target: String,
    /// Display copy (secrets redacted).
    pub command: String,
    pub class: CommandClass,
    #[ts(type = "number")]
    pub created_at_ms: i64,
}

/// The start screen's overview: a small graph (the entities changed last), targets by last
/// audit (never first, then oldest), recent sessions and the commands waiting for approval.
/// Every list is bounded; the `more_*` flags say when there is more than shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct HomeOverviewView {
    pub graph: GraphSliceView,
    pub targets: Vec<TargetAuditView>,
    pub more_targets: bool,
    /// Most recently active first.
    pub sessions: Vec<crate::SessionSummary>,
    pub approvals: Vec<WaitingApprovalView>,
    pub more_approvals: bool,
}
