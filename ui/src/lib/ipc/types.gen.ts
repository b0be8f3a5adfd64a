// Generated from crates/protocol by `UPDATE_BINDINGS=1 cargo test -p nomos-protocol`.
// Do not edit by hand: a test fails when this file drifts from the Rust types.

export type AppInfo = { 
/**
 * Semantic version of the core.
 */
version: string, 
/**
 * Where the database and logs live (operators ask this when backing up).
 */
data_dir: string, 
/**
 * Schema version of the open database (a migration timestamp).
 */
schema_version: number, };

export type IpcError = { 
/**
 * Stable, dotted code such as `store.schema_too_new`; the UI branches on this.
 */
code: string, 
/**
 * A sentence for the operator.
 */
message: string, };

export type Outcome = "success" | "partial" | "failed" | "abandoned";

export type SessionListQuery = { 
/**
 * Full-text search over titles, goals and summaries; empty or absent lists everything.
 */
search?: string, 
/**
 * At most this many rows (the shell applies a sensible default and cap).
 */
limit?: number, };

export type SessionStatus = "idle" | "planning" | "executing" | "done" | "partial" | "failed" | "abandoned";

export type SessionSummary = { id: number, title: string, goal: string | null, status: SessionStatus, outcome: Outcome | null, summary: string | null, 
/**
 * Milliseconds since the Unix epoch.
 */
created_at_ms: number, 
/**
 * Milliseconds since the Unix epoch; the list is ordered by this, newest first.
 */
last_active_at_ms: number, };
