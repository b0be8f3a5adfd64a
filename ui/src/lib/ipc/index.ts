// The only module that talks to the native shell. Everything else imports from here, so the
// transport can be swapped (tests, a browser preview) without touching components.
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import type {
  AgentEvent,
  AppInfo,
  AuthStatusView,
  ConnectionCheck,
  ErrorCode,
  IpcError,
  MessagePage,
  SessionListQuery,
  SessionSummary,
  SessionView,
  Settings,
  SettingsView,
  SessionSearchQuery,
  SessionSearchPage,
  ExportFormat,
  SessionExportText,
  ImportedSession,
} from './types.gen';
import type {
  DependentsView,
  EntityDetailsView,
  ExecutionMatrixView,
  GraphQuery,
  GraphSliceView,
  HomeOverviewView,
  LedgerPageView,
  LedgerQuery,
} from './types.gen';

export type {
  AgentEvent,
  AppInfo,
  AuthStatusView,
  SignInState,
  CommandClass,
  ConnectionCheck,
  ErrorCode,
  ExecStatus,
  Execution,
  IpcError,
  Message,
  MessagePage,
  PlanStep,
  SessionListQuery,
  SessionStatus,
  SessionSummary,
  SessionView,
  Settings,
  SettingsView,
  ProviderKind,
  StepStatus,
  ToolCall,
  SessionSearchQuery,
  SessionSearchPage,
  SessionHit,
  HitSource,
  SnippetPart,
  ExportFormat,
  SessionExportText,
  ImportedSession,
} from './types.gen';
export type {
  AttributeChangeView,
  AttributeView,
  DependentView,
  DependentsView,
  EntityDetailsView,
  ExecutionMatrixView,
  GraphEdgeView,
  GraphNodeView,
  GraphQuery,
  GraphSliceView,
  HomeOverviewView,
  TargetAuditView,
  WaitingApprovalView,
  KnowledgeRefView,
  LedgerCursor,
  LedgerOutcome,
  LedgerPageView,
  LedgerQuery,
  LedgerRowView,
  MatrixCellView,
  MatrixStepView,
} from './types.gen';

/** Thrown by every IPC call; carries the stable code the UI branches on. */
export class NomosError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  constructor(code: ErrorCode, message: string, retryable = false) {
    super(message);
    this.name = 'NomosError';
    this.code = code;
    this.retryable = retryable;
  }
}

function isIpcError(value: unknown): value is IpcError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as IpcError).code === 'string' &&
    typeof (value as IpcError).message === 'string'
  );
}

/** Normalises whatever the bridge rejected with into a NomosError. */
export function toNomosError(reason: unknown): NomosError {
  if (reason instanceof NomosError) return reason;
  if (isIpcError(reason)) return new NomosError(reason.code, reason.message, reason.retryable === true);
  if (typeof reason === 'string') return new NomosError('ipc.failed', reason, true);
  if (reason instanceof Error) return new NomosError('ipc.failed', reason.message, true);
  return new NomosError('ipc.failed', 'The desktop shell did not answer.', true);
}

/** The part of a code before its first dot: which part of Nomos failed. */
export type ErrorDomain = ErrorCode extends `${infer D}.${string}` ? D : never;

export function domainOf(code: ErrorCode): ErrorDomain {
  return code.slice(0, code.indexOf('.')) as ErrorDomain;
}

/** Whether the operator fixes this error in Settings (model, inventory, sign-in). */
export function fixedInSettings(code: ErrorCode): boolean {
  const domain = domainOf(code);
  switch (domain) {
    case 'llm':
      // A busy or slow provider is not a setting.
      return !['llm.rate_limited', 'llm.connect', 'llm.idle_timeout', 'llm.stream_cut', 'llm.provider_error', 'llm.cancelled'].includes(code);
    case 'inventory':
    case 'auth':
    case 'settings':
      return true;
    case 'agent':
    case 'exec':
    case 'internal':
    case 'ipc':
    case 'session':
    case 'store':
      return false;
    default: {
      // Exhaustive: a new domain in the Rust enum fails the type check here.
      const unhandled: never = domain;
      return unhandled;
    }
  }
}

/** True when running inside the Tauri webview (false in unit tests and plain browsers). */
export function inDesktopShell(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (reason) {
    throw toNomosError(reason);
  }
}

export const ipc = {
  appInfo: () => call<AppInfo>('app_info'),
  listSessions: (query: SessionListQuery = {}) => call<SessionSummary[]>('list_sessions', { query }),
  getSession: (id: number) => call<SessionSummary>('get_session', { id }),
  createSession: (title: string) => call<SessionSummary>('create_session', { title }),
  /** The session with one page of messages: the newest, or around message `around`. */
  sessionView: (id: number, around?: number) => call<SessionView>('session_view', { id, around: around ?? null }),
  /** The page of messages just before or just after a loaded one (scrolling past an end). */
  sessionMessages: (id: number, from: { before: number } | { after: number }) =>
    call<MessagePage>('session_messages', { id, ...from }),
  /** Starts a turn; resolves with the session id at once, the turn streams as events. */
  sendMessage: (sessionId: number | null, text: string) => call<number>('send_message', { sessionId, text }),
  /** Runs a failed turn again on the same transcript; the message is not sent twice. */
  retryTurn: (sessionId: number) => call<void>('retry_turn', { sessionId }),
  /** Resumes a session whose work was cut (I12); the agent decides whether there is any. */
  reconnectSession: (sessionId: number) => call<void>('reconnect_session', { sessionId }),
  /** `generation`: the plan generation the operator saw; a newer or finished plan is refused. */
  approvePlan: (sessionId: number, generation: number) =>
    call<void>('approve_plan', { sessionId, generation }),
  approveExecution: (executionId: number) => call<void>('approve_execution', { executionId }),
  denyExecution: (executionId: number, reason?: string) => call<void>('deny_execution', { executionId, reason }),
  cancelExecution: (executionId: number) => call<boolean>('cancel_execution', { executionId }),
  stopTurn: (sessionId: number) => call<boolean>('stop_turn', { sessionId }),
  getSettings: () => call<SettingsView>('get_settings'),
  saveSettings: (settings: Settings) => call<SettingsView>('save_settings', { settings }),
  /** The key goes to the OS keyring, never to a settings file. */
  setApiKey: (key: string) => call<SettingsView>('set_api_key', { key }),
  authStatus: () => call<AuthStatusView>('auth_status'),
  /** Opens the system browser; resolves once the provider redirected back. */
  signIn: () => call<AuthStatusView>('sign_in'),
  signOut: () => call<AuthStatusView>('sign_out'),
  /** One tiny real request to the model these settings name; rejects with what failed. */
  testConnection: (settings: Settings) => call<ConnectionCheck>('test_connection', { settings }),
  /** Starts the demo (scripted model, real read-only commands); resolves with its session. */
  startDemo: () => call<number>('start_demo'),
  /** A bounded piece of the knowledge graph; `touchedBy` also returns that session's entities. */
  graphSlice: (query: GraphQuery = {}) => call<GraphSliceView>('graph_slice', { query }),
  entityDetails: (slug: string) => call<EntityDetailsView>('entity_details', { slug }),
  executionLedger: (query: LedgerQuery = {}) => call<LedgerPageView>('execution_ledger', { query }),
  /** What runs on the target and what depends on it (depth 2): the blast radius. */
  targetDependents: (target: string) => call<DependentsView>('target_dependents', { target }),
  executionMatrix: (sessionId: number) => call<ExecutionMatrixView>('execution_matrix', { sessionId }),
  /** The start screen: a small graph, targets by last audit, recent sessions, waiting approvals. */
  homeOverview: () => call<HomeOverviewView>('home_overview'),
  /** Sign-in status changes pushed by the shell (refreshes, expiry, revocation). */
  onAuthStatus: (handler: (status: AuthStatusView) => void) =>
    listen<AuthStatusView>('auth-status', (event) => handler(event.payload)),
  /** A click on a desktop notification: the shell focused the window; open this session. */
  onOpenSession: (handler: (sessionId: number) => void) =>
    listen<number>('open-session', (event) => handler(event.payload)),
  /** Every agent event, in order, for the life of the page. */
  subscribeEvents: (onEvent: (event: AgentEvent) => void) => {
    const channel = new Channel<AgentEvent>();
    channel.onmessage = onEvent;
    return call<void>('subscribe_events', { onEvent: channel });
  },
  /** Search titles, goals, summaries, messages and command output; works with no model. */
  searchSessions: (query: SessionSearchQuery) => call<SessionSearchPage>('search_sessions', { query }),
  /** The session as text to save: JSON (imports back) or Markdown. */
  exportSession: (id: number, format: ExportFormat) => call<SessionExportText>('export_session', { id, format }),
  /** Imports a JSON export as a new session; nothing runs. */
  importSession: (text: string) => call<ImportedSession>('import_session', { text }),
};

export type Ipc = typeof ipc;
