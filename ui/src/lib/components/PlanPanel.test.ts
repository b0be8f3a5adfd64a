import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/svelte';
import type { Execution, PlanStep, SessionView } from '../ipc';
import { live } from '../live.svelte';
import { diffPlans } from '../plandiff';
import PlanPanel from './PlanPanel.svelte';

let nextId = 1;
const step = (generation: number, seq: number, title: string, status: PlanStep['status'] = 'pending', target: string | null = null): PlanStep => ({
  id: nextId++,
  generation,
  seq,
  title,
  detail: null,
  target,
  status,
  note: null,
});

function setView(plan: PlanStep[], executions: Execution[] = []) {
  const view: SessionView = {
    session: { id: 1, title: 't', goal: null, status: 'executing', outcome: null, summary: null, created_at_ms: 0, last_active_at_ms: 0 },
    messages: [],
    older: false,
    newer: false,
    generation_before: 0,
    plan,
    executions,
    approval_open: true,
  };
  live.view = view;
}

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  live.view = null;
});

describe('diffPlans', () => {
  const g = (titles: Array<string | [string, string]>, generation = 1) =>
    titles.map((t, i) => (typeof t === 'string' ? step(generation, i + 1, t) : step(generation, i + 1, t[0], 'pending', t[1])));

  it.each([
    ['identical', ['a', 'b'], ['a', 'b'], { added: [], removed: [], changed: [] }],
    ['reordered only', ['a', 'b'], ['b', 'a'], { added: [], removed: [], changed: [] }],
    ['one added at the end', ['a'], ['a', 'b'], { added: ['b'], removed: [], changed: [] }],
    ['one added in the middle', ['a', 'c'], ['a', 'b', 'c'], { added: ['b'], removed: [], changed: [] }],
    ['one removed', ['a', 'b', 'c'], ['a', 'c'], { added: [], removed: ['b'], changed: [] }],
    ['rewritten in place', ['a', 'b'], ['a', 'B2'], { added: [], removed: [], changed: [{ from: 'b', to: 'B2' }] }],
    ['case and spaces only', ['Check  disks'], ['check disks'], { added: [], removed: [], changed: [] }],
    ['target changed', [['a', 'host:x']], [['a', 'host:y']], { added: [], removed: [], changed: [{ from: 'a (host:x)', to: 'a (host:y)' }] }],
    ['everything new', ['a', 'b'], ['c', 'd', 'e'], { added: ['e'], removed: [], changed: [{ from: 'a', to: 'c' }, { from: 'b', to: 'd' }] }],
    ['write-back in operator words', ['Write back: update_entity_attributes + upsert_knowledge'], [], { added: [], removed: ['Record what was learned'], changed: [] }],
  ] as const)('%s', (_n, a, b, expected) => {
    expect(diffPlans(g([...a] as Array<string | [string, string]>), g([...b] as Array<string | [string, string]>, 2))).toEqual(expected);
  });
});

describe('plan panel', () => {
  it('shows the current generation with live statuses and the running step in the headline', () => {
    setView([step(1, 1, 'Read kernel', 'done'), step(1, 2, 'Check disks', 'running'), step(1, 3, 'Write back: upsert_knowledge')]);
    render(PlanPanel, { sessionId: 1 });
    expect(screen.getByTestId('plan-running').textContent).toBe('Now: step 2 — Check disks');
    const steps = screen.getAllByTestId('plan-step');
    expect(steps.map((s) => s.dataset.status)).toEqual(['done', 'running', 'pending']);
    expect(steps[2]!.textContent).toContain('Record what was learned');
    expect(screen.getByTestId('plan-panel').textContent).not.toContain('upsert_knowledge');
  });

  it('a command in progress shows on its step with a live elapsed time', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(50_000);
    const s = step(1, 1, 'Check disks', 'running');
    const e: Execution = {
      id: 1, session_id: 1, call_id: 'c', target: 'host:a', command: 'df -h', canonical: 'df -h', class: 'read_only', reason: 'r',
      status: 'running', approval: 'not_needed', exit_code: null, duration_ms: null, stdout: '', stderr: '', created_at_ms: 40_000,
      generation: 1, plan_step_id: s.id, error: null,
    };
    setView([s], [e, { ...e, id: 2, plan_step_id: s.id, status: 'finished' }]);
    render(PlanPanel, { sessionId: 1 });
    const shown = screen.getAllByTestId('step-execution');
    expect(shown).toHaveLength(1);
    expect(shown[0]!.textContent).toContain('df -h');
    expect(shown[0]!.textContent).toContain('10 s');
    await vi.advanceTimersByTimeAsync(2000);
    expect(screen.getByTestId('step-execution').textContent).toContain('12 s');
  });

  it('older generations are folded with their count and what the next one changed', () => {
    setView([
      step(1, 1, 'Read kernel', 'replaced'),
      step(1, 2, 'Restart nginx', 'replaced'),
      step(1, 3, 'Write back: update_entity_attributes', 'replaced'),
      step(2, 1, 'Read kernel', 'done'),
      step(2, 2, 'Reload nginx', 'pending'),
      step(2, 3, 'Write back: update_entity_attributes', 'pending'),
      step(2, 4, 'Check the site answers', 'pending'),
    ]);
    render(PlanPanel, { sessionId: 1 });
    const older = screen.getAllByTestId('plan-older');
    expect(older).toHaveLength(1);
    expect(older[0]!.hasAttribute('open')).toBe(false);
    expect(older[0]!.querySelector('summary')!.textContent).toBe('Plan v1 — replaced, 3 steps');
    const diff = screen.getByTestId('plan-diff').textContent!;
    expect(diff).toContain('+ Check the site answers');
    expect(diff).toContain('~ Restart nginx → Reload nginx');
    expect(screen.getAllByTestId('plan-step')).toHaveLength(4);
  });
});
