import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/svelte';
import type { Execution, Message, ToolCall } from '../ipc';
import { buildRows } from '../transcript/rows';
import { formatDuration, notRunReason, splitOutput, truncatedBytes } from '../runcard';

import ToolCallCard from './ToolCallCard.svelte';

const call = (id: string, result: string | null = null, isError = false): ToolCall => ({
  call_id: id,
  name: 'run',
  arguments: JSON.stringify({ target: 'host:web1', command: "systemctl  status nginx", reason: 'see if nginx is up' }),
  result,
  is_error: isError,
});

const execution = (id: number, callId: string, status: Execution['status'], exit: number | null, extra: Partial<Execution> = {}): Execution => ({
  id,
  session_id: 1,
  call_id: callId,
  target: 'host:web1',
  command: 'systemctl  status nginx',
  canonical: 'systemctl status nginx',
  class: 'read_only',
  reason: 'spec.systemctl.status: shows units',
  status,
  approval: 'not_needed',
  exit_code: exit,
  duration_ms: 1234,
  stdout: 'active (running)',
  stderr: '',
  created_at_ms: id,
  generation: 1,
  plan_step_id: null,
  error: null,
  ...extra,
});

describe('run card', () => {
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('each run of the same command finds its own execution by call id', () => {
    const msg: Message = {
      id: 1, role: 'assistant', text: '', pending: false, auto: false, error: null, created_at_ms: 1,
      tool_calls: [call('call-a'), call('call-b')],
    };
    const rows = buildRows([msg], [execution(2, 'call-b', 'finished', 0), execution(1, 'call-a', 'failed', 3)], []);
    const row = rows[0]!;
    expect(row.kind).toBe('assistant');
    const runs = row.kind === 'assistant' ? row.parts.filter((p) => p.kind === 'run') : [];
    expect(runs.map((p) => (p.kind === 'run' ? p.execution?.exit_code : null))).toEqual([3, 0]);
  });

  it("shows the recorded reason a run failed, whatever its output, and none when there is none", () => {
    const reasons = [
      'The Nomos process that ran it exited; its process group 4242 was killed. Its result was not captured: check the target before running it again.',
      'Nomos stopped before this command finished; its result was not captured. Check the target before running it again.',
      'spawn failed: No such file or directory',
    ];
    for (const [i, why] of reasons.entries()) {
      for (const [status, stdout] of [
        ['failed', ''],
        ['failed', 'partial line'],
        ['cancelled', ''],
        ['timed_out', 'tick'],
      ] as const) {
        render(ToolCallCard, { call: call('c'), execution: execution(i + 1, 'c', status, null, { stdout, error: why }) });
        expect(screen.getByTestId('run-error').textContent, `${status} ${stdout}`).toBe(why);
        cleanup();
      }
    }
    render(ToolCallCard, { call: call('c'), execution: execution(9, 'c', 'failed', 3, { stdout: '' }) });
    expect(screen.queryByTestId('run-error')).toBeNull();
  });

  it('shows target, the exact command that runs, class with reason, exit code and duration', () => {
    render(ToolCallCard, { call: call('c'), execution: execution(1, 'c', 'finished', 0) });
    expect(screen.getByTestId('run-target').textContent).toBe('host:web1');
    expect(screen.getByTestId('run-command').textContent).toBe('systemctl status nginx');
    const badge = screen.getByTestId('run-class');
    expect(badge.textContent).toBe('read-only');
    expect(badge.getAttribute('title')).toBe('spec.systemctl.status: shows units');
    const status = screen.getByTestId('run-status').textContent!;
    expect(status).toContain('Finished');
    expect(status).toContain('exit 0');
    expect(status).toContain('1.2 s');
  });

  it.each([
    ['failed', execution(1, 'c', 'failed', 1, { stderr: 'unit not found' }), true],
    ['non-zero exit', execution(1, 'c', 'finished', 3, { stderr: 'boom' }), true],
    ['timed out', execution(1, 'c', 'timed_out', null), true],
    ['awaiting approval', execution(1, 'c', 'awaiting_approval', null, { class: 'destructive', stdout: '' }), true],
    ['finished ok', execution(1, 'c', 'finished', 0), false],
    ['running', execution(1, 'c', 'running', null, { duration_ms: null }), false],
  ])('%s: opened by default = %s', (_name, exec, opened) => {
    render(ToolCallCard, { call: call('c'), execution: exec });
    expect(screen.queryByTestId('run-body') !== null).toBe(opened);
    if (opened && exec.stderr) expect(screen.getByTestId('output-stderr').hasAttribute('open')).toBe(true);
  });

  it('the operator can fold an opened card and unfold a closed one', async () => {
    render(ToolCallCard, { call: call('c'), execution: execution(1, 'c', 'failed', 1) });
    screen.getByTestId('run-toggle').click();
    await Promise.resolve();
    await new Promise((r) => setTimeout(r, 0));
    expect(screen.queryByTestId('run-body')).toBeNull();
  });

  it('a running command shows a live elapsed time', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(100_000);
    render(ToolCallCard, { call: call('c'), execution: execution(1, 'c', 'running', null, { created_at_ms: 95_000, duration_ms: null }) });
    expect(screen.getByTestId('run-status').textContent).toContain('5.0 s');
    await vi.advanceTimersByTimeAsync(3000);
    expect(screen.getByTestId('run-status').textContent).toContain('8.0 s');
  });

  it('output cut by the core shows where and how much, and copies whole', async () => {
    let copied = '';
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText: async (t: string) => void (copied = t) } });
    const stdout = 'first\n[… 4096 bytes truncated …]\nlast';
    render(ToolCallCard, { call: call('c'), execution: execution(1, 'c', 'failed', 2, { stdout }) });
    expect(screen.getByTestId('truncated')).toBeTruthy();
    expect(screen.getByTestId('cut-marker').textContent).toContain('4096 bytes');
    screen.getByTestId('copy-stdout').click();
    await new Promise((r) => setTimeout(r, 0));
    expect(copied).toBe(stdout);
  });

  it.each([
    ['Refused: no plan. Call propose_plan first (a one-step plan is fine), then wait. Do NOT run commands before a plan exists.', true, /no approved plan/],
    ['Refused: the command could not be checked (unbalanced quote), so it has no checked form. Rewrite it.', true, /could not be checked \(unbalanced quote\)/],
    ['Not re-run: this exact command already ran on this target in this plan 42s ago. Its result:\nok\nUse it. To run it again anyway, call run with rerun_because.', false, /already ran 42 s ago/],
    ['Not started again: this exact command on this target is still running as execution 3. Do not issue it again.', false, /already in progress/],
    ['Unknown target host:nope. Call list_targets.', true, /refused this command/],
  ])('a run without execution says why in operator words: %s', (result, isError, expected) => {
    render(ToolCallCard, { call: call('c', result, isError), execution: undefined });
    const status = screen.getByTestId('run-status').textContent!;
    expect(status).toMatch(expected);
    const all = document.body.textContent!;
    for (const fragment of ['Do NOT', 'propose_plan', 'rerun_because', 'list_targets', 'Use it.']) expect(all).not.toContain(fragment);
  });

  it('a run not yet checked says so', () => {
    render(ToolCallCard, { call: call('c'), execution: undefined });
    expect(screen.getByTestId('run-status').textContent).toContain('Checking');
  });
});

describe('runcard helpers', () => {
  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [4200, '4.2 s'],
    [42_000, '42 s'],
    [185_000, '3 min 05 s'],
    [3_720_000, '1 h 02 min'],
    [-1, '—'],
  ])('formatDuration(%s) = %s', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('splits output at every cut marker the core writes', () => {
    const text = 'a\n[… 9 bytes truncated …]\nb\n…[truncated 3 bytes]…\nc';
    expect(splitOutput(text)).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'cut', bytes: 9 },
      { kind: 'text', text: 'b' },
      { kind: 'cut', bytes: 3 },
      { kind: 'text', text: 'c' },
    ]);
    expect(truncatedBytes(text)).toBe(12);
    expect(truncatedBytes('no marker [… x bytes truncated …]')).toBe(0);
  });

  it('an ordinary result is not a refusal', () => {
    expect(notRunReason(null, false)).toBeNull();
    expect(notRunReason('exit 0\nLinux', false)).toBeNull();
  });
});
