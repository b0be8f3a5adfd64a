import {
  ipc,
  toNomosError,
  type AgentEvent,
  type ErrorCode,
  type Execution,
  type Message,
  type NomosError,
  type SessionView,
} from './ipc';
import { sessions } from './sessions.svelte';

/** Which end of the loaded messages a page is read past. */
export type PageEnd = 'older' | 'newer';

/** A failure shown in the chat with the real text and a way to try again. */
export interface ChatError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/**
 * The open session as the chat and the plan panel show it: the stored view, patched live by
 * the agent's events. One instance for the whole app; `open(id)` switches sessions.
 */
class LiveSession {
  id = $state<number | null>(null);
  /**
   * Raw (not deeply reactive) and replaced, never mutated: a 10,000-message session must not
   * pay for a proxy per message; each event swaps the parts it changes. Its `messages` are
   * one contiguous run of the session's (a page, grown as the operator scrolls past an end:
   * `older`/`newer` say whether more lie there).
   */
  view = $state.raw<SessionView | null>(null);
  /** A page past this end of the loaded messages is being read. */
  loading = $state<Record<PageEnd, boolean>>({ older: false, newer: false });
  /** Reading a page failed: the transcript says so and offers to try that end again. */
  pageError = $state<{ end: PageEnd; error: NomosError } | null>(null);
  /** Text streamed into messages not yet finished, by message id. */
  streaming = $state<Record<number, string>>({});
  busy = $state(false);
  errors = $state<ChatError[]>([]);
  /** Why the model request is being sent again, while the retry runs. */
  notice = $state<string | null>(null);
  loadError = $state<NomosError | null>(null);
  /**
   * Commands that asked for approval while this session was open: their cards stay in the
   * transcript after the decision and then say why they can no longer be used.
   */
  approvalIds = $state<number[]>([]);
  /** The operator stopped the last turn: the session waits for their next message. */
  paused = $state(false);
  #stopRequested = false;
  /** Plan generations whose approval card was shown; an older one turns stale, not absent. */
  planCards = $state<number[]>([]);
  #subscribed = false;
  /**
   * Whether a turn of a session runs, from every session's events (true at `turn_started`,
   * false at `done`): a new task's first turn starts before the chat opens its session, and
   * switching sessions must not forget a running turn.
   */
  #turnRunning = new Map<number, boolean>();

  async start() {
    if (this.#subscribed) return;
    this.#subscribed = true;
    try {
      await ipc.subscribeEvents((event) => this.apply(event));
    } catch (reason) {
      this.#subscribed = false;
      this.loadError = toNomosError(reason);
    }
  }

  /** Shows session `id`: its newest messages, or those around message `around` (a search hit). */
  async open(id: number | null, around?: number) {
    this.id = id;
    this.view = null;
    this.loading = { older: false, newer: false };
    this.pageError = null;
    this.streaming = {};
    this.errors = [];
    this.notice = null;
    this.loadError = null;
    this.busy = id !== null && this.#turnRunning.get(id) === true;
    this.approvalIds = [];
    this.planCards = [];
    this.paused = false;
    this.#stopRequested = false;
    const view = await this.reload(around);
    if (view && this.id === id) {
      // Busy when this window saw its turn start and not end; when it saw neither (the turn
      // began before a reload), when the store holds a reply still being written.
      const pending = view.messages.some((m) => m.role === 'assistant' && m.pending);
      this.busy ||= this.#turnRunning.get(view.session.id) ?? pending;
    }
    if (view) this.#reconnect(view);
  }

  /**
   * The window got the focus back: the open session is read again, unless a turn of this
   * window runs in it. Another process on this data directory (a `nomos ask`, I24) may have
   * run or ended a turn meanwhile, and this window heard none of its events; busy is then
   * what the store says (a reply still being written).
   */
  async refresh(): Promise<void> {
    const id = this.id;
    if (id === null || this.#turnRunning.get(id) === true) return;
    const view = await this.reload();
    if (view && this.id === id && this.#turnRunning.get(id) !== true) {
      this.busy = view.messages.some((m) => m.role === 'assistant' && m.pending);
    }
  }

  /** Sessions this window has already offered to resume since it started. */
  #reconnected = new Set<number>();

  /**
   * I12: the first time this window shows a session whose work was in flight (the app
   * restarted or crashed mid-task), the agent resumes it; it declines a paused, busy or
   * finished one. Once per session per start, so browsing never nudges the model.
   */
  #reconnect(view: SessionView) {
    const id = view.session.id;
    if (this.#reconnected.has(id) || view.session.status !== 'executing') return;
    this.#reconnected.add(id);
    ipc.reconnectSession(id).catch((reason) => {
      if (this.id === id) this.loadError = toNomosError(reason);
    });
  }

  /** The session whose view is being fetched, and whether a state event for it came meanwhile. */
  #loading: number | null = null;
  #changedWhileLoading = false;

  /**
   * Fetches the open session's view; resolves with it, or null when there is none. The store
   * is written before an event is sent, so a snapshot fetched before a state event (a plan,
   * an execution, a message) may lack it while the event found no view to patch, or patched
   * the view the snapshot then replaces: such a snapshot is fetched again.
   */
  async reload(around?: number): Promise<SessionView | null> {
    const id = this.id;
    if (id === null) return null;
    for (let attempt = 1; ; attempt++) {
      this.#loading = id;
      this.#changedWhileLoading = false;
      try {
        const view = await ipc.sessionView(id, around);
        // A late answer for a session the operator has left must not replace the open one.
        if (this.id !== id) return view;
        if (this.#changedWhileLoading && attempt < 4) continue;
        this.view = view;
        this.#noteWaiting();
        // The sidebar may hold an older row: another process (I24) sends this window no events.
        sessions.sync(view.session);
        return view;
      } catch (reason) {
        if (this.id === id) this.loadError = toNomosError(reason);
        return null;
      } finally {
        if (this.#loading === id) this.#loading = null;
      }
    }
  }

  /**
   * Shows message `id` of the open session: at once when it is loaded, else the page around
   * it replaces the loaded one (a second search hit in the same session). Resolves true when
   * the message is in the view.
   */
  async showMessage(id: number): Promise<boolean> {
    const view = this.view;
    if (!view) return false;
    if (view.messages.some((m) => m.id === id)) return true;
    const next = await this.reload(id);
    return next?.messages.some((m) => m.id === id) ?? false;
  }

  /** Back to the newest messages (Jump to latest, a message sent from an older page). */
  async showLatest(): Promise<void> {
    if (this.view?.newer) await this.reload();
  }

  /**
   * Reads the page past one end of the loaded messages (the operator scrolled near the top,
   * or near the bottom of a page opened at an older message) and joins it on. One read per
   * end at a time; a view replaced meanwhile keeps its own messages. Resolves true when
   * messages were added.
   */
  async loadMore(end: PageEnd): Promise<boolean> {
    const id = this.id;
    const view = this.view;
    const edge = view && (end === 'older' ? view.messages[0] : view.messages.at(-1));
    if (id === null || !view || !edge || !view[end] || this.loading[end]) return false;
    this.loading[end] = true;
    this.pageError = null;
    try {
      const page = await ipc.sessionMessages(id, end === 'older' ? { before: edge.id } : { after: edge.id });
      const now = this.view;
      const nowEdge = now && (end === 'older' ? now.messages[0] : now.messages.at(-1));
      if (this.id !== id || !now || nowEdge?.id !== edge.id) return false;
      const executions = mergeExecutions(now.executions, page.executions);
      this.view =
        end === 'older'
          ? {
              ...now,
              messages: [...page.messages, ...now.messages],
              older: page.older,
              generation_before: page.generation_before,
              executions,
            }
          : { ...now, messages: [...now.messages, ...page.messages], newer: page.newer, executions };
      return page.messages.length > 0;
    } catch (reason) {
      if (this.id === id) this.pageError = { end, error: toNomosError(reason) };
      return false;
    } finally {
      this.loading[end] = false;
    }
  }

  /** Stops the running turn (Stop button, Esc); the chat then shows the session paused. */
  async stop(): Promise<void> {
    const id = this.id;
    if (id === null || !this.busy) return;
    this.#stopRequested = true;
    try {
      const stopped = await ipc.stopTurn(id);
      if (!stopped && this.id === id) this.#stopRequested = false;
    } catch (reason) {
      this.#stopRequested = false;
      // Fields by name: an Error's message is not enumerable, a spread would drop it.
      const e = toNomosError(reason);
      if (this.id === id) this.errors.push({ code: e.code, message: e.message, retryable: e.retryable });
    }
  }

  /** Records the approvals the open session waits for, so their cards stay once decided. */
  #noteWaiting() {
    const view = this.view;
    if (!view) return;
    for (const e of view.executions) {
      if (e.status === 'awaiting_approval' && !this.approvalIds.includes(e.id)) this.approvalIds.push(e.id);
    }
    const generation = view.plan.reduce((max, s) => Math.max(max, s.generation), 0);
    const waiting =
      generation > 0 &&
      !view.approval_open &&
      view.session.status === 'planning' &&
      view.plan.some((s) => s.generation === generation && (s.status === 'pending' || s.status === 'running'));
    if (waiting && !this.planCards.includes(generation)) this.planCards.push(generation);
  }

  #patchMessage(id: number, change: (m: Message) => Message) {
    const view = this.view;
    const i = view?.messages.findIndex((m) => m.id === id) ?? -1;
    if (!view || i < 0) return;
    const messages = [...view.messages];
    messages[i] = change(messages[i]!);
    this.view = { ...view, messages };
  }

  apply(event: AgentEvent) {
    // Events carry what changed: the sidebar row is patched, nothing is fetched again.
    if (event.type === 'task_status') {
      sessions.update(event.session_id, { status: event.status, outcome: event.outcome, summary: event.summary });
    }
    if (event.type === 'turn_started') this.#turnRunning.set(event.session_id, true);
    if (event.type === 'done') this.#turnRunning.set(event.session_id, false);
    if (event.session_id !== this.id) return;
    if (this.#loading === this.id && STATE_EVENTS.has(event.type)) this.#changedWhileLoading = true;
    const view = this.view;
    switch (event.type) {
      case 'turn_started':
        this.busy = true;
        this.paused = false;
        this.#stopRequested = false;
        this.errors = [];
        break;
      case 'model_retrying':
        // The failed attempt's text is void: the next attempt starts the bubble afresh.
        delete this.streaming[event.message_id];
        this.notice = event.notice;
        break;
      case 'text_delta':
        this.notice = null;
        const known = event.message_id in this.streaming;
        this.streaming[event.message_id] = (this.streaming[event.message_id] ?? '') + event.delta;
        // Only a message's first delta looks for its bubble; the rest append.
        // A view that ends before the newest messages gets them with its next page instead.
        if (view && !view.newer && !known && !view.messages.some((m) => m.id === event.message_id)) {
          this.view = {
            ...view,
            messages: [
              ...view.messages,
              {
                id: event.message_id,
                role: 'assistant',
                text: '',
                pending: true,
                auto: false,
                error: null,
                tool_calls: [],
                created_at_ms: Date.now(),
              },
            ],
          };
        }
        break;
      case 'message': {
        if (!view) break;
        delete this.streaming[event.message.id];
        const i = view.messages.findIndex((m) => m.id === event.message.id);
        if (i < 0 && view.newer) break;
        const messages = [...view.messages];
        if (i >= 0) messages[i] = event.message;
        else messages.push(event.message);
        this.view = { ...view, messages };
        break;
      }
      case 'tool_call': {
        this.#patchMessage(event.message_id, (m) =>
          m.tool_calls.some((c) => c.call_id === event.call.call_id) ? m : { ...m, tool_calls: [...m.tool_calls, event.call] },
        );
        break;
      }
      case 'tool_result': {
        this.#patchMessage(event.message_id, (m) => ({
          ...m,
          tool_calls: m.tool_calls.map((c) =>
            c.call_id === event.call_id ? { ...c, result: event.result, is_error: event.is_error } : c,
          ),
        }));
        break;
      }
      case 'plan':
        if (view) this.view = { ...view, plan: event.steps };
        break;
      case 'approval_requested':
      case 'execution': {
        const execution = event.execution;
        if (view && execution) {
          const i = view.executions.findIndex((e) => e.id === execution.id);
          const executions = [...view.executions];
          if (i >= 0) executions[i] = execution;
          else executions.push(execution);
          this.view = { ...view, executions };
        }
        this.#noteWaiting();
        break;
      }
      case 'task_status':
        if (view) {
          this.view = {
            ...view,
            session: { ...view.session, status: event.status, outcome: event.outcome, summary: event.summary },
            approval_open: event.approval_open,
          };
        }
        this.#noteWaiting();
        break;
      case 'task_reopened':
        break;
      case 'error':
        // A stop the operator asked for is shown as the paused state, not as a failure.
        if (event.code === 'agent.stopped' || (this.#stopRequested && event.code === 'llm.cancelled')) {
          this.paused = true;
          break;
        }
        this.errors.push({ code: event.code, message: event.message, retryable: event.retryable });
        break;
      case 'done':
        if (this.#stopRequested && event.error) this.paused = true;
        this.#stopRequested = false;
        this.busy = false;
        this.notice = null;
        this.streaming = {};
        // The turn is over, so the store holds no pending row of it: a row it kept came back
        // as a finished `message` before this; one it dropped (an empty reply, an attempt
        // that failed or was stopped with nothing kept) sends no event, and its "Thinking…"
        // bubble would stay forever.
        if (view?.messages.some((m) => m.pending)) {
          this.view = { ...view, messages: view.messages.filter((m) => !m.pending) };
        }
        break;
    }
  }
}

/** Executions of a page added to those of the view; the view's (patched by events) win. */
function mergeExecutions(have: Execution[], page: Execution[]): Execution[] {
  const known = new Set(have.map((e) => e.id));
  const added = page.filter((e) => !known.has(e.id));
  return added.length ? [...have, ...added].sort((a, b) => a.id - b.id) : have;
}

/** Events whose change is part of the stored view (not the live-only stream of a turn). */
const STATE_EVENTS: ReadonlySet<AgentEvent['type']> = new Set([
  'message',
  'tool_call',
  'tool_result',
  'plan',
  'approval_requested',
  'execution',
  'task_status',
  'task_reopened',
]);

export const live = new LiveSession();
