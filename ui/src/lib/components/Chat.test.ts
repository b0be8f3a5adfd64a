import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import type { Message, SessionView, ToolCall } from '../ipc';

let current: SessionView;
const calls: Array<[string, ...unknown[]]> = [];
vi.mock('../ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../ipc')>();
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      sessionView: async () => structuredClone(current),
      reconnectSession: async () => {},
      listSessions: async () => [],
      retryTurn: async (id: number) => void calls.push(['retryTurn', id]),
      stopTurn: async (id: number) => {
        calls.push(['stopTurn', id]);
        return true;
      },
      sendMessage: async (id: number, text: string) => {
        calls.push(['sendMessage', id, text]);
        return id;
      },
    },
  };
});

import Chat from './Chat.svelte';
import { live } from '../live.svelte';

const msg = (id: number, role: Message['role'], text: string, extra: Partial<Message> = {}): Message => ({
  id,
  role,
  text,
  pending: false,
  auto: false,
  error: null,
  tool_calls: [],
  created_at_ms: id,
  ...extra,
});

function viewWith(messages: Message[], extra: Partial<SessionView> = {}): SessionView {
  return {
    session: { id: 5, title: 'Disks', goal: null, status: 'executing', outcome: null, summary: null, created_at_ms: 0, last_active_at_ms: 0 },
    messages,
    older: false,
    newer: false,
    generation_before: 0,
    plan: [],
    executions: [],
    approval_open: false,
    ...extra,
  };
}

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

beforeEach(() => {
  calls.length = 0;
});
afterEach(() => cleanup());

describe('virtualized transcript', () => {
  it('a 10,000-message session opens with only a window of rows in the DOM', async () => {
    const messages = Array.from({ length: 10_000 }, (_, i) => msg(i + 1, i % 2 ? 'assistant' : 'user', `message ${i + 1}\n\nwith **markdown**`));
    current = viewWith(messages);
    const started = performance.now();
    render(Chat, { sessionId: 5 });
    await settle();
    const openMs = performance.now() - started;
    const inDom = document.querySelectorAll('[data-message-id]');
    expect(inDom.length).toBeGreaterThan(0);
    expect(inDom.length).toBeLessThan(60);
    // It opens at the latest message.
    expect(document.querySelector('[data-message-id="10000"]')).not.toBeNull();
    expect(document.querySelector('[data-message-id="1"]')).toBeNull();
    console.info(`10,000-message session to rendered window in jsdom: ${openMs.toFixed(0)} ms, ${inDom.length} rows in DOM`);
  });

  it('?message=ID opens the session at that message', async () => {
    current = viewWith(Array.from({ length: 3000 }, (_, i) => msg(i + 1, 'user', `m${i + 1}`)));
    render(Chat, { sessionId: 5, messageId: 1234 });
    await settle();
    expect(document.querySelector('[data-message-id="1234"]')).not.toBeNull();
    expect(document.querySelector('[data-message-id="3000"]')).toBeNull();
    expect(document.querySelectorAll('[data-message-id]').length).toBeLessThan(60);
    // Away from the bottom: the jump control is offered.
    expect(screen.getByTestId('jump-latest')).toBeTruthy();
    screen.getByTestId('jump-latest').click();
    await settle();
    expect(document.querySelector('[data-message-id="3000"]')).not.toBeNull();
  });
});

describe('chat turn states', () => {
  it('a pending reply shows progress, never an empty bubble', async () => {
    current = viewWith([msg(1, 'user', 'hi'), msg(2, 'assistant', '', { pending: true })]);
    render(Chat, { sessionId: 5 });
    await settle();
    const bubble = document.querySelector('[data-message-id="2"]')!;
    expect(bubble.textContent).toContain('Thinking');
    live.apply({ type: 'text_delta', session_id: 5, message_id: 2, delta: 'Hello **there**' });
    await settle();
    expect(document.querySelector('[data-message-id="2"] strong')?.textContent).toBe('there');
    expect(document.querySelector('[data-message-id="2"]')!.textContent).not.toContain('Thinking');
  });

  it('a finished empty reply leaves no bubble', async () => {
    current = viewWith([msg(1, 'user', 'hi'), msg(2, 'assistant', '  ')]);
    render(Chat, { sessionId: 5 });
    await settle();
    expect(screen.queryAllByTestId('msg-assistant')).toHaveLength(0);
  });

  it('errors are humanized with the real text folded, and Retry retries the turn', async () => {
    current = viewWith([msg(1, 'user', 'hi')]);
    render(Chat, { sessionId: 5 });
    await settle();
    live.apply({ type: 'error', session_id: 5, code: 'llm.rate_limited', message: 'HTTP 429: slow down', retryable: true });
    await settle();
    const card = screen.getByTestId('turn-error');
    expect(card.textContent).toContain('The model provider is limiting requests');
    expect(card.textContent).toContain('HTTP 429: slow down');
    screen.getByTestId('retry').click();
    await settle();
    expect(calls).toEqual([['retryTurn', 5]]);
  });

  it('Esc stops the turn and the chat shows the session paused', async () => {
    current = viewWith([msg(1, 'user', 'hi')]);
    render(Chat, { sessionId: 5 });
    await settle();
    live.apply({ type: 'turn_started', session_id: 5, auto: false });
    await settle();
    await fireEvent.keyDown(screen.getByTestId('composer'), { key: 'Escape' });
    await settle();
    expect(calls).toEqual([['stopTurn', 5]]);
    live.apply({ type: 'error', session_id: 5, code: 'llm.cancelled', message: 'cancelled', retryable: false });
    live.apply({ type: 'done', session_id: 5, error: true });
    await settle();
    expect(screen.getByTestId('paused')).toBeTruthy();
    expect(screen.getByTestId('chat-status').textContent).toContain('Paused');
    expect(screen.queryByTestId('turn-error')).toBeNull();
    expect(screen.queryByTestId('stop')).toBeNull();
    live.apply({ type: 'turn_started', session_id: 5, auto: false });
    await settle();
    expect(screen.queryByTestId('paused')).toBeNull();
  });

  it('the Stop button stops the turn', async () => {
    current = viewWith([msg(1, 'user', 'hi')]);
    render(Chat, { sessionId: 5 });
    await settle();
    live.apply({ type: 'turn_started', session_id: 5, auto: false });
    await settle();
    screen.getByTestId('stop').click();
    await settle();
    expect(calls).toEqual([['stopTurn', 5]]);
  });

  it('a finished task shows operator lines and no tool names or model notes', async () => {
    const c = (id: string, name: string, args: object, result: string): ToolCall => ({ call_id: id, name, arguments: JSON.stringify(args), result, is_error: false });
    current = viewWith([
      msg(1, 'user', 'What kernel is this?'),
      msg(2, 'assistant', "I'll check.", {
        tool_calls: [
          c('a', 'set_goal', { goal: 'Know the kernel' }, 'Goal set.'),
          c('b', 'propose_plan', { steps: [{ title: 'Read it', target: 'host:local' }] }, 'Plan v1 set (2 steps). A write-back step was appended. STOP. Wait for operator approval. Do NOT call propose_plan again.'),
        ],
      }),
      msg(3, 'system', 'The operator approved the plan (Approve button). Advance it now: update_plan_step (running) + run, in order. Do NOT call propose_plan again.'),
      msg(4, 'assistant', 'It runs Linux.', {
        tool_calls: [
          c('c', 'update_plan_step', { seq: 1, status: 'running' }, 'Step 1 is running.'),
          c('d', 'update_plan_step', { seq: 1, status: 'done', note: 'Linux' }, 'Step 1 is done.'),
          c('e', 'update_entity_attributes', { slug: 'host:local', attributes: { kernel: 'Linux' } }, 'Recorded on host:local: {}'),
          c('f', 'update_plan_step', { seq: 2, status: 'done' }, 'Step 2 is done.'),
          c('g', 'complete_task', { outcome: 'success', summary: 'Linux' }, 'Task completed. The operator has been notified.'),
        ],
      }),
    ], {
      plan: [
        { id: 1, generation: 1, seq: 1, title: 'Read it', detail: null, target: 'host:local', status: 'done', note: 'Linux' },
        { id: 2, generation: 1, seq: 2, title: 'Write back: update_entity_attributes + create_relationship + upsert_knowledge', detail: null, target: null, status: 'done', note: null },
      ],
      session: { id: 5, title: 'Kernel', goal: 'Know the kernel', status: 'done', outcome: 'success', summary: 'Linux', created_at_ms: 0, last_active_at_ms: 0 },
    });
    render(Chat, { sessionId: 5 });
    await settle();
    const text = screen.getByTestId('transcript').textContent!;
    for (const name of ['set_goal', 'propose_plan', 'update_plan_step', 'update_entity_attributes', 'complete_task', 'create_relationship', 'upsert_knowledge']) {
      expect(text).not.toContain(name);
    }
    for (const note of ['STOP', 'Do NOT', 'Advance it now']) expect(text).not.toContain(note);
    for (const line of ['Goal: Know the kernel', 'Proposed plan v1 (2 steps)', 'You approved plan v1', 'Step 1 done: Read it', 'Learned: local kernel = Linux', 'Step 2 done: Record what was learned', 'Task finished: success']) {
      expect(text).toContain(line);
    }
  });
});

describe('demo label', () => {
  it('the header labels a demo session from its field, never from its title', async () => {
    for (const [session, labelled] of [
      [{ title: 'What is this workstation running?', demo: true }, true],
      [{ title: 'Demo: what is this workstation running?' }, false],
      [{ title: 'Demo', demo: false }, false],
    ] as const) {
      current = viewWith([msg(1, 'user', 'hi')]);
      current.session = { ...current.session, ...session };
      render(Chat, { sessionId: 5 });
      await settle();
      expect(screen.getByTestId('chat-title').textContent).toBe(session.title);
      expect(screen.queryByTestId('demo-label') !== null).toBe(labelled);
      cleanup();
    }
  });
});
