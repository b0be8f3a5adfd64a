import { ipc, toNomosError, type AgentEvent, type ErrorCode, type NomosError, type SessionView } from './ipc';
import { sessions } from './sessions.svelte';

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
  view = $state<SessionView | null>(null);
  /** Text streamed into messages not yet finished, by message id. */
  streaming = $state<Record<number, string>>({});
  busy = $state(false);
  errors = $state<ChatError[]>([]);
  /** Why the model request is being sent again, while the retry runs. */
  notice = $state<string | null>(null);
  loadError = $state<NomosError | null>(null);
  #subscribed = false;

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

  async open(id: number | null) {
    this.id = id;
    this.view = null;
    this.streaming = {};
    this.errors = [];
    this.notice = null;
    this.loadError = null;
    this.busy = false;
    const view = await this.reload();
    if (view) this.#reconnect(view);
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

  /** Fetches the open session's view; resolves with it, or null when there is none. */
  async reload(): Promise<SessionView | null> {
    const id = this.id;
    if (id === null) return null;
    try {
      const view = await ipc.sessionView(id);
      // A late answer for a session the operator has left must not replace the open one.
      if (this.id === id) this.view = view;
      return view;
    } catch (reason) {
      if (this.id === id) this.loadError = toNomosError(reason);
      return null;
    }
  }

  apply(event: AgentEvent) {
    // Events carry what changed: the sidebar row is patched, nothing is fetched again.
    if (event.type === 'task_status') {
      sessions.update(event.session_id, { status: event.status, outcome: event.outcome, summary: event.summary });
    }
    if (event.session_id !== this.id) return;
    const view = this.view;
    switch (event.type) {
      case 'turn_started':
        this.busy = true;
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
        if (view && !known && !view.messages.some((m) => m.id === event.message_id)) {
          view.messages.push({
            id: event.message_id,
            role: 'assistant',
            text: '',
            pending: true,
            auto: false,
            error: null,
            tool_calls: [],
            created_at_ms: Date.now(),
          });
        }
        break;
      case 'message': {
        if (!view) break;
        delete this.streaming[event.message.id];
        const i = view.messages.findIndex((m) => m.id === event.message.id);
        if (i >= 0) view.messages[i] = event.message;
        else view.messages.push(event.message);
        break;
      }
      case 'tool_call': {
        const m = view?.messages.find((x) => x.id === event.message_id);
        if (m && !m.tool_calls.some((c) => c.call_id === event.call.call_id)) m.tool_calls.push(event.call);
        break;
      }
      case 'tool_result': {
        const m = view?.messages.find((x) => x.id === event.message_id);
        const c = m?.tool_calls.find((x) => x.call_id === event.call_id);
        if (c) {
          c.result = event.result;
          c.is_error = event.is_error;
        }
        break;
      }
      case 'plan':
        if (view) view.plan = event.steps;
        break;
      case 'approval_requested':
      case 'execution': {
        const execution = event.execution;
        if (view && execution) {
          const i = view.executions.findIndex((e) => e.id === execution.id);
          if (i >= 0) view.executions[i] = execution;
          else view.executions.push(execution);
        }
        break;
      }
      case 'task_status':
        if (view) {
          view.session.status = event.status;
          view.session.outcome = event.outcome;
          view.session.summary = event.summary;
          view.approval_open = event.approval_open;
        }
        break;
      case 'task_reopened':
        break;
      case 'error':
        this.errors.push({ code: event.code, message: event.message, retryable: event.retryable });
        break;
      case 'done':
        this.busy = false;
        this.notice = null;
        this.streaming = {};
        break;
    }
  }
}

export const live = new LiveSession();
