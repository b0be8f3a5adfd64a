//! The start screen's overview: a small graph of the entities changed last, the execution
//! targets by last audit (never audited first, then oldest), and the commands waiting for the
//! operator's approval. Every query is bounded and reads through an index (`plan_tests`).

use rusqlite::params;
use serde::Serialize;

use crate::db::{Reader, Store};
use crate::error::StoreError;
use crate::knowledge::{
    ENTITY_COLS, GraphSlice, LAST_AUDITED_SQL, TARGET_KINDS, entity_from_row, json_array,
};
use crate::{CommandClass, ExecutionId, SessionId};

/// Entities the overview's graph may hold.
pub const MAX_HOME_ENTITIES: u32 = 200;
/// Relations among them it may hold.
pub const MAX_HOME_EDGES: u32 = 1_000;
/// Targets the overview may list.
pub const MAX_HOME_TARGETS: u32 = 100;
/// Targets read to find the least recently audited: an estate larger than this is ranked
/// within its first targets by id (and says so with `more_targets`).
pub const HOME_TARGETS_SCANNED: u32 = 2_000;
/// Waiting approvals the overview may list.
pub const MAX_HOME_APPROVALS: u32 = 100;

/// How much the overview asks for (each clamped to its `MAX_HOME_*`; 0: the maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomeLimits {
    /// Entities in the small graph.
    pub entities: u32,
    /// Relations among them.
    pub edges: u32,
    /// Targets listed.
    pub targets: u32,
    /// Waiting approvals listed.
    pub approvals: u32,
}

impl Default for HomeLimits {
    fn default() -> Self {
        Self {
            entities: 40,
            edges: 200,
            targets: 12,
            approvals: 20,
        }
    }
}

/// An execution target and its last audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetAudit {
    /// `kind:name`.
    pub slug: String,
    /// `host`, `lxc` or `vm`.
    pub kind: String,
    /// Latest investigation or audit-tagged entry about it; `None`: never audited.
    pub last_audited_at_ms: Option<i64>,
}

/// A command waiting for the operator's approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitingApproval {
    /// The execution.
    pub execution_id: ExecutionId,
    /// Its session.
    pub session_id: SessionId,
    /// The session's title.
    pub session_title: String,
    /// Where it would run.
    pub target: String,
    /// Its display copy (secrets redacted).
    pub command: String,
    /// Its class.
    pub class: CommandClass,
    /// When it was proposed.
    pub created_at_ms: i64,
}

/// What [`Reader::home_overview`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HomeOverview {
    /// The entities changed last (newest first) and the relations among them.
    pub graph: GraphSlice,
    /// Targets, never audited first, then the oldest audit first.
    pub targets: Vec<TargetAudit>,
    /// More targets than listed (or than scanned).
    pub more_targets: bool,
    /// Commands waiting for approval, oldest first.
    pub approvals: Vec<WaitingApproval>,
    /// More waiting than listed.
    pub more_approvals: bool,
}

/// The entities changed last (`?1`: limit).
pub(crate) fn recent_entities_sql() -> String {
    format!("SELECT {ENTITY_COLS} FROM entities ORDER BY updated_at_ms DESC, id DESC LIMIT ?1")
}

/// Targets with their last audit (`?1`: JSON array of kinds, `?2`: limit).
pub(crate) fn targets_sql() -> String {
    format!(
        "SELECT e.slug, e.kind, ({}) FROM entities e
         WHERE e.kind IN (SELECT value FROM json_each(?1)) ORDER BY e.kind, e.id LIMIT ?2",
        LAST_AUDITED_SQL.replace("?1", "e.id")
    )
}

/// Executions waiting for approval with their session's title (`?1`: limit). The `IN` term
/// repeats the partial index's condition so SQLite reads through it.
pub(crate) const WAITING_SQL: &str =
    "SELECT x.id, x.session_id, s.title, x.target, x.command, x.class, x.created_at_ms
     FROM executions x JOIN sessions s ON s.id = x.session_id
     WHERE x.status IN ('queued','awaiting_approval','running') AND x.status = 'awaiting_approval'
     ORDER BY x.id LIMIT ?1";

fn cap(asked: u32, max: u32) -> u32 {
    if asked == 0 { max } else { asked.min(max) }
}

/// Never audited first, then the oldest audit; ties by slug.
pub(crate) fn audit_order(a: &TargetAudit, b: &TargetAudit) -> std::cmp::Ordering {
    a.last_audited_at_ms
        .cmp(&b.last_audited_at_ms)
        .then_with(|| a.slug.cmp(&b.slug))
}

impl Reader<'_> {
    /// The start screen's overview (see [`HomeOverview`]).
    pub fn home_overview(&self, limits: HomeLimits) -> Result<HomeOverview, StoreError> {
        let entities = cap(limits.entities, MAX_HOME_ENTITIES);
        let max_edges = cap(limits.edges, MAX_HOME_EDGES);
        let mut nodes = self
            .c
            .prepare_cached(&recent_entities_sql())?
            .query_map([i64::from(entities) + 1], entity_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let more_nodes = nodes.len() > entities as usize;
        nodes.truncate(entities as usize);
        let (graph_nodes, edges, more_edges) = self.with_edges(nodes, max_edges)?;

        let shown = cap(limits.targets, MAX_HOME_TARGETS) as usize;
        let mut targets = self
            .c
            .prepare_cached(&targets_sql())?
            .query_map(
                params![
                    json_array(TARGET_KINDS),
                    i64::from(HOME_TARGETS_SCANNED) + 1
                ],
                |r| {
                    Ok(TargetAudit {
                        slug: r.get(0)?,
                        kind: r.get(1)?,
                        last_audited_at_ms: r.get(2)?,
                    })
                },
            )?
            .collect::<Result<Vec<_>, _>>()?;
        let more_targets = targets.len() > shown;
        targets.truncate(HOME_TARGETS_SCANNED as usize);
        targets.sort_by(audit_order);
        targets.truncate(shown);

        let waiting = cap(limits.approvals, MAX_HOME_APPROVALS);
        let mut approvals = self
            .c
            .prepare_cached(WAITING_SQL)?
            .query_map([i64::from(waiting) + 1], |r| {
                Ok(WaitingApproval {
                    execution_id: r.get(0)?,
                    session_id: r.get(1)?,
                    session_title: r.get(2)?,
                    target: r.get(3)?,
                    command: r.get(4)?,
                    class: r.get(5)?,
                    created_at_ms: r.get(6)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let more_approvals = approvals.len() > waiting as usize;
        approvals.truncate(waiting as usize);

        Ok(HomeOverview {
            graph: GraphSlice {
                nodes: graph_nodes,
                edges,
                more_nodes,
                more_edges,
                next_after: None,
            },
            targets,
            more_targets,
            approvals,
            more_approvals,
        })
    }
}

impl Store {
    /// See [`Reader::home_overview`].
    pub fn home_overview(&self, limits: HomeLimits) -> Result<HomeOverview, StoreError> {
        self.read(|r| r.home_overview(limits))
    }
}

#[cfg(test)]
mod plan_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::knowledge::plan_tests::{assert_indexed, assert_no_sort, disk_store, plan};

    #[test]
    fn every_home_query_reads_through_an_index() {
        let (_d, s) = disk_store();
        let kinds = json_array(TARGET_KINDS);
        let lines = plan(&s, &recent_entities_sql(), &[&10i64]);
        assert_indexed("recent entities", "entities", &lines, &[]);
        assert_no_sort("recent entities", &lines);
        let lines = plan(&s, &targets_sql(), &[&kinds, &10i64]);
        assert_indexed("targets", "e", &lines, &[]);
        assert_no_sort("targets", &lines);
        let lines = plan(&s, WAITING_SQL, &[&10i64]);
        assert_indexed("waiting approvals", "x", &lines, &[]);
        assert_no_sort("waiting approvals", &lines);
    }
}
