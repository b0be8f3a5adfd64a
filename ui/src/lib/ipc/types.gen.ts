// Generated from crates/protocol by `UPDATE_BINDINGS=1 cargo test -p nomos-protocol`.
// Do not edit by hand: a test fails when this file drifts from the Rust types.

export type AgentEvent = { "type": "turn_started", session_id: number, auto: boolean, } | { "type": "text_delta", session_id: number, message_id: number, delta: string, } | { "type": "model_retrying", session_id: number, message_id: number, 
/**
 * The attempt about to start (2 for the first retry).
 */
attempt: number, 
/**
 * The most attempts this request makes.
 */
max_attempts: number, 
/**
 * The wait before it, in milliseconds.
 */
delay_ms: number, 
/**
 * The failed attempt's error code.
 */
code: string, 
/**
 * The line to show.
 */
notice: string, } | { "type": "message", session_id: number, message: Message, } | { "type": "tool_call", session_id: number, message_id: number, call: ToolCall, } | { "type": "tool_result", session_id: number, message_id: number, call_id: string, name: string, result: string, is_error: boolean, } | { "type": "plan", session_id: number, steps: Array<PlanStep>, } | { "type": "approval_requested", session_id: number, 
/**
 * The command waiting for a per-command approval; absent for a plan approval.
 */
execution: Execution | null, } | { "type": "execution", session_id: number, execution: Execution, } | { "type": "task_status", session_id: number, status: SessionStatus, outcome: Outcome | null, summary: string | null, 
/**
 * Whether an approval window is open now: the faces update the plan panel from
 * this event alone, without fetching the session again.
 */
approval_open: boolean, } | { "type": "task_reopened", session_id: number, generation: number, } | { "type": "error", session_id: number, code: ErrorCode, message: string, retryable: boolean, } | { "type": "done", session_id: number, 
/**
 * True when the turn ended on an error or a stop.
 */
error: boolean, };

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

export type AuthStatusView = { state: SignInState, 
/**
 * Email, name or subject of the signed-in operator.
 */
who: string | null, 
/**
 * When the current access token expires (ms since the epoch); it is refreshed before.
 */
expires_at_ms: number | null, 
/**
 * Why the operator must sign in again, or the last refresh error.
 */
detail: string | null, };

export type ApprovalKind = "not_needed" | "operator_button" | "chat_approval" | "window";

export type CommandClass = "read_only" | "config_mutation" | "destructive";

export type ConnectionCheck = { provider: ProviderKind, base_url: string, model: string, 
/**
 * The start of what the model answered (empty when it answered with nothing).
 */
reply: string, 
/**
 * From the first byte sent to the end of the reply.
 */
elapsed_ms: number, };

export type ErrorCode = "agent.busy" | "agent.empty_message" | "agent.exact_command_unavailable" | "agent.message_too_long" | "agent.not_awaiting_approval" | "agent.nothing_to_approve" | "agent.nothing_to_retry" | "agent.poisoned" | "agent.runaway" | "agent.stale_execution" | "agent.stale_plan" | "agent.starting" | "agent.stopped" | "agent.token_budget" | "agent.turn_deadline" | "agent.turn_elsewhere" | "auth.browser" | "auth.config" | "auth.denied" | "auth.discovery" | "auth.id_token" | "auth.issuer_mismatch" | "auth.keyring" | "auth.keyring_corrupt" | "auth.keyring_locked" | "auth.keyring_timeout" | "auth.keyring_unavailable" | "auth.listener" | "auth.lock" | "auth.lock_timeout" | "auth.login_timeout" | "auth.network" | "auth.no_refresh_token" | "auth.not_configured" | "auth.provider" | "auth.provider_unavailable" | "auth.sign_in.identity_changed" | "auth.sign_in.keyring_write_failed" | "auth.sign_in.provider_rejected" | "auth.sign_in.revoked" | "auth.sign_in.token_missing" | "auth.sign_in.unauthorized" | "auth.sign_in_required" | "auth.signed_out" | "auth.state_mismatch" | "exec.config" | "exec.interrupted" | "exec.invalid_command" | "exec.invalid_target" | "exec.inventory" | "exec.io" | "exec.pct" | "exec.read_file" | "exec.spawn" | "exec.ssh" | "exec.ssh_auth" | "exec.ssh_host_key" | "exec.ssh_unreachable" | "exec.unknown_target" | "internal.poisoned" | "internal.task_failed" | "inventory.invalid" | "ipc.failed" | "inventory.toml" | "llm.bad_request" | "llm.cancelled" | "llm.config" | "llm.connect" | "llm.connect_refused" | "llm.connect_timeout" | "llm.content_filter" | "llm.context_length" | "llm.credentials" | "llm.credentials.missing" | "llm.credentials.sign_in_required" | "llm.credentials.unavailable" | "llm.deadline_exceeded" | "llm.dns" | "llm.empty_reply" | "llm.endpoint_not_found" | "llm.idle_timeout" | "llm.insecure_endpoint" | "llm.model_not_found" | "llm.no_api_key" | "llm.not_configured" | "llm.protocol" | "llm.provider_error" | "llm.quota_exceeded" | "llm.rate_limited" | "llm.refused" | "llm.response_too_large" | "llm.stream_cut" | "llm.tls" | "llm.unauthorized" | "session.title_empty" | "settings.invalid" | "settings.json" | "settings.no_endpoint" | "settings.save" | "store.busy" | "store.conflict" | "store.corrupt" | "store.import_invalid" | "store.import_version" | "store.invalid_input" | "store.invariant" | "store.io" | "store.json" | "store.not_found" | "store.schema_too_new" | "store.schema_unknown" | "store.sqlite";

export type ExecStatus = "queued" | "awaiting_approval" | "running" | "finished" | "failed" | "cancelled" | "timed_out";

export type Execution = { id: number, session_id: number, 
/**
 * The model's tool call that asked for it: a card finds its execution by this id, so a
 * repeated command shows its own run.
 */
call_id: string | null, target: string, 
/**
 * The command as the model wrote it.
 */
command: string, 
/**
 * The re-quoted form that runs, as a display copy: secrets in it are redacted. What runs
 * is the exact text the classifier produced, never this copy (I22).
 */
canonical: string, class: CommandClass, 
/**
 * The classifier's explanation (rule and reason), shown on the card.
 */
reason: string, status: ExecStatus, approval: ApprovalKind | null, exit_code: number | null, duration_ms: number | null, 
/**
 * Capped output; a marker says where bytes were cut.
 */
stdout: string, stderr: string, created_at_ms: number, 
/**
 * The plan generation it ran under: an approval card of an older generation is stale.
 */
generation: number | null, 
/**
 * The plan step (`PlanStep::id`) it serves: the plan panel shows it on that step.
 */
plan_step_id: number | null, 
/**
 * Why it could not run or finish (spawn, connection, timeout), in the core's words.
 */
error: string | null, };

export type IpcError = { 
/**
 * What failed; the UI branches on this.
 */
code: ErrorCode, 
/**
 * A sentence for the operator.
 */
message: string, 
/**
 * Whether trying the same thing again may succeed (offer Retry).
 */
retryable: boolean, };

export type Message = { id: number, role: Role, text: string, 
/**
 * Still being streamed.
 */
pending: boolean, 
/**
 * Produced by a turn the system started (a resume), not by an operator message.
 */
auto: boolean, 
/**
 * The iteration ended with this error (the provider's real text).
 */
error: string | null, tool_calls: Array<ToolCall>, created_at_ms: number, };

export type Outcome = "success" | "partial" | "failed" | "abandoned";

export type PlanStep = { id: number, 
/**
 * Plan version: a reopened session's next plan is the previous one plus one.
 */
generation: number, 
/**
 * 1-based order within the generation.
 */
seq: number, title: string, detail: string | null, 
/**
 * Target entity slug such as `host:web-01`.
 */
target: string | null, status: StepStatus, 
/**
 * What the agent reported when the step finished.
 */
note: string | null, };

export type ProviderKind = "openai_compatible" | "anthropic";

export type Role = "user" | "assistant" | "system";

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
last_active_at_ms: number, 
/**
 * Started by "Try the demo" (the scripted model): the faces label it from this field,
 * never from the title. Absent on the wire when false.
 */
demo?: boolean, };

export type SessionView = { session: SessionSummary, 
/**
 * A contiguous run of the session's messages, oldest first.
 */
messages: Array<Message>, 
/**
 * Messages older than the first of `messages` exist.
 */
older: boolean, 
/**
 * Messages newer than the last of `messages` exist.
 */
newer: boolean, 
/**
 * The plan generation in force at the first of `messages` (0 before any plan): a page
 * that starts mid-session names plans and steps from it.
 */
generation_before: number, 
/**
 * Every plan generation, oldest first (the panel collapses the replaced ones).
 */
plan: Array<PlanStep>, 
/**
 * The executions of the `run` calls among `messages`, and every one of the session
 * still queued, awaiting approval or running, oldest first.
 */
executions: Array<Execution>, 
/**
 * The operator's approval window is open for the current plan generation.
 */
approval_open: boolean, };

export type MessagePage = { 
/**
 * A contiguous run of messages, oldest first, next to the one asked from.
 */
messages: Array<Message>, 
/**
 * Messages older than the first of `messages` exist.
 */
older: boolean, 
/**
 * Messages newer than the last of `messages` exist.
 */
newer: boolean, 
/**
 * As in [`SessionView::generation_before`].
 */
generation_before: number, 
/**
 * As in [`SessionView::executions`], for these messages.
 */
executions: Array<Execution>, };

export type Settings = { 
/**
 * Empty means: guess from the base URL and the environment.
 */
provider: ProviderKind | null, 
/**
 * e.g. `https://openrouter.ai/api/v1` or `http://127.0.0.1:11434/v1`.
 */
base_url: string | null, model: string | null, 
/**
 * An inventory file (TOML) adding targets to this workstation.
 */
inventory_path: string | null, 
/**
 * Offer `~/.ssh/config` hosts as targets.
 */
import_ssh_config: boolean, 
/**
 * The organisation's OpenID Provider (issuer URL), for sign-in.
 */
oidc_issuer: string | null, 
/**
 * The client id registered for Nomos at that provider.
 */
oidc_client_id: string | null, 
/**
 * Send the signed-in access token as the model gateway's bearer.
 */
model_uses_sign_in: boolean, 
/**
 * Model iterations in one turn before the runaway guard stops it (empty: default).
 */
max_iterations: number | null, 
/**
 * Tokens one session may spend (empty: default).
 */
session_token_budget: number | null, 
/**
 * Seconds `run` waits before a command continues in the background (empty: default).
 */
run_wait_secs: number | null, 
/**
 * Hard limit for one command, in seconds (empty: default).
 */
command_timeout_secs: number | null, 
/**
 * Longest one model request may take, retries included, in seconds (empty: 300).
 */
model_request_secs: number | null, 
/**
 * Longest one turn may take, in minutes (empty: 30).
 */
turn_deadline_mins: number | null, 
/**
 * Days after which a fact neither changed nor audited is marked stale in the graph view
 * and the node details (empty: `DEFAULT_STALE_AFTER_DAYS`; 1 to `MAX_STALE_AFTER_DAYS`).
 */
stale_after_days: number | null, };

export type SettingsView = { settings: Settings, 
/**
 * The agent is ready to take tasks.
 */
agent_ready: boolean, 
/**
 * Why it is not (no model, no key, a broken inventory …).
 */
agent_error: IpcError | null, 
/**
 * The keyring account an API key for the configured endpoint is stored under.
 */
api_key_account: string | null, };

export type SignInState = "not_configured" | "signed_out" | "signed_in" | "refreshing" | "needs_sign_in";

export type StepStatus = "pending" | "running" | "done" | "failed" | "skipped" | "replaced";

export type ToolCall = { call_id: string, name: string, 
/**
 * The arguments exactly as the model sent them (JSON text, possibly malformed).
 */
arguments: string, result: string | null, is_error: boolean, };

export type HitSource = "title" | "goal" | "summary" | "message" | "command" | "stdout" | "stderr";

export type SnippetPart = { text: string, hit: boolean, };

export type SessionHit = { session: SessionSummary, source: HitSource, 
/**
 * The message to open the transcript at: the matching message, or the one whose tool
 * call ran the matching execution (when known).
 */
message_id: number | null, 
/**
 * Role of the matching message (message hits).
 */
role: Role | null, 
/**
 * The matching execution (command and output hits).
 */
execution_id: number | null, 
/**
 * Where the execution ran.
 */
target: string | null, snippet: Array<SnippetPart>, 
/**
 * When the matching row was written (Unix milliseconds).
 */
at_ms: number, };

export type SessionSearchPage = { hits: Array<SessionHit>, 
/**
 * More hits follow (ask again with a larger offset).
 */
has_more: boolean, };

export type SessionSearchQuery = { 
/**
 * Words to find, taken literally (quotes, stars and operators are only separators);
 * every word must match, the last one also as a prefix.
 */
text: string, 
/**
 * Only sessions in one of these statuses (absent or empty: any).
 */
statuses?: Array<SessionStatus>, 
/**
 * Only sessions with one of these outcomes (absent or empty: any).
 */
outcomes?: Array<Outcome>, 
/**
 * Only this target (`host:web-01`): commands that ran on it, sessions that ran or
 * planned something on it.
 */
target?: string, 
/**
 * At most this many hits (default 20, at most 200).
 */
limit?: number, 
/**
 * Skip this many hits (paging).
 */
offset?: number, };

export type ExportFormat = "json" | "markdown";

export type SessionExportText = { file_name: string, mime: string, text: string, };

export type ImportedSession = { 
/**
 * The new session (new id; status as in the file, nothing runs).
 */
session: SessionSummary, messages: number, executions: number, };

export type GraphQuery = { 
/**
 * Only these entity kinds (empty or absent: all).
 */
kinds?: Array<string>, 
/**
 * Only entities that a knowledge entry with this tag is about.
 */
tag?: string, 
/**
 * The neighbourhood of this entity slug.
 */
focus?: string, 
/**
 * Neighbourhood depth, 1–3.
 */
depth?: number, 
/**
 * Entities matching these words.
 */
search?: string, 
/**
 * Next page: the previous slice's `next_after`.
 */
after?: number, max_nodes?: number, max_edges?: number, 
/**
 * Also return the slugs this session touched (for highlighting).
 */
touched_by?: number, };

export type GraphNodeView = { id: number, 
/**
 * `kind:name`.
 */
slug: string, kind: string, name: string, attributes: Record<string, unknown>, 
/**
 * Its last change (an attribute or its creation), ms since the epoch.
 */
updated_at_ms: number, 
/**
 * Its last audit (an investigation or audit-tagged entry about it).
 */
last_audited_at_ms: number | null, };

export type GraphEdgeView = { id: number, from: string, kind: string, to: string, 
/**
 * The session that created or last changed it.
 */
session_id: number | null, };

export type GraphSliceView = { 
/**
 * Entity ids.
 */
node_ids: number[], 
/**
 * `kind:name` of each node (the graph view's key and label).
 */
node_slugs: Array<string>, 
/**
 * Index into `kinds` of each node's kind.
 */
node_kinds: Array<number>, 
/**
 * Each node's last change (an attribute or its creation), ms since the epoch.
 */
node_updated_at_ms: number[], 
/**
 * Each node's last audit (an investigation or audit-tagged entry about it).
 */
node_audited_at_ms: (number | null)[], 
/**
 * Entity kind names, each once.
 */
kinds: Array<string>, 
/**
 * Relation ids.
 */
edge_ids: number[], 
/**
 * Index into the node columns of each edge's source.
 */
edge_from: Array<number>, 
/**
 * Index into the node columns of each edge's destination.
 */
edge_to: Array<number>, 
/**
 * Index into `relation_kinds` of each edge's kind.
 */
edge_kinds: Array<number>, 
/**
 * Relation kind names, each once.
 */
relation_kinds: Array<string>, 
/**
 * More nodes matched than were returned.
 */
more_nodes: boolean, 
/**
 * More edges joined the returned nodes than were returned (or an edge's end was not
 * among the nodes and was left out).
 */
more_edges: boolean, 
/**
 * Ask again with `after` = this for the next page.
 */
next_after: number | null, 
/**
 * Slugs the `touched_by` session changed, linked or wrote about.
 */
touched: Array<string>, };

export type TargetAuditView = { slug: string, kind: string, 
/**
 * `null`: never audited.
 */
last_audited_at_ms: number | null, };

export type WaitingApprovalView = { execution_id: number, session_id: number, session_title: string, target: string, 
/**
 * Display copy (secrets redacted).
 */
command: string, class: CommandClass, created_at_ms: number, };

export type HomeOverviewView = { graph: GraphSliceView, targets: Array<TargetAuditView>, more_targets: boolean, 
/**
 * Most recently active first.
 */
sessions: Array<SessionSummary>, approvals: Array<WaitingApprovalView>, more_approvals: boolean, };

export type AttributeChangeView = { id: number, key: string, 
/**
 * `null`: the attribute was new.
 */
old_value: unknown, 
/**
 * `null`: it was removed.
 */
new_value: unknown, changed_at_ms: number, session_id: number | null, session_title: string | null, generation: number | null, plan_step_id: number | null, plan_step_seq: number | null, plan_step_title: string | null, 
/**
 * The execution whose output the fact was read from.
 */
execution_id: number | null, execution_command: string | null, execution_target: string | null, 
/**
 * The message (model turn) that wrote it: the transcript link.
 */
message_id: number | null, };

export type AttributeView = { key: string, value: unknown, 
/**
 * Its latest recorded change (`null`: no history, e.g. written before history existed).
 */
changed_at_ms: number | null, };

export type KnowledgeRefView = { id: number, 
/**
 * `investigation`, `document`, `runbook` or `note`.
 */
kind: string, title: string, tags: Array<string>, session_id: number | null, updated_at_ms: number, };

export type LedgerOutcome = "succeeded" | "failed" | "cancelled" | "pending";

export type LedgerRowView = { id: number, session_id: number, session_title: string, 
/**
 * The message whose tool call started it: the transcript link.
 */
message_id: number | null, plan_step_id: number | null, plan_step_seq: number | null, plan_step_title: string | null, target: string, command: string, class: CommandClass, reason: string, approval: ApprovalKind | null, approved_by: string | null, approved_at_ms: number | null, status: ExecStatus, outcome: LedgerOutcome, exit_code: number | null, error: string | null, created_at_ms: number, duration_ms: number | null, };

export type EntityDetailsView = { node: GraphNodeView, 
/**
 * Current attributes, by key.
 */
attributes: Array<AttributeView>, 
/**
 * Attribute changes with provenance, newest first (bounded).
 */
history: Array<AttributeChangeView>, 
/**
 * Relations from or to it.
 */
relations: Array<GraphEdgeView>, 
/**
 * Knowledge about it, newest first.
 */
knowledge: Array<KnowledgeRefView>, 
/**
 * Executions that targeted it, newest first (bounded).
 */
executions: Array<LedgerRowView>, };

export type LedgerCursor = { created_at_ms: number, id: number, };

export type LedgerQuery = { 
/**
 * Target slug, exactly.
 */
target?: string, session_id?: number, classes?: Array<CommandClass>, outcomes?: Array<LedgerOutcome>, 
/**
 * Created at or after (ms since the epoch).
 */
since_ms?: number, 
/**
 * Created before.
 */
until_ms?: number, before?: LedgerCursor, limit?: number, };

export type LedgerPageView = { rows: Array<LedgerRowView>, 
/**
 * The next (older) page, when there is one.
 */
next: LedgerCursor | null, };

export type MatrixStepView = { 
/**
 * `null`: executions outside any plan step.
 */
id: number | null, generation: number | null, seq: number | null, title: string, status: string | null, };

export type MatrixCellView = { plan_step_id: number | null, target: string, runs: number, succeeded: number, failed: number, 
/**
 * The most mutating class among them.
 */
class: CommandClass, last_execution_id: number, last_outcome: LedgerOutcome, };

export type ExecutionMatrixView = { session_id: number, steps: Array<MatrixStepView>, targets: Array<string>, cells: Array<MatrixCellView>, 
/**
 * The session had more executions than the matrix reads.
 */
truncated: boolean, };

export type DependentView = { slug: string, kind: string, 
/**
 * The relation that makes it depend (`runs_on`, `depends_on`, `hosts`, …).
 */
relation: string, 
/**
 * What it depends on through that relation.
 */
via: string, 
/**
 * 1: on the target directly; 2: through a depth-1 dependent.
 */
depth: number, };

export type DependentsView = { target: string, 
/**
 * The target is an entity of the graph.
 */
known: boolean, dependents: Array<DependentView>, 
/**
 * More than returned.
 */
more: boolean, };
