import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Execution, Message, MessagePage, SessionView } from './ipc';

// A shell answering from one session of N messages in pages of PAGE, as the store does
// (crates/store `message_page`): the newest page, the page around a message, and the pages
// before and after a message.
const PAGE = 10;
let all: Message[] = [];
let executions: Execution[] = [];
let reads: string[] = [];
let gate: Promise<void> | null = null;
let failNext = false;

const msg = (id: number): Message => ({
  id,
  role: id % 2 ? 'user' : 'assistant',
  text: `message ${id}`,
  pending: false,
  auto: false,
  error: null,
  tool_calls: id % 2 ? [] : [{ call_id: `c${id}`, name: 'run', arguments: '{}', result: null, is_error: false }],
  created_at_ms: id,
});

const exec = (id: number, callId: string, status: Execution['status'] = 'finished'): Execution => ({
  id,
  session_id: 7,
  call_id: callId,
  target: 'host:a',
  command: 'uptime',
  canonical: 'uptime',
  class: 'read_only',
  reason: 'read-only',
  status,
  approval: null,
  exit_code: 0,
  duration_ms: 1,
  stdout: '',
  stderr: '',
  created_at_ms: 0,
  generation: 1,
  plan_step_id: null,
  error: null,
});

function pageOf(messages: Message[], older: boolean, newer: boolean): MessagePage {
  const calls = new Set(messages.flatMap((m) => m.tool_calls.map((c) => c.call_id)));
  return {
    messages: structuredClone(messages),
    older,
    newer,
    generation_before: messages.length ? Math.floor(messages[0]!.id / 100) : 0,
    executions: executions.filter((e) => calls.has(e.call_id ?? '') || e.status === 'awaiting_approval'),
  };
}

function around(at: number | undefined): MessagePage {
  if (at === undefined) {
    const start = Math.max(0, all.length - PAGE);
    return pageOf(all.slice(start), start > 0, false);
  }
  const i = all.findIndex((m) => m.id === at);
  const start = Math.max(0, i - PAGE / 2);
  const end = Math.min(all.length, start + PAGE);
  return pageOf(all.slice(start, end), start > 0, end < all.length);
}

vi.mock('./ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./ipc')>();
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      sessionView: async (id: number, at?: number): Promise<SessionView> => {
        reads.push(at === undefined ? 'latest' : `around ${at}`);
        const { executions, ...page } = around(at);
        return {
          session: { id, title: 'Long', goal: null, status: 'done', outcome: 'success', summary: null, created_at_ms: 0, last_active_at_ms: 0 },
          ...page,
          plan: [],
          executions,
          approval_open: false,
        };
      },
      sessionMessages: async (_id: number, from: { before: number } | { after: number }): Promise<MessagePage> => {
        if (gate) await gate;
        if (failNext) {
          failNext = false;
          throw { code: 'store.busy', message: 'The database is busy.', retryable: true };
        }
        if ('before' in from) {
          reads.push(`before ${from.before}`);
          const i = all.findIndex((m) => m.id === from.before);
          const start = Math.max(0, i - PAGE);
          return pageOf(all.slice(start, i), start > 0, true);
        }
        reads.push(`after ${from.after}`);
        const i = all.findIndex((m) => m.id === from.after) + 1;
        const end = Math.min(all.length, i + PAGE);
        return pageOf(all.slice(i, end), true, end < all.length);
      },
      reconnectSession: async () => {},
      listSessions: async () => [],
    },
  };
});

import { live } from './live.svelte';

const ids = () => live.view?.messages.map((m) => m.id) ?? [];
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('a session opened page by page', () => {
  beforeEach(() => {
    all = range(1, 35).map(msg);
    executions = [exec(1, 'c2'), exec(2, 'c20'), exec(3, 'c34')];
    reads = [];
    gate = null;
    failNext = false;
  });

  it('opens at the newest page and reads older pages in front until the first message', async () => {
    await live.open(7);
    expect(ids()).toEqual(range(26, 35));
    expect([live.view?.older, live.view?.newer]).toEqual([true, false]);
    expect(live.view?.executions.map((e) => e.id)).toEqual([3]);
    while (live.view?.older) expect(await live.loadMore('older')).toBe(true);
    expect(ids()).toEqual(range(1, 35));
    expect(reads).toEqual(['latest', 'before 26', 'before 16', 'before 6']);
    // Every execution once, oldest first; the plan generation of the first loaded message.
    expect(live.view?.executions.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(live.view?.generation_before).toBe(0);
    expect(await live.loadMore('older')).toBe(false);
    expect(reads.length).toBe(4);
  });

  it('reads one page at a time however often the top is reached', async () => {
    await live.open(7);
    let open: () => void = () => {};
    gate = new Promise((r) => (open = r));
    const first = live.loadMore('older');
    const second = live.loadMore('older');
    expect(live.loading.older).toBe(true);
    open();
    expect([await first, await second]).toEqual([true, false]);
    expect(ids()).toEqual(range(16, 35));
    expect(live.loading.older).toBe(false);
  });

  it('a page read for a session the operator left is dropped', async () => {
    await live.open(7);
    let open: () => void = () => {};
    gate = new Promise((r) => (open = r));
    const older = live.loadMore('older');
    const other = live.open(8);
    open();
    await other;
    expect(await older).toBe(false);
    expect(live.view?.session.id).toBe(8);
    expect(ids()).toEqual(range(26, 35));
  });

  it('a search hit opens around its message; newer pages follow until the newest', async () => {
    await live.open(7, 12);
    expect(ids()).toEqual(range(7, 16));
    expect([live.view?.older, live.view?.newer]).toEqual([true, true]);
    // Live messages of a turn are not appended to an older page: they come with the newest.
    live.apply({ type: 'text_delta', session_id: 7, message_id: 36, delta: 'Hi' });
    live.apply({ type: 'message', session_id: 7, message: msg(36) });
    expect(ids()).toEqual(range(7, 16));
    all.push(msg(36));
    while (live.view?.newer) expect(await live.loadMore('newer')).toBe(true);
    expect(ids()).toEqual(range(7, 36));
    // Now at the newest: the next message is appended as it comes.
    live.apply({ type: 'message', session_id: 7, message: msg(37) });
    expect(ids().at(-1)).toBe(37);
  });

  it('shows a message outside the loaded page by reading the page around it', async () => {
    await live.open(7);
    expect(await live.showMessage(30)).toBe(true);
    expect(reads).toEqual(['latest']);
    expect(await live.showMessage(3)).toBe(true);
    expect(ids()).toEqual(range(1, 10));
    expect(reads).toEqual(['latest', 'around 3']);
    await live.showLatest();
    expect(ids()).toEqual(range(26, 35));
  });

  it('a failed read says which end failed, and trying again reads that end', async () => {
    // A page around an older message: more lie both before and after it.
    await live.open(7, 12);
    failNext = true;
    expect(await live.loadMore('newer')).toBe(false);
    expect(live.pageError?.end).toBe('newer');
    expect(live.pageError?.error.message).toBe('The database is busy.');
    expect(ids()).toEqual(range(7, 16));
    expect(await live.loadMore(live.pageError!.end)).toBe(true);
    expect(live.pageError).toBeNull();
    expect(ids()).toEqual(range(7, 26));
    expect(reads).toEqual(['around 12', 'after 16']);
  });

  it('executions patched by events win over the copy a later page carries', async () => {
    executions = [exec(1, 'c2'), exec(2, 'c20'), exec(3, 'c34'), exec(4, 'c99', 'awaiting_approval')];
    await live.open(7);
    expect(live.view?.executions.map((e) => e.id)).toEqual([3, 4]);
    live.apply({ type: 'execution', session_id: 7, execution: { ...exec(4, 'c99'), status: 'cancelled' } });
    await live.loadMore('older');
    const four = live.view?.executions.find((e) => e.id === 4);
    expect(four?.status).toBe('cancelled');
    expect(live.view?.executions.map((e) => e.id)).toEqual([2, 3, 4]);
  });
});

describe('rows of a page that starts mid-session', () => {
  it('name the plan and step in force at its first message, then follow later proposals', async () => {
    const { buildRows } = await import('./transcript/rows');
    const plan = [
      { id: 1, generation: 2, seq: 1, title: 'Read the disks', detail: null, target: null, status: 'done' as const, note: null },
      { id: 2, generation: 3, seq: 1, title: 'Write back', detail: null, target: null, status: 'done' as const, note: null },
    ];
    const note = (id: number): Message => ({ ...msg(id), role: 'system', text: 'The operator approved the plan. Go on.', tool_calls: [] });
    const step = (id: number, callId: string): Message => ({
      ...msg(id),
      role: 'assistant',
      text: '',
      tool_calls: [{ call_id: callId, name: 'update_plan_step', arguments: '{"seq":1,"status":"done"}', result: 'ok', is_error: false }],
    });
    const propose: Message = {
      ...msg(3),
      role: 'assistant',
      text: '',
      tool_calls: [{ call_id: 'p', name: 'propose_plan', arguments: '{"steps":[{}]}', result: 'Plan v3 set (1 step).', is_error: false }],
    };
    const rows = buildRows([note(1), step(2, 's1'), propose, step(4, 's2')], [], plan, 2);
    const lines = rows.map((r) => (r.kind === 'note' ? r.line.text : r.kind === 'assistant' ? r.parts.map((p) => (p.kind === 'activity' ? p.lines.map((l) => l.text).join() : '')).join() : ''));
    expect(lines).toEqual(['You approved plan v2', 'Step 1 done: Read the disks', 'Proposed plan v3 (1 step)', 'Step 1 done: Write back']);
  });
});
