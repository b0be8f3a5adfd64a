//! Store graph and ledger types → wire DTOs, and the caps the shell puts on what the view asks.

use nomos_protocol as wire;
use nomos_store as store;

/// Nodes one graph request may return (the view pages beyond it).
pub const MAX_GRAPH_NODES: u32 = 10_000;
/// Edges one graph request may return.
pub const MAX_GRAPH_EDGES: u32 = 50_000;
/// Nodes when the view does not say.
pub const DEFAULT_GRAPH_NODES: u32 = 2_000;
/// Edges when the view does not say.
pub const DEFAULT_GRAPH_EDGES: u32 = 8_000;
/// Attribute changes the details panel shows.
pub const DETAILS_HISTORY: u32 = 100;
/// Executions targeting an entity the details panel shows.
pub const DETAILS_EXECUTIONS: u32 = 50;

pub fn slice_query(q: wire::GraphQuery) -> store::GraphSliceQuery {
    let text = |s: Option<String>| s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
    store::GraphSliceQuery {
        kinds: q.kinds.unwrap_or_default(),
        tag: text(q.tag),
        focus: text(q.focus),
        depth: q.depth.unwrap_or(1).clamp(1, 3),
        search: text(q.search),
        after: q.after,
        max_nodes: q
            .max_nodes
            .unwrap_or(DEFAULT_GRAPH_NODES)
            .clamp(1, MAX_GRAPH_NODES),
        max_edges: q
            .max_edges
            .unwrap_or(DEFAULT_GRAPH_EDGES)
            .clamp(1, MAX_GRAPH_EDGES),
    }
}

pub fn node(n: store::GraphNode) -> wire::GraphNodeView {
    wire::GraphNodeView {
        id: n.entity.id,
        slug: n.entity.slug,
        kind: n.entity.kind,
        name: n.entity.name,
        attributes: n.entity.attributes,
        updated_at_ms: n.entity.updated_at_ms,
        last_audited_at_ms: n.last_audited_at_ms,
    }
}

pub fn edge(r: store::Relation) -> wire::GraphEdgeView {
    wire::GraphEdgeView {
        id: r.id,
        from: r.from,
        kind: r.kind,
        to: r.to,
        session_id: r.session_id,
    }
}

/// The slice as columns (see `GraphSliceView`): kinds interned, edge ends as node indexes.
pub fn slice(s: store::GraphSlice, touched: Vec<String>) -> wire::GraphSliceView {
    let n = s.nodes.len();
    let mut out = wire::GraphSliceView {
        node_ids: Vec::with_capacity(n),
        node_slugs: Vec::with_capacity(n),
        node_kinds: Vec::with_capacity(n),
        node_updated_at_ms: Vec::with_capacity(n),
        node_audited_at_ms: Vec::with_capacity(n),
        more_nodes: s.more_nodes,
        more_edges: s.more_edges,
        next_after: s.next_after,
        touched,
        ..Default::default()
    };
    let mut kinds = Interner::default();
    let mut index = std::collections::HashMap::with_capacity(n);
    for node in s.nodes {
        let e = node.entity;
        index.insert(e.slug.clone(), idx(out.node_ids.len()));
        out.node_ids.push(e.id);
        out.node_kinds.push(kinds.get(&e.kind));
        out.node_slugs.push(e.slug);
        out.node_updated_at_ms.push(e.updated_at_ms);
        out.node_audited_at_ms.push(node.last_audited_at_ms);
    }
    let mut relation_kinds = Interner::default();
    for r in s.edges {
        // The store returns only relations between returned nodes; one that is not would
        // have no end to point at, so it is left out and flagged like a capped edge.
        let (Some(&from), Some(&to)) = (index.get(&r.from), index.get(&r.to)) else {
            out.more_edges = true;
            continue;
        };
        out.edge_ids.push(r.id);
        out.edge_from.push(from);
        out.edge_to.push(to);
        out.edge_kinds.push(relation_kinds.get(&r.kind));
    }
    out.kinds = kinds.names;
    out.relation_kinds = relation_kinds.names;
    out
}

/// The start screen's overview (recent sessions converted by the caller).
pub fn home(o: store::HomeOverview, sessions: Vec<wire::SessionSummary>) -> wire::HomeOverviewView {
    wire::HomeOverviewView {
        graph: slice(o.graph, Vec::new()),
        targets: o
            .targets
            .into_iter()
            .map(|t| wire::TargetAuditView {
                slug: t.slug,
                kind: t.kind,
                last_audited_at_ms: t.last_audited_at_ms,
            })
            .collect(),
        more_targets: o.more_targets,
        sessions,
        approvals: o
            .approvals
            .into_iter()
            .map(|a| wire::WaitingApprovalView {
                execution_id: a.execution_id,
                session_id: a.session_id,
                session_title: a.session_title,
                target: a.target,
                command: a.command,
                class: class(a.class),
                created_at_ms: a.created_at_ms,
            })
            .collect(),
        more_approvals: o.more_approvals,
    }
}

/// A column index; slices are capped far below `u32::MAX` (`MAX_GRAPH_NODES`).
fn idx(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Names stored once, referred to by index.
#[derive(Default)]
struct Interner {
    names: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl Interner {
    fn get(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = idx(self.names.len());
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), i);
        i
    }
}

pub fn change(p: store::AttributeProvenance) -> wire::AttributeChangeView {
    let c = p.change;
    wire::AttributeChangeView {
        id: c.id,
        key: c.key,
        old_value: c.old_value,
        new_value: c.new_value,
        changed_at_ms: c.changed_at_ms,
        session_id: c.session_id,
        session_title: p.session_title,
        generation: c.generation,
        plan_step_id: c.plan_step_id,
        plan_step_seq: p.plan_step_seq,
        plan_step_title: p.plan_step_title,
        execution_id: c.execution_id,
        execution_command: p.execution_command,
        execution_target: p.execution_target,
        message_id: c.message_id,
    }
}

pub fn knowledge_ref(k: store::KnowledgeEntry) -> wire::KnowledgeRefView {
    wire::KnowledgeRefView {
        id: k.id,
        kind: k.kind.as_str().to_owned(),
        title: k.title,
        tags: k.tags,
        session_id: k.session_id,
        updated_at_ms: k.updated_at_ms,
    }
}

fn class(c: store::CommandClass) -> wire::CommandClass {
    match c {
        store::CommandClass::ReadOnly => wire::CommandClass::ReadOnly,
        store::CommandClass::ConfigMutation => wire::CommandClass::ConfigMutation,
        store::CommandClass::Destructive => wire::CommandClass::Destructive,
    }
}

fn class_in(c: wire::CommandClass) -> store::CommandClass {
    match c {
        wire::CommandClass::ReadOnly => store::CommandClass::ReadOnly,
        wire::CommandClass::ConfigMutation => store::CommandClass::ConfigMutation,
        wire::CommandClass::Destructive => store::CommandClass::Destructive,
    }
}

fn outcome(o: store::LedgerOutcome) -> wire::LedgerOutcome {
    match o {
        store::LedgerOutcome::Succeeded => wire::LedgerOutcome::Succeeded,
        store::LedgerOutcome::Failed => wire::LedgerOutcome::Failed,
        store::LedgerOutcome::Cancelled => wire::LedgerOutcome::Cancelled,
        store::LedgerOutcome::Pending => wire::LedgerOutcome::Pending,
    }
}

fn outcome_in(o: wire::LedgerOutcome) -> store::LedgerOutcome {
    match o {
        wire::LedgerOutcome::Succeeded => store::LedgerOutcome::Succeeded,
        wire::LedgerOutcome::Failed => store::LedgerOutcome::Failed,
        wire::LedgerOutcome::Cancelled => store::LedgerOutcome::Cancelled,
        wire::LedgerOutcome::Pending => store::LedgerOutcome::Pending,
    }
}

fn status(s: store::ExecStatus) -> wire::ExecStatus {
    match s {
        store::ExecStatus::Queued => wire::ExecStatus::Queued,
        store::ExecStatus::AwaitingApproval => wire::ExecStatus::AwaitingApproval,
        store::ExecStatus::Running => wire::ExecStatus::Running,
        store::ExecStatus::Finished => wire::ExecStatus::Finished,
        store::ExecStatus::Failed => wire::ExecStatus::Failed,
        store::ExecStatus::Cancelled => wire::ExecStatus::Cancelled,
        store::ExecStatus::TimedOut => wire::ExecStatus::TimedOut,
    }
}

fn approval(k: store::ApprovalKind) -> wire::ApprovalKind {
    match k {
        store::ApprovalKind::NotNeeded => wire::ApprovalKind::NotNeeded,
        store::ApprovalKind::OperatorButton => wire::ApprovalKind::OperatorButton,
        store::ApprovalKind::ChatApproval => wire::ApprovalKind::ChatApproval,
        store::ApprovalKind::Window => wire::ApprovalKind::Window,
    }
}

pub fn ledger_row(r: store::LedgerRow) -> wire::LedgerRowView {
    wire::LedgerRowView {
        id: r.id,
        session_id: r.session_id,
        session_title: r.session_title,
        message_id: r.message_id,
        plan_step_id: r.plan_step_id,
        plan_step_seq: r.plan_step_seq,
        plan_step_title: r.plan_step_title,
        target: r.target,
        command: r.command,
        class: class(r.class),
        reason: r.decision_reason,
        approval: r.approval.map(approval),
        approved_by: r.approved_by,
        approved_at_ms: r.approved_at_ms,
        status: status(r.status),
        outcome: outcome(r.outcome),
        exit_code: r.exit_code,
        error: r.error,
        created_at_ms: r.created_at_ms,
        duration_ms: r.duration_ms,
    }
}

pub fn ledger_filter(q: wire::LedgerQuery) -> store::LedgerFilter {
    store::LedgerFilter {
        target: q
            .target
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty()),
        session: q.session_id,
        classes: q
            .classes
            .unwrap_or_default()
            .into_iter()
            .map(class_in)
            .collect(),
        outcomes: q
            .outcomes
            .unwrap_or_default()
            .into_iter()
            .map(outcome_in)
            .collect(),
        since_ms: q.since_ms,
        until_ms: q.until_ms,
        before: q.before.map(|c| store::LedgerCursor {
            created_at_ms: c.created_at_ms,
            id: c.id,
        }),
        limit: q.limit.unwrap_or(100).clamp(1, store::MAX_LEDGER_PAGE),
    }
}

pub fn ledger_page(p: store::LedgerPage) -> wire::LedgerPageView {
    wire::LedgerPageView {
        rows: p.rows.into_iter().map(ledger_row).collect(),
        next: p.next.map(|c| wire::LedgerCursor {
            created_at_ms: c.created_at_ms,
            id: c.id,
        }),
    }
}

pub fn matrix(m: store::ExecutionMatrix) -> wire::ExecutionMatrixView {
    wire::ExecutionMatrixView {
        session_id: m.session_id,
        steps: m
            .steps
            .into_iter()
            .map(|s| wire::MatrixStepView {
                id: s.id,
                generation: s.generation,
                seq: s.seq,
                title: s.title,
                status: s.status,
            })
            .collect(),
        targets: m.targets,
        cells: m
            .cells
            .into_iter()
            .map(|c| wire::MatrixCellView {
                plan_step_id: c.plan_step_id,
                target: c.target,
                runs: c.runs,
                succeeded: c.succeeded,
                failed: c.failed,
                class: class(c.class),
                last_execution_id: c.last_execution_id,
                last_outcome: outcome(c.last_outcome),
            })
            .collect(),
        truncated: m.truncated,
    }
}

pub fn dependents(d: store::Dependents) -> wire::DependentsView {
    wire::DependentsView {
        target: d.target,
        known: d.known,
        dependents: d
            .dependents
            .into_iter()
            .map(|x| wire::DependentView {
                slug: x.slug,
                kind: x.kind,
                relation: x.relation,
                via: x.via,
                depth: x.depth,
            })
            .collect(),
        more: d.more,
    }
}

/// The details panel of one entity, read in one snapshot; `None` when it is unknown.
pub fn details(
    r: &store::Reader<'_>,
    slug: &str,
) -> Result<Option<wire::EntityDetailsView>, store::StoreError> {
    let Some(detail) = r.entity_detail(slug, 1)? else {
        return Ok(None);
    };
    let ages = r.attribute_ages(&detail.entity.slug)?;
    let history = r.attribute_provenance(&detail.entity.slug, None, None, DETAILS_HISTORY)?;
    let executions = r.executions_targeting(&detail.entity.slug, DETAILS_EXECUTIONS)?;
    let attributes = detail
        .entity
        .attributes
        .iter()
        .map(|(k, v)| wire::AttributeView {
            key: k.clone(),
            value: v.clone(),
            changed_at_ms: ages.iter().find(|a| &a.key == k).map(|a| a.changed_at_ms),
        })
        .collect();
    Ok(Some(wire::EntityDetailsView {
        node: node(store::GraphNode {
            entity: detail.entity,
            last_audited_at_ms: detail.last_audited_at_ms,
        }),
        attributes,
        history: history.into_iter().map(change).collect(),
        relations: detail.relations.into_iter().map(edge).collect(),
        knowledge: detail.knowledge.into_iter().map(knowledge_ref).collect(),
        executions: executions.into_iter().map(ledger_row).collect(),
    }))
}
