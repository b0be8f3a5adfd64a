import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import type { DependentsView, Execution, PlanStep, SessionStatus } from '../ipc';

const calls: Array<[string, ...unknown[]]> = [];
let dependentsFail = false;
const lookups: string[] = [];
let dependentsOf = (target: string): DependentsView => ({ target, known: false, dependents: [], more: false });
let failWith: { code: string; message: string } | null = null;
vi.mock('../ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../ipc')>();
  const record = (name: string) => async (...args: unknown[]) => {
    calls.push([name, ...args]);
    if (failWith) throw { ...failWith, retryable: false };
  };
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      approveExecution: record('approveExecution'),
      denyExecution: record('denyExecution'),
      approvePlan: record('approvePlan'),
      targetDependents: async (target: string) => {
        lookups.push(target);
        if (dependentsFail) throw { code: 'store.busy', message: 'the database is busy', retryable: true };
        return dependentsOf(target);
      },
    },
  };
});

import ApprovalCard from './ApprovalCard.svelte';
import PlanApprovalCard from './PlanApprovalCard.svelte';
import { approvalStaleReason, planApprovalStaleReason } from '../approvals';

const exec = (extra: Partial<Execution> = {}): Execution => ({
  id: 9,
  session_id: 1,
  call_id: 'c1',
  target: 'host:pve1',
  command: 'systemctl restart nginx',
  canonical: 'systemctl restart nginx',
  class: 'config_mutation',
  reason: 'spec.systemctl.restart: restarts a unit',
  status: 'awaiting_approval',
  approval: null,
  exit_code: null,
  duration_ms: null,
  stdout: '',
  stderr: '',
  created_at_ms: 0,
  generation: 1,
  plan_step_id: null,
  error: null,
  ...extra,
});

const flush = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => {
  calls.length = 0;
  failWith = null;
  dependentsFail = false;
  lookups.length = 0;
  dependentsOf = (target) => ({ target, known: false, dependents: [], more: false });
});
afterEach(() => cleanup());

describe('command approval card', () => {
  it('shows command, target, class and reason', () => {
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    expect(screen.getByTestId('approval-command').textContent).toBe('systemctl restart nginx');
    const card = screen.getByTestId('approval-card');
    expect(card.textContent).toContain('host:pve1');
    expect(card.textContent).toContain('config change');
    expect(screen.getByTestId('approval-reason').textContent).toContain('restarts a unit');
  });

  it('Approve and Deny call the core for this execution', async () => {
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    screen.getByTestId('approve-execution').click();
    await flush();
    screen.getByTestId('deny-execution').click();
    await flush();
    expect(calls).toEqual([['approveExecution', 9], ['denyExecution', 9, undefined]]);
  });

  it('Deny with a reason sends the reason the model receives', async () => {
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    screen.getByTestId('deny-with-reason').click();
    await flush();
    const box = screen.getByTestId('deny-reason') as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: '  use reload, not restart  ' } });
    screen.getByTestId('deny-reason-send').click();
    await flush();
    expect(calls).toEqual([['denyExecution', 9, 'use reload, not restart']]);
  });

  it.each([
    ['a', ['approveExecution', 9]],
    ['A', ['approveExecution', 9]],
    ['d', ['denyExecution', 9, undefined]],
  ])('key %s on the focused card decides', async (key, expected) => {
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    const card = screen.getByTestId('approval-card');
    card.focus();
    await fireEvent.keyDown(card, { key });
    await flush();
    expect(calls).toEqual([expected]);
  });

  it('typing a/d in the reason box does not decide; r opens it; Escape closes it', async () => {
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    const card = screen.getByTestId('approval-card');
    await fireEvent.keyDown(card, { key: 'r' });
    await flush();
    const box = screen.getByTestId('deny-reason');
    await fireEvent.keyDown(box, { key: 'a' });
    await fireEvent.keyDown(box, { key: 'd' });
    expect(calls).toEqual([]);
    await fireEvent.keyDown(box, { key: 'Escape' });
    await flush();
    expect(screen.queryByTestId('deny-reason')).toBeNull();
  });

  it('modified keys (Ctrl+A) never decide', async () => {
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    await fireEvent.keyDown(screen.getByTestId('approval-card'), { key: 'a', ctrlKey: true });
    expect(calls).toEqual([]);
  });

  const STALE: Array<[string, Partial<Execution>, SessionStatus, number]> = [
    ['already approved and running', { status: 'running' }, 'executing', 1],
    ['queued after approval', { status: 'queued' }, 'executing', 1],
    ['finished', { status: 'finished', exit_code: 0 }, 'executing', 1],
    ['denied', { status: 'cancelled' }, 'executing', 1],
    ['failed', { status: 'failed' }, 'executing', 1],
    ['timed out', { status: 'timed_out' }, 'executing', 1],
    ['session done', {}, 'done', 1],
    ['session failed', {}, 'failed', 1],
    ['session partial', {}, 'partial', 1],
    ['session abandoned', {}, 'abandoned', 1],
    ['plan replaced', { generation: 1 }, 'planning', 2],
  ];
  for (const [name, extra, status, generation] of STALE) {
    it(`stale card (${name}) says so and cannot be approved by button or key`, async () => {
      render(ApprovalCard, { execution: exec(extra), sessionStatus: status, currentGeneration: generation });
      expect(screen.getByTestId('approval-card').dataset.stale).toBe('true');
      expect(screen.getByTestId('approval-stale').textContent!.length).toBeGreaterThan(10);
      expect(screen.queryByTestId('approve-execution')).toBeNull();
      await fireEvent.keyDown(screen.getByTestId('approval-card'), { key: 'a' });
      await flush();
      expect(calls).toEqual([]);
    });
  }

  it('a card turns stale live when its execution moves on', async () => {
    const { rerender } = render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    expect(screen.getByTestId('approve-execution')).toBeTruthy();
    await rerender({ execution: exec({ status: 'running' }), sessionStatus: 'executing', currentGeneration: 1 });
    expect(screen.queryByTestId('approve-execution')).toBeNull();
    expect(screen.getByTestId('approval-stale').textContent).toMatch(/approved/);
  });

  it('the core refusing an out-of-date card makes it stale', async () => {
    failWith = { code: 'agent.not_awaiting_approval', message: 'Execution 9 is not waiting for approval.' };
    render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    screen.getByTestId('approve-execution').click();
    await flush();
    await flush();
    expect(screen.getByTestId('approval-stale').textContent).toContain('not waiting');
  });

  it('a decided card says who decided and what came of it: the result, or the denial and its reason', () => {
    const said = (extra: Partial<Execution>) => approvalStaleReason(exec(extra), 'executing', 1);
    const approved = { approval: 'operator_button' as const };
    expect(said({ ...approved, status: 'finished', exit_code: 0, duration_ms: 41 })).toBe('No longer waiting: you approved it; finished, exit 0 in 41 ms.');
    expect(said({ ...approved, status: 'finished', exit_code: 3, duration_ms: 4200 })).toBe('No longer waiting: you approved it; finished, exit 3 in 4.2 s.');
    expect(said({ ...approved, status: 'queued' })).toBe('No longer waiting: you approved it; queued.');
    expect(said({ ...approved, status: 'running' })).toBe('No longer waiting: you approved it; running.');
    expect(said({ ...approved, status: 'failed', error: 'ssh: connection refused' })).toBe(
      'No longer waiting: you approved it; failed — ssh: connection refused.',
    );
    expect(said({ ...approved, status: 'timed_out', duration_ms: 600_000 })).toBe('No longer waiting: you approved it; timed out in 10 min 00 s.');
    expect(said({ ...approved, status: 'cancelled', error: 'cancelled' })).toBe('No longer waiting: you approved it; then cancelled.');
    expect(said({ approval: 'window', status: 'finished', exit_code: 0, duration_ms: null })).toBe(
      "No longer waiting: approved by the plan's approval window; finished, exit 0.",
    );
    expect(said({ approval: 'chat_approval', status: 'running' })).toBe('No longer waiting: you approved it in the chat; running.');
    // Never approved: denied with the operator's reason, denied without one, or cancelled.
    expect(said({ status: 'cancelled', error: 'use the staging host' })).toBe('No longer waiting: denied — “use the staging host”. It did not run.');
    expect(said({ status: 'cancelled', error: 'denied by the operator' })).toBe('No longer waiting: denied. It did not run.');
    expect(said({ status: 'cancelled', error: null })).toBe('No longer waiting: denied. It did not run.');
    expect(said({ status: 'cancelled', error: 'cancelled' })).toBe('No longer waiting: cancelled before it ran.');
  });

  it('the result shows on the card itself once the approved command ends', async () => {
    const { rerender } = render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });
    await rerender({
      execution: exec({ status: 'finished', approval: 'operator_button', exit_code: 0, duration_ms: 12 }),
      sessionStatus: 'executing',
      currentGeneration: 1,
    });
    expect(screen.getByTestId('approval-stale').textContent).toBe('No longer waiting: you approved it; finished, exit 0 in 12 ms.');
    await rerender({ execution: exec({ status: 'cancelled', error: 'not on a Friday' }), sessionStatus: 'executing', currentGeneration: 1 });
    expect(screen.getByTestId('approval-stale').textContent).toContain('denied — “not on a Friday”');
  });

  it('approvalStaleReason: live only while awaiting in a live session of its generation', () => {
    expect(approvalStaleReason(exec(), 'executing', 1)).toBeNull();
    expect(approvalStaleReason(exec(), 'planning', 1)).toBeNull();
    expect(approvalStaleReason(exec({ generation: null }), 'executing', 5)).toBeNull();
  });
});

const step = (generation: number, seq: number, title: string, status: PlanStep['status'] = 'pending'): PlanStep => ({
  id: generation * 100 + seq,
  generation,
  seq,
  title,
  detail: null,
  target: seq === 1 ? 'host:pve1' : null,
  status,
  note: null,
});

describe('plan approval card', () => {
  const v1 = [step(1, 2, 'Write back: update_entity_attributes + upsert_knowledge'), step(1, 1, 'Read the kernel')];

  it('lists the steps it approves, in order and in operator words, and approves its generation', async () => {
    render(PlanApprovalCard, { sessionId: 4, generation: 1, plan: v1, sessionStatus: 'planning', approvalOpen: false });
    const items = [...screen.getByTestId('plan-approval-steps').querySelectorAll('li')].map((li) => li.textContent);
    expect(items).toEqual(['Read the kernel — host:pve1', 'Record what was learned']);
    screen.getByTestId('approve-plan').click();
    await flush();
    expect(calls).toEqual([['approvePlan', 4, 1]]);
  });

  it('a newer generation makes the old card stale', async () => {
    const plan = [...v1.map((s) => ({ ...s, status: 'replaced' as const })), step(2, 1, 'Read the kernel again')];
    render(PlanApprovalCard, { sessionId: 4, generation: 1, plan, sessionStatus: 'planning', approvalOpen: false });
    expect(screen.getByTestId('plan-approval-stale').textContent).toContain('replaced by v2');
    expect(screen.queryByTestId('approve-plan')).toBeNull();
    await fireEvent.keyDown(screen.getByTestId('plan-approval'), { key: 'a' });
    expect(calls).toEqual([]);
  });

  it.each([
    ['approved (window open)', 'planning', true],
    ['executing', 'executing', false],
    ['done', 'done', false],
    ['abandoned', 'abandoned', false],
  ] as const)('%s: stale', (_n, status, open) => {
    expect(planApprovalStaleReason(1, v1, status, open)).not.toBeNull();
  });

  it('the core refusing a stale plan makes the card stale', async () => {
    failWith = { code: 'agent.stale_plan', message: 'The plan changed since you saw it.' };
    render(PlanApprovalCard, { sessionId: 4, generation: 1, plan: v1, sessionStatus: 'planning', approvalOpen: false });
    screen.getByTestId('approve-plan').click();
    await flush();
    await flush();
    expect(screen.getByTestId('plan-approval-stale').textContent).toContain('changed');
  });
});

describe('blast radius on the command card', () => {
  const card = () => render(ApprovalCard, { execution: exec(), sessionStatus: 'executing', currentGeneration: 1 });

  it("lists what runs on the target and what depends on it, direct and indirect", async () => {
    dependentsOf = (target) => ({
      target,
      known: true,
      more: true,
      dependents: [
        { slug: 'service:nginx', kind: 'service', relation: 'runs_on', via: target, depth: 1 },
        { slug: 'lxc:web', kind: 'container', relation: 'runs_on', via: target, depth: 1 },
        { slug: 'service:shop', kind: 'service', relation: 'depends_on', via: 'service:nginx', depth: 2 },
      ],
    });
    card();
    await flush();
    expect(lookups).toEqual(['host:pve1']);
    const items = screen.getAllByTestId('approval-dependent');
    expect(items.map((i) => i.textContent?.replace(/\s+/g, ' ').trim())).toEqual([
      'service:nginx runs on host:pve1',
      'lxc:web runs on host:pve1',
      'service:shop depends on service:nginx',
    ]);
    expect(items[2]?.classList.contains('indirect')).toBe(true);
    expect(screen.getByTestId('approval-dependents').textContent).toContain('and more');
  });

  it('says so when the target is unknown, has no dependents, or the lookup failed, and approval still works', async () => {
    card();
    await flush();
    expect(screen.getByTestId('approval-dependents').textContent).toContain('not in the knowledge graph yet');
    cleanup();

    dependentsOf = (target) => ({ target, known: true, dependents: [], more: false });
    card();
    await flush();
    expect(screen.getByTestId('approval-dependents').textContent).toContain('Nothing Nomos knows of');
    cleanup();

    dependentsFail = true;
    card();
    await flush();
    expect(screen.getByTestId('approval-dependents').textContent).toContain('the database is busy');
    await fireEvent.click(screen.getByTestId('approve-execution'));
    await flush();
    expect(calls).toContainEqual(['approveExecution', 9]);
  });

  it('never shows dependent names as markup', async () => {
    dependentsOf = (target) => ({
      target,
      known: true,
      more: false,
      dependents: [{ slug: '<img src=x onerror=alert(1)>', kind: 'service', relation: 'runs_on', via: target, depth: 1 }],
    });
    const { container } = card();
    await flush();
    expect(container.querySelector('img')).toBeNull();
    expect(screen.getByTestId('approval-dependent').textContent).toContain('<img src=x onerror=alert(1)>');
  });
});
