import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { SessionSummary } from './ipc';

let calls = 0;
let rows: SessionSummary[] = [];
vi.mock('./ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./ipc')>();
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      listSessions: async () => {
        calls += 1;
        return structuredClone(rows);
      },
    },
  };
});

import { sessions } from './sessions.svelte';

const row = (id: number, title: string): SessionSummary => ({
  id,
  title,
  goal: null,
  status: 'planning',
  outcome: null,
  summary: null,
  created_at_ms: id,
  last_active_at_ms: id,
});

describe('sessions', () => {
  beforeEach(async () => {
    rows = [row(3, 'Three'), row(2, 'Two'), row(1, 'One')];
    await sessions.refresh();
    calls = 0;
  });

  it('patches a status change in place and moves the row to the top, without a reload', () => {
    sessions.update(1, { status: 'done', outcome: 'success', summary: 'all fine' });
    expect(calls).toBe(0);
    expect(sessions.items.map((s) => s.id)).toEqual([1, 3, 2]);
    expect(sessions.items[0]).toMatchObject({ status: 'done', outcome: 'success', summary: 'all fine', title: 'One' });
  });

  it('reloads only for a session it does not list yet', async () => {
    rows = [row(4, 'Four'), ...rows];
    sessions.update(4, { status: 'planning', outcome: null, summary: null });
    await vi.waitFor(() => expect(sessions.items.map((s) => s.id)).toEqual([4, 3, 2, 1]));
    expect(calls).toBe(1);
  });
});
