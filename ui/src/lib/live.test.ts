import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AgentEvent, SessionView } from './ipc';

// Per test: how the shell answers `session_view` (by default at once, with `view`).
let sessionView: (id: number) => Promise<SessionView> = async () => structuredClone(view);
const reconnected: number[] = [];
let stopTurn: (id: number) => Promise<boolean> = async () => true;
vi.mock('./ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./ipc')>();
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      sessionView: (id: number): Promise<SessionView> => sessionView(id),
      reconnectSession: async (id: number) => {
        reconnected.push(id);
      },
      listSessions: async () => [],
      stopTurn: (id: number) => stopTurn(id),
    },
  };
});

import { live } from './live.svelte';
import { sessions } from './sessions.svelte';

const view: SessionView = {
  session: {
    id: 7,
    title: 'Check disks',
    goal: null,
    status: 'planning',
    outcome: null,
    summary: null,
    created_at_ms: 0,
    last_active_at_ms: 0,
  },
  messages: [],
  older: false,
  newer: false,
  generation_before: 0,
  plan: [],
  executions: [],
  approval_open: false,
};

describe('live session', () => {
  beforeEach(async () => {
    sessionView = async () => structuredClone(view);
    await live.open(7);
  });

  it('applies a status change from the event alone, with the approval window', () => {
    live.apply({ type: 'task_status', session_id: 7, status: 'executing', outcome: null, summary: null, approval_open: true });
    expect(live.view?.session.status).toBe('executing');
    expect(live.view?.approval_open).toBe(true);
    live.apply({ type: 'task_status', session_id: 7, status: 'done', outcome: 'success', summary: 'ok', approval_open: false });
    expect(live.view?.approval_open).toBe(false);
    expect(live.view?.session.summary).toBe('ok');
  });

  it('offers to resume a session whose work was in flight once per start, and no other', async () => {
    const at = (id: number, status: SessionView['session']['status']) => ({
      ...structuredClone(view),
      session: { ...view.session, id, status },
    });
    sessionView = async (id) => at(id, id === 21 ? 'executing' : 'done');
    reconnected.length = 0;
    await live.open(21);
    await live.open(22);
    await live.open(21);
    expect(reconnected).toEqual([21]);
  });

  it('opening a session brings its sidebar row to what the store holds (another process finished it)', async () => {
    sessions.items = [{ ...view.session, status: 'executing' }];
    sessionView = async () => ({
      ...structuredClone(view),
      session: { ...view.session, status: 'done', outcome: 'success', summary: 'finished in a terminal' },
    });
    await live.open(7);
    expect(sessions.items).toEqual([
      { ...view.session, status: 'done', outcome: 'success', summary: 'finished in a terminal' },
    ]);
  });

  it('the focus back reads the open session again, unless a turn of this window runs in it', async () => {
    const stored = (pending: boolean, text: string): SessionView => ({
      ...structuredClone(view),
      messages: [
        { id: 1, role: 'user', text: 'hi', pending: false, auto: false, error: null, tool_calls: [], created_at_ms: 1 },
        { id: 2, role: 'assistant', text, pending, auto: false, error: null, tool_calls: [], created_at_ms: 2 },
      ],
    });
    // Another process's turn: busy while its reply is pending, done once it is written.
    sessionView = async () => stored(true, '');
    await live.open(7);
    expect(live.busy).toBe(true);
    sessionView = async () => stored(false, 'Finished in a terminal.');
    await live.refresh();
    expect(live.busy).toBe(false);
    expect(live.view?.messages.map((m) => m.text)).toEqual(['hi', 'Finished in a terminal.']);
    // This window's own turn: its events are the truth; nothing is fetched.
    let fetched = 0;
    sessionView = async () => {
      fetched += 1;
      return stored(false, 'stale');
    };
    live.apply({ type: 'turn_started', session_id: 7, auto: false });
    await live.refresh();
    expect(fetched).toBe(0);
    expect(live.busy).toBe(true);
    live.apply({ type: 'done', session_id: 7, error: false });
  });

  it('a Stop the shell refuses (the turn runs in another process) shows why, with its text', async () => {
    live.apply({ type: 'turn_started', session_id: 7, auto: false });
    stopTurn = () =>
      Promise.reject({
        code: 'agent.turn_elsewhere',
        message: "Session 7's turn runs in another Nomos process (pid 42); stop it there.",
        retryable: false,
      });
    await live.stop();
    expect(live.errors).toEqual([
      { code: 'agent.turn_elsewhere', message: "Session 7's turn runs in another Nomos process (pid 42); stop it there.", retryable: false },
    ]);
    expect(live.paused).toBe(false);
    stopTurn = async () => true;
    live.apply({ type: 'done', session_id: 7, error: false });
  });

  it('a late reload of the session the operator left does not replace the open one', async () => {
    let answer7: (v: SessionView) => void = () => {};
    sessionView = (id) =>
      id === 7
        ? new Promise((resolve) => (answer7 = resolve))
        : Promise.resolve({ ...structuredClone(view), session: { ...view.session, id, title: 'Other' } });
    const late = live.reload();
    await live.open(8);
    expect(live.view?.session.id).toBe(8);
    answer7(structuredClone(view));
    await late;
    expect(live.id).toBe(8);
    expect(live.view?.session.title).toBe('Other');
  });

  it('streams text into a new bubble, then replaces it with the finished message', () => {
    live.apply({ type: 'turn_started', session_id: 7, auto: false });
    expect(live.busy).toBe(true);
    live.apply({ type: 'text_delta', session_id: 7, message_id: 99, delta: 'Hel' });
    live.apply({ type: 'text_delta', session_id: 7, message_id: 99, delta: 'lo' });
    expect(live.streaming[99]).toBe('Hello');
    expect(live.view?.messages.map((m) => m.id)).toEqual([99]);
    live.apply({
      type: 'message',
      session_id: 7,
      message: { id: 99, role: 'assistant', text: 'Hello', pending: false, auto: false, error: null, tool_calls: [], created_at_ms: 1 },
    });
    expect(live.streaming[99]).toBeUndefined();
    expect(live.view?.messages[0]?.text).toBe('Hello');
    live.apply({ type: 'done', session_id: 7, error: false });
    expect(live.busy).toBe(false);
  });

  it('drops a retried attempt\'s partial text instead of appending the next attempt to it', () => {
    live.apply({ type: 'turn_started', session_id: 7, auto: false });
    for (const cut of ['The question ', 'The q', 'The question "why']) {
      live.apply({ type: 'text_delta', session_id: 7, message_id: 99, delta: cut });
      live.apply({
        type: 'model_retrying',
        session_id: 7,
        message_id: 99,
        attempt: 2,
        max_attempts: 3,
        delay_ms: 500,
        code: 'llm.stream_cut',
        notice: "the model's reply was cut — retrying (2/3)",
      });
      expect(live.streaming[99]).toBeUndefined();
      expect(live.notice).toContain('retrying (2/3)');
    }
    live.apply({ type: 'text_delta', session_id: 7, message_id: 99, delta: 'The question "why" has an answer.' });
    expect(live.streaming[99]).toBe('The question "why" has an answer.');
    expect(live.notice).toBeNull();
  });

  it('a turn that ends leaves no pending bubble, whatever ended it', () => {
    const pending = (id: number, text = '') => ({
      type: 'message' as const,
      session_id: 7,
      message: { id, role: 'assistant' as const, text, pending: true, auto: false, error: null, tool_calls: [], created_at_ms: 1 },
    });
    const retrying = (id: number) => ({
      type: 'model_retrying' as const,
      session_id: 7,
      message_id: id,
      attempt: 2,
      max_attempts: 4,
      delay_ms: 500,
      code: 'llm.stream_cut' as const,
      notice: "the model's reply was cut — retrying (2/4)",
    });
    const error = { type: 'error' as const, session_id: 7, code: 'llm.provider_error' as const, message: 'HTTP 500', retryable: true };
    // Each way a turn's last iteration ends with its row dropped by the store (no event for it).
    const endings: AgentEvent[][] = [
      [pending(99), error], // a 500 on every attempt
      [pending(99), { type: 'text_delta', session_id: 7, message_id: 99, delta: 'Checking' }, retrying(99), error], // cut streams
      [{ type: 'text_delta', session_id: 7, message_id: 99, delta: 'Checking' }, retrying(99), error], // a bubble made by a delta
      [pending(99)], // empty replies, or a stop: done without an error event
      [
        // A kept reply, then a next iteration dropped.
        pending(98, 'Checking'),
        { type: 'message', session_id: 7, message: { id: 98, role: 'assistant', text: 'Checking', pending: false, auto: false, error: null, tool_calls: [], created_at_ms: 1 } },
        pending(99),
        error,
      ],
    ];
    for (const [i, events] of endings.entries()) {
      live.view = structuredClone(view);
      live.apply({ type: 'turn_started', session_id: 7, auto: false });
      for (const e of events) live.apply(e);
      expect(live.view?.messages.some((m) => m.pending), `ending ${i}: before done`).toBe(true);
      live.apply({ type: 'done', session_id: 7, error: i !== 3 });
      expect(live.view?.messages.filter((m) => m.pending), `ending ${i}`).toEqual([]);
      expect(live.view?.messages.map((m) => m.id), `ending ${i}: kept rows stay`).toEqual(i === 4 ? [98] : []);
    }
  });

  it('a session opened while its turn runs shows it busy, until its done', async () => {
    // A new task: the turn starts before its chat opens. Coming back to a working session.
    for (const [before, id] of [
      [null, 31],
      [7, 32],
    ] as const) {
      await live.open(before);
      live.apply({ type: 'turn_started', session_id: id, auto: false });
      expect(live.busy, `${id}: another session's turn`).toBe(false);
      await live.open(id);
      expect(live.busy, `${id}: opened mid-turn`).toBe(true);
      await live.open(7);
      expect(live.busy, `${id}: away again`).toBe(false);
      await live.open(id);
      expect(live.busy, `${id}: back again`).toBe(true);
      live.apply({ type: 'done', session_id: id, error: false });
      expect(live.busy).toBe(false);
      await live.open(7);
      await live.open(id);
      expect(live.busy, `${id}: reopened after its done`).toBe(false);
    }
    // A done heard while elsewhere ends it too.
    live.apply({ type: 'turn_started', session_id: 33, auto: true });
    live.apply({ type: 'done', session_id: 33, error: true });
    await live.open(33);
    expect(live.busy).toBe(false);
  });

  it('ignores events of other sessions', () => {
    live.apply({ type: 'text_delta', session_id: 8, message_id: 1, delta: 'x' } as AgentEvent);
    expect(live.view?.messages).toHaveLength(0);
  });

  it('keeps errors with their real text until the next turn', () => {
    live.apply({ type: 'error', session_id: 7, code: 'llm.provider_error', message: 'HTTP 500: upstream boom', retryable: true });
    expect(live.errors).toEqual([{ code: 'llm.provider_error', message: 'HTTP 500: upstream boom', retryable: true }]);
    live.apply({ type: 'turn_started', session_id: 7, auto: false });
    expect(live.errors).toEqual([]);
  });

  it('records tool results and plan updates', () => {
    live.apply({
      type: 'message',
      session_id: 7,
      message: { id: 5, role: 'assistant', text: '', pending: true, auto: false, error: null, tool_calls: [], created_at_ms: 1 },
    });
    live.apply({ type: 'tool_call', session_id: 7, message_id: 5, call: { call_id: 'c1', name: 'run', arguments: '{}', result: null, is_error: false } });
    live.apply({ type: 'tool_result', session_id: 7, message_id: 5, call_id: 'c1', name: 'run', result: 'Refused: no plan', is_error: true });
    expect(live.view?.messages[0]?.tool_calls[0]).toMatchObject({ result: 'Refused: no plan', is_error: true });
    live.apply({
      type: 'plan',
      session_id: 7,
      steps: [{ id: 1, generation: 1, seq: 1, title: 'Check', detail: null, target: 'host:local', status: 'pending', note: null }],
    });
    expect(live.view?.plan).toHaveLength(1);
  });

  it('an approval card stays once decided; a replaced plan keeps its (stale) card', () => {
    const e = {
      id: 3, session_id: 7, call_id: 'c', target: 'host:a', command: 'x', canonical: 'x', class: 'destructive' as const,
      reason: 'r', status: 'awaiting_approval' as const, approval: null, exit_code: null, duration_ms: null, stdout: '',
      stderr: '', created_at_ms: 0, generation: 1, plan_step_id: null, error: null,
    };
    live.apply({ type: 'approval_requested', session_id: 7, execution: e });
    live.apply({ type: 'execution', session_id: 7, execution: { ...e, status: 'running' } });
    expect(live.approvalIds).toEqual([3]);
    const step = (generation: number) => ({ id: generation, generation, seq: 1, title: 't', detail: null, target: null, status: 'pending' as const, note: null });
    live.apply({ type: 'plan', session_id: 7, steps: [step(1)] });
    live.apply({ type: 'task_status', session_id: 7, status: 'planning', outcome: null, summary: null, approval_open: false });
    live.apply({ type: 'plan', session_id: 7, steps: [{ ...step(1), status: 'replaced' }, step(2)] });
    live.apply({ type: 'approval_requested', session_id: 7, execution: null });
    expect(live.planCards).toEqual([1, 2]);
  });

  it('opening another session forgets its cards', async () => {
    live.apply({ type: 'plan', session_id: 7, steps: [{ id: 1, generation: 1, seq: 1, title: 't', detail: null, target: null, status: 'pending', note: null }] });
    live.apply({ type: 'task_status', session_id: 7, status: 'planning', outcome: null, summary: null, approval_open: false });
    expect(live.planCards).toEqual([1]);
    await live.open(8);
    expect(live.planCards).toEqual([]);
    expect(live.approvalIds).toEqual([]);
  });

  it('a plan that arrives while the view is loading is not lost: the stale snapshot is fetched again', async () => {
    const step = {
      id: 1,
      generation: 1,
      seq: 1,
      title: 'Read the kernel',
      detail: null,
      target: 'host:local',
      status: 'pending' as const,
      note: null,
    };
    let fetches = 0;
    let release: () => void = () => {};
    // The first answer is a snapshot from before the plan; it is held until the plan event
    // has arrived. The second answer has the plan, as the store does by then.
    sessionView = async () => {
      fetches += 1;
      if (fetches === 1) {
        await new Promise<void>((r) => (release = r));
        return structuredClone(view);
      }
      return { ...structuredClone(view), plan: [step] };
    };
    const opening = live.open(7);
    await Promise.resolve();
    live.apply({ type: 'plan', session_id: 7, steps: [step] });
    release();
    await opening;
    expect(fetches).toBe(2);
    expect(live.view?.plan).toEqual([step]);
    expect(live.planCards).toEqual([1]);
  });

  it('a stream of text does not make the view load again', async () => {
    let fetches = 0;
    let release: () => void = () => {};
    sessionView = async () => {
      fetches += 1;
      await new Promise<void>((r) => (release = r));
      return structuredClone(view);
    };
    const opening = live.open(7);
    await Promise.resolve();
    live.apply({ type: 'turn_started', session_id: 7, auto: false });
    live.apply({ type: 'text_delta', session_id: 7, message_id: 3, delta: 'Hel' });
    release();
    await opening;
    expect(fetches).toBe(1);
    expect(live.streaming[3]).toBe('Hel');
  });
  it('a turn that started before its session was opened shows busy (a new task, another session)', async () => {
    const other = (id: number, messages: SessionView['messages'] = []) => ({
      ...structuredClone(view),
      session: { ...view.session, id },
      messages,
    });
    sessionView = async (id) => other(id);
    // A new task: its first turn starts before the chat navigates to it.
    live.apply({ type: 'turn_started', session_id: 31, auto: false });
    await live.open(31);
    expect(live.busy).toBe(true);
    // Away and back while it runs: still busy; once done while away, not.
    await live.open(7);
    await live.open(31);
    expect(live.busy).toBe(true);
    await live.open(7);
    live.apply({ type: 'done', session_id: 31, error: false });
    await live.open(31);
    expect(live.busy).toBe(false);
  });

  it('a session whose turn this window never saw is busy while the store holds a pending reply', async () => {
    const pending = (id: number, isPending: boolean) => ({
      ...structuredClone(view),
      session: { ...view.session, id },
      messages: [
        { id: 1, role: 'user' as const, text: 'hi', pending: false, auto: false, error: null, tool_calls: [], created_at_ms: 1 },
        { id: 2, role: 'assistant' as const, text: '', pending: isPending, auto: false, error: null, tool_calls: [], created_at_ms: 2 },
      ],
    });
    for (const [id, isPending] of [
      [41, true],
      [42, false],
    ] as const) {
      sessionView = async () => pending(id, isPending);
      await live.open(id);
      expect(live.busy).toBe(isPending);
    }
    // Seen to end in this window: a pending row left behind does not make it busy.
    live.apply({ type: 'turn_started', session_id: 43, auto: false });
    live.apply({ type: 'done', session_id: 43, error: true });
    sessionView = async () => pending(43, true);
    await live.open(43);
    expect(live.busy).toBe(false);
  });
  it('a turn that ends with its reply still empty leaves no progress bubble; a kept reply stays', async () => {
    const placeholder = (id: number) => ({
      id,
      role: 'assistant' as const,
      text: '',
      pending: true,
      auto: false,
      error: null,
      tool_calls: [],
      created_at_ms: id,
    });
    for (const error of [true, false]) {
      sessionView = async () => ({ ...structuredClone(view), messages: [placeholder(5)] });
      await live.open(7);
      live.apply({ type: 'turn_started', session_id: 7, auto: false });
      // Streamed text the store never kept (a stop, a cut stream): its bubble goes as well.
      live.apply({ type: 'text_delta', session_id: 7, message_id: 6, delta: 'Let me look' });
      expect(live.view?.messages.map((m) => m.id)).toEqual([5, 6]);
      live.apply({
        type: 'message',
        session_id: 7,
        message: { ...placeholder(4), text: 'kept', pending: false },
      });
      live.apply({ type: 'done', session_id: 7, error });
      expect(live.view?.messages.map((m) => [m.id, m.pending])).toEqual([[4, false]]);
    }
  });
});
